import Foundation
import Trove

extension Realm {
    /// Whether this Realm is a frozen snapshot (see ``freeze()``).
    public var isFrozen: Bool { database.isFrozen }

    /// A frozen Realm: the latest commit, read-only, never refreshing; its
    /// objects and results keep that state (Realm's `freeze()`).
    ///
    /// ```swift
    /// let snapshot = realm.freeze()
    /// snapshot.objects(Dog.self).count   // unchanged by later writes
    /// ```
    public func freeze() -> Realm {
        do {
            return Realm(try database.freeze())
        } catch {
            realmMisuse("Cannot freeze the Realm", error)
        }
    }

    /// A live Realm on the same file (Realm's `thaw()`); a live Realm returns itself.
    ///
    /// ```swift
    /// let live = snapshot.thaw()
    /// ```
    public func thaw() -> Realm {
        guard isFrozen else { return self }
        do {
            return try Realm(configuration: configuration)
        } catch {
            realmMisuse("Cannot thaw the Realm", error)
        }
    }

    /// `object` frozen (see ``Trove/Object/freeze()``).
    ///
    /// ```swift
    /// let frozenDog = realm.freeze(dog)
    /// ```
    public func freeze<T: Object>(_ object: T) -> T { object.freeze() }

    /// A live copy of a frozen `object`, or nil when it was deleted since.
    ///
    /// ```swift
    /// let liveDog = realm.thaw(frozenDog)
    /// ```
    public func thaw<T: Object>(_ object: T) -> T? { object.thaw() }

    /// `collection` frozen (see ``RealmCollection/freeze()``).
    ///
    /// ```swift
    /// let frozenDogs = realm.freeze(realm.objects(Dog.self))
    /// ```
    public func freeze<C: RealmCollection>(_ collection: C) -> C { collection.freeze() }
}

extension Object {
    /// Whether the object belongs to a frozen Realm.
    public var isFrozen: Bool { database?.isFrozen ?? false }

    /// The object as a frozen Realm holds it: the same class, read-only, its
    /// properties fixed at the latest commit (Realm's `freeze()`). Traps for
    /// an unmanaged or deleted object, as Realm does.
    ///
    /// ```swift
    /// let frozen = dog.freeze()
    /// frozen.isFrozen   // true
    /// ```
    public func freeze() -> Self {
        if isFrozen { return self }
        guard let database, !isInvalidated else {
            realmMisuse("Cannot freeze an object", TroveError(.invalidObject, "only a stored object can be frozen"))
        }
        guard let frozen = realmCopy(of: self, from: database, frozen: true, "an object") else {
            realmMisuse("Cannot freeze an object", TroveError(.invalidObject, "it was deleted"))
        }
        return frozen
    }

    /// A live copy of this frozen object from a Realm of the current
    /// isolation, or nil when it has been deleted since (Realm's `thaw()`).
    ///
    /// ```swift
    /// if let live = frozen.thaw() { try live.realm!.write { live.age += 1 } }
    /// ```
    public func thaw() -> Self? {
        guard let database else { return nil }
        guard database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: false, "an object")
    }
}

/// `value` as a frozen handle on its file (`frozen`), or a live Realm of the
/// current isolation, reads it: freezing and thawing are thread-safe
/// handovers between handles. Nil when it is gone there.
func realmCopy<T: ThreadConfined>(of value: T, from database: Database, frozen: Bool, _ what: String) -> T? {
    do {
        let target =
            frozen
            ? try database.freeze() : try Realm(configuration: Realm.Configuration(database.configuration)).database
        // Thawing never moves the Realm (Realm's rule): the live value is as it reads now.
        let reference = ThreadSafeReference(unpinned: value)
        return target.resolve(reference, refreshing: frozen ? .toReference : .never)
    } catch {
        realmMisuse("Cannot \(frozen ? "freeze" : "thaw") \(what)", error)
    }
}
