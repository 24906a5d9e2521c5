import TroveStorage

/// The snapshot a ``ThreadSafeReference`` was made at, held for TroveRealm:
/// a Realm that has not read since it opened starts reading at the
/// reference's version when it resolves it (Realm's rule), so the value is
/// as it was when the reference was made.
///
/// Each pin holds one of LMDB's reader slots until it is taken or the
/// reference is dropped, and keeps the pages of its version from reuse; so
/// that forgotten references cannot use up the slots, at most ``limit`` pins
/// of one file exist at once in a process, and references made past it pin
/// nothing.
package final class SnapshotPin: Sendable {
    /// The most pins of one file held at once.
    package static let limit = 64
    private let transaction: Locked<ReadTransaction?>
    /// How many pins of this pin's file hold a snapshot now.
    private let held: Locked<Int>

    /// A pin of the newest commit of `environment`, if that is `commit`
    /// (the version the reference was read at) and fewer than ``limit``
    /// pins of the file are held; else nil.
    init?(environment: Environment, commit: Int) {
        let held = environment.attachment("trove.snapshot-pins") { Locked(0) }
        let reserved = held.withLock { held in
            guard held < Self.limit else { return false }
            held += 1
            return true
        }
        guard reserved else { return nil }
        guard let pinned = try? ReadTransaction(environment: environment), pinned.id == commit else {
            held.withLock { $0 -= 1 }
            return nil
        }
        transaction = Locked(pinned)
        self.held = held
    }

    /// The pinned snapshot, to the first caller only; it is then the caller's to end.
    package func take() -> ReadTransaction? {
        let taken = transaction.withLock { pinned in
            defer { pinned = nil }
            return pinned
        }
        if taken != nil { held.withLock { $0 -= 1 } }
        return taken
    }

    deinit {
        take()?.end()
    }
}
