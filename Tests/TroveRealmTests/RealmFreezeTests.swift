import Foundation
import Testing
import TroveRealm

/// Realm's frozen Realms, objects and collections: snapshots of one commit
/// with the live types, read-only.
@Suite("freeze and thaw, as Realm has them")
struct RealmFreezeTests {
    @Test("a frozen Realm, object, results and list keep the state they were frozen in")
    func snapshotsStay() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3]]])
        try realm.write { realm.add(kennel) }
        let frozenRealm = realm.freeze()
        let frozenDog = kennel.dogs[0].freeze()
        let frozenDogs = realm.objects(Dog.self).filter("age >= 3").freeze()
        let frozenList = kennel.dogs.freeze()
        #expect(frozenRealm.isFrozen && frozenDog.isFrozen && frozenDogs.isFrozen && frozenList.isFrozen)
        #expect(!realm.isFrozen && !kennel.isFrozen)
        try realm.write {
            kennel.dogs[0].age = 9
            kennel.dogs.append(Dog(value: ["Bo", 4]))
        }
        #expect(frozenDog.age == 3)
        #expect(frozenDogs.count == 1)
        #expect(frozenList.count == 1)
        #expect(frozenRealm.objects(Dog.self).count == 1)
        #expect(realm.objects(Dog.self).count == 2)
        frozenRealm.refresh()
        #expect(frozenRealm.objects(Dog.self).count == 1)
    }

    @Test("a frozen object equals only itself frozen at the same commit: not the live object, not another version")
    func frozenEquality() throws {
        let realm = try makeRealm()
        let rex = Dog(value: ["Rex", 3])
        try realm.write { realm.add(rex) }
        let frozen = rex.freeze()
        #expect(frozen != rex && rex != frozen)
        #expect(frozen == frozen.freeze() && frozen == realm.freeze().object(ofType: Dog.self, forPrimaryKey: "Rex"))
        try realm.write { rex.age = 4 }
        #expect(frozen != rex.freeze())
        #expect(rex == realm.object(ofType: Dog.self, forPrimaryKey: "Rex"))
    }

    @Test("thaw gives live copies; a frozen Realm refuses to write")
    func thawAndRefuse() throws {
        let realm = try makeRealm()
        try realm.write { realm.add(Dog(value: ["Rex", 3])) }
        let frozen = realm.objects(Dog.self)[0].freeze()
        try realm.write { realm.objects(Dog.self)[0].age = 5 }
        let live = try #require(frozen.thaw())
        #expect(!live.isFrozen && live.age == 5 && frozen.age == 3)
        #expect(realm.freeze().thaw().isFrozen == false)
        #expect(throws: Realm.Error.self) { try realm.freeze().write {} }
        try realm.write { realm.deleteAll() }
        #expect(frozen.thaw() == nil)
    }

    @Test("thaw and resolve read as the Realm does: no refresh past what it shows, a catch-up when it is behind")
    func thawKeepsTheRealmsVersion() throws {
        let url = realmDirectory().appendingPathComponent("thaw.realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url))
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try realm.write { realm.add(rex) }
        let frozen = rex.freeze()
        let reference = ThreadSafeReference(to: rex)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let realm = try! Realm(configuration: Realm.Configuration(fileURL: url))
            try! realm.write { realm.resolve(reference)!.age = 4 }
            done.signal()
        }.start()
        done.wait()
        if !Thread.isMainThread {
            #expect(frozen.thaw()?.age == 3)  // this Realm has not refreshed
            #expect(realm.resolve(ThreadSafeReference(to: rex))?.age == 3)
        }
        realm.refresh()
        #expect(frozen.thaw()?.age == 4)
        #expect(rex.age == 4)
    }

    @Test("thawing a collection frozen elsewhere at a newer commit reads it as this Realm stands, as Realm does")
    func thawDoesNotMoveTheRealm() throws {
        let url = realmDirectory().appendingPathComponent("thaw-results.realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url))
        try realm.write { realm.add([Dog(value: ["name": "Rex"]), Dog(value: ["name": "Bo"])]) }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.count == 2)
        let reference = ThreadSafeReference(to: dogs)
        nonisolated(unsafe) var frozen: Results<Dog>?
        let done = DispatchSemaphore(value: 0)
        Thread {
            let other = try! Realm(configuration: Realm.Configuration(fileURL: url))
            let theirs = other.resolve(reference)!
            try! other.write { other.delete(theirs.filter("name == 'Bo'")) }
            frozen = theirs.freeze()
            done.signal()
        }.start()
        done.wait()
        #expect(frozen?.count == 1)
        if !Thread.isMainThread { #expect(frozen?.thaw()?.count == 2) }  // this Realm has not refreshed
        realm.refresh()
        #expect(frozen?.thaw()?.count == 1)
    }
}
