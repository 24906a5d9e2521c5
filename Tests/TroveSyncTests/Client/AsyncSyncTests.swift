import Foundation
import Testing
import Trove

@testable import TroveSync

/// What a test collects from callbacks on other threads.
final class Collected<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ item: Element) { lock.withLock { items.append(item) } }

    var all: [Element] { lock.withLock { items } }
}

/// Cancels a task when asked, from any thread, even before the task is known.
final class Canceller: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<SyncClient.Report, any Error>?
    private var requested = false

    func set(_ task: Task<SyncClient.Report, any Error>) {
        lock.withLock {
            self.task = task
            if requested { task.cancel() }
        }
    }

    func cancel() {
        lock.withLock {
            requested = true
            task?.cancel()
        }
    }
}

/// `sync()` as an async, cancellable call with progress, and background sync.
@Suite("Syncing without blocking")
struct AsyncSyncTests {
    typealias Device = SyncClientTests.Device

    static func device(_ server: TestSyncServer, _ principal: String, directory: URL, batchSize: Int = 500) throws -> Device {
        let url = directory.appendingPathComponent("\(principal)-\(UUID().uuidString).trove")
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SyncNote.self, SyncFolder.self]))
        var configuration = SyncClient.Configuration(
            serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant(principal, "diary"),
            space: "diary", types: ["SyncNote", "SyncFolder"])
        configuration.batchSize = batchSize
        return Device(db: db, client: try SyncClient(database: db, configuration: configuration))
    }

    static func addNotes(_ count: Int, to device: Device, prefix: String = "n") throws {
        try device.db.write {
            for index in 0..<count {
                let note = SyncNote()
                note.id = "\(prefix)\(index)"
                note.score = index
                try device.db.add(note)
            }
        }
    }

    @Test("an awaited sync sends and receives in batches, tells its progress, and the caller's handle sees the result")
    func awaitedSync() async throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.device(server, "a", directory: directory, batchSize: 10)
        let b = try Self.device(server, "b", directory: directory, batchSize: 10)
        try Self.addNotes(35, to: a)
        let progress = Collected<SyncProgress>()
        let report = try await a.client.sync { progress.append($0) }
        #expect(report.pushed == 35)
        let pushing = progress.all.filter { $0.phase == .pushing }
        #expect(pushing.map(\.sent) == [10, 20, 30, 35], "\(progress.all)")
        #expect(pushing.allSatisfy { $0.toSend == 35 })
        #expect(a.client.pendingChanges == 0)

        let received = Collected<SyncProgress>()
        let pulled = try await b.client.sync { received.append($0) }
        #expect(pulled.pulled == 35)
        #expect(b.db.objects(SyncNote.self).count == 35, "the caller's handle sees what the sync applied")
        let pages = received.all.filter { $0.phase == .pulling }.map(\.received)
        #expect(pages.count >= 1 && pages.last == 35, "\(received.all)")
        #expect(received.all.last == SyncProgress(phase: .applying, received: 35))
    }

    @Test("a cancelled sync stops before its next call to the server; the next sync sends the rest")
    func cancelledSync() async throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = Configuration(
            fileURL: directory.appendingPathComponent("a.trove"), objectTypes: [SyncNote.self, SyncFolder.self])
        var syncing = SyncClient.Configuration(
            serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant("a", "diary"),
            space: "diary", types: ["SyncNote", "SyncFolder"])
        syncing.batchSize = 5
        // The task is cancelled when the first batch is through: the sync stops before sending the second.
        let canceller = Canceller()
        // (The handle lives in the task that syncs.)
        let task = Task { [syncing] in
            let db = try Database(configuration: file)
            let client = try SyncClient(database: db, configuration: syncing)
            try Self.addNotes(400, to: Device(db: db, client: client))
            return try await client.sync { if $0.phase == .pushing { canceller.cancel() } }
        }
        canceller.set(task)
        await #expect(throws: CancellationError.self) { try await task.value }
        let onServer = { Int(try server.owner.query("SELECT count(*) FROM trove_data.\"SyncNote\"")[0][0]!)! }
        let sent = try onServer()
        #expect(sent == 5, "one batch of 5 went through before the cancellation")

        let db = try Database(configuration: file)
        let client = try SyncClient(database: db, configuration: syncing)
        #expect(client.pendingChanges == 400 - sent)
        let rest = try await client.sync()
        #expect(rest.pushed == 400 - sent)
        #expect(try onServer() == 400)
        #expect(client.pendingChanges == 0)
    }

    @Test("in the background, a write on one device reaches the other without a call to sync")
    func backgroundSync() async throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.device(server, "a", directory: directory)
        let b = try Self.device(server, "b", directory: directory)
        let results = Collected<Bool>()
        let backgroundA = a.client.startBackgroundSync(minimumInterval: 0.05, maximumInterval: 0.4) {
            if case .success = $0 { results.append(true) } else { results.append(false) }
        }
        let backgroundB = b.client.startBackgroundSync(minimumInterval: 0.05, maximumInterval: 0.4)
        defer {
            backgroundA.stop()
            backgroundB.stop()
        }
        /// Waits up to 20 s for `condition` on `device`'s handle.
        func eventually(_ device: Device, _ condition: (Database) -> Bool) async throws -> Bool {
            for _ in 0..<400 {
                device.db.refresh()
                if condition(device.db) { return true }
                try await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
        try SyncClientTests.addNote("from-a", title: "written on a", a)
        #expect(try await eventually(b) { $0.object(ofType: SyncNote.self, forPrimaryKey: "from-a")?.title == "written on a" })
        try b.db.write { b.db.object(ofType: SyncNote.self, forPrimaryKey: "from-a")!.title = "edited on b" }
        #expect(try await eventually(a) { $0.object(ofType: SyncNote.self, forPrimaryKey: "from-a")?.title == "edited on b" })
        // A backend write reaches both through the poll.
        try server.owner.query("UPDATE trove_data.\"SyncNote\" SET score = 77 WHERE id = 'from-a'")
        #expect(try await eventually(a) { $0.object(ofType: SyncNote.self, forPrimaryKey: "from-a")?.score == 77 })
        #expect(try await eventually(b) { $0.object(ofType: SyncNote.self, forPrimaryKey: "from-a")?.score == 77 })
        #expect(results.all.contains(true) && !results.all.contains(false), "\(results.all)")
    }

    /// The blocking `sync()` (an async function would pick the awaited one).
    @discardableResult
    static func blocking(_ client: SyncClient) throws -> SyncClient.Report { try client.sync() }

    @Test("a copy that becomes a new device in an awaited sync: the handle's own client goes on as that device")
    func copyBecomesNewDeviceInTheWorker() async throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try server.grant("min", "diary")
        func open(_ url: URL) throws -> Device { try SyncClientTests.device(at: url, token: token, server) }
        let original = directory.appendingPathComponent("phone.trove")
        let copy = directory.appendingPathComponent("tablet.trove")
        do {
            let phone = try open(original)
            try SyncClientTests.addNote("before", phone)
            try Self.blocking(phone.client)
        }
        try FileManager.default.copyItem(at: original, to: copy)
        let phone = try open(original)
        let tablet = try open(copy)
        try SyncClientTests.addNote("from phone", phone)
        try Self.blocking(phone.client)
        // The copy finds the server ahead of it in the worker's sync, and becomes a new device there.
        try SyncClientTests.addNote("from tablet", tablet)
        #expect(try await tablet.client.sync().becameNewDevice)
        // The handle's own client records and syncs as the new device, not as the old one (which would make
        // the server look ahead again, and the file a third device).
        try tablet.db.write { tablet.db.object(ofType: SyncNote.self, forPrimaryKey: "from tablet")!.score = 5 }
        let next = try Self.blocking(tablet.client)
        #expect(!next.becameNewDevice && next.pushed == 1, "\(next)")
        try Self.blocking(phone.client)
        #expect(phone.db.object(ofType: SyncNote.self, forPrimaryKey: "from tablet")?.score == 5)
        let devices = try server.owner.query("SELECT count(*) FROM trove_sync.devices WHERE principal = 'min'")
        #expect(devices == [["2"]], "the phone's device and the one the copy became")
    }
}
