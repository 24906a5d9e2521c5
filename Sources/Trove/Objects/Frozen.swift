import Foundation

/// An immutable, `Sendable` snapshot of a stored object: read it from any
/// actor, thread or detached task; it never changes, even when the object is
/// changed or deleted later (Realm's frozen objects, checked by the compiler).
///
/// ```swift
/// let frozen = photo.freeze()
/// Task.detached {
///     print(frozen.memo, frozen.owner?.name ?? "-")   // links are frozen too
/// }
/// let live = frozen.thaw(in: db)   // the live object again, on db's isolation
/// ```
///
/// Properties read through key paths: plain values as they are, links as
/// `Frozen` objects, lists and sets of objects as arrays of them, and of
/// values as arrays. A frozen snapshot keeps the file's pages of its moment
/// alive until the last `Frozen` of it goes away: hold them briefly.
@dynamicMemberLookup
public struct Frozen<T: Object>: @unchecked Sendable, Hashable {
    let store: FrozenStore
    /// Managed by the store's private handle; touched only under the store's lock.
    private let object: T

    init(store: FrozenStore, object: T) {
        self.store = store
        self.object = object
    }

    /// A plain property (`String`, numbers, `Date`, `Data`, enums, optionals of them...).
    public subscript<V: Sendable>(dynamicMember keyPath: KeyPath<T, V>) -> V {
        store.read { _ in object[keyPath: keyPath] }
    }

    /// A link, frozen too.
    public subscript<L: Object>(dynamicMember keyPath: KeyPath<T, L?>) -> Frozen<L>? {
        store.read { _ in object[keyPath: keyPath].map { Frozen<L>(store: store, object: $0) } }
    }

    /// A list of objects, frozen.
    public subscript<E: Object>(dynamicMember keyPath: KeyPath<T, List<E>>) -> [Frozen<E>] {
        store.read { _ in object[keyPath: keyPath].map { Frozen<E>(store: store, object: $0) } }
    }

    /// A list of values.
    public subscript<E: Sendable>(dynamicMember keyPath: KeyPath<T, List<E>>) -> [E] {
        store.read { _ in object[keyPath: keyPath].array() }
    }

    /// A set of objects, frozen.
    public subscript<E: Object>(dynamicMember keyPath: KeyPath<T, MutableSet<E>>) -> [Frozen<E>] {
        store.read { _ in object[keyPath: keyPath].map { Frozen<E>(store: store, object: $0) } }
    }

    /// A set of values.
    public subscript<E: Sendable>(dynamicMember keyPath: KeyPath<T, MutableSet<E>>) -> Set<E> {
        store.read { _ in Set(object[keyPath: keyPath]) }
    }

    /// The objects linking here, frozen.
    public subscript<E: Object>(dynamicMember keyPath: KeyPath<T, LinkingObjects<E>>) -> [Frozen<E>] {
        store.read { _ in object[keyPath: keyPath].map { Frozen<E>(store: store, object: $0) } }
    }

    /// The live object this snapshot was taken of, in `database` (which must
    /// be a handle on the same file), at that handle's current state; nil
    /// when it has been deleted since.
    public func thaw(in database: Database) -> T? {
        let key = store.read { _ in object._objectKey }
        guard database.path == store.path else {
            preconditionFailure("Trove: thaw(in:) needs a handle on \(store.path), not \(database.path)")
        }
        return database.object(T.self, objectKey: key)
    }

    /// Whether both are the same object in the same snapshot. Objects reached
    /// through one `freeze()` (its links, the elements of one ``FrozenResults``)
    /// share a snapshot; the same object frozen twice gives two unequal values.
    public static func == (lhs: Frozen, rhs: Frozen) -> Bool {
        lhs.store === rhs.store && lhs.store.read { _ in lhs.object._objectKey == rhs.object._objectKey }
    }

    /// Hashes the snapshot and the object's key, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(store))
        hasher.combine(store.read { _ in object._objectKey })
    }
}

/// The snapshot behind frozen objects and results: a private handle on the
/// file that never refreshes, used by one thread at a time.
final class FrozenStore: @unchecked Sendable {
    private let lock = NSLock()
    private let database: Database
    let path: String

    /// A handle on `configuration`'s file at its latest committed state.
    init(configuration: Configuration) throws {
        var configuration = configuration
        configuration.migration = nil
        configuration.seedFileURL = nil
        configuration.deleteDatabaseIfMigrationNeeded = false
        configuration.shouldCompactOnLaunch = nil
        database = try Database(configuration: configuration, isolation: nil)
        database.autorefresh = false
        path = database.path
        _ = database.readTransaction()  // the snapshot starts now
    }

    func read<R>(_ body: (Database) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(database)
    }
}

/// What can be frozen: every ``Object`` (the protocol only lets `freeze()`
/// name the object's own class in its result).
public protocol Freezable: AnyObject {}

extension Object: Freezable {}

extension Freezable where Self: Object {
    /// An immutable, `Sendable` snapshot of this object at the file's latest
    /// committed state (see ``Frozen``). The object must be stored, and its
    /// handle not in the middle of a write.
    ///
    /// ```swift
    /// let frozen = photo.freeze()
    /// await uploader.upload(frozen)   // an actor of its own
    /// ```
    @_disfavoredOverload
    public func freeze() -> Frozen<Self> {
        guard let database = _database, !isInvalidated else {
            preconditionFailure("Trove: only a stored object can be frozen; add it with db.add(_:) first")
        }
        precondition(
            !database.isInWriteTransaction,
            "Trove: freeze() inside a write sees uncommitted changes; freeze after the write commits")
        do {
            let store = try FrozenStore(configuration: database.configuration)
            let key = _objectKey
            guard let object = store.read({ $0.object(Self.self, objectKey: key) }) else {
                preconditionFailure("Trove: the object was deleted by another handle before it could be frozen")
            }
            return Frozen(store: store, object: object)
        } catch {
            fatalError("Trove: cannot open a snapshot of \(database.path) to freeze an object: \(error)")
        }
    }
}
