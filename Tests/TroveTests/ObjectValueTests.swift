import Foundation
import Testing

@testable import Trove

final class Stamp: Object {
    @Persisted var at: Date
    @Persisted var token: UUID
}

/// Objects made from values (Realm's `Object(value:)` and `create(_:value:update:)`).
@Suite struct ObjectValueTests {
    @Test("Object(value:) from a dictionary, an array in property order, or another object, with nested links and lists")
    func unmanagedFromValues() throws {
        let fromDictionary = Owner(value: ["name": "Ana", "pet": ["name": "Rex", "age": 3]])
        #expect(fromDictionary.name == "Ana")
        #expect(fromDictionary.pet?.name == "Rex" && fromDictionary.pet?.age == 3)
        let fromArray = Pet(value: ["Bo", 5])
        #expect(fromArray.name == "Bo" && fromArray.age == 5 && fromArray.owner == nil)
        let copy = Pet(value: fromArray)
        #expect(copy.name == "Bo" && copy.age == 5 && copy !== fromArray)
        // A mixed integer stays an integer in the copy (not the Double an NSNumber would make).
        let setting = Setting(value: ["name": "limit", "value": Mixed.int(20)])
        #expect(Setting(value: setting).value == .int(20))
        let item = ConformanceItem(value: [
            "id": 1, "int16": 7, "optName": NSNull(), "tags": ["a", "b"], "numbers": [1, 2],
            "parts": [["id": 10, "label": "wheel"], ConformancePart(value: ["id": 11])],
        ])
        #expect(item.int16 == 7 && item.optName == nil)
        #expect(Array(item.tags) == ["a", "b"] && Array(item.numbers) == [1, 2])
        #expect(item.parts.map(\.id) == [10, 11] && item.parts.first?.label == "wheel")
        let db = try makeDatabase()
        try db.write { try db.add(item) }
        #expect(db.objects(ConformancePart.self).count == 2)
        expectValid(db)
    }

    @Test(
        "a Date declared without a value is the moment the object is made, a UUID a new one, as in Realm; both are stored as made"
    )
    func freshDefaults() throws {
        let before = Date()
        let (a, b) = (Stamp(), Stamp())
        #expect(a.at >= before && a.at <= Date() && a.token != b.token)
        let db = try makeDatabase()
        try db.write { try db.add([a, b]) }
        let stored = db.objects(Stamp.self).map(\.token)
        #expect(Set(stored) == [a.token, b.token])
        #expect(db.objects(Stamp.self).first?.at == a.at)
    }

    @Test("value(forKeyPath:) and setValue(_:forKeyPath:) follow links, managed or not")
    func keyPathsThroughLinks() throws {
        let owner = Owner(value: ["name": "Ana", "pet": ["name": "Rex", "age": 3]])
        #expect(owner.value(forKeyPath: "pet.name") as? String == "Rex")
        owner.setValue(4, forKeyPath: "pet.age")
        #expect(owner.pet?.age == 4)
        let db = try makeDatabase()
        try db.write { try db.add(owner) }
        try db.write { owner.setValue("Max", forKeyPath: "pet.name") }
        #expect(db.objects(Pet.self).first?.name == "Max")
        #expect(Owner(value: ["name": "Bo"]).value(forKeyPath: "pet.name") == nil)
    }

    @Test("a class stored under another name (_realmObjectName) is that type for queries, links and the schema")
    func renamedType() throws {
        let db = try makeDatabase()
        try db.write { try db.add(RenamedStall(value: ["code": "A1"])) }
        #expect(RenamedStall.objectTypeName == "Market Stall")
        #expect(try db.storedSchemas().contains { $0.name == "Market Stall" })
        #expect(try db.dynamicObjects("Market Stall").count == 1)
        #expect(db.objects(RenamedStall.self).first?.code == "A1")
    }

