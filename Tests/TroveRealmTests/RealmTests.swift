import Foundation
import Testing
import TroveRealm

final class Dog: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var toys = List<String>()
}

final class Crew: Object {
    @Persisted var walkers: MutableSet<Walker>
    @Persisted var anything: List<AnyRealmValue>
}

/// Realm Swift's `Realm` surface, as Realm code uses it.
@Suite("Realm on Trove")
struct RealmTests {
    @Test("live objects of a type without a primary key are == only to themselves, as Realm's; rows compare with isSameObject")
    func unkeyedObjectEquality() throws {
        let realm = try makeRealm()
        let walker = Walker()
        walker.name = "Min"
        let alias = walker
        let rex = Dog(value: ["Rex", 3])
        try realm.write { realm.add([walker, rex] as [Object]) }
        let again = try #require(realm.objects(Walker.self).first)
        #expect(walker == alias && walker != again && walker.isSameObject(as: again))
        #expect(AnyRealmCollection(realm.objects(Walker.self)).index(of: walker) == 0)
        #expect(rex == realm.object(ofType: Dog.self, forPrimaryKey: "Rex"))  // a primary key: the same row is equal
        let frozen = walker.freeze()
        #expect(frozen == realm.freeze().objects(Walker.self).first)  // frozen objects compare rows
        #expect(again.isSameObject(as: walker) && !again.isSameObject(as: nil))
    }

    @Test("sets of objects without a primary key intersect and compare by the stored objects; a mixed list finds one")
    func unkeyedObjectsInCollections() throws {
        let realm = try makeRealm(objectTypes: [Walker.self, Dog.self, Crew.self])
        let crew = Crew()
        let other = Crew()
        let (min, jo) = (Walker(), Walker())
        try realm.write {
            realm.add([crew, other])
            crew.walkers.insert(objectsIn: [min, jo])
            other.walkers.insert(min)
            crew.anything.append(.object(min))
        }
        #expect(other.walkers.isSubset(of: crew.walkers) && !crew.walkers.isSubset(of: other.walkers))
        #expect(crew.anything.index(of: .object(min)) == 0 && crew.anything.index(of: .object(jo)) == nil)
        try realm.write { crew.walkers.formIntersection(other.walkers) }
        #expect(crew.walkers.count == 1 && crew.walkers[0].isSameObject(as: min))
    }

