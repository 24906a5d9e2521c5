import Foundation

/// Syncs a file in the background until stopped: soon after each write of
/// the client's handle that recorded changes, and whenever a cheap poll of
/// the server's space head (`heads`) finds something new. The poll backs
/// off while nothing happens or the server cannot be reached (doubling from
/// `minimumInterval` up to `maximumInterval`) and starts again at the
/// minimum after any change. Local reads and writes never wait for it.
///
/// ```swift
/// let background = sync.startBackgroundSync { result in
///     if case .failure(let error) = result { print("sync: \(error)") }
/// }
/// // … later, or when the app goes to the background:
/// background.stop()
/// ```
public final class BackgroundSync: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false
    private var localChange = false
    private var finished = false
    private let worker: SyncWorker
    private let minimumInterval: Double
    private let maximumInterval: Double
    private let onResult: @Sendable (Result<SyncClient.Report, any Error>) -> Void

    init(
        worker: SyncWorker, minimumInterval: Double, maximumInterval: Double,
        onResult: @escaping @Sendable (Result<SyncClient.Report, any Error>) -> Void
    ) {
        self.worker = worker
        self.minimumInterval = minimumInterval
        self.maximumInterval = max(minimumInterval, maximumInterval)
        self.onResult = onResult
    }

    /// A write recorded changes: sync soon.
    func noteLocalChange() {
        condition.withLock {
            localChange = true
            condition.signal()
        }
    }

    /// Stops syncing and waits for a sync under way to end.
    public func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
            while !finished { condition.wait() }
        }
    }

    func run() {
        var interval = minimumInterval
        var first = true
        while true {
            let local: Bool = condition.withLock {
                let deadline = Date(timeIntervalSinceNow: first ? 0 : interval)
                while !stopped && !localChange && condition.wait(until: deadline) {}
                defer { localChange = false }
                return localChange
            }
            if condition.withLock({ stopped }) { break }
            // A write is told of before it commits, and writes come in bursts: a moment's wait sends them together.
            if local { usleep(50_000) }
            do {
                if try first || local || worker.serverIsAhead() {
                    let report = try worker.syncWaiting()
                    onResult(.success(report))
                    interval = minimumInterval
                    if try worker.pendingChanges() > 0 { condition.withLock { localChange = true } }
                } else {
                    interval = min(interval * 2, maximumInterval)
                }
            } catch {
                onResult(.failure(error))
                interval = min(interval * 2, maximumInterval)
            }
            first = false
        }
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }
}

extension SyncClient {
    /// Starts syncing in the background (see ``BackgroundSync``): once now,
    /// after each write of this handle that records changes, and when a poll
    /// finds the server ahead. `onResult` is told of every sync, on the
    /// background thread. Keep the returned object and call
    /// ``BackgroundSync/stop()`` to end it; one background sync per client.
    public func startBackgroundSync(
        minimumInterval: Double = 1, maximumInterval: Double = 60,
        onResult: @escaping @Sendable (Result<Report, any Error>) -> Void = { _ in }
    ) -> BackgroundSync {
        let background = BackgroundSync(
            worker: worker, minimumInterval: minimumInterval, maximumInterval: maximumInterval, onResult: onResult)
        onLocalChange = { [weak background] in background?.noteLocalChange() }
        Thread.detachNewThread { background.run() }
        return background
    }
}
