import Foundation
import Trove
import TroveSync

/// `trove sync …`: set up a PostgreSQL as a sync server and give devices access.
enum SyncCommands {
    static let help = """
        usage: trove sync setup [URL] [--device-role ROLE]
               trove sync grant [URL] --principal P --space S [--read-only]
               trove sync revoke [URL] --device DEVICE-ID
               trove sync FILE [--server URL] [--token T] --space S [--types T1,T2]
               trove sync status FILE [--json]

        setup   installs the sync server's tables and functions in the PostgreSQL at URL, or
                upgrades them in place (run it again at will: it changes nothing when current);
                devices log in as ROLE (default trove_device), which may only call the sync functions
        grant   makes principal P a member of space S (created when new; --read-only: pulls only)
                and prints a new device token, once: the server keeps only its hash
        revoke  refuses the device's token from now on
        FILE    syncs FILE once: sends what changed in it, applies what others changed, prints
                what moved (--types the first time: the types that sync; the server URL is the
                devices' login, from --server or TROVE_SYNC_URL, the token from --token or
                TROVE_SYNC_TOKEN)
        status  what FILE's sync bookkeeping says: device, space, types, changes not yet sent

        URL is postgresql://OWNER:PASSWORD@HOST:PORT/DATABASE, the role that owns the sync schema;
        without URL, TROVE_SYNC_URL is read (keeps the password out of the process list)
        example: TROVE_SYNC_URL=postgresql://owner:secret@db.example.com/app trove sync grant --principal min --space diary
        """

    static func run(_ arguments: Arguments) throws {
        guard let action = arguments.positional.first else {
            throw UsageError("trove sync needs setup, grant, revoke, status or a FILE")
        }
        let rest = Array(arguments.positional.dropFirst())
        switch action {
        case "setup":
            try arguments.allow(options: ["--device-role"])
            let connection = try connect(rest)
            let role = arguments.option("--device-role") ?? "trove_device"
            let before = try ServerSchema.installedVersion(on: connection)
            let notes = try ServerSchema.install(on: connection, deviceRole: role)
            let what =
                before == 0
                ? "installed" : before < ServerSchema.version ? "upgraded from version \(before)" : "already current"
            print(
                "sync server at \(connection.server): schema version \(ServerSchema.version) (\(what)); devices log in as \(role)"
            )
            for note in notes { print("note: \(note)") }
        case "grant":
            try arguments.allow(options: ["--principal", "--space"], flags: ["--read-only"])
            guard let principal = arguments.option("--principal"), let space = arguments.option("--space") else {
                throw UsageError("trove sync grant needs --principal and --space")
            }
            let connection = try connect(rest)
            let readOnly = arguments.flags.contains("--read-only")
            let token = try ServerSchema.grantDevice(
                principal: principal, space: space, readOnly: readOnly, on: connection)
            FileHandle.standardError.write(
                Data(
                    "\(principal) is a \(readOnly ? "read-only " : "")member of space \(space); the new device's token (shown once):\n"
                        .utf8))
            print(token)
        case "revoke":
            try arguments.allow(options: ["--device"])
            guard let device = arguments.option("--device") else { throw UsageError("trove sync revoke needs --device") }
            let connection = try connect(rest)
            guard try ServerSchema.revokeDevice(device, on: connection) else {
                throw TroveError(.syncServer, "the sync server at \(connection.server) has no device \(device)")
            }
            print("device \(device) is revoked: its token is refused from now on")
        case "status":
            try arguments.allow()
            guard rest.count == 1 else { throw UsageError("trove sync status needs FILE") }
            let db = try Commands.open(rest[0])
            guard let status = try SyncClient.status(of: db) else {
                if arguments.flags.contains("--json") { print("{\"syncs\":false}") } else { print("\(rest[0]) does not sync") }
                return
            }
            if arguments.flags.contains("--json") {
                let object: [String: Any] = [
                    "syncs": true, "device": status.device ?? NSNull(), "space": status.space ?? NSNull(),
                    "types": status.types, "pendingChanges": status.pendingChanges, "pulledThrough": status.pulledThrough,
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            print("space:           \(status.space ?? "?")")
            print("device:          \(status.device ?? "?")")
            print("types:           \(status.types.joined(separator: ", "))")
            print("not yet sent:    \(status.pendingChanges) object\(status.pendingChanges == 1 ? "" : "s")")
            print("pulled through:  sequence \(status.pulledThrough)")
            if let last = status.lastClock { print("last recorded:   \(last)") }
        default:
            try syncFile(action, rest, arguments)
        }
    }

    /// `trove sync FILE …`: one sync of FILE.
    private static func syncFile(_ path: String, _ rest: [String], _ arguments: Arguments) throws {
        try arguments.allow(options: ["--server", "--token", "--space", "--types"])
        guard rest.isEmpty else { throw UsageError("unexpected argument '\(rest[0])'") }
        guard FileManager.default.fileExists(atPath: path) else {
            throw UsageError("unknown sync command or missing file '\(path)'")
        }
        let environment = ProcessInfo.processInfo.environment
        guard let server = arguments.option("--server") ?? environment["TROVE_SYNC_URL"], !server.isEmpty else {
            throw UsageError("give the server with --server URL, or set TROVE_SYNC_URL")
        }
        guard let token = arguments.option("--token") ?? environment["TROVE_SYNC_TOKEN"], !token.isEmpty else {
            throw UsageError("give the device token with --token, or set TROVE_SYNC_TOKEN")
        }
        guard let space = arguments.option("--space") else { throw UsageError("trove sync FILE needs --space") }
        let db = try Commands.open(path, readOnly: false)
        let known = try SyncClient.status(of: db)?.types
        guard let types = arguments.option("--types").map({ $0.split(separator: ",").map(String.init) }) ?? known else {
            throw UsageError("\(path) has not synced yet: name the types that sync with --types T1,T2")
        }
        let client = try SyncClient(
            database: db, configuration: .init(serverURL: server, token: token, space: space, types: types))
        let report = try client.sync()
        print(
            "\(path) with space \(space): sent \(report.pushed), received \(report.pulled), refused \(report.rejected.count)\(report.bootstrapped ? " (read the whole space again)" : "")"
        )
        for rejection in report.rejected {
            print("refused: \(rejection.typeName) \(rejection.primaryKey.debugDescription): \(rejection.reason)")
        }
    }

    private static func connect(_ positional: [String]) throws -> PostgresConnection {
        guard positional.count <= 1 else { throw UsageError("unexpected argument '\(positional[1])'") }
        guard let url = positional.first ?? ProcessInfo.processInfo.environment["TROVE_SYNC_URL"], !url.isEmpty else {
            throw UsageError("give the server's URL, or set TROVE_SYNC_URL")
        }
        return try PostgresConnection(url: url)
    }
}
