import Foundation
import Testing
import TroveRealm

final class Shelter: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var pets = List<ShelterPet>()
    @Persisted var favourites = MutableSet<ShelterPet>()
    @Persisted var notes = Map<String, String>()
}

final class ShelterPet: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pets") var shelters: LinkingObjects<Shelter>
}

/// References to a shelter's pet, the pet's shelters, the shelter's
/// collections, and all pets.
typealias ShelterReferences = (
    ThreadSafeReference<ShelterPet>, ThreadSafeReference<LinkingObjects<Shelter>>, ThreadSafeReference<List<ShelterPet>>,
    ThreadSafeReference<MutableSet<ShelterPet>>, ThreadSafeReference<Map<String, String>>,
    ThreadSafeReference<AnyRealmCollection<ShelterPet>>, ThreadSafeReference<Results<ShelterPet>>
)

/// Managed values carried across threads and actors by `@ThreadSafe` properties.
struct Carrier: Sendable {
    @ThreadSafe var pet: ShelterPet?
    @ThreadSafe var pets: List<ShelterPet>?
    @ThreadSafe var notes: Map<String, String>?
    @ThreadSafe var older: Results<ShelterPet>?
    @ThreadSafe var everyone: AnyRealmCollection<ShelterPet>?
}

/// An actor that changes what a carrier or a `@ThreadSafe` parameter holds.
actor Groomer {
    /// Ages the carried pet and adds a pet to the carried list, both through
    /// the Realm they resolve in here, then carries pet "B" instead; returns
    /// what it read.
    func groom(_ carrier: Carrier) throws -> [String] {
        guard let pet = carrier.pet, let pets = carrier.pets, let realm = pet.realm else { return [] }
        try realm.write {
            pet.age += 10
            pets.append(ShelterPet(value: ["F", 1]))
        }
        carrier.pet = realm.object(ofType: ShelterPet.self, forPrimaryKey: "B")
        return [
            pet.name, pets.map(\.name).joined(), carrier.notes?["y"] ?? "-", carrier.older?.map(\.name).joined() ?? "-",
            carrier.everyone.map { "\($0.count)" } ?? "-",
        ]
    }

    /// The age of the pet a `@ThreadSafe` wrapper holds, read here.
    func age(of pet: ThreadSafe<ShelterPet>) -> Int? { pet.wrappedValue?.age }
}

/// Runs `body` on a thread of its own, where `try Realm()` opens that
/// thread's Realm, and returns what it returns.
private func onNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Ages the pet on another task, through the Realm it resolves in there.
private func birthday(@ThreadSafe of pet: ShelterPet?) async throws -> Int? {
    try await Task.detached {
        guard let pet else { return nil }
        try pet.realm?.write { pet.age += 1 }
        return pet.age
    }.value
}

/// Reads the age of the pet a `@ThreadSafe` parameter holds, on an actor.
private func age(@ThreadSafe of pet: ShelterPet?, on groomer: Groomer) async -> Int? {
    await groomer.age(of: _pet)
}

/// Realm's `ThreadSafeReference`, `realm.resolve(_:)` and `@ThreadSafe`.
@Suite("thread-safe references and @ThreadSafe, as Realm has them")
struct ThreadSafeReferenceTests {
    /// Shelter "north" with pets A (1), B (5), C (3) and D (7), favourites A
    /// and B, and the note x = 1.
    private func north(_ realm: Realm) throws -> Shelter {
        let north = Shelter(value: ["name": "north", "pets": [["A", 1], ["B", 5], ["C", 3], ["D", 7]]])
        try realm.write {
            realm.add(north)
            north.favourites.insert(north.pets[0])
            north.favourites.insert(north.pets[1])
            north.notes["x"] = "1"
        }
        return north
    }

    /// Adds pet E (4) to north's pets and favourites, the note y = 2, makes A
    /// 2 years old, and shelters A in "south" too.
    private func changeAfterwards(_ realm: Realm, _ north: Shelter) throws {
        try realm.write {
            let e = ShelterPet(value: ["E", 4])
            north.pets.append(e)
            north.favourites.insert(e)
            north.notes["y"] = "2"
            north.pets[0].age = 2
            let south = Shelter(value: ["name": "south"])
            south.pets.append(north.pets[0])
            realm.add(south)
        }
    }

