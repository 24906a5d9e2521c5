import Foundation
import Testing
import TroveRealm

final class Drawer: Object {
    @Persisted var numbers: List<Int>
    @Persisted var maybe: Map<String, Int?>
    @Persisted var labels: MutableSet<String>
    @Persisted var things: List<AnyRealmValue>
    @Persisted var slots: Map<String, AnyRealmValue>
}

@Suite("Key-value coding and index(matching:) of collections of values; maps of objects queried")
struct ValueKeyValueTests {
    @Test("value(forKey: \"self\") hands out each value as an object, and dynamicBridgeCast brings it back")
    func valueForSelf() throws {
        let realm = try makeRealm(objectTypes: [Drawer.self, Dog.self])
        let drawer = Drawer()
        #expect(drawer.numbers.value(forKey: "self").isEmpty)
        drawer.numbers.append(objectsIn: [3, 1, 2])
        drawer.labels.insert(objectsIn: ["b", "a"])
        drawer.things.append(objectsIn: [.int(4), .none, .string("x")])
        try realm.write { realm.add(drawer) }
        #expect(drawer.numbers.value(forKey: "self").map { dynamicBridgeCast(fromObjectiveC: $0) as Int } == [3, 1, 2])
        #expect(Set(drawer.labels.value(forKey: "self").map { dynamicBridgeCast(fromObjectiveC: $0) as String }) == ["a", "b"])
        let things = drawer.things.value(forKey: "self")
        #expect(things[0] as? Int == 4 && things[1] is NSNull && things[2] as? String == "x")
        #expect(dynamicBridgeCast(fromSwift: AnyRealmValue.int(3)) as? Int == 3)
        #expect(dynamicBridgeCast(fromSwift: Int?.none) is NSNull)
    }

    @Test("index(matching:) on values tests `self`: an NSPredicate, a query string and a typed query")
    func indexMatchingValues() throws {
        let realm = try makeRealm(objectTypes: [Drawer.self, Dog.self])
        let drawer = Drawer()
        drawer.numbers.append(objectsIn: [5, 6, 7, 8])
        #expect(drawer.numbers.index(matching: NSPredicate(format: "self == 7")) == 2)
        try realm.write { realm.add(drawer) }
        #expect(drawer.numbers.index(matching: NSPredicate(format: "self == 7")) == 2)
        #expect(drawer.numbers.index(matching: NSPredicate(format: "self == 9")) == nil)
        #expect(drawer.numbers.index(matching: "self > %@", 5) == 1)
        #expect(drawer.numbers.index(matching: { $0 == 7 && $0 < 456 }) == 2)
        #expect(drawer.numbers.index(matching: { $0 == 9 }) == nil)
    }

    @Test("a map of objects filters and sorts into Results of its optional value type; contains(where:) takes key and value")
    func mapOfObjectsQueried() throws {
        let realm = try makeRealm(objectTypes: [Pound.self, Dog.self])
        let pound = Pound()
        pound.byTag["b"] = Dog(value: ["name": "Bo", "age": 5])
        pound.byTag["a"] = Dog(value: ["name": "Ace", "age": 2])
        pound.byTag["c"] = Dog(value: ["name": "Cy", "age": 8])
        pound.fees["Bo"] = 10
        try realm.write { realm.add(pound) }
        let old: Results<Dog?> = pound.byTag.filter(NSPredicate(format: "age > 3"))
        #expect(old.count == 2 && Set(old.map { $0!.name }) == ["Bo", "Cy"])
        #expect(pound.byTag.filter("name BEGINSWITH %@", "A").map { $0?.name } == ["Ace"])
        #expect(pound.byTag.sorted(byKeyPath: "age", ascending: false).map { $0?.name } == ["Cy", "Bo", "Ace"])
        #expect(pound.byTag.sorted(by: \.name, ascending: true).map { $0?.age } == [2, 5, 8])
        try realm.write { pound.byTag["d"] = Dog(value: ["name": "Dot", "age": 4]) }
        #expect(old.count == 3)  // live
        #expect(pound.fees.contains { key, fee in key == "Bo" && fee == 10 })
        #expect(!pound.fees.contains { _, fee in fee > 10 })
        #expect(pound.byTag.value(forKeyPath: "a.name") as? String == "Ace")
    }

    @Test("a map of mixed values hands out what each holds through key-value coding; a held object reads as a DynamicObject")
    func mixedMapKeyValue() throws {
        let realm = try makeRealm(objectTypes: [Drawer.self, Dog.self])
        let drawer = Drawer()
        try realm.write {
            realm.add(drawer)
            drawer.slots["n"] = .int(3)
            drawer.slots["flag"] = .bool(true)
            drawer.slots["dog"] = .object(Dog(value: ["name": "Rex", "age": 3]))
        }
        #expect(drawer.slots.value(forKey: "n") as? Int == 3)
        #expect(drawer.slots.object(forKey: "flag" as AnyObject) as? Bool == true)
        let dog = try #require(drawer.slots["dog"]?.dynamicObject)
        #expect(dog["name"] as? String == "Rex")
        try realm.write { dog["age"] = 4 }
        #expect(realm.object(ofType: Dog.self, forPrimaryKey: "Rex")?.age == 4)
        #expect(AnyRealmValue.int(1).dynamicObject == nil && AnyRealmValue.object(Dog()).dynamicObject == nil)
    }

    @Test("setValue(nil) removes a key; a nil value keeps it in a map whose values may be nil, read back as NSNull")
    func nilInOptionalMap() throws {
        let realm = try makeRealm(objectTypes: [Drawer.self, Dog.self])
        let drawer = Drawer()
        let nothing: Int? = nil
        try realm.write {
            realm.add(drawer)
            drawer.maybe.setValue(nothing as Any, forKey: "nil")
            drawer.maybe.setValue(NSNull(), forKey: "null")
            drawer.maybe.setValue(3, forKey: "three")
            drawer.maybe.setValue(4, forKey: "four")
            drawer.maybe.setValue(nil, forKey: "four")
            drawer.slots.setValue(NSNull(), forKey: "none")
        }
        #expect(drawer.maybe.count == 3 && drawer.maybe.value(forKey: "nil") is NSNull)
        #expect(drawer.maybe.value(forKey: "null") is NSNull && drawer.maybe.value(forKey: "four") == nil)
        #expect(drawer.maybe.value(forKey: "three") as? Int == 3 && drawer.maybe.object(forKey: "nil" as AnyObject) is NSNull)
        #expect(drawer.slots.count == 1 && drawer.slots.value(forKey: "none") == nil)
        try realm.write { drawer.slots.removeAll() }
        #expect(drawer.slots.sum() == .int(0))
    }
}
