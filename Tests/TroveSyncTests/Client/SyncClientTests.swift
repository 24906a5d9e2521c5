import Foundation
import Testing
import Trove
import TroveStorage

@testable import TroveSync

class SyncFolder: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var color: String?
}

/// A subclass of a synced type, kept on the device: a link declared as
/// `SyncFolder` may hold one, which does not sync yet.
final class SyncSmartFolder: SyncFolder {
    @Persisted var query = ""
}

final class SyncNote: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var score = 0
    @Persisted var ratio = 0.0
    @Persisted var level: Int8 = 0
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var blob = Data()
    @Persisted var tag: UUID?
    @Persisted var folder: SyncFolder?
}

final class LocalOnly: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

/// Two (or more) Trove files syncing through a real PostgreSQL.
@Suite("Devices syncing through the server")
struct SyncClientTests {
    struct Device {
        let db: Database
        let client: SyncClient
    }

    static func device(_ server: TestSyncServer, _ principal: String, space: String = "diary", directory: URL) throws
        -> Device
    {
        let url = directory.appendingPathComponent("\(principal)-\(UUID().uuidString).trove")
        let db = try Database(
            configuration: Configuration(fileURL: url, objectTypes: [SyncNote.self, SyncFolder.self, LocalOnly.self]))
        let client = try SyncClient(
            database: db,
            configuration: .init(
                serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant(principal, space),
                space: space, types: ["SyncNote", "SyncFolder"]))
        return Device(db: db, client: client)
    }

    /// The file at `url` as a device syncing with `token` in space diary (a file may be opened again, or a copy).
    static func device(at url: URL, token: String, _ server: TestSyncServer) throws -> Device {
        let db = try Database(
            configuration: Configuration(fileURL: url, objectTypes: [SyncNote.self, SyncFolder.self, LocalOnly.self]))
        let client = try SyncClient(
            database: db,
            configuration: .init(
                serverURL: server.postgres.url("sync_device", database: "sync"), token: token, space: "diary",
                types: ["SyncNote", "SyncFolder"]))
        return Device(db: db, client: client)
    }

    /// Runs `body` with a server and devices of principals a and b in space diary.
    static func withTwoDevices(_ body: (TestSyncServer, Device, Device) throws -> Void) throws {
        try withTwoDevices(making: { try device($0, $1, directory: $2) }, body)
    }

