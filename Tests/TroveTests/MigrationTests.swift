import Foundation
import Testing

@testable import Trove

/// Successive versions of one model, all stored as "Memo" (the unqualified name).
enum MemoV1 {
    final class Memo: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var text = ""
        @Persisted var stars = 0
        @Persisted var code = ""
    }
}

enum MemoV2 {
    /// `text` renamed to `body`, `stars` now a String, `code` removed, `rating` new, `tag` optional.
    final class Memo: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var body = ""
        @Persisted var stars = ""
        @Persisted var rating: Double? = nil
    }
}

enum MemoV3 {
    /// The primary key moves to `code`.
    final class Memo: Object {
        @Persisted(primaryKey: true) var code = ""
        @Persisted var text = ""
        @Persisted var stars = 0
    }
}

@Suite struct MigrationTests {
    /// A version-1 file with three memos.
    private func versionOneFile(_ name: String = #function, codes: [String] = ["a", "b", "c"]) throws -> URL {
        let url = makeTemporaryDirectory(name).appendingPathComponent("memos.trove")
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
        try db.write {
            for (index, code) in codes.enumerated() {
                let memo = MemoV1.Memo()
                memo.id = index + 1
                memo.text = "memo \(index + 1)"
                memo.stars = index * 2
                memo.code = code
                try db.add(memo)
            }
        }
        return url
    }

    @Test func aChangeThatNeedsAMigrationSaysWhatToDoWithoutOne() throws {
        let url = try versionOneFile()
        let error = expectTroveError(.migrationRequired) {
            try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV2.Memo.self]))
        }
        #expect(error?.message.contains("Memo.code") == true)
        #expect(error?.message.contains("Memo.stars: type changed from Int to String") == true)
        // Nothing changed: the old model still opens the file.
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
        #expect(db.objects(MemoV1.Memo.self).count == 3)
    }

    @Test func aModelOlderThanTheFileIsRefused() throws {
        let url = try versionOneFile()
        let error = expectTroveError(.migrationRequired) {
            try Database(configuration: Configuration(fileURL: url, schemaVersion: 0, objectTypes: [MemoV1.Memo.self]))
        }
        #expect(error?.message.contains("newer than the model's 0") == true)
    }

    @Test func renamesTypeChangesRemovalsAndNewPropertiesMigrateInOneStep() throws {
        let url = try versionOneFile()
        let configuration = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]) { migration, old in
            #expect(old == 1)
            #expect(migration.oldSchema.first { $0.name == "Memo" }?["code"] != nil)
            migration.renameProperty(onType: "Memo", from: "text", to: "body")
            try migration.enumerateObjects(ofType: "Memo") { old, new in
                // Old values by their old names; new ones already carried over.
                if case .int(let stars) = old["stars"] ?? .null { new["rating"] = .double(Double(stars) / 2) }
            }
        }
        let db = try Database(configuration: configuration)
        #expect(db.storedSchemaVersion == 2)
        let memos = db.objects(MemoV2.Memo.self).sorted(by: \.id).array()
        #expect(memos.map(\.body) == ["memo 1", "memo 2", "memo 3"])
        #expect(memos.map(\.stars) == ["0", "2", "4"])  // Int -> String
        #expect(memos.map(\.rating) == [0, 1, 2])
        #expect(db.object(ofType: MemoV2.Memo.self, forPrimaryKey: 2)?.body == "memo 2")
        expectValid(db)
        // And it stays migrated.
        let reopened = try Database(configuration: Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]))
        #expect(reopened.objects(MemoV2.Memo.self).count == 3)
    }

    @Test func aThrowingMigrationLeavesTheFileAtItsOldVersionUntouched() throws {
        struct Abort: Error {}
        let url = try versionOneFile()
        let failing = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]) { migration, _ in
            try migration.enumerateObjects(ofType: "Memo") { _, new in new["body"] = .string("half done") }
            throw Abort()
        }
        #expect(throws: Abort.self) { try Database(configuration: failing) }
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
        #expect(db.storedSchemaVersion == 1)
        #expect(db.objects(MemoV1.Memo.self).sorted(by: \.id).map(\.text) == ["memo 1", "memo 2", "memo 3"])
        expectValid(db)
    }

    @Test func aNewPrimaryKeyIsCheckedForDuplicates() throws {
        let duplicates = try versionOneFile(codes: ["a", "b", "a"])
        let error = expectTroveError(.migrationRequired) {
            try Database(configuration: Configuration(fileURL: duplicates, schemaVersion: 2, objectTypes: [MemoV3.Memo.self]))
        }
        #expect(error?.message.contains("duplicate") == true)
        let unique = try versionOneFile(#function + "unique")
        let db = try Database(configuration: Configuration(fileURL: unique, schemaVersion: 2, objectTypes: [MemoV3.Memo.self]))
        #expect(db.object(ofType: MemoV3.Memo.self, forPrimaryKey: "b")?.text == "memo 2")
        expectValid(db)
    }

    @Test func deleteDataStartsATypeOverAndCreateAddsObjects() throws {
        let url = try versionOneFile()
        let configuration = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]) { migration, _ in
            try migration.deleteData(forType: "Memo")
            try migration.create("Memo", value: ["id": .int(10), "body": .string("fresh")])
        }
        let db = try Database(configuration: configuration)
        #expect(db.objects(MemoV2.Memo.self).map(\.body) == ["fresh"])
        expectValid(db)
    }

    @Test func anAdditiveChangeWithAVersionBumpNeedsNoBlock() throws {
        let url = try versionOneFile()
        // V1 plus nothing removed: open V1 at version 5 with no block.
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 5, objectTypes: [MemoV1.Memo.self]))
        #expect(db.storedSchemaVersion == 5)
        #expect(db.objects(MemoV1.Memo.self).count == 3)
    }
}
