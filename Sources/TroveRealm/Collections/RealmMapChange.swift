import Foundation
import Trove

/// What Realm's keyed collections share (Realm's `RealmKeyedCollection`):
/// a key type and a value type. ``Trove/Map`` conforms.
public protocol RealmKeyedCollection<Key, Value> {
    /// The key type.
    associatedtype Key: Hashable
    /// The value type.
    associatedtype Value
}

extension Map: RealmKeyedCollection {}

/// What an observer of a map receives (Realm's `RealmMapChange`): the keys
/// deleted, inserted and modified rather than positions.
///
/// ```swift
/// let token = item.prices.observe { change in
///     if case .update(_, let deleted, let inserted, let modified) = change { print(deleted, inserted, modified) }
/// }
/// ```
public enum RealmMapChange<Collection: RealmKeyedCollection> {
    /// The map when observation starts.
    case initial(Collection)
    /// The map after a commit, with the keys removed, added and whose values changed.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// The map can no longer be read.
    case error(any Swift.Error)
}

extension Map {
    /// Observes the map by key (Realm's `observe` on a `Map`): first
    /// `.initial`, then after each commit that changes it the keys deleted,
    /// inserted and modified. For a map of objects, `keyPaths` names the
    /// properties of the objects whose changes count as modifications
    /// (through links too: `"owner.name"`); a name the objects do not have traps.
    ///
    /// ```swift
    /// let token = item.prices.observe { change in … }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (RealmMapChange<Map>) -> Void
    ) -> NotificationToken {
        var keys = self.keys
        let hop = deliveryQueue(queue)
        let handler = { (change: CollectionChangeSet) in
            if let error = change.error {
                deliver(RealmMapChange<Map>.error(Realm.Error(error)), on: hop, to: block)
                return
            }
            let newKeys = self.keys
            defer { keys = newKeys }
            let shown = hop == nil ? self : self.frozenForDelivery()
            if change.isInitial {
                deliver(RealmMapChange<Map>.initial(shown), on: hop, to: block)
                return
            }
            deliver(
                RealmMapChange<Map>.update(
                    shown, deletions: change.deletions.map { keys[$0] }, insertions: change.insertions.map { newKeys[$0] },
                    modifications: change.modifications.map { newKeys[$0] }), on: hop, to: block)
        }
        guard let keyPaths, Value._troveLinkTarget != nil else { return observe(handler) }
        do {
            return try observe(properties: keyPaths, handler)
        } catch {
            realmMisuse("Cannot observe \(keyPaths)", error)
        }
    }
}

extension Map {
    /// The value for `key`, as key-value coding gives it (Realm's
    /// `Map.value(forKey:)`); nil when the key is absent or its value is nil.
    ///
    /// ```swift
    /// let price = item.prices.value(forKey: "EUR") as? Double
    /// ```
    public func value(forKey key: String) -> AnyObject? {
        guard let mapKey = key as? Key, let value = self[mapKey].flatMap(flattenedValue) else { return nil }
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
        return self[mapKey].flatMap(flattenedValue).map { $0 as AnyObject }
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
        guard let value = value.flatMap(flattenedValue), !(value is NSNull) else {
            removeObject(for: mapKey)
            return
        }
        guard let converted = Value._troveConvertValue(value) else {
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

/// `value` with an empty optional as nil and a full one unwrapped.
private func flattenedValue(_ value: Any) -> Any? {
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    return mirror.children.first.map { flattenedValue($0.value) } ?? nil
}
