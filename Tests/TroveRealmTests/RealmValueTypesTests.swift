import Foundation
import Testing
import TroveRealm

enum Grade: Int, PersistableEnum {
    case low = 1, middle = 5, high = 9
}

final class Ledger: Object {
    @Persisted var counts: List<Int?>
    @Persisted var prices: List<Decimal128>
    @Persisted var days: List<Date>
    @Persisted var grades: List<Grade>
    @Persisted var temperatures: MutableSet<Celsius>
    @Persisted var mixed: Map<String, AnyRealmValue>
    @Persisted var grade = Grade.middle
    @Persisted var reading: Celsius?
}

// Written the way Realm's own generic helpers are: against its protocols, not the element types.
private func lowest<T: RealmCollectionValue>(_ list: List<T>) -> T? where T.PersistedType: MinMaxType { list.min() }
private func highest<T: RealmCollectionValue>(_ set: MutableSet<T>) -> T? where T.PersistedType: MinMaxType { set.max() }
private func total<T: RealmCollectionValue>(_ list: List<T>) -> T where T.PersistedType: AddableType { list.sum() }
private func total<T: RealmCollectionValue>(_ map: Map<String, T>) -> T where T.PersistedType: AddableType { map.sum() }
private func mean<T: RealmCollectionValue, A: RealmCollectionValue>(_ list: List<T>, as _: A.Type) -> A?
where T.PersistedType: AddableType, A.PersistedType: AddableType {
    list.average()
}
private func matching<Root: Object, T: _Persistable>(
    _ results: Results<Root>, _ lhs: (Query<Root>) -> Query<T>, above value: T
) -> Int where T.PersistedType: _QueryNumeric {
    results.where { lhs($0) > value }.count
}
private func summary<C: RealmCollection>(_ collection: C) -> String where C.Element.PersistedType: MinMaxType {
    let lowest = collection.min().map { "\($0)" } ?? "-"
    return "\(collection.count) \(lowest) \(collection.isFrozen)"
}
private func storedType<T: _Persistable>(_: T.Type) -> String { String(describing: T.PersistedType.self) }

@Suite("Realm's value-type protocols")
struct RealmValueTypesTests {
    private func filled(_ ledger: Ledger) throws {
        ledger.counts.append(objectsIn: [3, nil, -2, 7])
        ledger.prices.append(objectsIn: [try Decimal128(string: "1.10"), try Decimal128(string: "2.25")])
        ledger.days.append(objectsIn: [Date(timeIntervalSince1970: 200), Date(timeIntervalSince1970: 100)])
        ledger.grades.append(objectsIn: [.middle, .high, .low])
        ledger.temperatures.insert(objectsIn: [Celsius(18.5), Celsius(-3), Celsius(30)])
        ledger.mixed["a"] = .int(2)
        ledger.mixed["b"] = .double(0.5)
        ledger.mixed["c"] = .string("not a number")
    }

    private func check(_ ledger: Ledger) throws {
        #expect(lowest(ledger.counts) == .some(-2))
        #expect(total(ledger.counts) == 8)
        #expect(mean(ledger.counts, as: Double.self) == 8.0 / 3)
        #expect(lowest(ledger.prices) == (try Decimal128(string: "1.10")))
        #expect(total(ledger.prices) == (try Decimal128(string: "3.35")))
        #expect(mean(ledger.prices, as: Decimal128.self) == (try Decimal128(string: "1.675")))
        #expect(lowest(ledger.days) == Date(timeIntervalSince1970: 100))
        // An enum compares by its raw value, a custom type by its persisted value.
        #expect(lowest(ledger.grades) == .low)
        #expect(ledger.grades.max() == .high)
        #expect(highest(ledger.temperatures) == Celsius(30))
        #expect(ledger.temperatures.sum() == Celsius(45.5))
        // Mixed values: numbers add up as Decimal128 (as realm-core adds them), the string is skipped.
        #expect(total(ledger.mixed) == .decimal128(Decimal128(2.5)))
        #expect(ledger.mixed.min() == .double(0.5))
    }

