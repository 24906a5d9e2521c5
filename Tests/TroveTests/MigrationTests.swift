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

enum ZooV1 {
    final class Keeper: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted(indexed: true) var badge = 0
        @Persisted var shifts = List<String>()
    }
    final class Animal: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var keeper: Keeper?
    }
}

enum ZooV2 {
    /// `Keeper` renamed to `Caretaker`; `Animal.keeper` follows.
    final class Caretaker: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted(indexed: true) var badge = 0
        @Persisted var shifts = List<String>()
        @Persisted(originProperty: "keeper") var animals: LinkingObjects<Animal>
    }
    final class Animal: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var keeper: Caretaker?
    }
}

enum MixV1 {
    final class Mix: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var songs = List<Tune>()
        @Persisted var tags = MutableSet<String>()
    }
    final class Tune: Object {
        @Persisted var title = ""
        @Persisted(originProperty: "songs") var mixes: LinkingObjects<Mix>
    }
}

enum MixV2 {
    /// `songs` renamed to `tracks`, `tags` to `labels`.
    final class Mix: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var tracks = List<Tune>()
        @Persisted var labels = MutableSet<String>()
    }
    final class Tune: Object {
        @Persisted var title = ""
        @Persisted(originProperty: "tracks") var mixes: LinkingObjects<Mix>
    }
}

@Suite struct MigrationTests {
    /// `configuration` with the suite's key (none unless the suite runs encrypted): renames move
    /// tables by name, and their entries' tokens must stay good.
    private func encrypted(_ configuration: Configuration) -> Configuration {
        var configuration = configuration
        configuration.encryptionKey = suiteEncryptionKey
        return configuration
    }

