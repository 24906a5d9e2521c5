import Foundation
import Testing
import TroveRealm

/// Models as Realm's pre-`@Persisted` code declared them, with only
/// `@objc dynamic` and `let` turned into `@Persisted var`.
final class LegacyOwner: Object {
    @Persisted var name = ""
    @Persisted var age = RealmOptional<Int>()
    @Persisted var score = RealmProperty<Double?>()
    @Persisted var tag = RealmProperty<String>()
    @Persisted var kind = LegacyKind.cat
    @Persisted var pets = List<LegacyPet>()
    var scratch = 0  // not stored

    override class func primaryKey() -> String? { "name" }
    override class func indexedProperties() -> [String] { ["age"] }
    override class func ignoredProperties() -> [String] { ["scratch"] }
}

enum LegacyKind: Int, RealmEnum, Codable {
    case cat = 1
    case dog = 3
}

final class LegacyPet: Object {
    @Persisted var name = ""
    @Persisted var owners = LinkingObjects(fromType: LegacyOwner.self, property: "pets")
}

final class LegacyWrongKey: Object {
    @Persisted var name = ""
    override class func primaryKey() -> String? { "id" }
}

final class LegacyIgnoredPersisted: Object {
    @Persisted var name = ""
    override class func ignoredProperties() -> [String] { ["name"] }
}

/// Realm's legacy declarations left as they were (no `@Persisted`): stored as Realm stores them.
final class LegacyUnwrapped: Object {
    @Persisted var name = ""
    let tags = List<String>()
    var age = RealmOptional<Int>()
    let mood = RealmProperty<AnyRealmValue>()
    let seen = MutableSet<Int>()
    let notes = Map<String, String>()
    let pets = List<LegacyUnwrappedPet>()
    let scratch = List<String>()  // transient, and says so

    override class func primaryKey() -> String? { "name" }
    override class func ignoredProperties() -> [String] { ["scratch"] }
}

final class LegacyUnwrappedPet: Object {
    @Persisted var name = ""
    let owners = LinkingObjects(fromType: LegacyUnwrapped.self, property: "pets")
}

