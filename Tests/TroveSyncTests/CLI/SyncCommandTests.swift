import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

#if canImport(Glibc)
    import Glibc
#endif

/// `trove sync setup`, `grant` and `revoke`, run as a user runs them.
@Suite("trove sync commands")
struct SyncCommandTests {
    /// Runs the built `trove` with `environment` added; its exit status (128 + the signal's number
    /// when a signal ended it), stdout and stderr.
    func trove(_ arguments: String..., environment: [String: String] = [:]) throws -> (
        status: Int32, out: String, err: String
    ) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let binary = try #require(
            ["debug", "release"].map { root.appendingPathComponent(".build/\($0)/trove") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "trove is not built: run swift build")
        let finished = try ChildProcess.run(
            binary.path, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let status: Int32 =
            switch finished.ending {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        return (status, finished.out, finished.err)
    }

    @Test("setup installs, then says the server is current; grant prints a token that works; revoke ends it")
    func setupGrantRevoke() throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let url = postgres.url("sync_owner", database: "sync")
        let first = try trove("sync", "setup", url, "--device-role", "sync_device")
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.contains("schema version \(ServerSchema.version) (installed); devices log in as sync_device"))
        #expect(!first.out.contains(url))
        // The URL from the environment, as the help advises.
        let again = try trove("sync", "setup", "--device-role", "sync_device", environment: ["TROVE_SYNC_URL": url])
        #expect(again.out.contains("(already current)"), "\(again.out) \(again.err)")
        let granted = try trove(
            "sync", "grant", "--principal", "min", "--space", "diary", environment: ["TROVE_SYNC_URL": url])
        #expect(granted.status == 0, "\(granted.err)")
        #expect(granted.err.contains("min is a member of space diary; the new device's token (shown once)"))
        let token = granted.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let device = DeviceCalls(
            connection: try PostgresConnection(url: postgres.url("sync_device", database: "sync")), token: token,
            space: "diary")
        #expect(try device.hello()["principal"] as? String == "min")
        let id = String(token.split(separator: ".")[0])
        let revoked = try trove("sync", "revoke", "--device", id, environment: ["TROVE_SYNC_URL": url])
        #expect(revoked.status == 0 && revoked.out.contains("device \(id) is revoked"), "\(revoked.err)")
        #expect(syncError { try device.hello() }?.message.contains("not valid") == true)
        #expect(!postgres.serverLog.contains(String(token.split(separator: ".")[1])))
    }

    @Test("trove sync FILE sends a file's objects and brings another's; trove sync status says where each stands")
    func syncFiles() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: first, objectTypes: [SyncNote.self, SyncFolder.self]))
            try db.write {
                for id in ["a", "b"] {
                    let note = SyncNote()
                    note.id = id
                    note.title = "from the first file"
                    try db.add(note)
                }
            }
        }
        #expect(try trove("sync", "status", first.path).out == "\(first.path) does not sync\n")
        let environment = [
            "TROVE_SYNC_URL": server.postgres.url("sync_device", database: "sync"),
            "TROVE_SYNC_TOKEN": try server.grant("min", "diary"),
        ]
        let noTypes = try trove("sync", first.path, "--space", "diary", environment: environment)
        #expect(noTypes.status == 2 && noTypes.err.contains("--types"), "\(noTypes.err)")
        let sent = try trove(
            "sync", first.path, "--space", "diary", "--types", "SyncNote,SyncFolder", environment: environment)
        #expect(sent.status == 0, "\(sent.err)")
        #expect(sent.out.contains("with space diary: sent 2, received 0, refused 0"), "\(sent.out)")
        let status = try trove("sync", "status", first.path)
        #expect(status.out.contains("space:           diary"), "\(status.out)")
        #expect(status.out.contains("types:           SyncFolder, SyncNote"))
        #expect(status.out.contains("not yet sent:    0 objects"))
        // A second file, made by another device, receives them; its types are remembered.
        let second = directory.appendingPathComponent("second.trove")
        _ = try Database(configuration: Configuration(fileURL: second, objectTypes: [SyncNote.self, SyncFolder.self]))
        var other = environment
        other["TROVE_SYNC_TOKEN"] = try server.grant("jun", "diary")
        let received = try trove(
            "sync", second.path, "--space", "diary", "--types", "SyncNote,SyncFolder", environment: other)
        #expect(received.out.contains("sent 0, received 2, refused 0"), "\(received.out) \(received.err)")
        let json = try trove("sync", "status", second.path, "--json")
        #expect(json.out.contains("\"pendingChanges\":0") && json.out.contains("\"space\":\"diary\""), "\(json.out)")
        #expect(
            try trove("query", second.path, "SyncNote", "--format", "jsonl").out.components(separatedBy: "from the first file")
                .count == 3)
        // A write without a client is refused on a synced file, and another space is refused.
        let set = try trove("set", second.path, "SyncNote", "a", "title", "edited by hand")
        #expect(set.status == 1 && set.err.contains("SyncClient"), "\(set.err)")
        let wrongSpace = try trove("sync", second.path, "--space", "family", environment: other)
        #expect(wrongSpace.status == 1 && wrongSpace.err.contains("syncs with space diary"), "\(wrongSpace.err)")
    }

    @Test("a wrong password, a missing URL or option, an unknown device: a message and exit 1 or 2, never the password")
    func mistakes() throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let wrong = "postgresql://sync_owner:wrong-secret-93@127.0.0.1:\(postgres.port)/sync?connect_timeout=10"
        let refused = try trove("sync", "setup", wrong)
        #expect(refused.status == 1)
        #expect(refused.err.contains("password authentication failed") && !refused.err.contains("wrong-secret-93"))
        let noURL = try trove("sync", "grant", "--principal", "p", "--space", "s", environment: ["TROVE_SYNC_URL": ""])
        #expect(noURL.status == 2 && noURL.err.contains("give the server's URL, or set TROVE_SYNC_URL"))
        let url = postgres.url("sync_owner", database: "sync")
        #expect(try trove("sync", "grant", url, "--space", "s").err.contains("needs --principal and --space"))
        let noRole = try trove("sync", "setup", url)
        #expect(noRole.status == 1 && noRole.err.contains("no role trove_device for devices to log in as"))
        _ = try trove("sync", "setup", url, "--device-role", "sync_device")
        let unknown = try trove("sync", "revoke", url, "--device", UUID().uuidString)
        #expect(unknown.status == 1 && unknown.err.contains("has no device"))
        #expect(try trove("sync", "frobnicate", url).status == 2)
    }
}
