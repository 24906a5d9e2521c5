import Foundation
import Testing
import TroveRealm

final class DynKennel: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var dogs = List<DynPup>()
    @Persisted var best: DynPup?
    @Persisted var favorites = MutableSet<DynPup>()
    @Persisted var byNick = Map<String, DynPup?>()
}

final class DynPup: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var weight: Int16 = 0
    @Persisted var nick: String?
    @Persisted var tags = List<String>()
    @Persisted var extra: AnyRealmValue = .none
    @Persisted(originProperty: "dogs") var kennels: LinkingObjects<DynKennel>
}

/// Three pups (Rex 5, Bo 2, Cy 8) in a kennel "North" that lists Rex and Bo and calls Rex its best.
private func kennelRealm(_ name: String = #function) throws -> Realm {
    let realm = try makeRealm(name, objectTypes: [DynKennel.self, DynPup.self])
    try realm.write {
        let rex = realm.create(DynPup.self, value: ["name": "Rex", "age": 5, "weight": 30, "tags": ["loud"]])
        let bo = realm.create(DynPup.self, value: ["name": "Bo", "age": 2])
        realm.create(DynPup.self, value: ["name": "Cy", "age": 8, "nick": "C"])
        realm.create(DynKennel.self, value: ["name": "North", "dogs": [rex, bo], "best": rex])
    }
    return realm
}

/// The same file through a handle that uses no model class, as a tool or a migration sees it.
private func modelFreeRealm(_ realm: Realm) throws -> Realm {
    var configuration = realm.configuration.troveConfiguration
    configuration.objectTypes = []
    return Realm(try Database(configuration: configuration))
}

/// Realm's dynamic API: `dynamicObjects`, `dynamicObject(ofType:forPrimaryKey:)`,
/// `dynamicCreate` and `DynamicObject`, read and written by name.
@Suite("DynamicObject and the dynamic Realm API")
struct DynamicObjectTests {
    @Test("dynamicObjects reads every object of a type named as a string; values come back as their Swift types")
    func read() throws {
        let realm = try kennelRealm()
        let pups = realm.dynamicObjects("DynPup")
        #expect(pups.count == 3)
        #expect(pups.objectSchema.name == "DynPup")
        let rex = try #require(pups.filter("name == 'Rex'").first)
        #expect(rex["name"] as? String == "Rex")
        #expect(rex["age"] as? Int == 5)
        #expect(rex.value(forUndefinedKey: "name") as? String == "Rex")
        try realm.write { rex.setValue(6, forUndefinedKey: "age") }
        #expect(realm.object(ofType: DynPup.self, forPrimaryKey: "Rex")?.age == 6)
        try realm.write { rex.setValue(5, forUndefinedKey: "age") }
        #expect(rex["weight"] as? Int16 == 30)  // an Int16 property reads as Int16
        // Integers cast to any width, as Realm's NSNumber does.
        #expect(rex["age"] as? Int64 == 5 && rex["age"] as? Int8 == 5 && rex["weight"] as? Int == 30)
        #expect(realm.objects(DynPup.self).first { $0.name == "Rex" }?["age"] as? Int32 == 5)
        #expect(rex["nick"] == nil)
        #expect(rex.age as? Int == 5)  // @dynamicMemberLookup
        #expect(rex.value(forKey: "name") as? String == "Rex")
        #expect((rex["tags"] as? List<String>)?.array() == ["loud"])
        #expect(rex.objectSchema.name == "DynPup")
        #expect(rex.objectSchema.properties.map(\.name) == ["name", "age", "weight", "nick", "tags", "extra", "kennels"])
        #expect(String(describing: rex).hasPrefix("DynPup {\n\tname = Rex;\n\tage = 5;"))
        #expect(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Cy")?["nick"] as? String == "C")
        #expect(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Zed") == nil)
    }