@Suite("Realm's legacy model declarations")
struct LegacyModelTests {
    @Test(
        "a List, RealmOptional, RealmProperty, LinkingObjects, MutableSet or Map declared without @Persisted is stored, as Realm stores it"
    )
    func unwrappedLegacyDeclarationsAreStored() throws {
        let url = realmDirectory().appendingPathComponent("legacy.realm")
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [LegacyUnwrapped.self, LegacyUnwrappedPet.self])
        do {
            let realm = try Realm(configuration: configuration)
            #expect(
                realm.schema["LegacyUnwrapped"]?.properties.map(\.name) == [
                    "name", "tags", "age", "mood", "seen", "notes", "pets",
                ])
            let min = LegacyUnwrapped()
            min.name = "Min"
            min.tags.append(objectsIn: ["a", "b"])
            min.age.value = 30
            min.mood.value = .string("happy")
            min.seen.insert(7)
            min.notes["k"] = "v"
            min.scratch.append("kept in memory only")
            let rex = LegacyUnwrappedPet()
            rex.name = "Rex"
            min.pets.append(rex)
            try realm.write { realm.add(min) }
            // The object added reads its stored values, and writes them.
            #expect(Array(min.tags) == ["a", "b"] && min.age.value == 30)
            try realm.write {
                min.tags.append("c")
                min.age.value = 31
                min.seen.insert(8)
            }
            #expect(rex.owners.map(\.name) == ["Min"])
            #expect(realm.objects(LegacyUnwrapped.self).filter("age == 31 AND ANY tags == 'c'").count == 1)
            // Created from values too.
            try realm.write {
                realm.create(LegacyUnwrapped.self, value: ["name": "Bo", "tags": ["x"], "age": 5, "notes": ["n": "m"]])
            }
        }
        let realm = try Realm(configuration: configuration)
        let min = try #require(realm.object(ofType: LegacyUnwrapped.self, forPrimaryKey: "Min"))
        #expect(Array(min.tags) == ["a", "b", "c"])
        #expect(min.age.value == 31)
        #expect(min.mood.value == .string("happy"))
        #expect(Set(min.seen) == [7, 8])
        #expect(min.notes["k"] == "v")
        #expect(min.scratch.isEmpty)
        #expect(min.pets.first?.owners.count == 1)
        let bo = try #require(realm.object(ofType: LegacyUnwrapped.self, forPrimaryKey: "Bo"))
        #expect(Array(bo.tags) == ["x"] && bo.age.value == 5 && bo["age"] as? Int == 5)
        #expect(bo.notes["n"] == "m")
        // Key paths name them too: typed queries, sorting, observing, _name(for:).
        #expect(realm.objects(LegacyUnwrapped.self).where { $0.tags.contains("c") }.map(\.name) == ["Min"])
        #expect(realm.objects(LegacyUnwrapped.self).where { $0.tags.count == 1 }.map(\.name) == ["Bo"])
        #expect(LegacyUnwrapped.propertyPath(of: \LegacyUnwrapped.seen) == "seen")
        #expect(LegacyUnwrapped.propertyPath(of: \LegacyUnwrapped.mood) == "mood")
        #expect(LegacyUnwrapped.propertyPath(of: \LegacyUnwrapped.scratch) == nil)
        #expect(_name(for: \LegacyUnwrappedPet.owners) == "owners")  // inverse links declared with `let`
        // A legacy property outlives the object instance it was read from, as in Realm.
        var age: RealmOptional<Int>?
        do { age = realm.object(ofType: LegacyUnwrapped.self, forPrimaryKey: "Bo")?.age }
        #expect(age?.value == 5)
        try realm.write { age?.value = 6 }
        #expect(bo.age.value == 6)
        // So do its collections: a legacy list or map read before the object was added.
        var tags: List<String>?
        var notes: Map<String, String>?
        do {
            let cy = LegacyUnwrapped()
            cy.name = "Cy"
            tags = cy.tags
            notes = cy.notes
            try realm.write { realm.add(cy) }
        }
        let list = try #require(tags)
        #expect(list.realm == realm)
        var changes = 0
        let token = list.observe { _ in changes += 1 }
        list.realm?.beginWrite()
        list.append("new")
        notes?["k"] = "v"
        try list.realm?.commitWrite()
        let cy = try #require(realm.object(ofType: LegacyUnwrapped.self, forPrimaryKey: "Cy"))
        #expect(Array(cy.tags) == ["new"] && cy.notes["k"] == "v")
        #expect(changes == 2)
        token.invalidate()
    }

    @Test("primaryKey() and indexedProperties() shape the schema; ignored properties stay out")
    func classMethods() throws {
        let realm = try makeRealm(objectTypes: [LegacyOwner.self, LegacyPet.self])
        let schema = try #require(realm.schema["LegacyOwner"])
        #expect(schema.primaryKeyProperty?.name == "name")
        #expect(schema.properties.first { $0.name == "age" }?.isIndexed == true)
        #expect(!schema.properties.contains { $0.name == "scratch" })
        try realm.write { realm.add(LegacyOwner(value: ["name": "Min"])) }
        try realm.write { realm.add(LegacyOwner(value: ["name": "Min", "tag": "updated"]), update: .modified) }
        #expect(realm.objects(LegacyOwner.self).count == 1)
        #expect(realm.object(ofType: LegacyOwner.self, forPrimaryKey: "Min")?.tag.value == "updated")
    }

    @Test("RealmOptional and RealmProperty read and write through .value, managed or not, and are queryable")
    func realmPropertyValues() throws {
        let realm = try makeRealm(objectTypes: [LegacyOwner.self, LegacyPet.self])
        let owner = LegacyOwner()
        owner.name = "Min"
        #expect(owner.age.value == nil)
        owner.age.value = 30
        owner.score.value = 4.5
        owner.kind = .dog
        try realm.write { realm.add(owner) }
        let stored = try #require(realm.objects(LegacyOwner.self).first)
        #expect(stored.age.value == 30)
        #expect(stored.score.value == 4.5)
        #expect(stored.kind == .dog)
        try realm.write { stored.age.value = nil }
        #expect(owner.age.value == nil)
        try realm.write { stored.age.value = 41 }
        #expect(realm.objects(LegacyOwner.self).filter("age > 40").count == 1)
        #expect(realm.objects(LegacyOwner.self).filter("age == nil").count == 0)
    }

    @Test("key-value access reads and writes the value inside a RealmProperty")
    func realmPropertyByName() throws {
        let realm = try makeRealm(objectTypes: [LegacyOwner.self, LegacyPet.self])
        let owner = LegacyOwner()
        #expect(owner["age"] == nil)
        owner["age"] = 7
        #expect(owner["age"] as? Int == 7)
        try realm.write { realm.add(owner) }
        #expect(owner.value(forKey: "age") as? Int == 7)
        try realm.write { owner.setValue(nil, forKey: "age") }
        #expect(owner["age"] == nil && owner.age.value == nil)
        // An object set by name into a RealmProperty<AnyRealmValue> is held as a mixed link.
        let mooded = LegacyUnwrapped()
        let pet = LegacyUnwrappedPet()
        mooded.setValue(pet, forKey: "mood")
        #expect(mooded.mood.value == .object(pet))
        mooded.setValue("calm", forKey: "mood")
        #expect(mooded.mood.value == .string("calm"))
    }

    @Test("LinkingObjects(fromType:property:) is the inverse of the named link")
    func linkingObjectsFromType() throws {
        let realm = try makeRealm(objectTypes: [LegacyOwner.self, LegacyPet.self])
        let pet = LegacyPet(value: ["name": "Rex"])
        try realm.write { realm.add(LegacyOwner(value: ["name": "Min", "pets": [pet]])) }
        #expect(pet.owners.map(\.name) == ["Min"])
        let owners = pet.owners
        #expect(!owners.isInvalidated)
        realm.invalidate()
        #expect(owners.isInvalidated)  // what the Realm handed out before invalidate()
        #expect(!pet.owners.isInvalidated)  // read again
    }

    @Test("a primaryKey() or ignoredProperties() that does not fit the properties is a model error")
    func badClassMethods() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("legacy-bad-\(UUID().uuidString).realm")
        for type in [LegacyWrongKey.self, LegacyIgnoredPersisted.self] as [Object.Type] {
            do {
                _ = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [type]))
                Issue.record("\(type) opened")
            } catch let error as Realm.Error {
                let text = "\(error)"
                #expect(text.contains(type == LegacyWrongKey.self ? "primaryKey() names 'id'" : "ignoredProperties()"))
            }
        }
    }

    @Test("List replaces ranges of elements, managed or not")
    func listRanges() throws {
        let realm = try makeRealm(objectTypes: [LegacyOwner.self, LegacyPet.self])
        let owner = LegacyOwner(value: ["name": "Min"])
        let names = ["a", "b", "c", "d"]
        owner.pets.append(objectsIn: names.map { LegacyPet(value: ["name": $0]) })
        owner.pets.replaceSubrange(1..<3, with: [LegacyPet(value: ["name": "x"])])
        #expect(owner.pets.map(\.name) == ["a", "x", "d"])
        try realm.write { realm.add(owner) }
        try realm.write {
            owner.pets[0..<2] = owner.pets[2..<3]
            owner.pets.insert(contentsOf: [LegacyPet(value: ["name": "y"])], at: 1)
            owner.pets.removeFirst()
        }
        #expect(owner.pets.map(\.name) == ["y", "d"])
        try realm.write { owner.pets.replace(index: 0, object: LegacyPet(value: ["name": "z"])) }
        #expect(owner.pets.map(\.name) == ["z", "d"])
    }
}
