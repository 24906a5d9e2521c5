import Foundation
import Trove

// Realm's aggregate signatures, generic over `_HasPersistedType` with the
// stored type's `MinMaxType` / `AddableType`: what generic code written for
// Realm (`func total<T: _HasPersistedType>(…) where T.PersistedType: AddableType`)
// calls. Each opens the value type as the stored type it is and defers to
// the aggregate that takes it directly; where both apply, that one is chosen.

/// `type` as a stored type: every `_HasPersistedType` TroveRealm declares is one.
func storedType<T>(_ type: T.Type) -> any _TroveStorable.Type {
    guard let stored = type as? any _TroveStorable.Type else {
        preconditionFailure("TroveRealm: \(T.self) is not a type TroveRealm stores, so it has no aggregate")
    }
    return stored
}

extension StoredAggregate {
    /// The sum of stored values as `T` (Realm's `sum` of a value type known only by its persisted type).
    static func sum<T>(stored values: [StoredValue], as _: T.Type, managed: Bool) -> T {
        func typed<V: _TroveStorable>(_: V.Type) -> T {
            sum(values.map { V._troveFromStored($0) }, stored: managed) as! T
        }
        return typed(storedType(T.self))
    }

    /// The mean of stored values as `T`, nil when there are none.
    static func average<T>(stored values: [StoredValue], as _: T.Type) -> T? {
        func typed<V: _TroveStorable>(_: V.Type) -> T? {
            (average(values.map { V._troveFromStored($0) }) as V?).map { $0 as! T }
        }
        return typed(storedType(T.self))
    }

    /// The smallest or largest stored value as `T`, nil when there are none.
    static func extreme<T>(stored values: [StoredValue], as _: T.Type, largest: Bool) -> T? {
        func typed<V: _TroveStorable>(_: V.Type) -> T? {
            ValueComparison.extreme(values, largest: largest).map { V._troveFromStored($0) as! T }
        }
        return typed(storedType(T.self))
    }
}

extension RealmCollection where Element: Object {
    /// The values of a property of the objects, nil skipped.
    private func storedValues<T>(_ keyPath: KeyPath<Element, T>) -> [StoredValue] {
        map { StoredValue(any: $0[keyPath: keyPath]) ?? .null }.filter { $0 != .null }
    }

    /// The smallest value of a property (Realm's signature), nil when there are none.
    ///
    /// ```swift
    /// func youngest<T: _HasPersistedType>(_ dogs: Results<Dog>, _ age: KeyPath<Dog, T>) -> T? where T.PersistedType: MinMaxType { dogs.min(of: age) }
    /// ```
    @_disfavoredOverload
    public func min<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues(keyPath), as: T.self, largest: false)
    }

    /// The largest value of a property (Realm's signature), nil when there are none.
    @_disfavoredOverload
    public func max<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues(keyPath), as: T.self, largest: true)
    }

    /// The sum of a property (Realm's signature); 0 when there are none.
    @_disfavoredOverload
    public func sum<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T where T.PersistedType: AddableType {
        StoredAggregate.sum(stored: storedValues(keyPath), as: T.self, managed: realm != nil)
    }

    /// The mean of a property as its own type (Realm's signature), nil when there are none.
    @_disfavoredOverload
    public func average<T: _HasPersistedType>(of keyPath: KeyPath<Element, T>) -> T? where T.PersistedType: AddableType {
        StoredAggregate.average(stored: storedValues(keyPath), as: T.self)
    }

    /// The smallest value of a named property (Realm's signature).
    @_disfavoredOverload
    public func min<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: numbers(property), as: T.self, largest: false)
    }

    /// The largest value of a named property (Realm's signature).
    @_disfavoredOverload
    public func max<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: numbers(property), as: T.self, largest: true)
    }

    /// The sum of a named property (Realm's signature).
    @_disfavoredOverload
    public func sum<T: _HasPersistedType>(ofProperty property: String) -> T where T.PersistedType: AddableType {
        StoredAggregate.sum(stored: numbers(property), as: T.self, managed: realm != nil)
    }

    /// The mean of a named property as its own type (Realm's signature).
    @_disfavoredOverload
    public func average<T: _HasPersistedType>(ofProperty property: String) -> T? where T.PersistedType: AddableType {
        StoredAggregate.average(stored: numbers(property), as: T.self)
    }
}

extension Map {
    /// The values of a property of the map's objects, nil values and nil properties skipped.
    private func storedValues<Wrapped: Object>(_ read: (Wrapped) -> Any?) -> [StoredValue] where Value == Wrapped? {
        values.compactMap { $0 }.map { StoredValue(any: read($0)) ?? .null }.filter { $0 != .null }
    }

    /// The smallest value of a property of the map's objects (Realm's signature).
    ///
    /// ```swift
    /// let youngest: Int? = kennel.dogsByTag.min(ofProperty: "age")
    /// ```
    @_disfavoredOverload
    public func min<Wrapped: Object, T: _HasPersistedType>(of keyPath: KeyPath<Wrapped, T>) -> T?
    where Value == Wrapped?, T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues { $0[keyPath: keyPath] }, as: T.self, largest: false)
    }

    /// The largest value of a property of the map's objects (Realm's signature).
    @_disfavoredOverload
    public func max<Wrapped: Object, T: _HasPersistedType>(of keyPath: KeyPath<Wrapped, T>) -> T?
    where Value == Wrapped?, T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues { $0[keyPath: keyPath] }, as: T.self, largest: true)
    }

    /// The sum of a property of the map's objects (Realm's signature).
    @_disfavoredOverload
    public func sum<Wrapped: Object, T: _HasPersistedType>(of keyPath: KeyPath<Wrapped, T>) -> T
    where Value == Wrapped?, T.PersistedType: AddableType {
        StoredAggregate.sum(stored: storedValues { $0[keyPath: keyPath] }, as: T.self, managed: isManaged)
    }

    /// The mean of a property of the map's objects as its own type (Realm's signature).
    @_disfavoredOverload
    public func average<Wrapped: Object, T: _HasPersistedType>(of keyPath: KeyPath<Wrapped, T>) -> T?
    where Value == Wrapped?, T.PersistedType: AddableType {
        StoredAggregate.average(stored: storedValues { $0[keyPath: keyPath] }, as: T.self)
    }

    /// The smallest value of a named property of the map's objects.
    public func min<Wrapped: Object, T: _HasPersistedType>(ofProperty property: String) -> T?
    where Value == Wrapped?, T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues { $0.value(forKey: property) }, as: T.self, largest: false)
    }

    /// The largest value of a named property of the map's objects.
    public func max<Wrapped: Object, T: _HasPersistedType>(ofProperty property: String) -> T?
    where Value == Wrapped?, T.PersistedType: MinMaxType {
        StoredAggregate.extreme(stored: storedValues { $0.value(forKey: property) }, as: T.self, largest: true)
    }

    /// The sum of a named property of the map's objects (0 when there are none).
    public func sum<Wrapped: Object, T: _HasPersistedType>(ofProperty property: String) -> T
    where Value == Wrapped?, T.PersistedType: AddableType {
        StoredAggregate.sum(stored: storedValues { $0.value(forKey: property) }, as: T.self, managed: isManaged)
    }

    /// The mean of a named property of the map's objects, nil when there are none.
    public func average<Wrapped: Object, T: _HasPersistedType>(ofProperty property: String) -> T?
    where Value == Wrapped?, T.PersistedType: AddableType {
        StoredAggregate.average(stored: storedValues { $0.value(forKey: property) }, as: T.self)
    }
}