    /// Runs `body` with a server and two devices `make` makes (for principals a and b, in a temporary directory).
    static func withTwoDevices(
        making make: (TestSyncServer, String, URL) throws -> Device, _ body: (TestSyncServer, Device, Device) throws -> Void
    ) throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(server, try make(server, "a", directory), try make(server, "b", directory))
    }

    /// Adds a note through `device`'s handle.
    static func addNote(_ id: String, title: String = "", score: Int = 0, _ device: Device) throws {
        try device.db.write {
            let note = SyncNote()
            note.id = id
            note.title = title
            note.score = score
            try device.db.add(note)
        }
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-sync-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Every note as (id, title, score, folder name), sorted.
    static func notes(_ db: Database) -> [String] {
        db.objects(SyncNote.self).sorted(by: \.id).map { "\($0.id)|\($0.title)|\($0.score)|\($0.folder?.name ?? "-")" }
    }

    @Test("an object made offline on one device arrives on another with every value exact, links included")
    func valuesArriveExactly() throws {
        try Self.withTwoDevices { server, a, b in
            let when = Date(timeIntervalSinceReferenceDate: 786_543_210.123_456_789)  // finer than microseconds
            let tag = UUID()
            try a.db.write {
                let folder = SyncFolder()
                folder.name = "여행"
                folder.color = nil
                let note = SyncNote()
                note.id = "n1"
                note.title = "it's \"quoted\" 일기"
                note.score = Int.min
                note.ratio = -0.0
                note.level = -128
                note.when = when
                note.blob = Data([0, 255, 10])
                note.tag = tag
                note.folder = folder
                try a.db.add(note)
                let nan = SyncNote()
                nan.id = "n2"
                nan.ratio = .nan
                try a.db.add(nan)
            }
            #expect(a.client.pendingChanges == 3)
            let pushed = try a.client.sync()
            #expect(pushed.pushed == 3 && pushed.rejected.isEmpty, "\(pushed)")
            #expect(a.client.pendingChanges == 0)
            let pulled = try b.client.sync()
            #expect(pulled.pulled == 3, "\(pulled)")
            let note = try #require(b.db.object(ofType: SyncNote.self, forPrimaryKey: "n1"))
            #expect(note.title == "it's \"quoted\" 일기")
            #expect(note.score == Int.min)
            #expect(note.ratio == 0 && note.ratio.sign == .minus)
            #expect(note.level == -128)
            #expect(note.when == when, "\(note.when.timeIntervalSinceReferenceDate)")
            #expect(note.blob == Data([0, 255, 10]))
            #expect(note.tag == tag)
            #expect(note.folder?.name == "여행" && note.folder?.color == nil)
            #expect(b.db.object(ofType: SyncNote.self, forPrimaryKey: "n2")?.ratio.isNaN == true)
            // What was applied is not sent back.
            #expect(b.client.pendingChanges == 0)
            #expect(try b.client.sync().pushed == 0)
            // The backend sees ordinary rows.
            #expect(
                try server.owner.query("SELECT title, score, folder FROM trove_data.\"SyncNote\" WHERE id = 'n1'") == [
                    [
                        "it's \"quoted\" 일기", String(Int.min), "여행",
                    ]
                ])
        }
    }

    @Test("concurrent edits of different properties both survive; of the same property, the later wins everywhere")
    func concurrentEditsConverge() throws {
        try Self.withTwoDevices { server, a, b in
            try Self.addNote("n", title: "first", a)
            try a.client.sync()
            try b.client.sync()
            // Offline on both: a changes score, b changes title, then both change ratio (b later).
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!.score = 10 }
            try b.db.write { b.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!.title = "from b" }
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!.ratio = 1 }
            Thread.sleep(forTimeInterval: 0.005)
            try b.db.write { b.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!.ratio = 2 }
            for _ in 0..<2 {
                try b.client.sync()
                try a.client.sync()
            }
            for device in [a, b] {
                let note = try #require(device.db.object(ofType: SyncNote.self, forPrimaryKey: "n"))
                #expect(note.title == "from b" && note.score == 10 && note.ratio == 2)
            }
            #expect(a.client.pendingChanges == 0 && b.client.pendingChanges == 0)
        }
    }

    @Test("an object deleted and another made in one write: the delete is sent, and nothing of one reaches the other")
    func deleteAndCreateInOneWrite() throws {
        try Self.withTwoDevices { server, a, b in
            try Self.addNote("old", title: "old title", score: 1, a)
            try a.client.sync()
            try b.client.sync()
            // (The new object may be given the deleted one's object key.)
            try a.db.write {
                try a.db.delete(a.db.object(ofType: SyncNote.self, forPrimaryKey: "old")!)
                let note = SyncNote()
                note.id = "new"
                note.title = "new title"
                note.score = 2
                try a.db.add(note)
            }
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "new")!.title = "newer title" }
            try a.client.sync()
            try b.client.sync()
            #expect(Self.notes(a.db) == ["new|newer title|2|-"])
            #expect(Self.notes(b.db) == ["new|newer title|2|-"])
            #expect(
                try server.owner.query("SELECT id, title FROM trove_data.\"SyncNote\" WHERE trove_cl % 2 = 1") == [
                    ["new", "newer title"]
                ])
        }
    }

    @Test("a delete wins over a concurrent edit; created again, the object has none of its old values")
    func deletesWin() throws {
        try Self.withTwoDevices { server, a, b in
            try Self.addNote("n", title: "old", score: 5, a)
            try a.client.sync()
            try b.client.sync()
            try b.db.write { try b.db.delete(b.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!) }
            Thread.sleep(forTimeInterval: 0.005)
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "n")!.title = "later edit" }
            for _ in 0..<2 {
                try b.client.sync()
                try a.client.sync()
            }
            #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "n") == nil)
            #expect(b.db.object(ofType: SyncNote.self, forPrimaryKey: "n") == nil)
            try Self.addNote("n", title: "new", a)
            try a.client.sync()
            try b.client.sync()
            let again = try #require(b.db.object(ofType: SyncNote.self, forPrimaryKey: "n"))
            #expect(again.title == "new" && again.score == 0)
        }
    }

    @Test("a backend's UPDATE reaches the device, and the device does not send it back")
    func backendWritesArrive() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.device(server, "a", directory: directory)
        try Self.addNote("n", a)
        try a.client.sync()
        try server.owner.query("UPDATE trove_data.\"SyncNote\" SET title = 'from the backend' WHERE id = 'n'")
        try server.owner.query(
            "INSERT INTO trove_data.\"SyncNote\" (trove_space, id, title) VALUES ('diary', 'b1', 'made by the backend')")
        let report = try a.client.sync()
        #expect(report.pulled == 2)
        #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "n")?.title == "from the backend")
        #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "b1")?.title == "made by the backend")
        #expect(a.client.pendingChanges == 0)
        // A value the backend left NULL stays unset on the server after the device syncs.
        try a.client.sync()
        #expect(try server.owner.query("SELECT score FROM trove_data.\"SyncNote\" WHERE id = 'b1'") == [[nil]])
    }

    @Test("a change the server refuses is undone here and reported; a refused creation is removed; the others go through")
    func rejectionsAreUndone() throws {
        try Self.withTwoDevices { server, a, b in
            try Self.addNote("kept", title: "ok", score: 3, a)
            try a.client.sync()
            // The backend allows no negative scores from now on.
            try server.owner.query(
                "ALTER TABLE trove_data.\"SyncNote\" ADD CONSTRAINT no_negative_scores CHECK (score >= 0)")
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "kept")!.score = -5 }
            try Self.addNote("refused", title: "new", score: -1, a)
            try Self.addNote("fine", title: "also new", score: 1, a)
            let report = try a.client.sync()
            #expect(Set(report.rejected.map(\.primaryKey)) == ["kept", "refused"], "\(report)")
            #expect(report.rejected.allSatisfy { $0.reason.contains("no_negative_scores") }, "\(report.rejected)")
            #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "kept")?.score == 3)
            #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "refused") == nil)
            #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "fine")?.title == "also new")
            #expect(a.client.pendingChanges == 0)
            #expect(try a.client.sync().rejected.isEmpty)
            try b.client.sync()
            #expect(Self.notes(b.db) == ["fine|also new|1|-", "kept|ok|3|-"])
            // Undone, not stuck: a later change of the same object goes through.
            try a.db.write { a.db.object(ofType: SyncNote.self, forPrimaryKey: "kept")!.score = 4 }
            try a.client.sync()
            try b.client.sync()
            #expect(b.db.object(ofType: SyncNote.self, forPrimaryKey: "kept")?.score == 4)
        }
    }

    @Test(
        "a file copied to a second device, or restored from an old copy, goes on as a new device: no change is lost",
        arguments: [true, false])
    func copiedFilesBecomeNewDevices(copyFirst: Bool) throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = try server.grant("min", "diary")
        func open(_ url: URL) throws -> Device { try Self.device(at: url, token: token, server) }
        let original = directory.appendingPathComponent("phone.trove")
        let copy = directory.appendingPathComponent("tablet.trove")
        do {
            let phone = try open(original)
            try Self.addNote("before", title: "synced", phone)
            try phone.client.sync()
        }
        try FileManager.default.copyItem(at: original, to: copy)
        let phone = try open(original)
        let tablet = try open(copy)
        // Both write, with the same device token and the same next change id.
        try Self.addNote("from phone", phone)
        try Self.addNote("from tablet", tablet)
        let (first, second) = copyFirst ? (tablet, phone) : (phone, tablet)
        #expect(try first.client.sync().becameNewDevice == false)
        let report = try second.client.sync()
        #expect(report.becameNewDevice, "\(report)")
        #expect(report.pushed == 1)
        try first.client.sync()
        for device in [phone, tablet] {
            #expect(Self.notes(device.db) == ["before|synced|0|-", "from phone||0|-", "from tablet||0|-"])
        }
        // The new device's token stays with its file: reopened with the configured token, it syncs on as itself.
        let renamed = try #require(try SyncClient.status(of: second.db)?.device)
        try second.db.write { second.db.object(ofType: SyncNote.self, forPrimaryKey: "before")!.score = 9 }
        let again = try open(URL(fileURLWithPath: second.db.path))
        #expect(try SyncClient.status(of: again.db)?.device == renamed)
        let later = try again.client.sync()
        #expect(!later.becameNewDevice && later.pushed == 1, "\(later)")
        try first.client.sync()
        #expect(first.db.object(ofType: SyncNote.self, forPrimaryKey: "before")?.score == 9)
    }

    @Test("an encrypted file syncs, and its sync bookkeeping shows no primary key, value or type name")
    func encryptedFilesSync() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("sealed.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [SyncNote.self, SyncFolder.self, LocalOnly.self])
        configuration.encryptionKey = Data((0..<64).map { UInt8($0 * 3 & 255) })
        let syncing = SyncClient.Configuration(
            serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant("a", "diary"),
            space: "diary", types: ["SyncNote", "SyncFolder"])
        do {
            let db = try Database(configuration: configuration)
            let client = try SyncClient(database: db, configuration: syncing)
            try db.write {
                let note = SyncNote()
                note.id = "keyvault-primary-7731"
                note.title = "unseen-title-5520"
                try db.add(note)
                let gone = SyncNote()
                gone.id = "keyvault-deleted-8842"
                try db.add(gone)
            }
            try db.write { try db.delete(db.object(ofType: SyncNote.self, forPrimaryKey: "keyvault-deleted-8842")!) }
            #expect(try client.sync().pushed == 2)
        }
        let raw = try Data(contentsOf: url)
        for text in ["keyvault-primary-7731", "keyvault-deleted-8842", "unseen-title-5520", "SyncNote", "diary"] {
            #expect(raw.range(of: Data(text.utf8)) == nil, "\(text) is readable in the encrypted file")
        }
        // Another device receives it; the encrypted file receives what that device writes.
        let b = try Self.device(server, "b", directory: directory)
        try b.client.sync()
        #expect(Self.notes(b.db) == ["keyvault-primary-7731|unseen-title-5520|0|-"])
        try b.db.write { b.db.object(ofType: SyncNote.self, forPrimaryKey: "keyvault-primary-7731")!.score = 12 }
        try b.client.sync()
        let db = try Database(configuration: configuration)
        let client = try SyncClient(database: db, configuration: syncing)
        try client.sync()
        #expect(db.object(ofType: SyncNote.self, forPrimaryKey: "keyvault-primary-7731")?.score == 12)
        #expect(client.pendingChanges == 0)
    }

    @Test("a type that cannot sync is refused, saying why; a write through a handle without a client is refused")
    func refusals() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.device(server, "a", directory: directory)
        let integerKey = #expect(throws: TroveError.self) {
            _ = try SyncClient(
                database: a.db,
                configuration: .init(serverURL: "x", token: "\(UUID().uuidString).s", space: "diary", types: ["LocalOnly"]))
        }
        #expect(integerKey?.message.contains("LocalOnly.id is the primary key of a synced type") == true)
        // A second handle on the file without a client cannot write synced types (its writes would never leave),
        // and may write the others.
        let other = try Database(
            configuration: Configuration(
                fileURL: URL(fileURLWithPath: a.db.path), objectTypes: [SyncNote.self, SyncFolder.self, LocalOnly.self]))
        let refused = #expect(throws: TroveError.self) {
            try other.write {
                let note = SyncNote()
                note.id = "sneaky"
                try other.add(note)
            }
        }
        #expect(refused?.message.contains("make the SyncClient for this handle first") == true)
        try other.write {
            let local = LocalOnly()
            local.id = 1
            try other.add(local)
        }
        // Refused again right after that handle's own commit (which knew the synced types already).
        #expect(throws: TroveError.self) {
            try other.write {
                let note = SyncNote()
                note.id = "sneaky again"
                try other.add(note)
            }
        }
        #expect(other.objects(SyncNote.self).isEmpty)
        // A synced link holding a subclass object: refused, and nothing is saved.
        let smart = SyncSmartFolder()
        smart.name = "smart"
        let subclassLink = #expect(throws: TroveError.self) {
            try a.db.write {
                let note = SyncNote()
                note.id = "in-smart"
                note.folder = smart
                try a.db.add(note)
            }
        }
        #expect(
            subclassLink?.message.contains("holds a SyncSmartFolder, a subclass of SyncFolder") == true,
            "\(subclassLink?.message ?? "")")
        #expect(a.db.object(ofType: SyncNote.self, forPrimaryKey: "in-smart") == nil)
    }
}
