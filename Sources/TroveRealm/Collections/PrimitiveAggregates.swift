import Foundation
import Trove

// Realm's aggregates of lists, sets and maps of numbers (`tags.max()`,
// `scores.sum()`, `prices.average()`), and of a map of objects by key path.
// They read the elements in memory, managed or not, as Realm's do for values:
// numbers, dates, Decimal128, AnyRealmValue, enums and custom types by what
// they are stored as (Realm's `MinMaxType` and `AddableType`).

/// Realm's aggregates of values, worked out on their stored forms so one
/// definition serves every element type (enums and custom types by what
/// they are stored as, `AnyRealmValue` by what each holds); nils are skipped.
enum StoredAggregate {
    static func extreme<E: _TroveStorable>(_ values: some Sequence<E>, largest: Bool) -> E? {
        ValueComparison.extreme(values.lazy.map(\._troveStored), largest: largest).map { E._troveFromStored($0) }
    }

    /// The sum in the kind of the values added: integers exactly (wrapping
    /// as Realm's do), floating point as Double, Decimal128 when any is one.
    static func sum<E: _TroveStorable>(_ values: some Sequence<E>, stored: Bool) -> E {
        // Mixed values add up as Decimal128, as realm-core adds them (an empty
        // stored collection too; an empty unmanaged one gives 0, as Realm's does).
        if E.self == Mixed.self {
            var total = Decimal128(0)
            var any = false
            for value in values {
                guard let number = value._troveStored.decimal128Value else { continue }
                total = total + number
                any = true
            }
            return E._troveFromStored(any || stored ? .decimal128(total) : .int(0))
        }
        var integers: Int64 = 0
        var floating = 0.0
        var decimal: Decimal128?
        var kind: StoredValue = .int(0)
        for value in values {
            switch value._troveStored {
            case .int(let v): integers &+= v
            case .float(let v):
                floating += Double(v)
                if case .int = kind { kind = .float(0) }
            case .double(let v):
                floating += v
                kind = .double(0)
            case .decimal128(let v): decimal = (decimal ?? Decimal128(0)) + v
            default: continue
            }
        }
        if let decimal { return E._troveFromStored(.decimal128(decimal + Decimal128(integers) + Decimal128(floating))) }
        switch kind {
        case .float: return E._troveFromStored(.float(Float(floating + Double(integers))))
        case .double: return E._troveFromStored(.double(floating + Double(integers)))
        default: return E._troveFromStored(.int(integers))
        }
    }

    /// The mean, as Decimal128 when any value is one, as Double otherwise; nil when there are none.
    static func average<E: _TroveStorable, T: _TroveStorable>(_ values: some Sequence<E>) -> T? {
        var count = 0
        var total = 0.0
        var decimal: Decimal128?
        for value in values {
            let stored = value._troveStored
            if case .decimal128(let v) = stored {
                decimal = (decimal ?? Decimal128(0)) + v
            } else if let number = stored.numeric, stored.isCountedNumber {
                total += number
            } else {
                continue
            }
            count += 1
        }
        guard count > 0 else { return nil }
        if let decimal { return T._troveFromStored(.decimal128((decimal + Decimal128(total)) / Decimal128(count))) }
        return T._troveFromStored(.double(total / Double(count)))
    }
}

extension StoredValue {
    /// Whether an average counts this value (numbers; not booleans, which `numeric` also reads).
    fileprivate var isCountedNumber: Bool {
        switch self {
        case .int, .float, .double, .decimal, .decimal128: return true
        default: return false
        }
    }
}

extension Map where Value: RealmCollectionValue, Value.PersistedType: MinMaxType {
    /// The smallest value (nil skipped), nil when there is none.
    ///
    /// ```swift
    /// let cheapest = item.prices.min()
    /// ```
    public func min() -> Value? { StoredAggregate.extreme(values, largest: false) }

    /// The largest value (nil skipped), nil when there is none.
    ///
    /// ```swift
    /// let dearest = item.prices.max()
    /// ```
    public func max() -> Value? { StoredAggregate.extreme(values, largest: true) }
}

extension Map where Value: RealmCollectionValue, Value.PersistedType: AddableType {
    /// The sum of the values (0 when empty, nil skipped).
    ///
    /// ```swift
    /// let total = item.prices.sum()
    /// ```
    public func sum() -> Value {
        // realm-core sums no mixed values of a dictionary to the integer 0, where a list's give Decimal128 0.
        StoredAggregate.sum(values, stored: false)
    }