    @Test("an integer a narrow property cannot hold is refused by name, not stored cut to its width")
    func narrowIntegersOutOfRangeAreRefused() throws {
        let db = try makeDatabase()
        _ = db.objects(AllTypes.self).count  // registers the type
        try db.write { try db.add(["id": .int(1), "int8": .int(127), "int16": .int(-32_768)], ofType: "AllTypes") }
        for (property, value) in [("int8", 300), ("int8", -129), ("int16", 40_000), ("int32", 1 << 40)] {
            let error = expectTroveError(.invalidValue) {
                try db.write { try db.add(["id": .int(2), property: .int(Int64(value))], ofType: "AllTypes") }
            }
            #expect(error?.message.contains("property \(property)") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("out of its range") == true, "\(error?.message ?? "")")
        }
        let stored = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 1))
        #expect(stored.int8 == 127 && stored.int16 == -32_768)
        #expect(db.objects(AllTypes.self).count == 1)
    }

    @Test("values convert as Realm converts them: any sequence for a list, a Double for a Float, an Int for a Double")
    func realmConversions() throws {
        let parts = List<ConformancePart>()
        parts.append(ConformancePart(value: ["id": 1]))
        let item = ConformanceItem(value: ["id": 1, "float": 1.5 as Double, "double": 2, "parts": Optional(parts) as Any])
        #expect(item.float == 1.5 && item.double == 2)
        #expect(item.parts.map(\.id) == [1])
        let db = try makeDatabase()
        try db.write { try db.add(item) }
        let copy = ConformanceItem(value: ["id": 2, "parts": item.parts, "tags": db.objects(ConformancePart.self).map(\.label)])
        #expect(copy.parts.map(\.id) == [1])
        try db.write {
            try db.add(ConformancePart(value: ["id": 2]))
            item.setValue(db.objects(ConformancePart.self).sorted(by: \.id), forKey: "parts")
        }
        #expect(item.parts.map(\.id) == [1, 2])
    }

    @Test("create(_:value:update:) copies the objects its value holds, unless they are stored objects of the same handle")
    func createCopiesGivenObjects() throws {
        let db = try makeDatabase()
        let standalone = Pet(value: ["name": "Rex", "age": 3])
        let other = try makeDatabase("createCopiesGivenObjectsOther")
        let foreign = Pet(value: ["name": "Bo", "age": 5])
        try other.write { try other.add(foreign) }
        try db.write {
            let stored = try db.create(Owner.self, value: ["name": "Ana", "pet": standalone])
            #expect(stored.pet?.name == "Rex" && stored.pet !== standalone)
            let fromOther = try db.create(Owner.self, value: ["name": "Cy", "pet": foreign])
            #expect(fromOther.pet?.name == "Bo" && fromOther.pet?.database === db)
            let linked = try db.create(Owner.self, value: ["name": "Di", "pet": stored.pet as Any])
            #expect(linked.pet == stored.pet)
        }
        #expect(!standalone.isManaged)
        #expect(foreign.database === other)
        #expect(db.objects(Pet.self).count == 2)
    }

    @Test("create makes the class its metatype names at run time, whatever its static type")
    func createUsesTheDynamicType() throws {
        let db = try makeDatabase()
        let type: Object.Type = Owner.self
        try db.write {
            let made = try db.create(type, value: ["name": "Ana"])
            #expect(made is Owner && made.objectSchema.name == "Owner")
            let updated = try db.create(type, value: made, update: .all)
            #expect(updated === made || updated == made)
        }
        #expect(db.objects(Owner.self).count == 1)
    }

    @Test("create(_:value:update:) adds; with .modified it updates only the given properties, and upserts nested objects")
    func createAndUpdate() throws {
        let db = try makeDatabase()
        try db.write {
            let made = try db.create(Owner.self, value: ["name": "Ana", "pet": ["name": "Rex", "age": 3]])
            #expect(made.isManaged && made.pet?.isManaged == true)
            expectTroveError(.primaryKeyExists) { try db.create(Owner.self, value: ["name": "Ana"]) }
        }
        try db.write {
            try db.create(Folder.self, value: ["name": "root", "readme": ["text": "v1"]])
            // Only `readme` is given: nothing else of root changes; `child` upserts the stored "docs".
            try db.create(Folder.self, value: ["name": "docs"])
            let updated = try db.create(
                Folder.self, value: ["name": "root", "child": ["name": "docs", "readme": ["text": "docs"]]], update: .modified)
            #expect(updated.readme?.text == "v1")
            #expect(updated.child?.readme?.text == "docs")
        }
        #expect(db.objects(Folder.self).count == 2)
        #expect(db.objects(Owner.self).first?.pet?.name == "Rex")
        expectValid(db)
    }

    @Test("keys a model lacks are ignored, as Realm ignores them")
    func unknownKeysAreIgnored() throws {
        let db = try makeDatabase()
        let pet = try db.write { try db.create(Pet.self, value: ["name": "Rex", "nmae": "typo", "species": "dog"]) }
        #expect(pet.name == "Rex")
        #expect(Pet(value: ["age": 3, "color": "brown"]).age == 3)
        #expect(db.objects(Pet.self).count == 1)
    }

    @Test("wrong types are clear errors, and nothing is written")
    func badValues() async throws {
        let db = try makeDatabase()
        let wrongType = expectTroveError(.invalidValue) { try db.write { try db.create(Pet.self, value: ["name": 3]) } }
        #expect(wrongType?.message == "Invalid value '3' of type 'Int' for 'String' property 'Pet.name'")
        expectTroveError(.invalidValue) { try db.write { try db.create(Pet.self, value: ["Rex", 3, nil, "extra"]) } }
        expectTroveError(.invalidValue) { try db.write { try db.create(ConformanceItem.self, value: ["int16": 100_000]) } }
        expectTroveError(.notInWriteTransaction) { try db.create(Pet.self, value: ["name": "Rex"]) }
        #expect(db.objects(Pet.self).isEmpty)
        await #expect(processExitsWith: .failure) { _ = Pet(value: ["age": "old"]) }
    }
}

final class RenamedStall: Object {
    override class func _realmObjectName() -> String? { "Market Stall" }
    @Persisted var code = ""
}