    @Test("aggregates through RealmCollectionValue, MinMaxType and AddableType, unmanaged and managed")
    func genericAggregates() throws {
        let unmanaged = Ledger()
        try filled(unmanaged)
        try check(unmanaged)
        let realm = try makeRealm(objectTypes: [Ledger.self])
        try realm.write { realm.add(unmanaged) }
        try check(try #require(realm.objects(Ledger.self).first))
        let empty = Ledger()
        #expect(lowest(empty.counts) == nil)
        #expect(total(empty.prices) == Decimal128(0))
        #expect(mean(empty.counts, as: Double.self) == nil)
        // An empty map of mixed values sums to the integer 0, stored or not, as Realm's
        // AddableAnyRealmValueMapTests expect (an empty stored list's sum is Decimal128 0).
        #expect(total(empty.mixed) == .int(0))
        try realm.write { realm.add(empty) }
        #expect(total(empty.mixed) == .int(0))
    }

    @Test("PersistedType, _rlmType and _rlmOptional name how each type is stored")
    func persistedTypes() {
        #expect(storedType(Int.self) == "Int")
        #expect(storedType(Grade.self) == "Int")
        #expect(storedType(Celsius.self) == "Double")
        #expect(storedType(Int?.self) == "Optional<Int>")
        #expect(Grade._rlmType == .int && String._rlmType == .string && Ledger._rlmType == .object)
        #expect(String?._rlmOptional && !String._rlmOptional)
        #expect(Grade.middle < Grade.high && [Grade.high, .low].sorted() == [.low, .high])
        #expect(Int._rlmDefaultValue() == 0 && Grade._rlmDefaultValue() == .low)
    }

    @Test("typed queries compare enums and custom types by what they are stored as, through generic code too")
    func queriesByPersistedType() throws {
        let realm = try makeRealm(objectTypes: [Ledger.self])
        try realm.write {
            for (grade, reading) in [(Grade.low, 12.0), (.middle, 21.5), (.high, 30.0)] {
                let ledger = Ledger()
                ledger.grade = grade
                ledger.reading = Celsius(reading)
                realm.add(ledger)
            }
            realm.add(Ledger())  // no reading
        }
        let all = realm.objects(Ledger.self)
        #expect(all.where { $0.grade > .low }.count == 3)
        #expect(all.where { $0.grade <= .middle }.count == 3)
        #expect(all.where { $0.reading >= Celsius(21.5) }.count == 2)
        #expect(all.where { $0.reading.persistableValue < 20.0 }.count == 1)
        #expect(matching(all, \.grade, above: .middle) == 1)
        #expect(matching(all, \.reading, above: Celsius(0)) == 3)
    }

    @Test("lists and sets of values are RealmCollections: generic code, AnyRealmCollection, observe, freeze")
    func valueCollectionsAreRealmCollections() throws {
        let realm = try makeRealm(objectTypes: [Ledger.self])
        let ledger = Ledger()
        ledger.grades.append(objectsIn: [.high, .low])
        #expect(summary(ledger.grades) == "2 low false")
        #expect(ledger.grades.realm == nil && ledger.grades.index(of: .low) == 1)
        try realm.write { realm.add(ledger) }
        let stored = try #require(realm.objects(Ledger.self).first)
        let any = AnyRealmCollection(stored.grades)
        #expect(any.count == 2 && any.max() == .high && any.realm == realm)
        #expect(AnyRealmCollection(stored.temperatures).sum() == Celsius(0))
        var changes: [String] = []
        let token = any.observe { change in
            switch change {
            case .initial(let grades): changes.append("initial \(grades.count)")
            case .update(let grades, let deletions, let insertions, _):
                changes.append("update \(grades.count) -\(deletions) +\(insertions)")
            case .error: changes.append("error")
            }
        }
        try realm.write { stored.grades.append(.middle) }
        try realm.write { stored.grades.remove(at: 0) }
        #expect(changes == ["initial 2", "update 3 -[] +[2]", "update 2 -[0] +[]"])
        let frozen = stored.grades.freeze()
        try realm.write { stored.grades.removeAll() }
        #expect(frozen.isFrozen && Array(frozen) == [.low, .middle] && stored.grades.isEmpty)
        #expect(summary(frozen) == "2 low true")
        token.invalidate()
    }

    @Test("stored values sort (nil first ascending) and distinct in lists, sets and maps; sorted() stays Swift's")
    func sortedAndDistinct() throws {
        let realm = try makeRealm(objectTypes: [Ledger.self])
        let ledger = Ledger()
        try filled(ledger)
        ledger.counts.append(objectsIn: [3, nil])
        ledger.mixed["d"] = .int(-1)
        try realm.write { realm.add(ledger) }
        #expect(Array(ledger.counts.sorted(ascending: true)) == [nil, nil, -2, 3, 3, 7])
        #expect(Array(ledger.counts.sorted(ascending: false)) == [7, 3, 3, -2, nil, nil])
        #expect(Array(ledger.counts.distinct()) == [3, nil, -2, 7])
        #expect(Array(ledger.grades.sorted(ascending: true)) == [.low, .middle, .high])
        #expect(ledger.temperatures.sorted(ascending: false).map(\.degrees) == [30, 18.5, -3])
        #expect(Array(ledger.mixed.sorted(ascending: true).prefix(3)) == [.int(-1), .double(0.5), .int(2)])
        #expect(
            Array(AnyRealmCollection(ledger.days).sorted(ascending: true)) == [
                Date(timeIntervalSince1970: 100), Date(timeIntervalSince1970: 200),
            ])
        let plain = List<Int>()
        plain.append(objectsIn: [2, 1])
        #expect(plain.sorted() == [1, 2])
    }

    @Test("a typed query orders a mixed property against a value by what it holds")
    func mixedComparisons() throws {
        let realm = try makeRealm(objectTypes: [Ledger.self, MixedHolder.self])
        try realm.write {
            for value: AnyRealmValue in [.int(1), .double(2.5), .string("b"), .none, .date(Date(timeIntervalSince1970: 9))] {
                realm.add(MixedHolder(value: ["value": value]))
            }
        }
        let holders = realm.objects(MixedHolder.self)
        #expect(holders.where { $0.value > .int(1) }.count == 1)
        #expect(holders.where { $0.value >= .int(1) }.count == 2)
        #expect(holders.where { $0.value < .string("c") }.count == 1)
        #expect(holders.where { $0.value > .date(Date(timeIntervalSince1970: 0)) }.count == 1)
    }
}

final class MixedHolder: Object {
    @Persisted var value: AnyRealmValue
}
