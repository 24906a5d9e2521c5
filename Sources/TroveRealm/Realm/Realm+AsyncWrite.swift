import Foundation
import Trove
import TroveStorage

/// Identifies a write started by ``Realm/writeAsync(_:onComplete:)``.
public typealias AsyncTransactionId = UInt32

extension Realm {
    /// Runs `block` in a write transaction later, on the Realm's own actor (or
    /// the main queue for a Realm of the main thread), commits it, then calls
    /// `onComplete` there with the error, if any (Realm's `writeAsync`). On
    /// another thread, where nothing runs later, the write happens before
    /// `writeAsync` returns.
    ///
    /// ```swift
    /// realm.writeAsync({ realm.add(photo) }, onComplete: { error in … })
    /// ```
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        let id = Realm.asyncWrites.withLock { state -> AsyncTransactionId in
            state.next &+= 1
            state.pending[ObjectIdentifier(database), default: 0] += 1
            return state.next
        }
        // The block runs where the handle belongs (its actor, or the main
        // queue), so handing the handle there is safe even though it is not Sendable.
        let work = UncheckedBox { [database] in
            var failure: Swift.Error?
            do {
                try database.write(block)
            } catch let error as TroveError {
                failure = Realm.Error(error)
            } catch {
                failure = error
            }
            Realm.asyncWrites.withLock { $0.pending[ObjectIdentifier(database), default: 1] -= 1 }
            onComplete?(failure)
        }
        if let isolation = database.isolation, !(isolation is MainActor) {
            Task { await Realm.run(work, on: isolation) }
        } else if database.isolation is MainActor || Database.isOnMainQueue {
            DispatchQueue.main.async { work.value() }
        } else {
            work.value()
        }
        return id
    }

    /// Whether writes started by ``writeAsync(_:onComplete:)`` have not finished yet.
    public var isPerformingAsynchronousWriteOperations: Bool {
        Realm.asyncWrites.withLock { ($0.pending[ObjectIdentifier(database)] ?? 0) > 0 }
    }

    /// Moves the Realm to the latest commit, from async code; returns whether
    /// there was one to see (Realm's `asyncRefresh`).
    @discardableResult
    public func asyncRefresh(isolation: isolated (any Actor)? = #isolation) async -> Bool { refresh() }

    private static func run(_ work: UncheckedBox<() -> Void>, on isolation: isolated any Actor) {
        work.value()
    }

    private struct AsyncWrites {
        var next: AsyncTransactionId = 0
        var pending: [ObjectIdentifier: Int] = [:]
    }

    private static let asyncWrites = Locked(AsyncWrites())
}

/// A value carried to the isolation that owns it (see ``Realm/writeAsync(_:onComplete:)``).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