    @Test("write, add, objects, object(ofType:forPrimaryKey:), delete, isEmpty, and object.realm / results.realm")
    func basics() throws {
        let config = Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("dogs.realm"), schemaVersion: 1)
        let realm = try Realm(configuration: config)
        #expect(realm.isEmpty)
        let rex = Dog()
        rex.name = "Rex"
        #expect(rex.realm == nil)
        try realm.write {
            realm.add(rex)
            realm.add([
                Dog(),
                {
                    let dog = Dog(); dog.name = "Bo"; return dog
                }(),
            ])
        }
        #expect(!realm.isEmpty)
        #expect(rex.realm == realm)
        #expect(realm.objects(Dog.self).realm == realm)
        #expect(rex.toys.realm == realm)
        #expect(realm.object(ofType: Dog.self, forPrimaryKey: "Bo") != nil)
        try realm.write {
            realm.add(
                {
                    let dog = Dog(); dog.name = "Rex"; dog.age = 3; return dog
                }(), update: .modified)
        }
        #expect(rex.age == 3)
        realm.beginWrite()
        realm.delete(rex)
        realm.cancelWrite()
        #expect(!rex.isInvalidated)
        realm.beginWrite()
        realm.delete(realm.objects(Dog.self).filter("age == %@", 0))  // Realm's filter does not throw
        try realm.commitWrite()
        #expect(realm.objects(Dog.self).count == 1)
        try realm.write { realm.deleteAll() }
        #expect(realm.isEmpty)
        #expect(realm.configuration.schemaVersion == 1)
    }

    @Test("schema introspection with Realm's names: realm.schema, object.objectSchema, Property")
    func schema() throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("s.realm")))
        let dog = Dog()
        dog["name"] = "Rex"
        dog["age"] = 4
        try realm.write { realm.add(dog) }
        let schema = try #require(realm.schema["Dog"])
        #expect(schema.className == "Dog")
        #expect(schema.primaryKeyProperty?.name == "name")
        let age: Property = try #require(schema["age"])
        #expect(age.type == .int && !age.isOptional && !age.isPrimary && age.objectClassName == nil)
        #expect(dog.objectSchema.properties.map(\.name) == ["name", "age", "toys"])
        #expect(dog["age"] as? Int == 4)
        #expect(realm.schema.description.contains("Dog { name: String, age: Int, toys: List<String> }"))
    }

    @Test("filter without try, with no argument, optional arguments, and several")
    func filterShapes() throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("f.realm")))
        try realm.write {
            realm.create(Dog.self, value: ["Rex", 3])
            realm.create(Dog.self, value: ["Bo", 5])
        }
        let name: String? = "Rex"
        let noAge: Int? = nil
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("age > 4").count == 1)
        #expect(dogs.filter("name == %@", name).count == 1)
        #expect(dogs.filter("name == %@ OR age == %@", "Rex", 9).count == 1)
        #expect(dogs.filter("age == %@", noAge).isEmpty)
        #expect(dogs.filter("name == %@ OR name == %@ OR age == %@", "Rex", "Bo", 9).count == 2)
        #expect(dogs.filter("age BETWEEN {%@, %@} AND name != %@ AND name != %@", 1, 9, "x", "y").count == 2)
    }

    @Test("create(_:value:update:) and Object(value:), as Realm code calls them (no try)")
    func createFromValues() throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("c.realm")))
        try realm.write {
            realm.create(Dog.self, value: ["name": "Rex", "age": 2, "toys": ["ball"]])
            realm.create(Dog.self, value: ["Bo", 4])
            realm.add(Dog(value: ["name": "Cy"]))
            realm.create(Dog.self, value: ["name": "Rex", "age": 3], update: .modified)
        }
        let rex = try #require(realm.object(ofType: Dog.self, forPrimaryKey: "Rex"))
        #expect(rex.age == 3 && Array(rex.toys) == ["ball"])
        #expect(realm.objects(Dog.self).count == 3)
    }

    @Test("errors are Realm.Error with Realm's codes, and catch by code")
    func errors() throws {
        let directory = realmDirectory()
        var missing = Realm.Configuration(fileURL: directory.appendingPathComponent("missing.realm"))
        missing.readOnly = true
        do {
            _ = try Realm(configuration: missing)
            Issue.record("opened a missing file read-only")
        } catch let error as Realm.Error where error.code == .fileNotFound {
            let path = directory.appendingPathComponent("missing.realm").path
            #expect(error.localizedDescription == "Failed to open Realm file at path '\(path)': No such file or directory")
        }
        let scrap = directory.appendingPathComponent("scrap.realm")
        _ = FileManager.default.createFile(atPath: scrap.path, contents: Data("a".utf8))
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: scrap))
            Issue.record("opened a one-byte file")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidDatabase)
            #expect(
                error.localizedDescription
                    == "Failed to open Realm file at path '\(scrap.path)': file is non-empty but too small (1 bytes) to be a valid Realm."
            )
            #expect(error.underlying.message.contains("MDB_INVALID"))  // Trove's words stay reachable
        }
        let url = directory.appendingPathComponent("v2.realm")
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: 2))
            try realm.write { realm.add(Dog()) }
        }
        #expect(try schemaVersionAtURL(url) == 2)
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: 1))
            Issue.record("opened a file newer than the model")
        } catch let error as Realm.Error {
            #expect(error.code == .schemaMismatch)
            #expect(error.fileURL?.lastPathComponent == "v2.realm")
        }
        let nothing = directory.appendingPathComponent("nothing.realm")
        do {
            _ = try schemaVersionAtURL(nothing)
            Issue.record("a missing file has no schema version")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidDatabase)  // Realm's code for a file not yet initialized
            #expect(error.localizedDescription == "Realm at path '\(nothing.path)' has not been initialized.")
        }
        do {
            _ = try schemaVersionAtURL(URL(fileURLWithPath: "/dev/null"))
            Issue.record("/dev/null has no schema version")
        } catch let error as Realm.Error {
            #expect([.fileAccess, .filePermissionDenied].contains(error.code), "\(error)")
            #expect(error.localizedDescription.contains("not a regular file (it is a device)"))
        }
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: "/dev/null/foo.realm")))
            Issue.record("opened a file under /dev/null")
        } catch let error as Realm.Error where error.code == .fileOperationFailed {
            #expect(error.localizedDescription.hasSuffix("': parent path is not a directory"), "\(error)")
        }
    }

    @Test("invalidate() cancels an open write and shows the latest commit")
    func invalidateCancelsWrite() throws {
        let realm = try makeRealm()
        realm.beginWrite()
        realm.add(Dog(value: ["Rex", 3]))
        realm.invalidate()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Dog.self).isEmpty)
    }

    @Test("invalidate() invalidates the objects, results and lists handed out before it; those read after are valid")
    func invalidateInvalidatesHandedOut() throws {
        let realm = try makeRealm()
        let rex = Dog(value: ["Rex", 3])
        try realm.write { realm.add(rex) }
        let dogs = realm.objects(Dog.self)
        let toys = rex.toys
        #expect(!rex.isInvalidated && !dogs.isInvalidated && !toys.isInvalidated)
        realm.invalidate()
        #expect(rex.isInvalidated)
        #expect(dogs.isInvalidated)
        #expect(toys.isInvalidated)
        try realm.write { realm.add(Dog(value: ["Bo", 5])) }
        let again = realm.objects(Dog.self)
        #expect(again.count == 2 && !again.isInvalidated)
        #expect(again.first.map { !$0.isInvalidated } == true)
        #expect(rex.isInvalidated)
    }

    @Test("two unmanaged collections holding the same elements are ==, as Realm compares them")
    func unmanagedCollectionsCompareByElements() {
        #expect(List<Int>() == List<Int>())
        #expect(List([1, 2]) == List([1, 2]))
        #expect(List([1, 2]) != List([2, 1]))
        #expect(MutableSet<String>() == MutableSet<String>())
        let a = MutableSet<Int>()
        a.insert(objectsIn: [1, 2])
        let b = MutableSet<Int>()
        b.insert(objectsIn: [2, 1])
        #expect(a == b)
        #expect(Map<String, Int>() == Map<String, Int>())
        let dog = Dog()
        #expect(List([dog]) == List([dog]) && List([dog]) != List([Dog()]))
    }

    // (defaultConfiguration is a process-wide setting: the seed tests set it and rely on it.)
    @Test("fileExists, deleteFiles (refused while open), writeCopy(toFile:)")
    func files() throws {
        let url = realmDirectory().appendingPathComponent("default.realm")
        let config = Realm.Configuration(fileURL: url)
        #expect(!Realm.fileExists(for: config))
        do {
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Dog()) }
            #expect(Realm.fileExists(for: config))
            #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: config) }
            try realm.writeCopy(toFile: url.deletingLastPathComponent().appendingPathComponent("copy.realm"))
        }
        #expect(try Realm.deleteFiles(for: config))
        #expect(!Realm.fileExists(for: config))
        #expect(try !Realm.deleteFiles(for: config))
        let copy = try Realm(fileURL: url.deletingLastPathComponent().appendingPathComponent("copy.realm"))
        #expect(copy.objects(Dog.self).count == 1)
    }

    @Test("one Realm per thread and file: a second Realm() sees the first one's writes at once; observe and refresh")
    func sameThreadSameRealm() throws {
        let config = Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("shared.realm"))
        let first = try Realm(configuration: config)
        let second = try Realm(configuration: config)
        #expect(first == second)
        var notifications: [Realm.Notification] = []
        let token = first.observe { notification, realm in
            notifications.append(notification)
            #expect(realm == first)
        }
        try first.write { first.add(Dog()) }
        #expect(second.objects(Dog.self).count == 1)
        #expect(notifications == [.didChange])
        #expect(!first.refresh())  // nothing new
        token.invalidate()
        // Inside a write, Realm() on the same thread is the Realm that writes (as in Realm).
        first.beginWrite()
        #expect(try Realm(configuration: config).isInWriteTransaction)
        first.cancelWrite()
    }
}

