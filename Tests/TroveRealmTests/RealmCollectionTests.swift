import Foundation
import Testing
import TroveRealm

final class Kennel: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var dogs = List<Dog>()
}

final class Walker: Object {
    @Persisted var name = ""
    @Persisted var dog: Dog?
}

final class Pound: Object {
    @Persisted var dogs = MutableSet<Dog>()
    @Persisted var byTag = Map<String, Dog?>()
    @Persisted var fees = Map<String, Int>()
}

/// Realm's generic aggregate signatures: the value type known only by its persisted type.
private func extremes<T: _HasPersistedType & Equatable>(_ dogs: Results<Dog>, _ keyPath: KeyPath<Dog, T>, _ name: String)
    -> [T?] where T.PersistedType: AddableType & MinMaxType
{
    [
        dogs.min(of: keyPath), dogs.max(of: keyPath), dogs.sum(of: keyPath), dogs.average(of: keyPath),
        dogs.min(ofProperty: name), dogs.max(ofProperty: name), dogs.sum(ofProperty: name), dogs.average(ofProperty: name),
    ]
}

private func mapExtremes<T: _HasPersistedType & Equatable>(_ map: Map<String, Dog?>, _ keyPath: KeyPath<Dog, T>, _ name: String)
    -> [T?] where T.PersistedType: AddableType & MinMaxType
{
    [
        map.min(of: keyPath), map.max(of: keyPath), map.sum(of: keyPath), map.average(of: keyPath),
        map.min(ofProperty: name), map.max(ofProperty: name), map.sum(ofProperty: name), map.average(ofProperty: name),
    ]
}

/// Sums ages through the protocol, whatever the collection.
private func totalAge<C: RealmCollection>(_ dogs: C) -> Int where C.Element == Dog {
    dogs.sum(ofProperty: "age")
}

@Suite("RealmCollection and AnyRealmCollection")
struct RealmCollectionTests {
    @Test("a set's value(forKey:) is a set of the values, as Realm's NSSet")
    func setValueForKey() {
        let pound = Pound()
        pound.dogs.insert(objectsIn: [Dog(value: ["Rex", 3]), Dog(value: ["Bo", 3])])
        #expect(pound.dogs.value(forKey: "name") as? Set<String> == ["Rex", "Bo"])
        #expect(pound.dogs.value(forKey: "age") as? Set<Int> == [3])
        let names: [AnyObject] = pound.dogs.value(forKey: "name")
        #expect(Set(names as? [String] ?? []) == ["Rex", "Bo"])
    }

