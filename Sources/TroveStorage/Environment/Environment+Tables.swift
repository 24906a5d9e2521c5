import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// LMDB allows only one transaction at a time in a process to open table
/// handles, and a write transaction that opened one must end before anyone
/// else opens another. This lock enforces that; a write transaction takes it
/// at its first table open and keeps it until it ends.
final class TableOpenLock: @unchecked Sendable {
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

    func lock(path: String) throws {
        let me = pthread_self()
        let ownedHere = owner.withLock { owner in owner.map { pthread_equal($0, me) != 0 } ?? false }
        if ownedHere {
            throw TroveError(
                .writeInProgress,
                "another handle on this thread has a write transaction open on \(path); finish it before reading a type it has not used yet",
                path: path)
        }
        pthread_mutex_lock(mutex)
        owner.withLock { $0 = me }
    }

    func unlock() {
        owner.withLock { $0 = nil }
        pthread_mutex_unlock(mutex)
    }
}

extension Environment {
    /// Opens an existing table in a short read transaction, whose commit makes
    /// the handle shared by every transaction of this environment.
    func openExistingTable(_ name: String, isMultiValue: Bool) throws -> Table? {
        try tableOpenLock.lock(path: path)
        defer { tableOpenLock.unlock() }
        if let table = cachedTable(name) { return table }
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        if rc == MDB_MAP_RESIZED {
            try adoptMapSize()
            rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        }
        try LMDBCall.check(rc, "starting a read transaction", path: path)
        var dbi: MDB_dbi = 0
        let flags: UInt32 = isMultiValue ? UInt32(MDB_DUPSORT) : 0
        rc = mdb_dbi_open(txn, name, flags, &dbi)
        if rc == MDB_NOTFOUND {
            mdb_txn_abort(txn)
            return nil
        }
        if rc != 0 {
            mdb_txn_abort(txn)
            throw LMDBCall.error(rc, "opening table \(name)", path: path)
        }
        try LMDBCall.check(mdb_txn_commit(txn), "opening table \(name)", path: path)
        let table = Table(name: name, isMultiValue: isMultiValue, dbi: dbi)
        cacheTable(table)
        return table
    }
}