    @Test("filter, sort and aggregate dynamic results like any results")
    func query() throws {
        let realm = try kennelRealm()
        let old = realm.dynamicObjects("DynPup").filter("age > 3")
        #expect(Set(old.compactMap { $0["name"] as? String }) == ["Rex", "Cy"])
        let sorted = realm.dynamicObjects("DynPup").sorted(byKeyPath: "age", ascending: false)
        #expect(sorted.map { $0["name"] as? String } == ["Cy", "Rex", "Bo"])
        #expect(realm.dynamicObjects("DynPup").max(ofProperty: "age") as Int? == 8)
        #expect(realm.dynamicObjects("DynKennel").filter("ANY dogs.age < 3").count == 1)
    }

    @Test("the typed and the dynamic view of one stored object agree, both ways, and are equal")
    func typedAndDynamicAgree() throws {
        let realm = try kennelRealm()
        let typed = try #require(realm.object(ofType: DynPup.self, forPrimaryKey: "Rex"))
        let dynamic = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
        #expect(dynamic == typed && typed.isSameObject(as: dynamic))
        #expect(dynamic != realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Bo"))
        try realm.write {
            dynamic["age"] = 6
            dynamic.nick = "R"
            dynamic["weight"] = 31  // an Int literal for an Int16 property
            typed.tags.append("fast")
        }
        #expect(typed.age == 6 && typed.nick == "R" && typed.weight == 31)
        #expect((dynamic["tags"] as? List<String>)?.array() == ["loud", "fast"])
        try realm.write {
            dynamic["nick"] = nil
            dynamic["tags"] = ["quiet"]  // a list takes an array
        }
        #expect(typed.nick == nil && Array(typed.tags) == ["quiet"])
        // (A Mixed reads as the value it holds through a dynamic object, as the Mixed itself through a typed one.)
        for property in typed.objectSchema.properties where property.collection == nil && property.type != .mixed {
            #expect("\(typed[property.name] ?? "nil")" == "\(dynamic[property.name] ?? "nil")", "\(property.name)")
        }
    }

    @Test("dynamicCreate makes objects from a dictionary or an array, upserts by primary key, and makes nested links")
    func create() throws {
        let realm = try kennelRealm()
        try realm.write {
            let dee = realm.dynamicCreate("DynPup", value: ["name": "Dee", "age": 4, "tags": ["new"]])
            #expect(dee["age"] as? Int == 4)
            realm.dynamicCreate("DynPup", value: ["Eli", 1])
            realm.dynamicCreate("DynPup", value: ["name": "Dee", "age": 9], update: .modified)
            let rex = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
            realm.dynamicCreate(
                "DynKennel", value: ["name": "South", "dogs": [["name": "Fay", "age": 3], rex], "best": ["name": "Gus"]])
        }
        let dee = try #require(realm.object(ofType: DynPup.self, forPrimaryKey: "Dee"))
        #expect(dee.age == 9 && Array(dee.tags) == ["new"])  // .modified keeps what the value does not give
        #expect(realm.object(ofType: DynPup.self, forPrimaryKey: "Eli")?.age == 1)
        let south = try #require(realm.object(ofType: DynKennel.self, forPrimaryKey: "South"))
        #expect(south.dogs.map(\.name) == ["Fay", "Rex"])
        #expect(south.best?.name == "Gus")
        #expect(realm.objects(DynPup.self).count == 7)
    }

