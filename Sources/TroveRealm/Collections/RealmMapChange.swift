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
