import Dispatch
import Trove

/// The queue a notification must be carried to: nil when it is the queue
/// the caller already runs on for its Realm (none given, or the main queue
/// from the main thread).
func deliveryQueue(_ queue: DispatchQueue?) -> DispatchQueue? {
    guard let queue, !(queue === DispatchQueue.main && Database.isOnMainQueue) else { return nil }
    return queue
}

/// Calls `block` with `change` here, or asynchronously on `queue` (the change
/// holds frozen, thread-safe copies then).
func deliver<Change>(_ change: Change, on queue: DispatchQueue?, to block: @escaping (Change) -> Void) {
    guard let queue else { return block(change) }
    let carried = UncheckedBox((block, change))
    queue.async { carried.value.0(carried.value.1) }
}

extension Map {
    /// The map as a frozen copy of its owner holds it, for a notification
    /// carried to another queue; itself when unmanaged, frozen or gone.
    func frozenForDelivery() -> Map {
        guard let database, !database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: true, "a map") ?? self
    }

    /// Whether the map belongs to a frozen Realm (Realm's `Map.isFrozen`).
    ///
    /// ```swift
    /// if item.prices.isFrozen { … }
    /// ```
    public var isFrozen: Bool { database?.isFrozen ?? false }
}
