#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex guarding a value; the smallest lock that works on every platform
/// Trove supports (Synchronization.Mutex needs macOS 15 / iOS 18).
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// (Guarded by the mutex: no dynamic exclusivity check as well.)
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// A readers-writer gate around the memory map.
///
/// LMDB's `mdb_env_set_mapsize` unmaps and remaps the file, so no thread may
/// be reading from the map while it runs. Every operation that touches map
/// memory holds the gate shared for its duration (never across user code);
/// growing the map holds it exclusively. Writers are preferred so a steady
/// stream of readers cannot starve a resize.
package final class MapGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    package init() {
        lock = .allocate(capacity: 1)
        #if os(Linux)
            var attributes = pthread_rwlockattr_t()
            pthread_rwlockattr_init(&attributes)
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
            pthread_rwlock_init(lock, &attributes)
            pthread_rwlockattr_destroy(&attributes)
        #else
            pthread_rwlock_init(lock, nil)
        #endif
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    @inline(__always)
    package func enterShared() { pthread_rwlock_rdlock(lock) }
    @inline(__always)
    package func leaveShared() { pthread_rwlock_unlock(lock) }

    package func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