    @Test("an unmanaged list answers index(matching:) from its objects: a string, an NSPredicate or a typed query")
    func unmanagedIndexMatching() {
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 5], ["Cy", 7]]])
        #expect(kennel.dogs.index(matching: "age > %@", 4) == 1)
        #expect(kennel.dogs.index(matching: NSPredicate(format: "name == %@", "Cy")) == 2)
        #expect(kennel.dogs.index(matching: { $0.name.starts(with: "R") }) == 0)
        #expect(kennel.dogs.index(matching: { $0.age > 10 }) == nil)
    }

    @Test("Results, List and LinkingObjects answer the same calls, also behind AnyRealmCollection")
    func oneSurface() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 5], ["Cy", 7]]])
        try realm.write {
            realm.add(kennel)
            realm.add(Walker(value: ["name": "Ann", "dog": kennel.dogs[1]]))
        }
        let all = realm.objects(Dog.self)
        #expect(totalAge(all) == 15)
        #expect(totalAge(kennel.dogs) == 15)
        #expect(totalAge(AnyRealmCollection(kennel.dogs.filter("age > 3"))) == 12)
        let erased = AnyRealmCollection(all)
        #expect(erased.count == 3)
        #expect(erased.index(of: kennel.dogs[2]) == 2)
        #expect(erased.index(matching: "name == %@", "Bo") == 1)
        #expect(erased.objects(at: IndexSet([0, 2])).map(\.name) == ["Rex", "Cy"])
        #expect(erased.max(ofProperty: "age") as Int? == 7)
        #expect(erased.min(ofProperty: "name") as String? == "Bo")
        #expect(erased.average(ofProperty: "age") as Double? == 5)
        #expect(
            erased.sorted(by: [RealmSwift.SortDescriptor(keyPath: "age", ascending: false)]).map(\.name) == ["Cy", "Bo", "Rex"])
        #expect(erased.distinct(by: ["age"]).count == 3)
        #expect(erased.value(forKey: "name") as? [String] == ["Rex", "Bo", "Cy"])
        #expect(erased.realm == realm)
        #expect(erased.index(matching: "age > 100") == nil)
        #expect(realm.objects(Walker.self).first?.dog?.name == "Bo")
    }

    @Test("observe delivers RealmCollectionChange: the initial collection, then positions")
    func observeChanges() throws {
        let realm = try makeRealm()
        try realm.write { realm.create(Dog.self, value: ["Rex", 3]) }
        var events: [String] = []
        let token = AnyRealmCollection(realm.objects(Dog.self)).observe { change in
            switch change {
            case .initial(let dogs): events.append("initial \(dogs.count)")
            case .update(_, let deletions, let insertions, let modifications):
                events.append("update \(deletions) \(insertions) \(modifications)")
            case .error(let error): events.append("error \(error)")
            }
        }
        try realm.write { realm.create(Dog.self, value: ["Bo", 5]) }
        try realm.write { realm.objects(Dog.self).first?.age = 4 }
        #expect(events == ["initial 1", "update [] [1] []", "update [] [] [0]"])
        token.invalidate()
    }

    @Test("each collection hands its observer a RealmCollectionChange of its own type, as libraries extending Realm require")
    func observeHandsOverSelf() throws {
        let realm = try makeRealm()
        let kennel = Kennel()
        try realm.write {
            realm.add(kennel)
            kennel.dogs.append(Dog(value: ["Rex", 3]))
        }
        // Code naming the type, as Realm apps write it.
        let results = realm.objects(Dog.self)
        var counts: [Int] = []
        let token = results.observe { (change: RealmCollectionChange<Results<Dog>>) in
            if case .update(let dogs, _, _, _) = change { counts.append(dogs.count) }
        }
        var listCounts: [Int] = []
        let listToken = kennel.dogs.observe(keyPaths: nil, on: nil) { (change: RealmCollectionChange<List<Dog>>) in
            if case .initial(let dogs) = change { listCounts.append(dogs.count) }
            if case .update(let dogs, _, _, _) = change { listCounts.append(dogs.count) }
        }
        // RxRealm's shape: a protocol every Realm collection conforms to by its own `observe`.
        #expect(emitted(results) == "Results<Dog>")
        #expect(emitted(kennel.dogs) == "List<Dog>")
        #expect(emitted(AnyRealmCollection(results)) == "AnyRealmCollection<Dog>")
        try realm.write { kennel.dogs.append(Dog(value: ["Bo", 5])) }
        #expect(counts == [2])
        #expect(listCounts == [1, 2])
        _ = (token, listToken)
    }

    @Test("a map answers key-value coding by key: value(forKey:), object(forKey:), setValue(_:forKey:), isEqual")
    func mapKeyValueCoding() throws {
        let realm = try makeRealm()
        let pound = Pound()
        pound.fees.setValue(5, forKey: "a")
        #expect(pound.fees["a"] == 5 && pound.fees.value(forKey: "a") as? Int == 5)
        try realm.write { realm.add(pound) }
        try realm.write {
            pound.fees.setValue(7, forKey: "b")
            pound.fees.setValue(nil, forKey: "a")
        }
        #expect(pound.fees.value(forKey: "a") == nil && pound.fees.object(forKey: "b" as AnyObject) as? Int == 7)
        #expect(pound.fees.isEqual(pound.fees) && !pound.fees.isEqual(Pound().fees) && !pound.fees.isEqual("b"))
    }

    @Test("MutableSet is a RealmCollection too; AnyRealmCollection wraps unmanaged collections")
    func setsAndUnmanaged() throws {
        let realm = try makeRealm()
        let pound = Pound()
        pound.dogs.insert(objectsIn: [Dog(value: ["Rex", 3]), Dog(value: ["Bo", 5])])
        let unmanaged = AnyRealmCollection(pound.dogs)
        #expect(unmanaged.count == 2)
        #expect(Set(unmanaged.map(\.name)) == ["Rex", "Bo"])
        try realm.write { realm.add(pound) }
        #expect(totalAge(pound.dogs) == 8)
        #expect(pound.dogs.filter("age > 4").map(\.name) == ["Bo"])
        #expect(pound.dogs.realm == realm)
        #expect(pound.dogs[0].isSameObject(as: realm.object(ofType: Dog.self, forPrimaryKey: pound.dogs[0].name)))
        #expect(Set(AnyRealmCollection(pound.dogs).value(forKeyPath: "name") as? [String] ?? []) == ["Rex", "Bo"])
        #expect(pound.dogs == realm.objects(Pound.self).first!.dogs)
        #expect(pound.dogs != Pound().dogs)
        try realm.write { realm.delete(pound) }
        #expect(pound.dogs.isInvalidated)
    }

    @Test("a map merges, updates and removes by Realm's names, and its observer gets keys")
    func mapsByKey() throws {
        let realm = try makeRealm()
        let pound = Pound()
        try realm.write { realm.add(pound) }
        var events: [String] = []
        let token = pound.fees.observe { change in
            switch change {
            case .initial(let map): events.append("initial \(map.count)")
            case .update(_, let deletions, let insertions, let modifications):
                events.append("update \(deletions) \(insertions) \(modifications)")
            case .error(let error): events.append("error \(error)")
            }
        }
        try realm.write { pound.fees.merge(["a": 1, "b": 2]) { _, new in new } }
        try realm.write {
            pound.fees.merge(["b": 5, "c": 3]) { current, new in current + new }
            pound.fees.removeObject(for: "a")
        }
        try realm.write { pound.fees.updateValue(9, forKey: "c") }
        #expect(pound.fees["b"] == 7 && pound.fees["c"] == 9 && pound.fees["a"] == nil)
        #expect(events == ["initial 0", "update [] [\"a\", \"b\"] []", "update [\"a\"] [\"c\"] [\"b\"]", "update [] [] [\"c\"]"])
        token.invalidate()
    }

    @Test("observe with Realm's ObjectChange<ObjectBase> and property names")
    func observeAsObjectBase() throws {
        let realm = try makeRealm()
        let dog = Dog(value: ["Rex", 3])
        try realm.write { realm.add(dog) }
        var seen: [String] = []
        let token = dog.observe(keyPaths: ["age"]) { (change: ObjectChange<ObjectBase>) in
            if case .change(let object, let properties) = change {
                seen.append("\((object as? Dog)?.name ?? "?") \(properties.map(\.name))")
            }
        }
        try realm.write { dog.toys.append("ball") }
        try realm.write { dog.age = 4 }
        #expect(seen == ["Rex [\"age\"]"])
        token.invalidate()
    }

    @Test("in generic code: filter, key-path sorts, distinct and aggregates, and NSNumber aggregates")
    func genericKeyPaths() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 5], ["Cy", 5]]])
        try realm.write { realm.add(kennel) }
        func check<C: RealmCollection>(_ dogs: C) where C.Element == Dog {
            #expect(dogs.filter("age == %@", 5).count == 2)
            #expect(dogs.sorted(by: \.age, ascending: false).first?.age == 5)
            #expect(dogs.distinct(by: [\.age]).map(\.age).sorted() == [3, 5])
            #expect(dogs.min(of: \.age) == 3 && dogs.max(of: \.age) == 5 && dogs.sum(of: \.age) == 13)
            #expect((dogs.average(of: \.age) as Double?).map { abs($0 - 13.0 / 3) < 1e-9 } == true)
            #expect(dogs.sum(ofProperty: "age") as NSNumber == 13)
            let names: [AnyObject] = dogs.value(forKey: "name")
            #expect(names.count == dogs.count && (names as? [String])?.sorted() == dogs.map(\.name).sorted())
            let ages: [AnyObject] = dogs.value(forKeyPath: "age")
            #expect((ages as? [Int])?.reduce(0, +) == 13)
            #expect(dogs.max(ofProperty: "age") as NSNumber? == 5)
            #expect(dogs.min(ofProperty: "age") as NSNumber? == 3)
            #expect((dogs.average(ofProperty: "age") as NSNumber?)?.doubleValue == 13.0 / 3)
        }
        check(kennel.dogs)
        check(realm.objects(Dog.self))
        check(AnyRealmCollection(kennel.dogs))
    }

    @Test("filter and index(matching:) take an NSPredicate that has a query string")
    func nsPredicates() throws {
        let realm = try makeRealm()
        try realm.write { realm.create(Dog.self, value: ["Rex", 3]) }
        #expect(realm.objects(Dog.self).filter(NSPredicate(value: true)).count == 1)
        #expect(realm.objects(Dog.self).filter(NSPredicate(value: false)).count == 0)
        #expect(AnyRealmCollection(realm.objects(Dog.self)).index(matching: NSPredicate(value: true)) == 0)
        // A format predicate with arguments, as Realm code writes it (on Linux too).
        try realm.write { realm.create(Dog.self, value: ["Bo", 5]) }
        let older = NSPredicate(format: "age > %@ AND name != %@", 4, "Rex")
        #expect(realm.objects(Dog.self).filter(older).map(\.name) == ["Bo"])
        #expect(realm.objects(Dog.self).index(matching: NSPredicate(format: "name == %@", argumentArray: ["Bo"])) == 1)
        #expect(older == NSPredicate(format: "age > %@ AND name != %@", argumentArray: [4, "Rex"]))
        #expect(older != NSPredicate(format: "age > %@ AND name != %@", argumentArray: [5, "Rex"]))
        #expect(older.predicateFormat == "age > %@ AND name != %@")
    }

    @Test("collections compare with isEqual and describe themselves; properties say which collection they are")
    func equalityAndSchema() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3]]])
        try realm.write {
            realm.add(kennel)
            realm.add(Pound())
        }
        #expect(kennel.dogs.isEqual(realm.objects(Kennel.self).first!.dogs))
        #expect(!kennel.dogs.isEqual(Kennel().dogs))
        #expect(AnyRealmCollection(realm.objects(Dog.self)).description.contains("Rex"))
        let properties = try #require(realm.schema["Kennel"]).properties
        #expect(properties.filter(\.isArray).map(\.name) == ["dogs"])
        #expect(try #require(realm.schema["Pound"]).properties.filter(\.isMap).map(\.name) == ["byTag", "fees"])
        #expect(try #require(realm.schema["Pound"]).properties.filter(\.isSet).map(\.name) == ["dogs"])
    }

    @Test("results are equal when they are the same results; observe takes key paths")
    func identityAndKeyPathObservation() throws {
        let realm = try makeRealm()
        try realm.write { realm.create(Dog.self, value: ["Rex", 3]) }
        let dogs = realm.objects(Dog.self)
        let copy = dogs
        #expect(dogs == copy)
        #expect(dogs != realm.objects(Dog.self))
        #expect(AnyRealmCollection(dogs) == AnyRealmCollection(copy))
        var events: [String] = []
        let token = AnyRealmCollection(dogs).observe(keyPaths: [\Dog.age]) { change in
            if case .update(_, _, _, let modifications) = change { events.append("\(modifications)") }
        }
        try realm.write { dogs[0].toys.append("ball") }
        try realm.write { dogs[0].age = 4 }
        #expect(events == ["[0]"])
        token.invalidate()
    }

    @Test("value(forKeyPath:) with collection operators; NSPredicate's %d and %f placeholders")
    func collectionOperatorsAndPlaceholders() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 5], ["Cy", 5]]])
        try realm.write { realm.add(kennel) }
        let dogs = AnyRealmCollection(kennel.dogs)
        #expect(dogs.value(forKeyPath: "@count") as? Int == 3)
        #expect(dogs.value(forKeyPath: "@sum.age") as? NSNumber == 13)
        #expect(dogs.value(forKeyPath: "@max.age") as? NSNumber == 5)
        #expect(dogs.value(forKeyPath: "@min.age") as? NSNumber == 3)
        #expect(dogs.value(forKeyPath: "@unionOfObjects.age") as? [Int] == [3, 5, 5])
        #expect(dogs.value(forKeyPath: "@distinctUnionOfObjects.age") as? [Int] == [3, 5])
        #expect(dogs.filter("age == %d", 5).count == 2)
        #expect(dogs.filter("age > %lld AND age < %f", 3, 5.5).count == 2)
        #expect(throws: TroveError.self) { try realm.objects(Dog.self).filter("age == %x", arguments: [5]) }
    }

    @Test("commitWrite(withoutNotifying:) skips the given observers and notifies the others")
    func commitWithoutNotifying() throws {
        let realm = try makeRealm()
        var silenced: [String] = []
        var heard: [String] = []
        let quiet = realm.objects(Dog.self).observe { change in
            if case .update = change { silenced.append("update") }
        }
        let loud = realm.objects(Dog.self).observe { change in
            if case .update = change { heard.append("update") }
        }
        realm.beginWrite()
        realm.add(Dog(value: ["Rex", 3]))
        try realm.commitWrite(withoutNotifying: [quiet])
        #expect(silenced.isEmpty)
        #expect(heard == ["update"])
        quiet.invalidate()
        loud.invalidate()
    }

    @Test("an unmanaged list or set aggregates by key path in memory, as Realm's do")
    func unmanagedAggregates() {
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 6], ["Cy", 9]]])
        #expect(kennel.dogs.sum(of: \.age) == 18)
        #expect(kennel.dogs.min(of: \.age) == 3)
        #expect(kennel.dogs.max(of: \.age) == 9)
        #expect(kennel.dogs.average(of: \.age) == 6.0)
        let pound = Pound()
        pound.dogs.insert(objectsIn: kennel.dogs)
        #expect(AnyRealmCollection(pound.dogs).max(of: \.age) == 9)
        #expect(Kennel().dogs.max(of: \.age) == nil)
        #expect((Kennel().dogs.average(of: \.age) as Double?) == nil)
    }

    @Test("min and max of a date property come as NSDate too")
    func datesAsNSDate() throws {
        let realm = try makeRealm()
        let early = Date(timeIntervalSince1970: 1_000)
        let late = Date(timeIntervalSince1970: 2_000)
        try realm.write {
            realm.create(Stamp.self, value: ["at": late])
            realm.create(Stamp.self, value: ["at": early])
        }
        let stamps = realm.objects(Stamp.self)
        #expect((stamps.min(ofProperty: "at") as NSDate?)?.timeIntervalSince1970 == 1_000)
        #expect((stamps.max(ofProperty: "at") as NSDate?)?.timeIntervalSince1970 == 2_000)
        #expect((realm.objects(Stamp.self).filter("at > %@", late).min(ofProperty: "at") as NSDate?) == nil)
    }

    @Test("a list removes and moves SwiftUI's offsets and swaps in place")
    func offsetsAndSwap() throws {
        let realm = try makeRealm()
        let dog = Dog(value: ["name": "Rex", "toys": ["a", "b", "c", "d", "e"]])
        try realm.write { realm.add(dog) }
        try realm.write { dog.toys.remove(atOffsets: [0, 2]) }
        #expect(Array(dog.toys) == ["b", "d", "e"])
        try realm.write { dog.toys.move(fromOffsets: [2], toOffset: 0) }
        #expect(Array(dog.toys) == ["e", "b", "d"])
        try realm.write { dog.toys.move(fromOffsets: [0, 1], toOffset: 3) }
        #expect(Array(dog.toys) == ["d", "e", "b"])
        try realm.write { dog.toys.swapAt(0, 2) }
        #expect(Array(dog.toys) == ["b", "e", "d"])
        let unmanaged = List<Int>()
        unmanaged.append(objectsIn: [1, 2, 3, 4])
        unmanaged.move(fromOffsets: [0], toOffset: 4)
        unmanaged.swapAt(0, 1)
        #expect(Array(unmanaged) == [3, 2, 4, 1])
    }

    @Test("lists, sets and maps of numbers aggregate; a map of objects aggregates by key path, managed or not")
    func primitiveAndMapAggregates() throws {
        let pound = Pound()
        pound.fees["a"] = 5
        pound.fees["b"] = 8
        pound.byTag["x"] = Dog(value: ["name": "Rex", "age": 3])
        pound.byTag["y"] = Dog(value: ["name": "Bo", "age": 9])
        func check() {
            #expect(pound.fees.min() == 5 && pound.fees.max() == 8)
            #expect(pound.fees.sum() == 13 && pound.fees.average() == 6.5)
            #expect(pound.byTag.min(of: \.age) == 3 && pound.byTag.max(of: \.age) == 9)
            #expect(pound.byTag.sum(of: \.age) == 12 && pound.byTag.average(of: \.age) == 6)
            #expect(Set(pound.fees.asKeyValueSequence().map(\.key)) == ["a", "b"])
        }
        check()
        #expect(mapExtremes(pound.byTag, \.age, "age") == [3, 9, 12, 6, 3, 9, 12, 6])
        let realm = try makeRealm()
        try realm.write { realm.add(pound) }
        check()
        #expect(mapExtremes(pound.byTag, \.age, "age") == [3, 9, 12, 6, 3, 9, 12, 6])
        // Results through Realm's generic signatures: the average in the property's own type (Int here).
        #expect(extremes(realm.objects(Dog.self), \.age, "age") == [3, 9, 12, 6, 3, 9, 12, 6])
        #expect(extremes(realm.objects(Dog.self).filter("age > 100"), \.age, "age") == [nil, nil, 0, nil, nil, nil, 0, nil])
        let toys = List<Int>()
        toys.append(objectsIn: [1, 2, 6])
        #expect(toys.sum() == 9 && toys.average() == 3 && toys.max() == 6)
        #expect(List<Int>().average() == nil)
    }

    @Test("a sort descriptor takes a model key path, through links too; Schema is a top-level type")
    func keyPathSortDescriptors() throws {
        #expect(SortDescriptor(keyPath: \Dog.age, ascending: false).keyPath == "age")
        #expect(SortDescriptor(keyPath: \Walker.dog?.name).keyPath == "dog.name")
        let realm = try makeRealm()
        try realm.write {
            realm.add(Walker(value: ["name": "Ann", "dog": ["Rex", 3]]))
            realm.add(Walker(value: ["name": "Cy", "dog": ["Bo", 5]]))
        }
        let sorted = realm.objects(Walker.self).sorted(by: [SortDescriptor(keyPath: \Walker.dog?.name)])
        #expect(sorted.map(\.name) == ["Cy", "Ann"])
        let schema: Schema = realm.schema
        #expect(schema["Walker"] != nil)
    }

    @Test("observe(on:) hands each change to the queue, with the collection, map or object frozen at that change")
    func observeOnAQueue() throws {
        let realm = try makeRealm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3]]])
        let pound = Pound()
        try realm.write {
            realm.add(kennel)
            realm.add(pound)
        }
        let queue = DispatchQueue(label: "observer")
        let arrived = DispatchSemaphore(value: 0)
        let seen = Seen()
        let dogsToken = realm.objects(Dog.self).observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            switch change {
            case .initial(let dogs): seen.add("dogs initial \(dogs.count) frozen \(dogs.isFrozen)")
            case .update(let dogs, _, let insertions, _): seen.add("dogs \(dogs.count) inserted \(insertions)")
            case .error: seen.add("error")
            }
            arrived.signal()
        }
        arrived.wait()
        let feesToken = pound.fees.observe(on: queue) { change in
            if case .update(let fees, _, let insertions, _) = change {
                seen.add("fees \(insertions) frozen \(fees.isFrozen) \(fees["a"] ?? 0)")
                arrived.signal()
            }
        }
        let kennelToken = kennel.observe(on: queue) { (change: ObjectChange<Kennel>) in
            if case .change(let kennel, let properties) = change {
                seen.add("kennel \(properties.map(\.name)) frozen \(kennel.isFrozen) \(kennel.dogs.count)")
                arrived.signal()
            }
        }
        try realm.write {
            kennel.dogs.append(Dog(value: ["name": "Bo", "age": 5]))
            pound.fees["a"] = 7
        }
        for _ in 0..<3 { arrived.wait() }
        queue.sync {}
        #expect(seen.all.first == "dogs initial 1 frozen true")
        #expect(
            Set(seen.all.dropFirst()) == ["dogs 2 inserted [1]", "fees [\"a\"] frozen true 7", "kennel [\"dogs\"] frozen true 2"])
        _ = (dogsToken, feesToken, kennelToken)
    }

    @Test("observe(on: actor) calls the block on the actor with frozen collections, maps and objects")
    @MainActor
    func observeOnAnActor() async throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: realmDirectory().appendingPathComponent("actor-\(UUID().uuidString).realm")))
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3]]])
        let pound = Pound()
        try realm.write {
            realm.add(kennel)
            realm.add(pound)
        }
        let watcher = Watcher()
        let dogs = await kennel.dogs.observe(keyPaths: ["age"], on: watcher) { watcher, change in
            switch change {
            case .initial(let dogs): watcher.note("dogs initial \(dogs.count) frozen \(dogs.isFrozen)")
            case .update(let dogs, _, _, let modifications): watcher.note("dogs \(dogs.count) modified \(modifications)")
            case .error: watcher.note("error")
            }
        }
        let fees = await pound.fees.observe(on: watcher) { watcher, change in
            if case .update(let fees, _, let insertions, _) = change { watcher.note("fees \(insertions) \(fees["a"] ?? 0)") }
        }
        let object = await kennel.observe(on: watcher) { (watcher, change: ObjectChange<Kennel>) in
            if case .change(let kennel, let properties) = change {
                watcher.note("kennel \(properties.map(\.name)) frozen \(kennel.isFrozen)")
            }
        }
        try realm.write { kennel.dogs[0].toys.append("ball") }  // not an observed property of the dogs
        try realm.write {
            kennel.dogs[0].age = 4
            pound.fees["a"] = 2
        }
        let lines = await watcher.waitFor(3)
        #expect(lines.first == "dogs initial 1 frozen true")
        #expect(Set(lines.dropFirst()) == ["dogs 1 modified [0]", "fees [\"a\"] 2"])
        try realm.write { kennel.dogs.append(Dog(value: ["name": "Bo", "age": 1])) }
        let more = await watcher.waitFor(5)
        #expect(Set(more.dropFirst(3)) == ["dogs 2 modified []", "kennel [\"dogs\"] frozen true"])
        _ = (dogs, fees, object)
    }

    @Test("observe with Swift key paths on an actor: an object's and a map of objects' changes of those properties only")
    @MainActor
    func observeKeyPathsOnAnActor() async throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: realmDirectory().appendingPathComponent("keypaths-\(UUID().uuidString).realm")))
        let rex = Dog(value: ["name": "Rex", "age": 3])
        let pound = Pound()
        try realm.write {
            realm.add(rex)
            realm.add(pound)
            pound.byTag["r"] = rex
        }
        let watcher = Watcher()
        let object = await rex.observe(keyPaths: [\Dog.age], on: watcher) { (watcher, change: ObjectChange<Dog>) in
            if case .change(_, let properties) = change { watcher.note("dog \(properties.map(\.name))") }
        }
        let map = await pound.byTag.observe(keyPaths: [\Dog.age], on: watcher) { watcher, change in
            if case .update(_, _, _, let modifications) = change { watcher.note("map \(modifications)") }
        }
        try realm.write { rex.toys.append("ball") }  // not observed
        try realm.write { rex.age = 4 }
        let lines = await watcher.waitFor(2)
        #expect(Set(lines) == ["dog [\"age\"]", "map [\"r\"]"])
        _ = (object, map)
    }

    @Test("observe(on: actor) from a cancelled task registers nothing; its token's invalidate() says so")
    @MainActor
    func observeFromACancelledTask() async throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: realmDirectory().appendingPathComponent("cancelled-\(UUID().uuidString).realm")))
        let dogs = realm.objects(Dog.self)
        let watcher = Watcher()
        let stopped = await Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            let token = await dogs.observe(on: watcher) { watcher, _ in watcher.note("called") }
            return token.invalidate()
        }.value
        #expect(stopped == false)
        let live = await dogs.observe(on: watcher) { watcher, _ in watcher.note("initial") }
        #expect(await watcher.waitFor(1) == ["initial"])
        #expect(live.invalidate())
    }
}

