import Foundation
import TroveStorage

/// Notices commits to one file, by any handle of any process, and tells the
/// handles that want to refresh.
///
/// One per environment (an environment attachment), with one thread that
/// runs only while some handle listens. It polls the last committed
/// transaction id every ``interval`` — a read of the meta pages in the
/// memory map (under the map gate, as a write growing the map remaps them),
/// no system call — so a commit anywhere is noticed within that
/// interval. (inotify would not see commits: LMDB writes its meta page and
/// the lock file's counters through the memory map or `pwrite` on another
/// process's descriptor, and polling shared memory costs less than a wakeup
/// per commit.)
final class CommitWatcher: @unchecked Sendable {
    /// How often the watcher looks.
    static let interval: TimeInterval = 0.005

    /// Weak: the watcher is one of the environment's attachments, and the
    /// handles listening keep the environment open anyway.
    private weak var environment: Environment?
    private let state = Locked(State())

    private struct State {
        var listeners: [Int: @Sendable (Int) -> Void] = [:]
        var nextID = 0
        var running = false
    }

    init(environment: Environment) {
        self.environment = environment
    }

    /// Calls `listener` (on the watcher's thread) with the new transaction id
    /// after each commit, until ``remove(_:)``.
    func add(_ listener: @escaping @Sendable (Int) -> Void) -> Int {
        let (id, start) = state.withLock { state -> (Int, Bool) in
            state.nextID += 1
            state.listeners[state.nextID] = listener
            let start = !state.running
            state.running = true
            return (state.nextID, start)
        }
        if start {
            // The baseline is read now, not when the thread first runs: a commit
            // in between would otherwise be taken for the starting point and missed.
            let baseline = environment?.lastCommittedTransaction ?? 0
            let thread = Thread { [self] in run(from: baseline) }
            thread.name = "trove.commit-watcher"
            thread.start()
        }
        return id
    }

    func remove(_ id: Int) {
        state.withLock { _ = $0.listeners.removeValue(forKey: id) }
    }

    private func run(from baseline: Int) {
        var last = baseline
        while true {
            Thread.sleep(forTimeInterval: CommitWatcher.interval)
            let listeners = state.withLock { state -> [@Sendable (Int) -> Void]? in
                if state.listeners.isEmpty {
                    state.running = false
                    return nil
                }
                return Array(state.listeners.values)
            }
            guard let listeners, let environment else {
                state.withLock { $0.running = false }
                return
            }
            let current = environment.lastCommittedTransaction
            if current != last {
                last = current
                for listener in listeners { listener(current) }
            }
        }
    }
}

/// A handle as the watcher's thread sees it: only ever dereferenced on the
/// handle's own isolation (see ``Database/scheduleAutorefresh()``).
final class DatabaseReference: @unchecked Sendable {
    weak var database: Database?
    private let pending = Locked(false)

    init(_ database: Database) {
        self.database = database
    }

    /// True for the first call until ``finish()``: one refresh queued at a time.
    func claim() -> Bool {
        pending.withLock { queued in
            if queued { return false }
            queued = true
            return true
        }
    }

    func finish() {
        pending.withLock { $0 = false }
    }
}

extension Database {
    /// Starts or stops listening for commits, following ``autorefresh``.
    func updateAutorefresh() {
        let wanted = autorefresh && isolation != nil
        if wanted, watcherListener == nil {
            let reference = DatabaseReference(self)
            let isolation = self.isolation!
            let watcher = environment.attachment("trove.commit-watcher") { CommitWatcher(environment: environment) }
            let listener: @Sendable (Int) -> Void = { transaction in
                guard reference.claim() else { return }
                Task { await Database.autorefresh(reference, on: isolation, seen: transaction) }
            }
            watcherListener = watcher.add(listener)
            // A commit between this handle's snapshot and the watcher's baseline
            // would go unnoticed until the next one: refresh once to be sure.
            listener(0)
        } else if !wanted, let id = watcherListener {
            environment.attachment("trove.commit-watcher") { CommitWatcher(environment: environment) }.remove(id)
            watcherListener = nil
        }
    }

    /// Runs on the handle's isolation: refreshes the handle (releasing its
    /// old snapshot) and delivers its notifications.
    ///
    /// The watcher reads a commit's id from its meta page a moment before
    /// LMDB lets new snapshots see the commit (it publishes the id in the
    /// lock file after writing the page). A refresh in that moment finds
    /// nothing new, and the watcher will not call again for that commit: so
    /// a handle whose observers have not seen `seen` yet tries again.
    private static func autorefresh(
        _ reference: DatabaseReference, on isolation: isolated any Actor, seen: Int, attempt: Int = 0
    ) {
        reference.finish()
        guard let database = reference.database, database.autorefresh, !database.isInWriteTransaction else { return }
        database.refresh()
        if !database.observers.isEmpty, !database.isFrozen, database.deliveredTransaction < seen, attempt < 1_000,
            reference.claim()
        {
            Task {
                try? await Task.sleep(for: .milliseconds(1))
                Database.autorefresh(reference, on: isolation, seen: seen, attempt: attempt + 1)
            }
        }
    }
}

extension Database {
    /// Calls `listener` on the watcher's thread with the new transaction id
    /// after each commit to the file, by any handle of any process, until the
    /// returned function is called (for tools that serve a file, such as the
    /// `trove studio` server, which has no actor to refresh on).
    package func watchCommits(_ listener: @escaping @Sendable (Int) -> Void) -> @Sendable () -> Void {
        let environment = self.environment
        let watcher = environment.attachment("trove.commit-watcher") { CommitWatcher(environment: environment) }
        let id = watcher.add(listener)
        return { watcher.remove(id) }
    }

    /// The id of the file's last committed transaction (any process's).
    package var lastCommit: Int { environment.lastCommittedTransaction }
}
