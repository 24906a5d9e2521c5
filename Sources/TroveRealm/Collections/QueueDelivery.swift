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

extension Actor {
    /// Runs `body` isolated to this actor.
    func troveRealmRun(_ body: @Sendable (isolated Self) -> Void) {
        body(self)
    }
}

/// Calls `block` on `actor` with `change` (whose collections and objects are
/// frozen, so any isolation may read them).
func deliver<A: Actor, Change>(_ change: Change, to actor: A, _ block: @escaping @Sendable (isolated A, Change) -> Void) {
    let carried = UncheckedBox(change)
    Task { await actor.troveRealmRun { actor in block(actor, carried.value) } }
}

extension RealmCollection {
    /// Observes the collection and calls `block` on `actor` (Realm's
    /// `observe(keyPaths:on:)` with an actor): first `.initial`, then each
    /// change, with the collection frozen at that change.
    ///
    /// ```swift
    /// let token = await photos.observe(on: indexer) { indexer, change in indexer.apply(change) }
    /// ```
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Self>) -> Void
    ) async -> NotificationToken {
        // A cancelled task registers nothing, as in Realm.
        if Task.isCancelled { return NotificationToken() }
        guard let results = _objectResults else {
            return _observeValues { change in deliver(RealmCollectionChange(change, self.freeze()), to: actor, block) }
        }
        let handler = actorChangeHandler(actor, block)
        guard let keyPaths else { return results.observe(handler) }
        do {
            return try results.observe(properties: keyPaths, handler)
        } catch {
            realmMisuse("Cannot observe \(keyPaths)", error)
        }
    }

    fileprivate func actorChangeHandler<A: Actor>(
        _ actor: A, _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Self>) -> Void
    ) -> (ResultsChange<Element>) -> Void {
        { change in
            switch change {
            case .initial: deliver(.initial(self.freeze()), to: actor, block)
            case .update(_, let deletions, let insertions, let modifications):
                deliver(
                    .update(self.freeze(), deletions: deletions, insertions: insertions, modifications: modifications),
                    to: actor, block)
            case .error(let error): deliver(.error(error), to: actor, block)
            }
        }
    }
}

extension RealmCollection where Element: Object {
    /// ``observe(keyPaths:on:_isolation:_:)`` with the properties given as key paths.
    ///
    /// ```swift
    /// let token = await photos.observe(keyPaths: [\.memo], on: indexer) { indexer, change in … }
    /// ```
    public func observe<A: Actor>(
        keyPaths: [PartialKeyPath<Element>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Self>) -> Void
    ) async -> NotificationToken {
        realmResults.observe(keyPaths: keyPaths, actorChangeHandler(actor, block))
    }
}

extension Map {
    /// Observes the map and calls `block` on `actor` with each change, the
    /// map frozen at that change (Realm's `observe(keyPaths:on:)` with an actor).
    ///
    /// ```swift
    /// let token = await item.prices.observe(on: pricer) { pricer, change in … }
    /// ```
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmMapChange<Map>) -> Void
    ) async -> NotificationToken {
        observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial(let map): deliver(.initial(map.frozenForDelivery()), to: actor, block)
            case .update(let map, let deletions, let insertions, let modifications):
                deliver(
                    .update(map.frozenForDelivery(), deletions: deletions, insertions: insertions, modifications: modifications),
                    to: actor, block)
            case .error(let error): deliver(.error(error), to: actor, block)
            }
        }
    }
}

extension Object {
    /// Observes the object and calls `block` on `actor` with each change,
    /// the object frozen at that change (Realm's `observe(keyPaths:on:)` with an actor).
    ///
    /// ```swift
    /// let token = await photo.observe(keyPaths: ["memo"], on: indexer) { indexer, (change: ObjectChange<Photo>) in … }
    /// ```
    public func observe<A: Actor, T: ObjectBase>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, ObjectChange<T>) -> Void
    ) async -> NotificationToken {
        // The actor is another isolation: old values stay (Realm gives them there).
        observeAsObject(keyPaths: keyPaths) { change in
            switch change {
            case .change(let object, let properties):
                deliver(ObjectChange<T>.change(object.freeze() as! T, properties), to: actor, block)
            case .deleted: deliver(ObjectChange<T>.deleted, to: actor, block)
            case .error(let error): deliver(ObjectChange<T>.error(error), to: actor, block)
            }
        }
    }
}

/// The property paths key paths of `T` read, trapping on one that reads none.
func propertyNames<T: Object>(_ keyPaths: [PartialKeyPath<T>]) -> [String] {
    keyPaths.map { keyPath in
        guard let name = T.propertyPath(of: keyPath) else {
            preconditionFailure("TroveRealm: \(keyPath) reads no persisted property of \(T.self)")
        }
        return name
    }
}

extension Object {
    /// ``observe(keyPaths:on:_isolation:_:)`` with the properties given as key paths.
    ///
    /// ```swift
    /// let token = await photo.observe(keyPaths: [\Photo.memo], on: indexer) { indexer, change in … }
    /// ```
    public func observe<A: Actor, T: Object>(
        keyPaths: [PartialKeyPath<T>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, ObjectChange<T>) -> Void
    ) async -> NotificationToken {
        await observe(keyPaths: propertyNames(keyPaths), on: actor, block)
    }
}

extension Map {
    /// ``observe(keyPaths:on:_:)`` for a map of objects, with the properties
    /// of its objects given as key paths.
    ///
    /// ```swift
    /// let token = shelf.slots.observe(keyPaths: [\.title]) { change in … }
    /// ```
    public func observe<O: Object>(
        keyPaths: [PartialKeyPath<O>], on queue: DispatchQueue? = nil, _ block: @escaping (RealmMapChange<Map>) -> Void
    ) -> NotificationToken where Value == O? {
        observe(keyPaths: propertyNames(keyPaths), on: queue, block)
    }

    /// ``observe(keyPaths:on:_isolation:_:)`` for a map of objects, with the
    /// properties of its objects given as key paths.
    ///
    /// ```swift
    /// let token = await shelf.slots.observe(keyPaths: [\.title], on: librarian) { librarian, change in … }
    /// ```
    public func observe<A: Actor, O: Object>(
        keyPaths: [PartialKeyPath<O>], on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmMapChange<Map>) -> Void
    ) async -> NotificationToken where Value == O? {
        await observe(keyPaths: propertyNames(keyPaths), on: actor, block)
    }
}