/// Collects what observers deliver to it.
actor Watcher {
    private var lines: [String] = []
    func note(_ line: String) { lines.append(line) }

    /// The lines once there are at least `count` of them (or after ten seconds).
    func waitFor(_ count: Int) async -> [String] {
        for _ in 0..<1000 where lines.count < count { try? await Task.sleep(for: .milliseconds(10)) }
        return lines
    }

    @Test("deleting while iterating linking objects or an AnyRealmCollection neither skips nor repeats")
    func iterateWhileDeleting() throws {
        let realm = try makeRealm()
        let rex = Dog(value: ["name": "Rex"])
        try realm.write {
            for name in ["Ann", "Bo", "Cy"] { realm.add(Walker(value: ["name": name, "dog": rex])) }
            realm.add(Kennel(value: ["name": "k", "dogs": [["A"], ["B"], ["C"]]]))
        }
        let walkers = realm.objects(Walker.self)
        var seen: [String] = []
        try realm.write {
            for walker in AnyRealmCollection(walkers) {
                seen.append(walker.name)
                realm.delete(walker)
            }
        }
        #expect(seen == ["Ann", "Bo", "Cy"] && walkers.isEmpty)
    }
}

/// What observers on another queue saw, in arrival order.
private final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

final class Stamp: Object {
    @Persisted var at = Date()
}

/// How RxRealm and ReactiveRealm reach every Realm collection: a protocol
/// whose `observe` hands over `RealmCollectionChange<Self>`.
protocol NotificationEmitter {
    func observe(
        keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken
}

extension Results: NotificationEmitter where Element: Object {}
extension List: NotificationEmitter where Element: Object {}
extension MutableSet: NotificationEmitter where Element: Object {}
extension LinkingObjects: NotificationEmitter {}
extension AnyRealmCollection: NotificationEmitter {}

/// The type of the collection an emitter's first change holds.
private func emitted<E: NotificationEmitter>(_ emitter: E) -> String {
    var name = ""
    let token = emitter.observe(keyPaths: nil, on: nil) { change in
        if case .initial(let collection) = change { name = String(describing: type(of: collection)) }
    }
    token.invalidate()
    return name
}
