import Foundation
import Trove
import TroveStorage

/// Runs syncs of one file away from the app's thread: its own handle on the
/// file and its own ``SyncClient``, used only on its serial queue. The
/// app's handle sees what it applied as another handle's commit.
final class SyncWorker: @unchecked Sendable {
    private let queue = DispatchQueue(label: "trove.sync.worker")
    private let databaseConfiguration: Trove.Configuration
    private let configuration: SyncClient.Configuration
    /// Made on the queue at first use, used only there.
    private var client: SyncClient?

    init(databaseConfiguration: Trove.Configuration, configuration: SyncClient.Configuration) {
        self.databaseConfiguration = databaseConfiguration
        self.configuration = configuration
    }

    /// Syncs on the queue, without blocking the caller.
    func sync(cancelled: @escaping @Sendable () -> Bool, progress: (@Sendable (SyncProgress) -> Void)?) async throws
        -> SyncClient.Report
    {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.syncHere(cancelled: cancelled, progress: progress) })
            }
        }
    }

    /// Syncs on the queue and waits for it (``BackgroundSync``'s thread).
    func syncWaiting() throws -> SyncClient.Report {
        try queue.sync { try syncHere(cancelled: { false }, progress: nil) }
    }

    /// Whether the server's space moved past what this file pulled (``BackgroundSync``'s cheap poll).
    func serverIsAhead() throws -> Bool {
        try queue.sync { try workerClient().serverIsAhead() }
    }

    /// Changes recorded in the file and not yet sent, as of now.
    func pendingChanges() throws -> Int {
        try queue.sync {
            let client = try workerClient()
            client.database.refresh()
            return client.pendingChanges
        }
    }

    private func workerClient() throws -> SyncClient {
        if let client { return client }
        let database = try Database(configuration: databaseConfiguration)
        let made = try SyncClient(database: database, configuration: configuration)
        client = made
        return made
    }

    private func syncHere(cancelled: @escaping @Sendable () -> Bool, progress: (@Sendable (SyncProgress) -> Void)?) throws
        -> SyncClient.Report
    {
        let client = try workerClient()
        client.database.refresh()
        client.isCancelled = cancelled
        client.onProgress = progress
        defer {
            client.isCancelled = { false }
            client.onProgress = nil
        }
        return try client.sync()
    }
}

extension SyncClient {
    /// Syncs as ``sync()`` does, without blocking the caller: the network
    /// calls and the writes that apply what arrived run on a handle of the
    /// same file on a queue of the client's own, and the caller's handle
    /// sees the result as another handle's commit (its observers fire as for
    /// any). Cancelling the task stops the sync before its next call to the
    /// server (`CancellationError`): what was sent and applied until then
    /// stays, and the next sync goes on from there. `progress` is told after
    /// each batch sent, each page received, and before the pull is applied.
    ///
    /// ```swift
    /// let report = try await sync.sync { progress in
    ///     print("\(progress.phase): \(progress.sent)/\(progress.toSend) sent, \(progress.received) received")
    /// }
    /// ```
    @discardableResult
    public func sync(
        isolation: isolated (any Actor)? = #isolation, progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) async throws -> Report {
        let cancelled = CancellationFlag()
        let worker = self.worker
        let report = try await withTaskCancellationHandler {
            try await worker.sync(cancelled: { cancelled.isSet }, progress: progress)
        } onCancel: {
            cancelled.set()
        }
        database.refresh()
        return report
    }

    /// Whether the server's space moved past what this file pulled: one
    /// `heads` call.
    func serverIsAhead() throws -> Bool {
        let transport =
            try self.transport ?? PostgresTransport(url: configuration.serverURL, token: currentToken, space: configuration.space)
        self.transport = transport
        do {
            let since = try SyncLedger(transaction: database.currentTransaction).integer("since") ?? 0
            return try transport.head() > since
        } catch {
            self.transport = nil
            throw error
        }
    }
}

/// A flag set once, from any thread.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}
