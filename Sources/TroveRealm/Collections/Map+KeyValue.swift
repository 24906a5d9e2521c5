import Foundation
import Trove

extension Map {
    /// The value for `key`, as key-value coding gives it (Realm's
    /// `Map.value(forKey:)`); nil when the key is absent or its value is nil.
    ///
    /// ```swift
    /// let price = item.prices.value(forKey: "EUR") as? Double
    /// ```
    public func value(forKey key: String) -> AnyObject? {
        guard let mapKey = key as? Key, let value = self[mapKey].flatMap(flattenOptional) else { return nil }
        return value as AnyObject
    }

    /// The value for `key` given as an object (Realm's `Map.object(forKey:)`,
    /// from `NSDictionary`); nil when absent.
    ///
    /// ```swift
    /// let price = item.prices.object(forKey: "EUR" as AnyObject)
    /// ```
    public func object(forKey key: AnyObject) -> AnyObject? {
        guard let mapKey = key as? Key ?? (key as? String).flatMap({ $0 as? Key }) else { return nil }
        return self[mapKey].flatMap(flattenOptional).map { $0 as AnyObject }
    }

    /// Sets the value for `key`, converted as key-value coding converts it;
    /// nil removes the key (Realm's `Map.setValue(_:forKey:)`). A value the
    /// map cannot hold traps, naming its type.
    ///
    /// ```swift
    /// try realm.write { item.prices.setValue(9.5, forKey: "EUR") }
    /// ```
    public func setValue(_ value: Any?, forKey key: String) {
        guard let mapKey = key as? Key else {
            preconditionFailure("TroveRealm: \(key) is not a key of a Map<\(Key.self), \(Value.self)>")
        }
        guard let value = value.flatMap(flattenOptional), !(value is NSNull) else {
            removeObject(for: mapKey)
            return
        }
        guard let converted = Value._troveConvert(value) else {
            preconditionFailure("TroveRealm: a Map<\(Key.self), \(Value.self)> cannot hold a \(type(of: value))")
        }
        self[mapKey] = converted
    }

    /// Objective-C's `isEqual(_:)`, which Realm's maps inherit: the same map (see `==`).
    ///
    /// ```swift
    /// item.prices.isEqual(item.prices)   // true
    /// ```
    public func isEqual(_ other: Any?) -> Bool {
        guard let other = other as? Map else { return false }
        return self == other
    }
}