/// The same model before and after a change, stored as "Profile".
enum ProfileV1 {
    final class Profile: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var firstName = ""
        @Persisted var lastName = ""
    }
}

enum ProfileV2 {
    final class Profile: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var fullName = ""
        @Persisted var age = 0
    }
}

@Suite("Realm migrations on Trove")
struct RealmMigrationTests {
    @Test("a Realm migration block, as Realm code writes it: enumerateObjects without try, values by name as Swift values")
    func migrationBlock() throws {
        let url = realmDirectory().appendingPathComponent("profiles.realm")
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [ProfileV1.Profile.self]))
            try realm.write { realm.add(ProfileV1.Profile(value: [1, "Grace", "Hopper"])) }
        }
        let config = Realm.Configuration(
            fileURL: url, schemaVersion: 2,
            migrationBlock: { migration, oldSchemaVersion in
                if oldSchemaVersion < 2 {
                    migration.enumerateObjects(ofType: ProfileV2.Profile.className()) { oldObject, newObject in
                        let first = oldObject!["firstName"] as! String
                        let last = oldObject!["lastName"] as! String
                        newObject!["fullName"] = "\(first) \(last)"
                        newObject!["age"] = 85
                    }
                }
            }, objectTypes: [ProfileV2.Profile.self])
        let realm = try Realm(configuration: config)
        let profile = try #require(realm.object(ofType: ProfileV2.Profile.self, forPrimaryKey: 1))
        #expect(profile.fullName == "Grace Hopper" && profile.age == 85)
        #expect(try schemaVersionAtURL(url) == 2)
    }

    @Test("Decimal128(value:) and (number:), PropertyType's Realm names, object.hash and writeCopy(configuration:)")
    func smallRealmNames() throws {
        #expect(Decimal128(value: "12.50") == Decimal128(number: 12.5))
        #expect(Decimal128(value: 3) == Decimal128(3))
        #expect(Decimal128(value: NSNull()).isSignalingNaN)  // Realm's null decimal
        #expect(Decimal128(value: Decimal128(7)) == Decimal128(7))
        #expect(PropertyType.UUID == .uuid && PropertyType.any == .mixed && PropertyType.object == .link)

        let realm = try makeRealm()
        let rex = Dog(value: ["name": "Rex"])
        try realm.write { realm.add(rex) }
        let again = try #require(realm.object(ofType: Dog.self, forPrimaryKey: "Rex"))
        #expect(rex.hash == again.hash)

        let copyURL = realmDirectory().appendingPathComponent("copy-\(UUID().uuidString).realm")
        try realm.writeCopy(configuration: Realm.Configuration(fileURL: copyURL))
        let copy = try Realm(configuration: Realm.Configuration(fileURL: copyURL))
        #expect(copy.objects(Dog.self).first?.name == "Rex")
    }

    @Test("object(ofType:forPrimaryKey:) takes nil or NSNull() for an optional key, and traps on a key of no stored type")
    func nilPrimaryKeys() throws {
        let realm = try makeRealm()
        try realm.write {
            realm.create(Tag.self, value: [NSNull(), "untagged"])
            realm.create(Tag.self, value: ["red", "warm"])
        }
        #expect(realm.object(ofType: Tag.self, forPrimaryKey: NSNull())?.note == "untagged")
        #expect(realm.object(ofType: Tag.self, forPrimaryKey: nil as String?)?.note == "untagged")
        #expect(realm.object(ofType: Tag.self, forPrimaryKey: "red")?.note == "warm")
        #expect(realm.object(ofType: Tag.self, forPrimaryKey: "blue") == nil)
    }

    @Test(
        "an object observer hears its own thread's change without old values, as Realm's; an empty AnyRealmValue reads nil by key"
    )
    func localChangesAndEmptyMixed() throws {
        let realm = try makeRealm()
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try realm.write { realm.add(rex) }
        var changes: [(String, Any?, Any?)] = []
        let token = rex.observe { (change: ObjectChange<ObjectBase>) in
            if case .change(_, let properties) = change {
                changes += properties.map { ($0.name, $0.oldValue, $0.newValue) }
            }
        }
        try realm.write { rex.age = 4 }
        #expect(changes.count == 1 && changes.first?.0 == "age")
        #expect(changes.first?.1 == nil && changes.first?.2 as? Int == 4)
        token.invalidate()

        let note = Jotting()
        #expect(note.value(forKey: "extra") == nil)
        note.extra.value = .string("hi")
        #expect(note.value(forKey: "extra") as? String == "hi")
    }
}