    @Test("links and lists of dynamic objects: read, append, set, and the typed side sees them")
    func linksAndLists() throws {
        let realm = try kennelRealm()
        let north = try #require(realm.dynamicObject(ofType: "DynKennel", forPrimaryKey: "North"))
        let dogs = north.dynamicList("dogs")
        #expect(dogs.map { $0["name"] as? String } == ["Rex", "Bo"])
        #expect((north["dogs"] as? List<DynamicObject>)?.count == 2)
        // This handle uses DynPup: a link reads as a DynPup, as in Realm.
        #expect((north["best"] as? DynPup)?.name == "Rex")
        let cy = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Cy"))
        try realm.write {
            dogs.append(cy)
            north["best"] = cy
            north.dynamicMutableSet("favorites").insert(cy)
            let nicks: Map<String, DynamicObject?> = north.dynamicMap("byNick")
            nicks["c"] = cy
        }
        let typed = try #require(realm.object(ofType: DynKennel.self, forPrimaryKey: "North"))
        #expect(typed.dogs.map(\.name) == ["Rex", "Bo", "Cy"])
        #expect(typed.best?.name == "Cy" && typed.favorites.map(\.name) == ["Cy"] && typed.byNick["c"]??.name == "Cy")
        #expect(try #require(cy["kennels"] as? LinkingObjects<DynamicObject>).map { $0["name"] as? String } == ["North"])
        // A typed object takes a dynamic one where it links to its class, through key-value access.
        try realm.write { typed["best"] = realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Bo") }
        #expect(typed.best?.name == "Bo")
        // The collections of a typed object, seen as dynamic objects.
        #expect(typed.dynamicList("dogs").last?["age"] as? Int == 8)
        // Through a handle that uses no model class, links read as dynamic objects.
        let plain = try modelFreeRealm(realm)
        let best = try #require(plain.dynamicObject(ofType: "DynKennel", forPrimaryKey: "North")?["best"] as? DynamicObject)
        #expect(best.name as? String == "Bo")
    }

    @Test("a value in a Mixed property reads as itself; an object in one as the object")
    func mixed() throws {
        let realm = try kennelRealm()
        let rex = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
        #expect(rex.extra == nil)
        try realm.write { rex.extra = 12 }
        #expect(rex.extra as? Int == 12)
        #expect(realm.object(ofType: DynPup.self, forPrimaryKey: "Rex")?.extra == .int(12))
        let north = try #require(realm.dynamicObject(ofType: "DynKennel", forPrimaryKey: "North"))
        try realm.write { rex.extra = north }
        #expect(
            (try modelFreeRealm(realm).dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex")?.extra as? DynamicObject)?["name"]
                as? String == "North")
    }

    @Test("delete a dynamic object (it and its typed view are invalidated, links to it go), or a query's dynamic results")
    func delete() throws {
        let realm = try kennelRealm()
        let rex = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
        let typed = try #require(realm.object(ofType: DynPup.self, forPrimaryKey: "Rex"))
        #expect(!rex.isInvalidated)
        try realm.write { realm.delete(rex) }
        #expect(rex.isInvalidated && typed.isInvalidated)
        #expect(String(describing: rex) == "[invalid object]")
        let north = try #require(realm.object(ofType: DynKennel.self, forPrimaryKey: "North"))
        #expect(north.dogs.map(\.name) == ["Bo"] && north.best == nil)
        try realm.write { realm.delete(realm.dynamicObjects("DynPup").filter("age > 5")) }
        #expect(realm.objects(DynPup.self).map(\.name) == ["Bo"])
    }

    @Test("a dynamic object's observer hears its changes by property name, and its deletion")
    func observe() throws {
        let realm = try kennelRealm()
        let rex = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
        var heard: [String] = []
        let token = rex.observe(keyPaths: ["age"]) { change in
            switch change {
            case .change(let object, let properties):
                heard += properties.map { "\($0.name)=\(object[$0.name] ?? "nil")" }
            case .deleted: heard.append("deleted")
            case .error: heard.append("error")
            }
        }
        try realm.write { rex["nick"] = "R" }  // not observed
        try realm.write { rex.age = 7 }
        try realm.write { realm.delete(rex) }
        #expect(heard == ["age=7", "deleted"])
        token.invalidate()
    }

    @Test("a dynamic object freezes at the latest commit and thaws to a live one")
    func freezeAndThaw() throws {
        let realm = try kennelRealm()
        let rex = try #require(realm.dynamicObject(ofType: "DynPup", forPrimaryKey: "Rex"))
        let frozen = rex.freeze()
        try realm.write { rex["age"] = 9 }
        #expect(frozen.isFrozen && !rex.isFrozen)
        #expect(frozen["age"] as? Int == 5)
        #expect(frozen.thaw()?["age"] as? Int == 9)
    }

    @Test("a wrong property name, a value of the wrong type or an unknown type traps with the reason, as Realm raises")
    func misuseTraps() async throws {
        let wrongName = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try makeRealm("wrongName", objectTypes: [DynPup.self])
            try realm.write { realm.create(DynPup.self, value: ["name": "Rex"]) }
            _ = realm.dynamicObjects("DynPup").first?["nmae"]
        }
        #expect(
            String(decoding: try #require(wrongName).standardErrorContent, as: UTF8.self)
                .contains("DynPup has no property 'nmae'; its properties are name, age"))
        let wrongMember = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try makeRealm("wrongMember", objectTypes: [DynPup.self])
            try realm.write { realm.create(DynPup.self, value: ["name": "Rex"]) }
            _ = realm.dynamicObjects("DynPup").first?.agee
        }
        #expect(String(decoding: try #require(wrongMember).standardErrorContent, as: UTF8.self).contains("no property 'agee'"))
        let wrongType = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try makeRealm("wrongType", objectTypes: [DynPup.self])
            try realm.write {
                let rex = realm.dynamicCreate("DynPup", value: ["name": "Rex"])
                rex["age"] = "five"
            }
        }
        #expect(
            String(decoding: try #require(wrongType).standardErrorContent, as: UTF8.self)
                .contains("Invalid value 'five' of type 'String' for 'Int' property 'DynPup.age'"))
        let unknownType = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try makeRealm("unknownType", objectTypes: [DynPup.self])
            _ = realm.dynamicObjects("DynPupp")
        }
        #expect(
            String(decoding: try #require(unknownType).standardErrorContent, as: UTF8.self).contains("did you mean 'DynPup'?"))
        let notAList = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try makeRealm("notAList", objectTypes: [DynPup.self])
            try realm.write { realm.create(DynPup.self, value: ["name": "Rex"]) }
            _ = realm.dynamicObjects("DynPup").first?.dynamicList("tags")
        }
        #expect(
            String(decoding: try #require(notAList).standardErrorContent, as: UTF8.self)
                .contains("DynPup.tags is a List<String>, not a List<DynamicObject>"))
        await #expect(processExitsWith: .failure) {
            let realm = try makeRealm("noKeyUpdate", objectTypes: [DynPup.self])
            try realm.write { realm.dynamicCreate("DynPup", value: ["name": "Rex"]) }
            try realm.write { realm.dynamicCreate("DynPup", value: ["name": "Rex"]) }  // a duplicate primary key
        }
    }
}

