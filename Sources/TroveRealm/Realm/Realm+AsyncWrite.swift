import Foundation
import Trove
import TroveStorage

/// Identifies a write started by ``Realm/writeAsync(_:onComplete:)`` or
/// ``Realm/beginAsyncWrite(_:)``, or a commit by ``Realm/commitAsyncWrite(allowGrouping:_:)``.
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
        enqueue(.write(block, onComplete))
    }

    /// Runs `block` in a write transaction later, as ``writeAsync(_:onComplete:)``
    /// does, but leaves the commit to the block: it calls
    /// ``commitAsyncWrite(allowGrouping:_:)`` (or ``cancelWrite()``). A block
    /// that returns without either has its changes discarded.
    ///
    /// ```swift
    /// realm.beginAsyncWrite {
    ///     realm.add(photo)
    ///     realm.commitAsyncWrite { error in … }
    /// }
    /// ```
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        enqueue(.begin(asyncWriteBlock))
    }

    /// Commits the open write transaction, then calls `onComplete` later on
    /// the Realm's actor or queue. Trove commits before returning, so
    /// `allowGrouping` changes nothing. Traps outside a write transaction.
    ///
    /// ```swift
    /// realm.beginWrite()
    /// realm.add(photo)
    /// realm.commitAsyncWrite { error in print(error ?? "saved") }
    /// ```
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil)
        -> AsyncTransactionId
    {
        guard database.isInWriteTransaction else {
            realmMisuse("Can only commit a write transaction that is open", TroveError(.writeInProgress, "no write is open"))
        }
        let failure = commitReportingError()
        let queue = AsyncWriteQueue.of(database)
        let id = queue.nextId()
        if let onComplete {
            queue.completions.append(.init(id: id, call: { onComplete(failure) }))
            schedule(queue)
        }
        return id
    }

    /// Cancels a write queued by ``writeAsync(_:onComplete:)`` or
    /// ``beginAsyncWrite(_:)`` that has not run yet, or the completion of a
    /// ``commitAsyncWrite(allowGrouping:_:)`` that has not been called yet.
    /// An id that already ran is ignored.
    ///
    /// ```swift
    /// let id = realm.writeAsync { realm.add(photo) }
    /// try realm.cancelAsyncWrite(id)   // photo is not added
    /// ```
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        let queue = AsyncWriteQueue.of(database)
        queue.pending.removeAll { $0.id == asyncTransactionId }
        queue.completions.removeAll { $0.id == asyncTransactionId }
    }

    /// Whether writes started by ``writeAsync(_:onComplete:)`` or
    /// ``beginAsyncWrite(_:)`` have not finished yet.
    public var isPerformingAsynchronousWriteOperations: Bool {
        AsyncWriteQueue.existing(database).map { !$0.pending.isEmpty || $0.running } ?? false
    }

    /// Runs `block` in a write transaction from async code and returns its
    /// result (Realm's `asyncWrite`). The write happens on the caller's
    /// isolation, which owns the Realm; while another Realm of this process
    /// writes, it waits without blocking that isolation. A cancelled task
    /// throws `CancellationError` instead of writing, as in Realm.
    ///
    /// ```swift
    /// let count = try await realm.asyncWrite { realm.add(photo); return realm.objects(Photo.self).count }
    /// ```
    @discardableResult
    public func asyncWrite<Result>(
        _isolation actor: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        try Task.checkCancellation()
        try await database.waitForWriter()
        runQueuedWrites()
        let queue = AsyncWriteQueue.of(database)
        queue.running = true
        defer { queue.running = false }
        return try write(block)
    }

    /// Moves the Realm to the latest commit, from async code; returns whether
    /// there was one to see (Realm's `asyncRefresh`).
    @discardableResult
    public func asyncRefresh(isolation: isolated (any Actor)? = #isolation) async -> Bool { refresh() }

    /// Runs the queued asynchronous writes now: a synchronous write waits for
    /// the asynchronous ones queued before it, as in Realm.
    func runQueuedWrites() {
        guard let queue = AsyncWriteQueue.existing(database), !queue.running else { return }
        while runNext(queue) {}
    }

    private func enqueue(_ kind: AsyncWriteQueue.Kind) -> AsyncTransactionId {
        let queue = AsyncWriteQueue.of(database)
        let id = queue.nextId()
        queue.pending.append((id, kind))
        schedule(queue)
        return id
    }

    /// Arranges for the queue to be worked through where the handle belongs
    /// (its actor, or the main queue); on a plain thread, at once.
    private func schedule(_ queue: AsyncWriteQueue) {
        guard !queue.scheduled else { return }
        queue.scheduled = true
        // The work runs where the handle belongs, so handing the handle there
        // is safe even though it is not Sendable.
        let work = UncheckedBox { [self] in
            queue.scheduled = false
            drain(queue)
        }
        if let isolation = database.isolation, !(isolation is MainActor) {
            Task { await Realm.run(work, on: isolation) }
        } else if database.isolation is MainActor || Database.isOnMainQueue {
            DispatchQueue.main.async { work.value() }
        } else {
            work.value()
        }
    }

    private func drain(_ queue: AsyncWriteQueue) {
        if !queue.running, !database.isInWriteTransaction {
            while runNext(queue) {}
        }
        let completions = queue.completions
        queue.completions = []
        for completion in completions { completion.call() }
        if !queue.pending.isEmpty || !queue.completions.isEmpty { schedule(queue) }
    }

    /// Runs the first queued write; false when there is none.
    private func runNext(_ queue: AsyncWriteQueue) -> Bool {
        guard !queue.pending.isEmpty else { return false }
        let (id, kind) = queue.pending.removeFirst()
        queue.running = true
        defer { queue.running = false }
        do {
            try database.beginWrite()
        } catch {
            realmMisuse("Cannot begin an asynchronous write", error)
        }
        switch kind {
        case .write(let block, let onComplete):
            block()
            let failure = database.isInWriteTransaction ? commitReportingError() : nil
            if let onComplete { queue.completions.append(.init(id: id, call: { onComplete(failure) })) }
        case .begin(let block):
            block()
            if database.isInWriteTransaction { database.cancelWrite() }
        }
        if !queue.completions.isEmpty { schedule(queue) }
        return true
    }

    /// Commits the open write; the error, as Realm reports it, if that failed.
    private func commitReportingError() -> Swift.Error? {
        do {
            try database.commitWrite()
            return nil
        } catch let error as TroveError {
            return Realm.Error(error)
        } catch {
            return error
        }
    }

    private static func run(_ work: UncheckedBox<() -> Void>, on isolation: isolated any Actor) {
        work.value()
    }
}