final class Jotting: Object {
    @Persisted var text = ""
    @Persisted var extra = RealmProperty<AnyRealmValue>()

    @Test("NSString, NSDate and NSData properties store as strings, dates and data and read back as themselves")
    func foundationClassProperties() throws {
        let realm = try makeRealm()
        let entry = LegacyEntry(value: [
            "title": "first", "note": "hi", "taken": Date(timeIntervalSince1970: 60), "blob": Data([1, 2]),
        ])
        try realm.write { realm.add(entry) }
        let read = try #require(realm.objects(LegacyEntry.self).first)
        #expect(read.title == "first" && read.note == "hi")
        #expect((read.taken as Date?)?.timeIntervalSince1970 == 60)
        #expect((read.blob as Data?) == Data([1, 2]))
        #expect(realm.objects(LegacyEntry.self).filter("note == 'hi' AND taken > %@", Date(timeIntervalSince1970: 0)).count == 1)
        try realm.write {
            read.note = nil
            read.title = "second"
        }
        #expect(read.note == nil && read.title == "second")
        #expect(read.value(forKey: "title") as? String == "second")
        #expect(LegacyEntry().title == "" && LegacyEntry().taken == nil)
    }
}

final class LegacyEntry: Object {
    @Persisted var title: NSString = ""
    @Persisted var note: NSString?
    @Persisted var taken: NSDate?
    @Persisted var blob: NSData?
}

final class Tag: Object {
    @Persisted(primaryKey: true) var name: String?
    @Persisted var note = ""
}