/// Realm's migration block, which hands `DynamicObject`s (`MigrationObject`s).
@Suite("Migrations hand DynamicObjects")
struct DynamicMigrationTests {
    enum V1 {
        final class Pet: Object {
            @Persisted(primaryKey: true) var id = ""
            @Persisted var name = ""
            @Persisted var legs = 4
            @Persisted var owner: Keeper?
        }
        final class Keeper: Object {
            @Persisted(primaryKey: true) var id = ""
            @Persisted var pets = List<Pet>()
        }
    }
    enum V2 {
        final class Pet: Object {
            @Persisted(primaryKey: true) var id = ""
            @Persisted var title = ""
            @Persisted var legs = ""
            @Persisted var owner: Keeper?
        }
        final class Keeper: Object {
            @Persisted(primaryKey: true) var id = ""
            @Persisted var pets = List<Pet>()
        }
    }

    @Test("old objects read the old schema, new ones are live; create and delete; the results are stored")
    func migrate() throws {
        let url = realmDirectory().appendingPathComponent("pets.realm")
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [V1.Pet.self, V1.Keeper.self]))
            try realm.write {
                let keeper = realm.create(V1.Keeper.self, value: ["id": "k"])
                for (id, name, legs) in [("a", "Ann", 4), ("b", "Bob", 3), ("c", "Cat", 0)] {
                    let pet = realm.create(V1.Pet.self, value: ["id": id, "name": name, "legs": legs, "owner": keeper])
                    keeper.pets.append(pet)
                }
            }
        }
        let migrating = Realm.Configuration(
            fileURL: url, schemaVersion: 2,
            migrationBlock: { migration, _ in
                // A type in neither schema has no objects (as in Realm).
                migration.enumerateObjects(ofType: "NoPetsHere") { _, _ in Issue.record("no objects to visit") }
                migration.enumerateObjects(ofType: "Pet") { oldObject, newObject in
                    let old = oldObject!, new = newObject!
                    #expect(old.objectSchema["name"] != nil && old.objectSchema["title"] == nil)
                    #expect(new.objectSchema["title"] != nil && new.objectSchema["name"] == nil)
                    #expect(old.legs is Int && new.legs is String)  // converted to the new type already
                    #expect((old.owner as? DynamicObject)?["id"] as? String == "k")
                    #expect(new.owner is DynamicObject)
                    new["title"] = (old["name"] as! String).uppercased()
                    if old["legs"] as? Int == 0 { migration.delete(new) }
                }
                let dan = migration.create("Pet", value: ["id": "d", "title": "DAN", "legs": "2"])
                migration.enumerateObjects(ofType: "Keeper") { _, newObject in
                    newObject!.dynamicList("pets").append(dan)
                    #expect(newObject!.dynamicList("pets").count == 3)
                }
            }, objectTypes: [V2.Pet.self, V2.Keeper.self])
        let realm = try Realm(configuration: migrating)
        #expect(realm.objects(V2.Pet.self).sorted(byKeyPath: "id").map(\.title) == ["ANN", "BOB", "DAN"])
        #expect(realm.object(ofType: V2.Pet.self, forPrimaryKey: "b")?.legs == "3")
        #expect(realm.object(ofType: V2.Keeper.self, forPrimaryKey: "k")?.pets.map(\.id) == ["a", "b", "d"])
    }
}