    @Test(
        "an object, filtered and sorted results, a list, a set, a map and linking objects resolve on another thread as they were when the reference was made"
    )
    func everyKind() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let config = realm.configuration
        let pet = ThreadSafeReference(to: north.pets[0])
        let older = ThreadSafeReference(
            to: realm.objects(ShelterPet.self).filter("age > 1").sorted(byKeyPath: "age", ascending: false))
        let pets = ThreadSafeReference(to: north.pets)
        let favourites = ThreadSafeReference(to: north.favourites)
        let notes = ThreadSafeReference(to: north.notes)
        let shelters = ThreadSafeReference(to: north.pets[0].shelters)
        try changeAfterwards(realm, north)
        let seen = try await onNewThread {
            let realm = try Realm(configuration: config)
            let seen = [
                realm.resolve(pet).map { "\($0.name) \($0.age)" },
                realm.resolve(older).map { $0.map(\.name).joined() },
                realm.resolve(pets).map { $0.map(\.name).joined() },
                realm.resolve(favourites).map { $0.map(\.name).sorted().joined() },
                realm.resolve(notes).map { $0.map { "\($0.key)=\($0.value)" }.joined(separator: ",") },
                realm.resolve(shelters).map { $0.map(\.name).sorted().joined(separator: ",") },
            ]
            // The values belong to this thread's Realm: it writes them.
            if let pets = realm.objects(Shelter.self).filter("name == %@", "north").first?.pets {
                try realm.write { pets.remove(at: 0) }
            }
            return seen
        }
        // A new Realm reads the version the references pinned, not the commit after.
        #expect(seen == ["A 1", "DBC", "ABCD", "AB", "x=1", "north"])
        realm.refresh()
        #expect(north.pets.map(\.name) == ["B", "C", "D", "E"])
    }

    @Test("AnyRealmCollection of results, a list, a set and linking objects resolves on another thread")
    func anyRealmCollection() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let config = realm.configuration
        let references = [
            AnyRealmCollection(realm.objects(ShelterPet.self).filter("name != 'C'").sorted(byKeyPath: "name", ascending: false)),
            AnyRealmCollection(north.pets), AnyRealmCollection(north.favourites),
        ].map { ThreadSafeReference(to: $0) }
        let shelters = ThreadSafeReference(to: AnyRealmCollection(north.pets[0].shelters))
        #expect(references.allSatisfy { !$0.isInvalidated })
        try changeAfterwards(realm, north)
        let seen = try await onNewThread {
            let realm = try Realm(configuration: config)
            return references.map { reference in realm.resolve(reference).map { $0.map(\.name).joined() } }
                + [realm.resolve(shelters).map { $0.map(\.name).sorted().joined() }]
        }
        #expect(seen == ["DBA", "ABCD", "AB", "north"])
        #expect(references.allSatisfy { $0.isInvalidated })
    }

    @Test("once the object, or the object owning the collection, is deleted, resolve gives nil")
    func deleted() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let config = realm.configuration
        let a = north.pets[0]
        let references = { () -> ShelterReferences in
            (
                ThreadSafeReference(to: a), ThreadSafeReference(to: a.shelters), ThreadSafeReference(to: north.pets),
                ThreadSafeReference(to: north.favourites), ThreadSafeReference(to: north.notes),
                ThreadSafeReference(to: AnyRealmCollection(north.pets)),
                ThreadSafeReference(to: realm.objects(ShelterPet.self))
            )
        }
        let before = references()
        let read = { @Sendable (_ r: ShelterReferences) async throws in
            try await onNewThread {
                let realm = try Realm(configuration: config)
                realm.refresh()
                return [
                    realm.resolve(r.0)?.name, realm.resolve(r.1).map { "\($0.count)" },
                    realm.resolve(r.2).map { "\($0.count)" }, realm.resolve(r.3).map { "\($0.count)" },
                    realm.resolve(r.4).map { "\($0.count)" }, realm.resolve(r.5).map { "\($0.count)" },
                    realm.resolve(r.6).map { "\($0.count)" },
                ]
            }
        }
        #expect(try await read(before) == ["A", "1", "4", "2", "1", "4", "4"])
        let after = references()
        try realm.write {
            realm.delete(a)
            realm.delete(north)
        }
        #expect(try await read(after) == [nil, nil, nil, nil, nil, nil, "3"])
    }

    @Test("a reference resolves once, then isInvalidated; resolving it again traps; another file's Realm resolves nil")
    func resolvesOnce() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let reference = ThreadSafeReference(to: north.pets[0])
        let copy = reference
        #expect(!reference.isInvalidated)
        #expect(realm.resolve(reference)?.name == "A")
        #expect(reference.isInvalidated && copy.isInvalidated)
        let elsewhere = try makeRealm()
        #expect(elsewhere.resolve(ThreadSafeReference(to: north.pets[1])) == nil)
        let trapped = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! makeRealm("resolvedTwice")
            let pet = ShelterPet(value: ["A", 1])
            try! realm.write { realm.add(pet) }
            let reference = ThreadSafeReference(to: pet)
            _ = realm.resolve(reference)
            _ = realm.resolve(reference)
        }
        #expect(
            String(decoding: try #require(trapped).standardErrorContent, as: UTF8.self).contains(
                "Can only resolve a thread safe reference once"))
    }

    @Test(
        "a Realm that has not read yet resolves a reference at the version it was made at; once it read, at its own"
    )
    func pinnedVersion() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let a = north.pets[0]
        let first = ThreadSafeReference(to: a)
        let all = ThreadSafeReference(to: realm.objects(ShelterPet.self))
        let second = ThreadSafeReference(to: a)
        try realm.write { realm.delete(a) }
        let config = realm.configuration
        let seen = try await onNewThread {
            let realm = try Realm(configuration: config)
            let pinned = [realm.resolve(first)?.name, realm.resolve(all).map { "\($0.count)" }]
            realm.refresh()
            return pinned + [realm.resolve(second)?.name, "\(realm.objects(ShelterPet.self).count)"]
        }
        #expect(seen == ["A", "4", nil, "3"])
        // After invalidate() a Realm reads nothing until it reads again.
        let b = realm.objects(ShelterPet.self).first!
        let before = ThreadSafeReference(to: b)
        try realm.write { b.age = 40 }
        let age = try await onNewThread {
            let realm = try Realm(configuration: config)
            _ = realm.objects(ShelterPet.self).count
            realm.invalidate()
            return realm.resolve(before)?.age
        }
        #expect(age == 5)
    }

    @Test("at most 64 references to a file pin a version at once; a dropped or resolved reference frees its pin")
    func pinLimit() throws {
        let realm = try makeRealm()
        let pet = try north(realm).pets[0]
        var held = (0..<SnapshotPin.limit).map { _ in ThreadSafeReference(to: pet) }
        #expect(held.allSatisfy { $0.pin != nil })
        #expect(ThreadSafeReference(to: pet).pin == nil)
        _ = realm.resolve(held.removeLast())
        #expect(ThreadSafeReference(to: pet).pin != nil)
        held.removeAll()
        #expect(ThreadSafeReference(to: pet).pin != nil)
        try realm.write { #expect(ThreadSafeReference(to: pet).pin == nil) }
    }

    @Test("@ThreadSafe properties of a Sendable struct cross to an actor, resolve and write there, and are set there")
    func wrappedProperties() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        let carrier = Carrier(
            pet: north.pets[0], pets: north.pets, notes: north.notes,
            older: realm.objects(ShelterPet.self).filter("age > 4").sorted(byKeyPath: "name"),
            everyone: AnyRealmCollection(realm.objects(ShelterPet.self)))
        let empty = Carrier()
        try changeAfterwards(realm, north)
        let seen = try await Groomer().groom(carrier)
        #expect(seen == ["A", "ABCDEF", "2", "ABD", "6"])
        #expect(try await Groomer().groom(empty) == [])
        realm.refresh()
        #expect(north.pets[0].age == 12)
        #expect(north.pets.last?.name == "F")
        #expect(carrier.pet?.name == "B")
        #expect(carrier.older?.map(\.name) == ["A", "B", "D"])
        try realm.write { realm.delete(north.pets[1]) }
        #expect(carrier.pet == nil)
        carrier.pets = nil
        #expect(carrier.pets == nil)
        #expect(empty.pet == nil)
    }

    @Test("a @ThreadSafe local variable is read on another task as that task's Realm sees it")
    func wrappedLocal() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        @ThreadSafe var older = realm.objects(ShelterPet.self).filter("age > 4")
        @ThreadSafe var pet = north.pets[0]
        try realm.write { north.pets[0].age = 9 }
        let seen = await Task.detached {
            [older?.map(\.name).sorted().joined() ?? "-", "\(pet?.age ?? 0)"]
        }.value
        #expect(seen == ["ABD", "9"])
    }

    @Test("a @ThreadSafe parameter crosses to a detached task and to an actor")
    func wrappedParameter() async throws {
        let realm = try makeRealm()
        let north = try north(realm)
        #expect(try await birthday(of: north.pets[1]) == 6)
        realm.refresh()
        #expect(north.pets[1].age == 6)
        #expect(await age(of: north.pets[1], on: Groomer()) == 6)
        #expect(try await birthday(of: nil) == nil)
    }

    @Test("@ThreadSafe of an unmanaged object traps, as in Realm")
    func unmanaged() async throws {
        let trapped = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadSafe(wrappedValue: ShelterPet())
        }
        #expect(
            String(decoding: try #require(trapped).standardErrorContent, as: UTF8.self).contains(
                "needs a stored, not deleted ShelterPet"))
    }
}
