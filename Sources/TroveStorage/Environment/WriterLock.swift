#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The in-process writer lock of an environment. Knows its owner thread, so
/// that a second write on the same thread is reported instead of deadlocking.
final class WriterLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let owner = Locked<pthread_t?>(nil)

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Whether some thread holds the lock now (a hint: it may change at once).
    var isHeld: Bool { owner.withLock { $0 != nil } }

    var isHeldByCurrentThread: Bool {
        let me = pthread_self()
        return owner.withLock { owner in owner.map { pthread_equal($0, me) != 0 } ?? false }
    }

    /// Takes the lock; throws `writeInProgress` if this thread holds it already.
    func lock(path: String) throws {
        if isHeldByCurrentThread {
            throw TroveError(
                .writeInProgress,
                "a write transaction is already open on this thread for \(path); finish it (commit or cancel) before starting another, or before using a type the file has not used yet from another handle",
                path: path)
        }
        lock()
    }

    func lock() {
        pthread_mutex_lock(mutex)
        owner.withLock { $0 = pthread_self() }
    }

    func unlock() {
        owner.withLock { $0 = nil }
        pthread_mutex_unlock(mutex)
    }
}