/// The asynchronous writes and completions waiting on one handle. Used only
/// on the handle's own isolation, like the handle.
final class AsyncWriteQueue: @unchecked Sendable {
    enum Kind {
        case write(() -> Void, ((Swift.Error?) -> Void)?)
        case begin(() -> Void)
    }

    struct Completion {
        let id: AsyncTransactionId
        let call: () -> Void
    }

    var pending: [(id: AsyncTransactionId, kind: Kind)] = []
    var completions: [Completion] = []
    var scheduled = false
    var running = false

    private static let queues = Locked<[ObjectIdentifier: (handle: Weak, queue: AsyncWriteQueue)]>([:])
    private static let lastId = Locked<AsyncTransactionId>(0)

    struct Weak {
        weak var database: Database?
    }

    func nextId() -> AsyncTransactionId {
        AsyncWriteQueue.lastId.withLock {
            $0 &+= 1
            return $0
        }
    }

    static func of(_ database: Database) -> AsyncWriteQueue {
        queues.withLock { queues in
            if let entry = queues[ObjectIdentifier(database)], entry.handle.database === database { return entry.queue }
            // Forget the queues of handles that are gone (their identifiers may be reused).
            queues = queues.filter { $0.value.handle.database != nil }
            let queue = AsyncWriteQueue()
            queues[ObjectIdentifier(database)] = (Weak(database: database), queue)
            return queue
        }
    }

    static func existing(_ database: Database) -> AsyncWriteQueue? {
        queues.withLock { queues in
            guard let entry = queues[ObjectIdentifier(database)], entry.handle.database === database else { return nil }
            return entry.queue
        }
    }
}

/// A value carried to the isolation that owns it (see ``Realm/writeAsync(_:onComplete:)``).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Realm {
    /// An ``asyncOpen(configuration:callbackQueue:callback:)`` that has not
    /// called back yet; ``cancel()`` stops the call.
    public final class AsyncOpenTask: @unchecked Sendable {
        private let cancelled = Locked(false)

        /// Stops the callback if it has not run yet.
        ///
        /// ```swift
        /// let task = Realm.asyncOpen { _ in }
        /// task.cancel()
        /// ```
        public func cancel() { cancelled.withLock { $0 = true } }

        var isCancelled: Bool { cancelled.withLock { $0 } }
    }

    /// Opens a Realm and hands it to `callback` on `callbackQueue` (Realm's
    /// `asyncOpen`): any migration runs first. The Realm belongs to that queue.
    ///
    /// ```swift
    /// Realm.asyncOpen(configuration: config) { result in
    ///     if case .success(let realm) = result { show(realm.objects(Photo.self)) }
    /// }
    /// ```
    @discardableResult
    public static func asyncOpen(
        configuration: Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
        callback: @escaping (Result<Realm, Swift.Error>) -> Void
    ) -> AsyncOpenTask {
        let task = AsyncOpenTask()
        let carried = UncheckedBox(callback)
        callbackQueue.async {
            guard !task.isCancelled else { return }
            carried.value(Result { try Realm(configuration: configuration) })
        }
        return task
    }

    /// Runs the migration of `configuration` now, without keeping the Realm
    /// open (Realm's `performMigration(for:)`).
    ///
    /// ```swift
    /// try Realm.performMigration(for: config)
    /// ```
    public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
        _ = try realmErrors { try Database(configuration: configuration.troveConfiguration) }
    }
}
