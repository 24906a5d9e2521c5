import CLMDB

/// How ``WriteTransaction/put(_:key:value:mode:)`` treats an existing key.
package enum PutMode: Sendable {
    /// Replace the value (in a multi-value table: add one more value).
    case upsert
    /// Fail (return false) when the key is already there.
    case insertOnly
    /// The key is known to sort after every key in the table (bulk loads).
    case append
    /// In a multi-value table: the key is the last one, and the value sorts
    /// after each of its values (bulk loads in order).
    case appendDuplicate
}

/// Changes the layer above holds back during a write transaction and
/// writes at once before it commits (``WriteTransaction/objectCaches``).
package protocol TransactionCache: AnyObject {
    func writeOut(in transaction: WriteTransaction) throws
}

/// The one write transaction of an environment. (Used by one thread at a
/// time: its fields skip Swift's dynamic exclusivity checks.)
///
/// Every change is also recorded in a replay log. When LMDB reports
/// `MDB_MAP_FULL` (the memory map is too small), the transaction is aborted,
/// the map grown, and the log replayed into a new transaction, so the caller
/// never sees the map size. Only a size cap set by the user stops that, with
/// ``TroveError/Kind/fileSizeLimitReached``.
package final class WriteTransaction: Transaction {
    /// (Used by one thread at a time: no dynamic exclusivity check per put.)
    @exclusivity(unchecked) private var log: ReplayLog
    @exclusivity(unchecked) private var openedTables: [String: Table] = [:]
    private let baseID: Int
    @exclusivity(unchecked) private var holdsWriterLock = true
    /// How many times this transaction had to grow the map (for tests).
    package private(set) var mapGrowths = 0
    /// The bytes of keys and values this transaction has written so far (its
    /// replay log): what a change costs, independent of timing.
    package var loggedBytes: Int { log.count }
    /// The part of ``loggedBytes`` that moved to the replay log's file.
    package var spilledBytes: Int { log.spilledBytes }
    /// Told of every change as it is made, with the table and the key (nil:
    /// the table was cleared); replays after map growth do not call it again.
    /// The object layer turns this into the commit's change record.
    package var changeHook: ((Table, UnsafeRawBufferPointer?) -> Void)? {
        get { storedChangeHook }
        set { storedChangeHook = newValue }
    }
    /// ``changeHook`` for many 64-bit keys of one table at once (``rewrite(_:keys:_:)``);
    /// when nil, each key goes to ``changeHook``.
    package var changeHookForKeys: ((Table, [UInt64]) -> Void)? {
        get { storedChangeHookForKeys }
        set { storedChangeHookForKeys = newValue }
    }
    /// Writes the layer above gathers to make in one sorted pass (full-text
    /// postings). Whatever reads those tables in this transaction calls
    /// ``writePending()`` first; the layer above calls it before committing.
    package var pendingWrites: (() throws -> Void)? {
        get { storedPendingWrites }
        set { storedPendingWrites = newValue }
    }
    // (Behind accessors: `@exclusivity(unchecked)` holds only for accesses in
    // this module, and the layer above read and set these at every commit.)
    @exclusivity(unchecked) private var storedChangeHook: ((Table, UnsafeRawBufferPointer?) -> Void)?
    @exclusivity(unchecked) private var storedChangeHookForKeys: ((Table, [UInt64]) -> Void)?
    @exclusivity(unchecked) private var storedPendingWrites: (() throws -> Void)?
    @exclusivity(unchecked) private var isWritingPending = false
    /// Whether this transaction raised the file's format number (not
    /// committed yet: the environment learns the number only from a read
    /// of a format this write did not set).
    @exclusivity(unchecked) package var raisedFormat = false
    /// What the layer above keeps for the length of this transaction, by
    /// table slot (the clusters a write changed): each is written out before
    /// the transaction commits, and dropped when its table is cleared.
    @exclusivity(unchecked) package var objectCaches: [UInt32: any TransactionCache] = [:] {
        didSet { lastObjectCache = nil }
    }
    /// The entry of ``objectCaches`` asked for last: a loop over one type's
    /// objects asks for it several times per object, and the dictionary's
    /// lookup and a cast from `any TransactionCache` were ~600 instructions
    /// a time. Forgotten whenever the caches change.
    @exclusivity(unchecked) private var lastObjectCache: (slot: UInt32, cache: AnyObject?)?
    /// A cursor per table slot that its puts go through from the third put
    /// of the transaction on, left where the last put went: LMDB searches
    /// from the root only when the next key is not on that leaf, and a
    /// write's puts mostly land side by side (a cluster's parts). Opening
    /// one costs about what one search saves, so a table put to once or
    /// twice (a single update) goes without. LMDB closes them when the
    /// transaction ends; forgotten then.
    @exclusivity(unchecked) private var putCursors = PutCursors()

    /// ``objectCaches``' entry for a table slot, as an object (a cast from it to a class is cheap).
    @inline(__always)
    package func objectCacheEntry(_ slot: UInt32) -> AnyObject? {
        if let last = lastObjectCache, last.slot == slot { return last.cache }
        let cache: AnyObject? = objectCaches[slot]
        lastObjectCache = (slot, cache)
        return cache
    }

    /// Runs ``pendingWrites`` (not again from inside itself).
    package func writePending() throws {
        guard let pendingWrites, !isWritingPending else { return }
        isWritingPending = true
        defer { isWritingPending = false }
        try pendingWrites()
    }

    /// A value no other write transaction of the file has (a random one,
    /// drawn on first use): what the layer above stamps on what this
    /// transaction writes, so that a reader can tell whether something it
    /// read in an earlier snapshot was written since without trusting a log.
    package private(set) lazy var stamp = UInt64.random(in: 1...UInt64.max)

    private enum LogOp: UInt8 {
        case put = 1, delete = 2, deleteValue = 3, clear = 4, openTable = 5
    }

    package init(environment: Environment) throws {
        if environment.options.readOnly {
            throw TroveError(
                .fileAccess, "\(environment.path) is open read-only; open it without readOnly to change it",
                path: environment.path)
        }
        try environment.writerLock.lock(path: environment.path)
        let txn: OpaquePointer
        let limit: MDB_dbi
        do {
            try environment.prepareForWrite()
            limit = environment.tableSlotLimit
            txn = try WriteTransaction.begin(environment)
        } catch {
            environment.writerLock.unlock()
            throw error
        }
        baseID = Int(mdb_txn_id(txn))
        // (A map that never moves is never grown and replayed into: its log only counts.)
        log = ReplayLog(
            directory: environment.directory, memoryLimit: environment.options.replayMemoryLimit,
            keepsEntries: !environment.mapIsFixed)
        super.init(environment: environment, txn: txn, visibleTableLimit: limit)
    }

    private static func begin(_ environment: Environment) throws -> OpaquePointer {
        var txn: OpaquePointer?
        var attempts = 0
        while true {
            environment.gate.enterShared()
            let rc = LMDBCall.run { mdb_txn_begin(environment.handle, nil, 0, &txn) }
            environment.gate.leaveShared()
            if rc == MDB_MAP_RESIZED, attempts < 100 {
                attempts += 1
                try environment.adoptMapSize()
                continue
            }
            try LMDBCall.check(rc, "starting a write transaction", path: environment.path)
            return txn!
        }
    }

    deinit {
        if txn != nil || holdsWriterLock { abort() }
    }

    // MARK: Tables

    override package func existingTable(_ name: String, isMultiValue: Bool = false) throws -> Table? {
        try openTable(name, isMultiValue: isMultiValue, create: false)
    }

    /// Opens `name`, creating it when `create` is true and it does not exist.
    package func openTable(_ name: String, isMultiValue: Bool = false, create: Bool = true) throws -> Table? {
        if let table = openedTables[name] ?? environment.cachedTable(name) { return table }
        let txn = try live()
        var flags: UInt32 = isMultiValue ? UInt32(MDB_DUPSORT) : 0
        if create { flags |= UInt32(MDB_CREATE) }
        var dbi: MDB_dbi = 0
        let stored = environment.storedName(name)
        let rc = try perform { withMapAccess { LMDBCall.run { mdb_dbi_open(self.txn ?? txn, stored, flags, &dbi) } } }
        if rc == MDB_NOTFOUND, !create { return nil }
        try LMDBCall.check(rc, "opening table \(name)", path: path)
        let table = Table(name: name, isMultiValue: isMultiValue, dbi: dbi, isSealed: environment.seals(name))
        openedTables[name] = table
        visibleTableLimit = max(visibleTableLimit, dbi + 1)
        stored.utf8CString.withUnsafeBytes { bytes in
            append(.openTable, dbi: dbi, flags: flags, key: UnsafeRawBufferPointer(rebasing: bytes.dropLast()), value: nil)
        }
        return table
    }

    // MARK: Changing

    /// Stores `value` under `key`. Returns false only in `.insertOnly` mode
    /// when the key exists (or, in a multi-value table, the pair exists).
    @discardableResult
    package func put(
        _ table: Table, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode = .upsert
    ) throws -> Bool {
        var flags: UInt32 = 0
        switch mode {
        case .upsert: break
        case .insertOnly: flags = table.isMultiValue ? UInt32(MDB_NODUPDATA) : UInt32(MDB_NOOVERWRITE)
        case .append: flags = UInt32(MDB_APPEND)
        case .appendDuplicate: flags = UInt32(MDB_APPENDDUP)
        }
        if table.isSealed, let cipher = environment.cipher {
            let sealed = try cipher.seal(value, table: table.name, key: key)
            return try sealed.withUnsafeBytes { try insert(table, key: key, value: $0, flags: flags, mode: mode) }
        }
        return try insert(table, key: key, value: value, flags: flags, mode: mode)
    }

    /// Stores a value of `count` bytes under `key`, written by `fill` where
    /// it is stored (LMDB's `MDB_RESERVE`): a value encoded for the put alone
    /// is not built and then copied. `fill` must write every byte; it may
    /// run again when the map grows meanwhile. In a sealed table the value
    /// is written into memory of its own and sealed. Not for multi-value tables.
    package func put(
        _ table: Table, key: UnsafeRawBufferPointer, reserving count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws {
        precondition(!table.isMultiValue, "Trove: a value reserved in a multi-value table; this is a bug in Trove")
        if table.isSealed, environment.cipher != nil {
            let value = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                fill(UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            }
            try value.withUnsafeBytes { _ = try put(table, key: key, value: $0) }
            return
        }
        var stored: UnsafeMutableRawPointer?
        let rc = try perform {
            withMapAccess {
                var k = MDB_val(key)
                var v = MDB_val(mv_size: count, mv_data: nil)
                let flags = UInt32(MDB_RESERVE)
                let rc =
                    if let cursor = putCursor(table.dbi) {
                        LMDBCall.run { mdb_cursor_put(cursor, &k, &v, flags) }
                    } else {
                        LMDBCall.run { mdb_put(txn!, table.dbi, &k, &v, flags) }
                    }
                if rc == MDB_SUCCESS {
                    stored = v.mv_data
                    fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
                }
                return rc
            }
        }
        try LMDBCall.check(rc, "writing to table \(table.name)", path: path)
        append(.put, dbi: table.dbi, flags: 0, key: key, value: UnsafeRawBufferPointer(start: stored, count: count))
        changeHook?(table, key)
    }

    /// Tables where a key was inserted out of order in this transaction.
    @exclusivity(unchecked) private var unorderedInserts = Set<MDB_dbi>()

    /// An insert of a new key usually comes after every key (object keys and
    /// integer primary keys mostly grow): LMDB appends without searching the
    /// tree then, and refuses (`MDB_KEYEXIST`) when the key does not sort last,
    /// after which the insert searches as usual, and the table is not tried again.
    @inline(__always)
    private func insert(
        _ table: Table, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32, mode: PutMode
    ) throws -> Bool {
        if mode == .insertOnly, !table.isMultiValue, !unorderedInserts.contains(table.dbi) {
            if try store(table, key: key, value: value, flags: UInt32(MDB_APPEND)) { return true }
            unorderedInserts.insert(table.dbi)
        }
        return try store(table, key: key, value: value, flags: flags)
    }

    private func store(_ table: Table, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32) throws
        -> Bool
    {
        let rc = try perform { rawPut(table.dbi, key, value, flags) }
        if rc == MDB_KEYEXIST { return false }
        try LMDBCall.check(rc, "writing to table \(table.name)", path: path)
        append(.put, dbi: table.dbi, flags: flags, key: key, value: value)
        changeHook?(table, key)
        return true
    }

    /// Stores `value` under a 64-bit key (big-endian, so keys sort numerically).
    @discardableResult
    @inline(__always)
    package func put(
        _ table: Table, key: UInt64, value: UnsafeRawBufferPointer, mode: PutMode = .upsert
    ) throws -> Bool {
        var bigEndian = key.bigEndian
        return try withUnsafeBytes(of: &bigEndian) { (k) throws -> Bool in
            try put(table, key: k, value: value, mode: mode)
        }
    }

    /// Rewrites stored values of `table` (keyed by 64-bit keys) where they
    /// lie, walking one cursor through `keys` (ascending; nil: every entry):
    /// `body` gets each stored key's value as a copy it may change, and
    /// returns true when it did; the copy is then written over the entry at
    /// the cursor, without the two tree searches of a read and a
    /// ``put(_:key:value:mode:)``. Keys not stored are skipped. Logged like a
    /// put; the changed keys are reported at the end (``changeHookForKeys``).
    package func rewrite(
        _ table: Table, keys: [UInt64]?, _ body: (UInt64, inout [UInt8]) throws -> Bool
    ) throws {
        // In a box: captured `var`s were checked for exclusive access on every use, four times an entry.
        final class Walk {
            @exclusivity(unchecked) var copy: [UInt8] = []
            @exclusivity(unchecked) var changed: [UInt64] = []
        }
        let walk = Walk()
        defer {
            if let changeHookForKeys {
                changeHookForKeys(table, walk.changed)
            } else if let changeHook {
                for key in walk.changed {
                    var bigEndian = key.bigEndian
                    withUnsafeBytes(of: &bigEndian) { changeHook(table, $0) }
                }
            }
        }
        /// Hands `entry` to `body` and writes it back at the cursor when changed.
        func rewrite(_ entry: Entry, _ key: UInt64, at raw: OpaquePointer) throws -> Int32 {
            walk.copy.removeAll(keepingCapacity: true)
            walk.copy.append(contentsOf: entry.value)
            guard try body(key, &walk.copy) else { return MDB_SUCCESS }
            let copy = walk.copy
            // The key from the caller's bytes: LMDB may move the entry's own while it rewrites it.
            var bigEndian = key.bigEndian
            return try withUnsafeBytes(of: &bigEndian) { keyBytes in
                let sealed =
                    try table.isSealed
                    ? environment.cipher.map { cipher in
                        try copy.withUnsafeBytes { try cipher.seal($0, table: table.name, key: keyBytes) }
                    } : nil
                let rc = (sealed ?? copy).withUnsafeBytes { value -> Int32 in
                    var k = MDB_val(keyBytes)
                    var v = MDB_val(value)
                    return LMDBCall.run { mdb_cursor_put(raw, &k, &v, UInt32(MDB_CURRENT)) }
                }
                if rc == MDB_SUCCESS {
                    (sealed ?? copy).withUnsafeBytes { append(.put, dbi: table.dbi, flags: 0, key: keyBytes, value: $0) }
                    walk.changed.append(key)
                }
                return rc
            }
        }
        // Where the walk goes on: the index into `keys`, or (every entry) the first key not yet done.
        var next = 0
        var resume: UInt64? = 0
        while keys.map({ next < $0.count }) ?? (resume != nil) {
            let txn = try live()
            guard isVisible(table) else { return }
            // One pass with one cursor; it stops early only when the map is full,
            // which ends the LMDB transaction (and its cursors): it is grown and replayed, then the walk goes on.
            let full = try withMapAccess { () throws -> Bool in
                var raw: OpaquePointer?
                try LMDBCall.check(
                    LMDBCall.run { mdb_cursor_open(txn, table.dbi, &raw) }, "opening a cursor on \(table.name)", path: path)
                guard let raw else { preconditionFailure("mdb_cursor_open returned no cursor") }
                var ended = false  // by a full map: LMDB frees the cursor with the transaction
                defer { if !ended { mdb_cursor_close(raw) } }
                let opener = table.isSealed ? environment.cipher.map { SealedValues(cipher: $0, table: table) } : nil
                let cursor = Cursor(cursor: raw, path: path, sealed: opener, transaction: self, table: table.name)
                guard let keys else {
                    var bigEndian = (resume ?? 0).bigEndian
                    var entry = try withUnsafeBytes(of: &bigEndian) { try cursor.seek(atLeast: $0) }
                    while let current = entry {
                        guard current.key.count == 8 else { preconditionFailure("Trove: rewrite of a table without 64-bit keys") }
                        let key = UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self))
                        let rc = try rewrite(current, key, at: raw)
                        if rc == MDB_MAP_FULL {
                            resume = key
                            ended = true
                            return true
                        }
                        try LMDBCall.check(rc, "writing to table \(table.name)", path: path)
                        entry = try cursor.next()
                    }
                    resume = nil
                    return false
                }
                var previous: UInt64?
                while next < keys.count {
                    let key = keys[next]
                    var bigEndian = key.bigEndian
                    let entry = try withUnsafeBytes(of: &bigEndian) { keyBytes -> Entry? in
                        if let previous, key > previous, let following = try cursor.next(),
                            following.key.elementsEqual(keyBytes)
                        {
                            return following
                        }
                        return try cursor.seek(exactly: keyBytes)
                    }
                    previous = entry == nil ? nil : key
                    if let entry {
                        let rc = try rewrite(entry, key, at: raw)
                        if rc == MDB_MAP_FULL {
                            ended = true
                            return true
                        }
                        try LMDBCall.check(rc, "writing to table \(table.name)", path: path)
                    }
                    next += 1
                }
                return false
            }
            // The key whose write found the map full is read and changed again after the replay.
            if full { try recover() }
        }
    }

    /// Removes `key` (in a multi-value table: all its values, or just `value`).
    /// Returns false when there was nothing to remove.
    @discardableResult
    package func delete(_ table: Table, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil)
        throws -> Bool
    {
        let rc = try perform { rawDelete(table.dbi, key, value) }
        if rc == MDB_NOTFOUND { return false }
        try LMDBCall.check(rc, "deleting from table \(table.name)", path: path)
        append(value == nil ? .delete : .deleteValue, dbi: table.dbi, flags: 0, key: key, value: value)
        changeHook?(table, key)
        return true
    }

    @discardableResult
    @inline(__always)
    package func delete(_ table: Table, key: UInt64) throws -> Bool {
        var bigEndian = key.bigEndian
        return try withUnsafeBytes(of: &bigEndian) { (k) throws -> Bool in try delete(table, key: k) }
    }

    /// Removes the entries from the first key at least `start` on, while
    /// `inRange` accepts their keys, stepping one cursor (a delete by key
    /// searches the tree for each): one target's inverse links, say, which
    /// lie side by side. Returns how many went.
    @discardableResult
    package func deleteRun(
        _ table: Table, from start: UnsafeRawBufferPointer, while inRange: (UnsafeRawBufferPointer) -> Bool
    ) throws -> Int {
        // The removed keys laid end to end, and where each ends (an array per key cost an allocation each).
        var removedKeys: [UInt8] = []
        var keyEnds: [Int] = []
        let rc = try perform {
            // (A full map replays the log, which holds none of this walk's deletes: it starts again.)
            removedKeys.removeAll(keepingCapacity: true)
            keyEnds.removeAll(keepingCapacity: true)
            return withMapAccess { () -> Int32 in
                var raw: OpaquePointer?
                var rc = LMDBCall.run { mdb_cursor_open(txn!, table.dbi, &raw) }
                guard rc == MDB_SUCCESS, let raw else { return rc }
                defer { mdb_cursor_close(raw) }
                var k = MDB_val(start)
                var v = MDB_val()
                rc = LMDBCall.run { mdb_cursor_get(raw, &k, &v, MDB_SET_RANGE) }
                while rc == MDB_SUCCESS {
                    let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
                    guard inRange(key) else { break }
                    let end = removedKeys.count
                    removedKeys.append(contentsOf: key)
                    rc = LMDBCall.run { mdb_cursor_del(raw, 0) }
                    guard rc == MDB_SUCCESS else {
                        removedKeys.removeSubrange(end...)
                        break
                    }
                    keyEnds.append(removedKeys.count)
                    // (After a delete the cursor stands on the next entry: MDB_NEXT reads it without moving.)
                    rc = LMDBCall.run { mdb_cursor_get(raw, &k, &v, MDB_NEXT) }
                }
                return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc
            }
        }
        try LMDBCall.check(rc, "deleting from table \(table.name)", path: path)
        removedKeys.withUnsafeBytes { keys in
            var start = 0
            for end in keyEnds {
                let key = UnsafeRawBufferPointer(rebasing: keys[start..<end])
                append(.delete, dbi: table.dbi, flags: 0, key: key, value: nil)
                changeHook?(table, key)
                start = end
            }
        }
        return keyEnds.count
    }

    /// Removes every entry of `table`, keeping the table.
    package func clear(_ table: Table) throws {
        let rc = try perform { withMapAccess { LMDBCall.run { mdb_drop(self.txn!, table.dbi, 0) } } }
        try LMDBCall.check(rc, "clearing table \(table.name)", path: path)
        objectCaches[table.slot] = nil
        append(.clear, dbi: table.dbi, flags: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), value: nil)
        changeHook?(table, nil)
    }

    // MARK: Ending

    /// Writes what the layer above kept back (``objectCaches``) into the
    /// transaction: before anything reads what the transaction wrote as a
    /// whole (the change log), and again by ``commit()``.
    package func writeOutCaches() throws {
        for cache in objectCaches.values { try cache.writeOut(in: self) }
    }

    /// Makes every change durable and visible to new snapshots.
    package func commit() throws {
        try writeOutCaches()
        var rc = try commitOnce()
        while rc == MDB_MAP_FULL {
            // LMDB freed the transaction; start over in a bigger map.
            txn = nil
            try recover(alreadyEnded: true)
            rc = try commitOnce()
        }
        txn = nil
        if rc != 0 {
            let error = LMDBCall.commitError(rc, "committing a write transaction", path: path)
            fail(error)
            throw error
        }
        finish(committed: true)
    }

    private func commitOnce() throws -> Int32 {
        let current = try live()
        // A failed commit frees the transaction in LMDB; an injected failure must too.
        return withMapAccess { LMDBCall.run({ mdb_txn_commit(current) }, onInjected: { mdb_txn_abort(current) }) }
    }

    /// Discards every change.
    package func abort() {
        if let txn { mdb_txn_abort(txn) }
        txn = nil
        finish(committed: false)
    }

    /// Ends the transaction for good after an error; later uses throw `error`.
    private func fail(_ error: TroveError) {
        if let txn { mdb_txn_abort(txn) }
        txn = nil
        if failure == nil { failure = error }
        finish(committed: false)
    }

    private func finish(committed: Bool) {
        if committed {
            for table in openedTables.values { environment.cacheTable(table) }
        }
        openedTables = [:]
        putCursors.forget()
        log.removeAll()
        changeHook = nil
        changeHookForKeys = nil
        pendingWrites = nil
        if holdsWriterLock {
            holdsWriterLock = false
            environment.writerLock.unlock()
        }
    }

    // MARK: Map growth and replay

    @inline(__always)
    private func rawPut(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ flags: UInt32)
        -> Int32
    {
        withMapAccess {
            var k = MDB_val(key)
            var v = MDB_val(value)
            guard let cursor = putCursor(dbi) else { return LMDBCall.run { mdb_put(txn!, dbi, &k, &v, flags) } }
            return LMDBCall.run { mdb_cursor_put(cursor, &k, &v, flags) }
        }
    }

    /// The put cursor of a table slot (``putCursors``), opened by the
    /// slot's third put; nil before, once ``PutCursors/limit`` slots were
    /// put to, or when LMDB cannot open one.
    @inline(__always)
    private func putCursor(_ dbi: MDB_dbi) -> OpaquePointer? {
        putCursors.cursor(for: dbi) { dbi in
            var raw: OpaquePointer?
            return mdb_cursor_open(txn!, dbi, &raw) == MDB_SUCCESS ? raw : nil
        }
    }

    @inline(__always)
    private func rawDelete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) -> Int32 {
        withMapAccess {
            var k = MDB_val(key)
            if let value {
                var v = MDB_val(value)
                return LMDBCall.run { mdb_del(txn!, dbi, &k, &v) }
            }
            return LMDBCall.run { mdb_del(txn!, dbi, &k, nil) }
        }
    }

    /// Runs one LMDB change; on `MDB_MAP_FULL` grows the map, replays, retries.
    @inline(__always)
    private func perform(_ operation: () -> Int32) throws -> Int32 {
        _ = try live()
        var rc = operation()
        while rc == MDB_MAP_FULL {
            try recover()
            rc = operation()
        }
        return rc
    }

    /// Aborts, grows the map, begins again and replays the log. On failure the
    /// transaction is dead and every later use throws the error.
    private func recover(alreadyEnded: Bool = false) throws {
        precondition(!isInsideMapAccess, "Trove: a write ran inside a read of the same transaction; this is a bug in Trove")
        if !alreadyEnded, let txn { mdb_txn_abort(txn) }
        txn = nil
        putCursors.forget()
        mapGrowths += 1
        do {
            try environment.grow(toFit: environment.mapSize * 2)
            let fresh = try WriteTransaction.begin(environment)
            txn = fresh
            guard Int(mdb_txn_id(fresh)) == baseID else {
                throw TroveError(
                    .writeConflict,
                    "another process committed to \(path) while this write was being retried in a larger map; the write was rolled back, run it again",
                    path: path)
            }
            try replay()
        } catch let error as TroveError {
            fail(error)
            throw error
        }
    }

    private func replay() throws {
        guard log.keepsEntries else {
            throw TroveError(.storage, "a write to \(path) cannot be replayed: its map was not to grow", path: path)
        }
        // Replaying never appends to the log.
        while true {
            do {
                try log.forEach { op, dbi, flags, key, value in
                    var rc: Int32
                    switch LogOp(rawValue: op)! {
                    case .put: rc = rawPut(dbi, key, value, flags)
                    case .delete: rc = rawDelete(dbi, key, nil)
                    case .deleteValue: rc = rawDelete(dbi, key, value)
                    case .clear: rc = withMapAccess { mdb_drop(txn!, dbi, 0) }
                    case .openTable:
                        var reopened: MDB_dbi = 0
                        let name = String(decoding: key, as: UTF8.self)
                        rc = withMapAccess { mdb_dbi_open(txn!, name, flags, &reopened) }
                        if rc == 0, reopened != dbi {
                            throw TroveError(
                                .writeConflict, "table \(name) reopened under another handle while retrying a write on \(path)",
                                path: path)
                        }
                    }
                    if rc == MDB_MAP_FULL { throw MapFullDuringReplay() }
                    try LMDBCall.check(rc, "replaying a write after growing the map", path: path)
                }
                return
            } catch is MapFullDuringReplay {
                // Still too small: grow again and restart the replay.
                mdb_txn_abort(txn!)
                txn = nil
                putCursors.forget()
                mapGrowths += 1
                try environment.grow(toFit: environment.mapSize * 2)
                txn = try WriteTransaction.begin(environment)
            }
        }
    }

    private struct MapFullDuringReplay: Error {}

    private func append(
        _ op: LogOp, dbi: MDB_dbi, flags: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?
    ) {
        log.append(op: op.rawValue, dbi: dbi, flags: flags, key: key, value: value)
    }
}
