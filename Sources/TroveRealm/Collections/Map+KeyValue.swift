import Foundation
import Trove

extension Map {
    /// The value for `key`, as key-value coding gives it (Realm's
    /// `Map.value(forKey:)`): a mixed value as what it holds; nil when the
    /// key is absent or holds no mixed value, `NSNull` for a nil optional.
    ///
    /// ```swift
    /// let price = item.prices.value(forKey: "EUR") as? Double
    /// ```
    public func value(forKey key: String) -> AnyObject? {
        guard let mapKey = key as? Key else { return nil }
        return self[mapKey].flatMap { Self.kvcValue($0) }
    }

    /// A value as key-value coding hands it over: a mixed value as what it
    /// holds (nil for none), a nil optional as `NSNull`.
    private static func kvcValue(_ value: Value) -> AnyObject? {
        guard let value = flattenOptional(value) else { return NSNull() }
        guard let mixed = value as? Mixed else { return value as AnyObject }
        return mixed.boxedValue.map { $0 as AnyObject }
    }

    /// The value for `key` given as an object (Realm's `Map.object(forKey:)`,
    /// from `NSDictionary`); nil when absent, `NSNull` for a nil optional.
    ///
    /// ```swift
    /// let price = item.prices.object(forKey: "EUR" as AnyObject)
    /// ```
    public func object(forKey key: AnyObject) -> AnyObject? {
        guard let mapKey = key as? Key ?? (key as? String).flatMap({ $0 as? Key }) else { return nil }
        return self[mapKey].flatMap { Self.kvcValue($0) }
    }

    /// Sets the value for `key`, converted as key-value coding converts it
    /// (Realm's `Map.setValue(_:forKey:)`); nil removes the key, and a nil
    /// value (`NSNull`, an optional that is nil) sets nil in a map whose
    /// values may be nil. A value the map cannot hold traps, naming its type.
    ///
    /// ```swift
    /// try realm.write { item.prices.setValue(9.5, forKey: "EUR") }
    /// ```
    public func setValue(_ value: Any?, forKey key: String) {
        guard let mapKey = key as? Key else {
            preconditionFailure("TroveRealm: \(key) is not a key of a Map<\(Key.self), \(Value.self)>")
        }
        guard let value else { return removeObject(for: mapKey) }
        guard let value = flattenOptional(value), !(value is NSNull) else {
            // A nil value (not nil itself): a map whose values may be nil keeps the key with nil, as Realm's does.
            if Value._troveIsOptional || Value.self == Mixed.self {
                self[mapKey] = Value._troveDefault
            } else {
                removeObject(for: mapKey)
            }
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
