import Foundation
import Testing

@testable import Trove

/// One model before and after a migration that gives its objects new string keys.
enum TagV1 {
    final class Tag: Object {
        @Persisted(primaryKey: true) var code = ""
        @Persisted var label = ""
    }
}

enum TagV2 {
    final class Tag: Object {
        @Persisted(primaryKey: true) var code = ""
        @Persisted var label = ""
        @Persisted var uses = 0
    }
}

final class DynCat: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
}

final class DynCatOwner: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var cats = List<DynCat>()
}

/// Trove's own side of dynamic objects: errors thrown where Realm traps, stored
/// values for tools, embedded objects, and migrations.
@Suite("DynamicObject in Trove")
struct TroveDynamicObjectTests {
    @Test("create(_:value:) throws what is wrong, and a failed create leaves nothing behind")
    func createErrors() throws {
        let db = try makeDatabase(configure: { $0.objectTypes = [AddressBookEntry.self, DynCat.self] })
        expectTroveError(.notInWriteTransaction) { try db.create("DynCat", value: ["name": "Rex"]) }
        try db.write {
            let wrongType = expectTroveError(.invalidValue) { try db.create("DynCat", value: ["name": "Rex", "age": "old"]) }
            #expect(wrongType?.message == "Invalid value 'old' of type 'String' for 'Int' property 'DynCat.age'")
            // A key the type lacks is ignored, as in Realm.
            #expect(try db.create("DynCat", value: ["name": "Tom", "agee": 3])["age"] as? Int == 0)
            expectTroveError(.invalidObject) { try db.create("Address", value: ["street": "Main"]) }
            // A link to an object of another type: found when the link is written, still thrown here.
            let rex = try db.create("DynCat", value: ["name": "Rex", "age": 3])
            let wrongLink = expectTroveError(.invalidValue) {
                try db.create("AddressBookEntry", value: ["name": "Ann", "address": rex])
            }
            #expect(wrongLink?.message.contains("links to Address objects, not to a DynCat") == true)
            expectTroveError(.primaryKeyExists) { try db.create("DynCat", value: ["name": "Rex"]) }
        }
        #expect(try db.dynamicObjects("DynCat").count == 2)
        #expect(try db.dynamicObjects("AddressBookEntry").isEmpty)
        expectValid(db)
    }

    @Test("an embedded object is made from nested values, and goes with its owner")
    func embedded() throws {
        let db = try makeDatabase(configure: { $0.objectTypes = [AddressBookEntry.self] })
        let entry = try db.write {
            try db.create("AddressBookEntry", value: ["name": "Ann", "address": ["street": "Main", "city": "Oslo"]])
        }
        #expect(db.object(ofType: AddressBookEntry.self, forPrimaryKey: "Ann")?.address?.city == "Oslo")
        #expect((entry["address"] as? Address)?.street == "Main")
        #expect(try db.dynamicObjects("Address").count == 1)
        try db.write { try db.delete(entry) }
        #expect(try db.dynamicObjects("Address").isEmpty)
        expectValid(db)
    }

    @Test("dynamicObject(ofType:forPrimaryKey:) throws for a key of another type or a type without one")
    func lookupErrors() throws {
        let db = try makeDatabase(configure: { $0.objectTypes = [DynCat.self, Dog.self] })
        try db.write { try db.create("DynCat", value: ["name": "Rex"]) }
        #expect(try db.dynamicObject(ofType: "DynCat", forPrimaryKey: "Rex")?["name"] as? String == "Rex")
        let wrongKey = expectTroveError(.invalidPrimaryKey) { try db.dynamicObject(ofType: "DynCat", forPrimaryKey: 3) }
        #expect(wrongKey?.message.contains("DynCat.name is String") == true)
        expectTroveError(.invalidPrimaryKey) { try db.dynamicObject(ofType: "Dog", forPrimaryKey: "x") }
        expectTroveError(.invalidModel) { try db.dynamicObject(ofType: "Cat", forPrimaryKey: "x") }
    }