/// A model class no test names in code before asking for it by name.
final class Postcard: Object {
    @Persisted var greeting = ""
    @Persisted var stamps = 0
}

@Suite("Every model class of the program, as Realm's default schema has them")
struct ModelClassDiscoveryTests {
    @Test("the default schema lists a model class the file does not store yet; the dynamic API creates and reads it by name")
    func neverUsedClassByName() throws {
        let realm = try makeRealm()
        let schema = try #require(realm.schema["Postcard"])
        #expect(schema.properties.map(\.name) == ["greeting", "stamps"])
        #expect(realm.schema["Object"] == nil && realm.schema["DynamicObject"] == nil)
        try realm.write {
            let card = realm.dynamicCreate("Postcard", value: ["greeting": "hi", "stamps": 2])
            #expect(card["greeting"] as? String == "hi")
        }
        #expect(realm.dynamicObjects("Postcard").count == 1)
        #expect(realm.objects(Postcard.self).first?.stamps == 2)
    }

    @Test("a dynamic read in a fresh Realm hands a link out as its model class, as Realm's typed Realms do")
    func linksAsModelClasses() throws {
        let url = realmDirectory().appendingPathComponent("links.realm")
        do {
            let writer = try Realm(configuration: Realm.Configuration(fileURL: url))
            try writer.write { writer.add(Walker(value: ["name": "Ann", "dog": ["Rex", 3]])) }
        }  // the handle goes: the next Realm is a fresh one, with no class bound yet
        let walker = try #require(try Realm(configuration: Realm.Configuration(fileURL: url)).dynamicObjects("Walker").first)
        #expect((walker["dog"] as? Dog)?.age == 3)
    }

    @Test("a configuration that names its types lists only those")
    func namedTypesOnly() throws {
        let url = realmDirectory().appendingPathComponent("named-\(UUID().uuidString).realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [Dog.self]))
        #expect(realm.schema["Dog"] != nil)
        #expect(realm.schema["Postcard"] == nil)
        #expect(Postcard.sharedSchema()?.className == "Postcard")
    }
}