    /// The mean of the values (nil skipped), nil when there are none.
    ///
    /// ```swift
    /// let mean: Double? = item.prices.average()
    /// ```
    public func average<T: _TroveStorable & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        StoredAggregate.average(values)
    }

    /// The mean of the values as a Double (nil skipped), nil when there are none.
    ///
    /// ```swift
    /// let mean = item.prices.average()
    /// ```
    public func average() -> Double? { StoredAggregate.average(values) }
}

extension Map {
    /// The entries as `(key, value)` pairs (Realm's `asKeyValueSequence()`).
    ///
    /// ```swift
    /// for (currency, price) in item.prices.asKeyValueSequence() { print(currency, price) }
    /// ```
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { entries() }

    /// The objects of a map of objects (nil values skipped).
    private func objects<Wrapped: Object>() -> [Wrapped] where Value == Wrapped? { values.compactMap { $0 } }

    /// The smallest value of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let youngest = kennel.dogsByTag.min(of: \.age)
    /// ```
    public func min<Wrapped: Object, V: _TroveStorable & Comparable>(of keyPath: KeyPath<Wrapped, V>) -> V?
    where Value == Wrapped? {
        objects().map { $0[keyPath: keyPath] }.min()
    }

    /// The largest value of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let oldest = kennel.dogsByTag.max(of: \.age)
    /// ```
    public func max<Wrapped: Object, V: _TroveStorable & Comparable>(of keyPath: KeyPath<Wrapped, V>) -> V?
    where Value == Wrapped? {
        objects().map { $0[keyPath: keyPath] }.max()
    }

    /// The sum of a property of the map's objects (0 when there are none).
    ///
    /// ```swift
    /// let years = kennel.dogsByTag.sum(of: \.age)
    /// ```
    public func sum<Wrapped: Object, V: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Wrapped, V>) -> V
    where Value == Wrapped? {
        objects().reduce(.zero) { $0 + $1[keyPath: keyPath] }
    }

    /// The mean of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let meanAge = kennel.dogsByTag.average(of: \.age)
    /// ```
    public func average<Wrapped: Object, V: _TroveStorable>(of keyPath: KeyPath<Wrapped, V>) -> Double?
    where Value == Wrapped? {
        StoredAggregate.average(objects().map { $0[keyPath: keyPath] })
    }
}

extension RealmCollection where Element.PersistedType: SortableType {
    /// The values as live results in order, nil first when ascending
    /// (Realm's `sorted(ascending:)`): they follow the collection through
    /// commits. As in Realm, only a stored collection has results; for an
    /// unmanaged one it traps (sort it with Swift's `sorted()`).
    ///
    /// ```swift
    /// let ranks = player.scores.sorted(ascending: false)
    /// ```
    public func sorted(ascending: Bool = true) -> Results<Element> {
        guard let results = _valueResults(ascending: ascending) else { unmanagedValueResults("sorted(ascending:)") }
        return results
    }

    /// The values with each distinct value once, where it first occurs, as
    /// live results (Realm's `distinct()`); traps for an unmanaged collection, as in Realm.
    ///
    /// ```swift
    /// let tags = Array(photo.tags.distinct())
    /// ```
    public func distinct() -> Results<Element> {
        guard let results = _valueResults(ascending: nil) else { unmanagedValueResults("distinct()") }
        return results
    }

    private func unmanagedValueResults(_ method: String) -> Never {
        preconditionFailure(
            "TroveRealm: \(method) makes Results, which only a stored \(Self.self) has (as in Realm); add its owner first, or use Swift's sorted() on the unmanaged collection"
        )
    }
}

extension Map where Value: RealmCollectionValue, Value.PersistedType: SortableType {
    /// The map's values as live results in order, nil first when ascending
    /// (Realm's `sorted(ascending:)`); traps for an unmanaged map, as in Realm.
    ///
    /// ```swift
    /// let cheapestFirst = item.prices.sorted(ascending: true)
    /// ```
    public func sorted(ascending: Bool = true) -> Results<Value> {
        valueResults(.sorted(ascending: ascending), "sorted(ascending:)")
    }

    /// The map's values with each distinct value once, as live results (Realm's `distinct()`).
    ///
    /// ```swift
    /// let currencies = item.currencies.distinct()
    /// ```
    public func distinct() -> Results<Value> { valueResults(.distinct, "distinct()") }

    private func valueResults(_ order: ValueOrder, _ method: String) -> Results<Value> {
        guard let results = valueResults(order) as? Results<Value> else {
            preconditionFailure(
                "TroveRealm: \(method) makes Results, which only a stored Map has (as in Realm); add its owner first")
        }
        return results
    }
}