    @Test("storedValues give what the file holds, for tools: a link as its object key, a collection as null")
    func storedValues() throws {
        let db = try makeDatabase(configure: { $0.objectTypes = [DynCat.self, DynCatOwner.self] })
        let (person, dog) = try db.write {
            let dog = try db.create("DynCat", value: ["name": "Rex", "age": 4])
            return (try db.create("DynCatOwner", value: ["name": "Ann", "cats": [dog]]), dog)
        }
        let values = Dictionary(uniqueKeysWithValues: zip(person.objectSchema.properties.map(\.name), person.storedValues))
        #expect(values["name"] == .string("Ann"))
        #expect(values["cats"] == .null)
        #expect(try db.elements(of: person, property: "cats") == [.int(Int64(bitPattern: dog._objectKey))])
        #expect(dog.storedValues.contains(.int(4)))
    }

    @Test("a migration's new objects take new string primary keys; a duplicate, or a new integer key, fails the migration")
    func migrationKeys() throws {
        func fileWithTags(_ name: String) throws -> URL {
            let url = makeTemporaryDirectory(name).appendingPathComponent("tags.trove")
            let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [TagV1.Tag.self]))
            try db.write {
                for code in ["a", "b", "c"] { try db.create("Tag", value: ["code": code, "label": code.uppercased()]) }
            }
            return url
        }
        let url = try fileWithTags(#function)
        let db = try Database(
            configuration: Configuration(fileURL: url, schemaVersion: 2, objectTypes: [TagV2.Tag.self]) { migration, _ in
                migration.enumerateObjects(ofType: "Tag") { oldObject, newObject in
                    newObject!["code"] = "tag-\(oldObject!["code"] as! String)"
                    newObject!.uses = 1
                }
                let made = try migration.create("Tag", value: ["code": .string("d"), "label": .string("D")])
                #expect(made["label"] as? String == "D")
            })
        #expect(db.objects(TagV2.Tag.self).map(\.code).sorted() == ["d", "tag-a", "tag-b", "tag-c"])
        #expect(db.object(ofType: TagV2.Tag.self, forPrimaryKey: "tag-b")?.label == "B")
        #expect(db.object(ofType: TagV2.Tag.self, forPrimaryKey: "b") == nil)
        expectValid(db)

        let duplicates = try fileWithTags(#function + "dup")
        let error = expectTroveError(.migrationRequired) {
            try Database(
                configuration: Configuration(fileURL: duplicates, schemaVersion: 2, objectTypes: [TagV2.Tag.self]) {
                    migration, _ in
                    migration.enumerateObjects(ofType: "Tag") { _, newObject in newObject!["code"] = "same" }
                })
        }
        #expect(
            error?.message.contains("two objects have the primary key code = \"same\"") == true, "\(String(describing: error))")
        let untouched = try Database(
            configuration: Configuration(fileURL: duplicates, schemaVersion: 1, objectTypes: [TagV1.Tag.self]))
        #expect(untouched.objects(TagV1.Tag.self).map(\.code).sorted() == ["a", "b", "c"])

        let integerKeys = makeTemporaryDirectory(#function + "int").appendingPathComponent("memos.trove")
        do {
            let v1 = try Database(
                configuration: Configuration(fileURL: integerKeys, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
            try v1.write { try v1.create("Memo", value: ["id": 1, "text": "one"]) }
        }
        let rekeyed = expectTroveError(.migrationRequired) {
            try Database(
                configuration: Configuration(fileURL: integerKeys, schemaVersion: 2, objectTypes: [MemoV1.Memo.self]) {
                    migration, _ in
                    migration.enumerateObjects(ofType: "Memo") { _, newObject in newObject!["id"] = 2 }
                })
        }
        #expect(rekeyed?.message.contains("an integer primary key is the object's key") == true)
    }

    @Test("a migration deletes objects it is handed, and skips them when it enumerates again")
    func migrationDeletes() throws {
        let url = makeTemporaryDirectory(#function).appendingPathComponent("tags.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [TagV1.Tag.self]))
            try db.write { for code in ["a", "b"] { try db.create("Tag", value: [code, code]) } }
        }
        let seen = Locked<[String]>([])
        let db = try Database(
            configuration: Configuration(fileURL: url, schemaVersion: 2, objectTypes: [TagV2.Tag.self]) { migration, _ in
                migration.enumerateObjects(ofType: "Tag") { oldObject, newObject in
                    if oldObject!["code"] as? String == "a" { migration.delete(newObject!) }
                }
                migration.enumerateObjects(ofType: "Tag") { oldObject, _ in
                    seen.withLock { $0.append(oldObject!["code"] as! String) }
                }
            })
        #expect(seen.withLock { $0 } == ["b"])
        #expect(db.objects(TagV2.Tag.self).map(\.code) == ["b"])
    }
}