    @Test func renamingACollectionPropertyKeepsItsElementsAndInverseLinks() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("mixes.trove")
        do {
            let db = try Database(
                configuration: encrypted(
                    Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MixV1.Mix.self, MixV1.Tune.self])))
            try db.write {
                let tunes = ["a", "b", "c"].map { title -> MixV1.Tune in
                    let tune = MixV1.Tune()
                    tune.title = title
                    return tune
                }
                for (name, picks) in [("x", [0, 2, 0]), ("y", [1])] {
                    let mix = MixV1.Mix()
                    mix.name = name
                    mix.songs.append(objectsIn: picks.map { tunes[$0] })
                    mix.tags.insert("tag-\(name)")
                    try db.add(mix)
                }
            }
        }
        let db = try Database(
            configuration: encrypted(
                Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MixV2.Mix.self, MixV2.Tune.self]) {
                    migration, _ in
                    migration.renameProperty(onType: "Mix", from: "songs", to: "tracks")
                    migration.renameProperty(onType: "Mix", from: "tags", to: "labels")
                }))
        let x = try #require(db.object(ofType: MixV2.Mix.self, forPrimaryKey: "x"))
        #expect(x.tracks.map(\.title) == ["a", "c", "a"])
        #expect(x.labels.array() == ["tag-x"])
        #expect(try db.objects(MixV2.Mix.self).filter("ANY tracks.title == 'b'").map(\.name) == ["y"])
        #expect(try db.objects(MixV2.Tune.self).filter("title == 'a'").first?.mixes.map(\.name) == ["x"])
        expectValid(db)
    }

    @Test func renameTypeMovesObjectsIndexesListsCountersAndLinks() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("zoo.trove")
        do {
            let db = try Database(
                configuration: encrypted(
                    Configuration(fileURL: url, schemaVersion: 1, objectTypes: [ZooV1.Keeper.self, ZooV1.Animal.self])))
            try db.write {
                for (index, name) in ["Ann", "Bo", "Cy"].enumerated() {
                    let keeper = ZooV1.Keeper()
                    keeper.name = name
                    keeper.badge = 100 + index
                    keeper.shifts.append(contentsOf: ["mon-\(name)", "tue-\(name)"])
                    try db.add(keeper)
                }
                for id in 1...4 {
                    let animal = ZooV1.Animal()
                    animal.id = id
                    animal.keeper = db.object(ofType: ZooV1.Keeper.self, forPrimaryKey: id % 2 == 0 ? "Ann" : "Cy")
                    try db.add(animal)
                }
            }
        }
        let types: [Object.Type] = [ZooV2.Caretaker.self, ZooV2.Animal.self]
        let db = try Database(
            configuration: encrypted(
                Configuration(fileURL: url, schemaVersion: 2, objectTypes: types) { migration, _ in
                    try migration.renameType(from: "Keeper", to: "Caretaker")
                }))
        let caretakers = db.objects(ZooV2.Caretaker.self)
        #expect(caretakers.count == 3)
        #expect(db.object(ofType: ZooV2.Caretaker.self, forPrimaryKey: "Bo")?.shifts.array() == ["mon-Bo", "tue-Bo"])
        let byBadge = try caretakers.filter("badge == 102")
        #expect(byBadge.explain().contains("index on badge"))
        #expect(byBadge.map(\.name) == ["Cy"])
        #expect(db.objects(ZooV2.Animal.self).sorted(by: \.id).map { $0.keeper?.name } == ["Cy", "Ann", "Cy", "Ann"])
        #expect(db.object(ofType: ZooV2.Caretaker.self, forPrimaryKey: "Ann")?.animals.map(\.id).sorted() == [2, 4])
        #expect(try db.storedSchemas().map(\.name).sorted() == ["Animal", "Caretaker"])
        try db.write {
            let dee = ZooV2.Caretaker()
            dee.name = "Dee"
            try db.add(dee)
            db.object(ofType: ZooV2.Animal.self, forPrimaryKey: 1)?.keeper = dee
        }
        #expect(caretakers.count == 4)
        expectValid(db)
    }

    @Test func renameTypeRefusesAnUnknownOrTakenName() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("zoo.trove")
        do {
            let db = try Database(
                configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [ZooV1.Keeper.self, ZooV1.Animal.self]))
            try db.write { try db.add(ZooV1.Keeper()) }
        }
        for (from, to) in [("Zebra", "Caretaker"), ("Keeper", "Animal")] {
            let error = expectTroveError(.invalidModel) {
                try Database(
                    configuration: Configuration(
                        fileURL: url, schemaVersion: 2, objectTypes: [ZooV1.Keeper.self, ZooV1.Animal.self]
                    ) {
                        migration, _ in try migration.renameType(from: from, to: to)
                    })
            }
            #expect(error?.message.contains("renameType") == true)
        }
        // The failed migrations left the file at version 1.
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [ZooV1.Keeper.self]))
        #expect(db.objects(ZooV1.Keeper.self).count == 1)
    }

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
        // Memo is listed: the hint is the version, not the list.
        #expect(error?.message.contains("raise Configuration.schemaVersion above 1") == true, "\(String(describing: error))")
        #expect(error?.message.contains("objectTypes") == false)
        // Nothing changed: the old model still opens the file.
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
        #expect(db.objects(MemoV1.Memo.self).count == 3)
    }

    @Test func everyKindOfErrorCanBeCaughtByName() throws {
        let url = try versionOneFile()
        do {
            _ = try Database(configuration: Configuration(fileURL: url, schemaVersion: 0, objectTypes: [MemoV1.Memo.self]))
            Issue.record("opened a file newer than the model")
        } catch TroveError.migrationRequired {
        }
        #expect(TroveError.deleteDenied == TroveError.Kind.deleteDenied)
    }

    @Test func aTypeLeftOutOfAMigrationIsNamedInTheHint() throws {
        let url = try versionOneFile()
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 2, objectTypes: [Dog.self]))
        let error = expectTroveError(.migrationRequired) {
            try db.write { try db.add(MemoV2.Memo()) }
        }
        #expect(error?.message.contains("list Memo in Configuration.objectTypes") == true, "\(String(describing: error))")
    }

    @Test func aModelOlderThanTheFileIsRefused() throws {
        let url = try versionOneFile()
        let error = expectTroveError(.migrationRequired) {
            try Database(configuration: Configuration(fileURL: url, schemaVersion: 0, objectTypes: [MemoV1.Memo.self]))
        }
        #expect(error?.message.contains("newer than the model's 0") == true)
    }

    @Test func codeWithoutTheModelOpensAFileAtAnySchemaVersionWithoutMigrating() throws {
        let url = try versionOneFile()
        let before = try Data(contentsOf: url)
        var configuration = Configuration(fileURL: url)  // schema version 0, no types: a tool
        configuration.acceptsAnySchemaVersion = true
        configuration.readOnly = true
        do {
            let db = try Database(configuration: configuration)
            #expect(db.storedSchemaVersion == 1)
            #expect(try db.dynamicObjects("Memo").count == 3)
        }
        #expect(try Data(contentsOf: url) == before)
        configuration.readOnly = false
        configuration.schemaVersion = 7  // ignored: nothing migrates
        let db = try Database(configuration: configuration)
        #expect(db.storedSchemaVersion == 1)
        try db.write { try db.add(["id": .int(4), "text": .string("added by a tool")], ofType: "Memo") }
        #expect(db.storedSchemaVersion == 1)
        #expect(
            try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
                .objects(MemoV1.Memo.self).count == 4)
    }

    @Test func renamesTypeChangesRemovalsAndNewPropertiesMigrateInOneStep() throws {
        let url = try versionOneFile()
        let configuration = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]) { migration, old in
            #expect(old == 1)
            #expect(migration.oldSchema.first { $0.name == "Memo" }?["code"] != nil)
            migration.renameProperty(onType: "Memo", from: "text", to: "body")
            migration.enumerateObjects(ofType: "Memo") { old, new in
                // Old values by their old names; new ones already carried over.
                if let stars = old?["stars"] as? Int { new?["rating"] = Double(stars) / 2 }
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
            migration.enumerateObjects(ofType: "Memo") { _, new in new?["body"] = "half done" }
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
            migration.deleteData(forType: "Memo")
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

/// A model with narrow integers, enumerated in a migration.
final class Dial: Object {
    @Persisted var level: Int8 = 0
    @Persisted var reading: Int16 = 0
    @Persisted var name = ""
}

@Suite("Migrations of narrow integers and deleted data")
struct MigrationDetailTests {
    @Test func oldAndNewObjectsReadNarrowIntegersAsTheirTypeAndDeletedDataIsNotEnumerated() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dials-\(UUID().uuidString).trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [Dial.self]))
            try db.write {
                for level in 1...3 { try db.add(Dial(value: ["level": Int8(level), "reading": Int16(level * 10)])) }
            }
        }
        nonisolated(unsafe) var levels: [Int8] = []
        nonisolated(unsafe) var afterDeletion = 0
        let config = Configuration(fileURL: url, schemaVersion: 1, objectTypes: [Dial.self]) { migration, _ in
            migration.enumerateObjects(ofType: "Dial") { old, new in
                levels.append(old?["level"] as! Int8)
                #expect(new?["reading"] as? Int16 == (old?["reading"] as? Int16))
                if old?["level"] as? Int8 == 2 { migration.delete(new!) }
            }
            migration.enumerateObjects(ofType: "Dial") { old, new in
                #expect(new?["level"] as? Int8 == old?["level"] as? Int8)
            }
            migration.enumerateObjects(ofType: "NoSuchType") { _, _ in Issue.record("a type in neither schema has no objects") }
            migration.deleteData(forType: "Dial")
            try migration.create("Dial", value: ["name": .string("fresh")])
            migration.enumerateObjects(ofType: "Dial") { _, _ in afterDeletion += 1 }
        }
        let db = try Database(configuration: config)
        #expect(levels == [1, 2, 3])
        #expect(afterDeletion == 0)
        #expect(db.objects(Dial.self).map(\.name) == ["fresh"])
    }
}
