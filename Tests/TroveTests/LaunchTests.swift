import Foundation
import Testing

@testable import Trove

/// What happens to the file before it opens: seed files, caches deleted on a
/// model change, compaction on launch.
@Suite struct LaunchTests {
    @Test("a file opened with Realm's default schema (every model class of the program) has table slots for all their tables")
    func everyModelClassHasTableSlots() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("every.trove")
        do {
            _ = try Database(configuration: Configuration(fileURL: url))
        }
        var configuration = Configuration(fileURL: url, schemaVersion: 1)
        configuration.migratedModelClasses = { ModelClasses.all }
        let db = try Database(configuration: configuration)
        let tables = try db.environment.tableNames().count
        #expect(tables > 2 * ModelClasses.all.count / 3)  // the migration made the types' tables
        #expect(Int(db.environment.options.maxTables) >= Configuration.tableCount(of: ModelClasses.all))
        #expect(db.environment.options.maxTables > 1_024)  // more than a file with few types gets
    }

    @Test func aSeedFileIsCopiedOnFirstOpenOnly() throws {
        let directory = makeTemporaryDirectory()
        let seedURL = directory.appendingPathComponent("seed.trove")
        do {
            let seed = try Database(configuration: Configuration(fileURL: seedURL))
            try seed.write {
                try seed.add(
                    {
                        let memo = MemoV1.Memo(); memo.id = 1; memo.text = "bundled"; return memo
                    }())
            }
        }
        var configuration = Configuration(fileURL: directory.appendingPathComponent("app/data.trove"))
        configuration.seedFileURL = seedURL
        do {
            let db = try Database(configuration: configuration)
            #expect(db.objects(MemoV1.Memo.self).map(\.text) == ["bundled"])
            try db.write {
                try db.add(
                    {
                        let memo = MemoV1.Memo(); memo.id = 2; return memo
                    }())
            }
        }
        let again = try Database(configuration: configuration)  // the file exists: the seed is not copied over it
        #expect(again.objects(MemoV1.Memo.self).count == 2)
        configuration.fileURL = directory.appendingPathComponent("other.trove")
        configuration.seedFileURL = directory.appendingPathComponent("missing.trove")
        expectTroveError(.fileAccess) { try Database(configuration: configuration) }
    }

    @Test func aCacheWhoseModelChangedIsDeletedInsteadOfMigrated() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("cache.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
            try db.write {
                try db.add(
                    {
                        let memo = MemoV1.Memo(); memo.id = 1; return memo
                    }())
            }
        }
        var same = Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self])
        same.deleteDatabaseIfMigrationNeeded = true
        #expect(try Database(configuration: same).objects(MemoV1.Memo.self).count == 1)  // nothing changed: kept
        var changed = Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV2.Memo.self])
        changed.deleteDatabaseIfMigrationNeeded = true
        let db = try Database(configuration: changed)
        #expect(db.objects(MemoV2.Memo.self).isEmpty)
        expectValid(db)
    }

    @Test func aFileThatGrewFromDeletesShrinksWhenCompactedOnLaunch() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("big.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [MemoV1.Memo.self]))
            try db.write {
                for id in 1...20_000 {
                    let memo = MemoV1.Memo()
                    memo.id = id
                    memo.text = String(repeating: "x", count: 200)
                    try db.add(memo)
                }
            }
            try db.write { try db.delete(db.objects(MemoV1.Memo.self).filter("id > 100")) }
        }
        let before = try #require(FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        var asked: (Int, Int)?
        var configuration = Configuration(fileURL: url, objectTypes: [MemoV1.Memo.self])
        let record = Locked<(Int, Int)?>(nil)
        configuration.shouldCompactOnLaunch = { total, used in
            record.withLock { $0 = (total, used) }
            return used * 2 < total
        }
        let db = try Database(configuration: configuration)
        asked = record.withLock { $0 }
        let after = try #require(FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(asked?.0 == before)
        #expect(after * 4 < before, "compaction left \(after) of \(before) bytes")
        #expect(db.objects(MemoV1.Memo.self).count == 100)
        expectValid(db)
    }
}

@Suite struct InMemoryTests {
    @Test func handlesWithOneIdentifierShareADatabaseThatVanishesWithTheLast() throws {
        var configuration = Configuration()
        configuration.inMemoryIdentifier = "shared \(UUID().uuidString)"
        let path = configuration.fileURL.path
        do {
            let first = try Database(configuration: configuration)
            let second = try Database(configuration: configuration)
            try first.write {
                try first.add(
                    {
                        let memo = MemoV1.Memo(); memo.id = 1; return memo
                    }())
            }
            second.refresh()
            #expect(second.objects(MemoV1.Memo.self).count == 1)
            var other = Configuration()
            other.inMemoryIdentifier = "other \(UUID().uuidString)"
            #expect(try Database(configuration: other).objects(MemoV1.Memo.self).isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + "-lock"))
        let fresh = try Database(configuration: configuration)
        #expect(fresh.objects(MemoV1.Memo.self).isEmpty)
    }

    @Test func theDefaultFileAndAppGroupFilesLiveWhereConfigured() throws {
        let directory = makeTemporaryDirectory()
        // The environment variables are read at each call: set, read, restore.
        setenv("TROVE_APP_GROUPS", directory.path, 1)
        defer { unsetenv("TROVE_APP_GROUPS") }
        let shared = try Configuration.sharedFileURL(appGroup: "group.com.example.diary", fileName: "photos.trove")
        #expect(shared.path == directory.appendingPathComponent("group.com.example.diary/photos.trove").path)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: shared.deletingLastPathComponent().path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        // An app and its extension open the same file through it.
        let app = try Database(configuration: Configuration(fileURL: shared))
        try app.write { try app.add(Ticket()) }
        let widget = try Database(
            configuration: Configuration(
                fileURL: try Configuration.sharedFileURL(appGroup: "group.com.example.diary", fileName: "photos.trove")))
        #expect(widget.objects(Ticket.self).count == 1)
        expectTroveError(.fileAccess) { try Configuration.sharedFileURL(appGroup: "../escape") }
        #if os(Linux)
            unsetenv("TROVE_APP_GROUPS")
            let unset = expectTroveError(.fileAccess) { try Configuration.sharedFileURL(appGroup: "group.com.example.diary") }
            #expect(unset?.message.contains("set TROVE_APP_GROUPS") == true)
        #endif

        let chosen = directory.appendingPathComponent("chosen.trove")
        setenv("TROVE_DEFAULT_FILE", chosen.path, 1)
        defer { unsetenv("TROVE_DEFAULT_FILE") }
        #expect(Configuration.defaultFileURL.path == chosen.path)
        unsetenv("TROVE_DEFAULT_FILE")
        #expect(Configuration.defaultFileURL.lastPathComponent == "default.trove")
        #expect(Configuration.defaultFileURL.deletingLastPathComponent().lastPathComponent == "trove")
    }
}
