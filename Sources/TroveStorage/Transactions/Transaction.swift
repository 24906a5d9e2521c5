import CLMDB

/// A consistent snapshot of the file, for reading. ``WriteTransaction`` adds
/// the operations that change it.
///
/// Not thread-safe: one transaction is used from one thread at a time (LMDB
/// runs with `MDB_NOTLS`, so a read transaction may move between threads
/// between uses; a write transaction may not). Buffers handed to closures
/// point into the memory map and must not escape.
package class Transaction {
    package let environment: Environment
    var txn: OpaquePointer?
    private var mapAccessDepth = 0
    /// Tables opened in slots at or past this limit were opened after this
    /// snapshot began; the snapshot cannot use them and sees them as empty.
    var visibleTableLimit: MDB_dbi
    /// Why a write transaction can no longer be used, once it cannot.
    var failure: TroveError?
    /// For a snapshot: the bytes of the file its pages lie within. Keys and
    /// values LMDB hands back must lie there too; a damaged or crafted page
    /// could point elsewhere, and reading it would fault. (A write
    /// transaction's own changes live outside the map: not checked.)
    @exclusivity(unchecked) var readableEnd = Int.max

    init(environment: Environment, txn: OpaquePointer, visibleTableLimit: MDB_dbi) {
        self.environment = environment
        self.txn = txn
        self.visibleTableLimit = visibleTableLimit
    }

    var path: String { environment.path }

    /// The open LMDB transaction, or the error that ended it.
    @inline(__always)
    func live() throws -> OpaquePointer {
        if let txn { return txn }
        throw failure
            ?? TroveError(.storage, "a transaction on \(environment.path) was used after it ended", path: environment.path)
    }

    @inline(__always)
    func isVisible(_ table: Table) -> Bool { table.dbi < visibleTableLimit }

    /// Whether this snapshot can read `table` (it existed when the snapshot began).
    package func canSee(_ table: Table) -> Bool { isVisible(table) }

    /// Holds the map gate for the duration of `body`, so the map cannot be
    /// resized under pointers read from it. Nested calls are free, and so
    /// is every call when the map is fixed (``Environment/mapIsFixed``).
    @inline(__always)
    package func withMapAccess<R>(_ body: () throws -> R) rethrows -> R {
        let gated = !environment.mapIsFixed
        if gated, mapAccessDepth == 0 { environment.gate.enterShared() }
        mapAccessDepth += 1
        defer {
            mapAccessDepth -= 1
            if gated, mapAccessDepth == 0 { environment.gate.leaveShared() }
        }
        return try body()
    }

    var isInsideMapAccess: Bool { mapAccessDepth > 0 }

    /// What readers above keep for the rest of the snapshot, by table slot
    /// (the cluster a type's last lookup read). Emptied when the snapshot
    /// changes; entries that point into the map check ``Environment/mapStart``.
    @exclusivity(unchecked) package var readCache: [UInt32: AnyObject] = [:] {
        didSet { lastReadCacheEntry = nil }
    }
    /// The entry of ``readCache`` asked for last (every single lookup asks
    /// for its type's): a hash lookup and an access check less per lookup.
    @exclusivity(unchecked) private var lastReadCacheEntry: (slot: UInt32, entry: AnyObject?)?

    /// ``readCache``'s entry for a table slot.
    @inline(__always)
    package func readCacheEntry(_ slot: UInt32) -> AnyObject? {
        if let last = lastReadCacheEntry, last.slot == slot { return last.entry }
        let entry = readCache[slot]
        lastReadCacheEntry = (slot, entry)
        return entry
    }

    /// `value` as a buffer, once it is known to lie inside the file's pages.
    @inline(__always)
    func checked(_ value: MDB_val, _ table: String) throws -> UnsafeRawBufferPointer {
        guard readableEnd != .max, value.mv_size > 0 else { return value.buffer }
        let start = UInt(bitPattern: value.mv_data)
        var mapStart = environment.mapStart
        if mapStart == 0 { mapStart = start }  // where the map is not known, the size alone is checked
        let end = mapStart &+ UInt(readableEnd)
        guard start >= mapStart, start <= end, UInt(value.mv_size) <= end - start else {
            throw TroveError(
                .corruptFile,
                "\(path) is damaged: an entry of table \(table) claims \(value.mv_size) bytes at a place outside the file's \(readableEnd) bytes; nothing was read from it (trove verify shows the damaged page); restore the file from a copy",
                path: path)
        }
        return value.buffer
    }

    /// The LMDB transaction id: the number of the last commit this snapshot sees
    /// (for a write transaction, one more).
    package var id: Int { txn.map { Int(mdb_txn_id($0)) } ?? 0 }

    // MARK: Tables

    /// The table named `name`, or nil when the file has no such table.
    package func existingTable(_ name: String, isMultiValue: Bool = false) throws -> Table? {
        if let table = environment.cachedTable(name) { return table }
        return try environment.openExistingTable(name, isMultiValue: isMultiValue)
    }

    /// Whether the file has a table named `name` in this snapshot: one
    /// lookup in LMDB's table of tables, where asking for the table itself
    /// (``existingTable(_:isMultiValue:)``) would try to open it.
    package func hasTable(_ name: String) throws -> Bool {
        let txn = try live()
        var stored = environment.storedName(name)
        let rc = withMapAccess {
            stored.withUTF8 { bytes in
                var k = MDB_val(UnsafeRawBufferPointer(bytes))
                var v = MDB_val()
                return LMDBCall.run { mdb_get(txn, 1, &k, &v) }
            }
        }
        if rc == MDB_NOTFOUND { return false }
        try LMDBCall.check(rc, "looking up table \(name)", path: path)
        return true
    }

    // MARK: Reading

    /// A sealed value that does not open: the key is right (it was checked
    /// when the file opened), so the bytes were changed.
    static func unreadable(_ table: Table, path: String) -> TroveError {
        TroveError(
            .corruptFile,
            "an encrypted value in table \(table.name) of \(path) fails authentication: the file was changed outside Trove; restore it from a copy",
            path: path)
    }

    /// Calls `body` with the value stored under `key`, or nil.
    package func withValue<R>(
        in table: Table, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        let txn = try live()
        guard isVisible(table) else { return try body(nil) }
        return try withMapAccess {
            var k = MDB_val(key)
            var v = MDB_val()
            let rc = LMDBCall.run { mdb_get(txn, table.dbi, &k, &v) }
            if rc == MDB_NOTFOUND { return try body(nil) }
            try LMDBCall.check(rc, "reading from table \(table.name)", path: path)
            let stored = try checked(v, table.name)
            guard table.isSealed, let cipher = environment.cipher else { return try body(stored) }
            return try open(stored, of: table, key: key, with: cipher, body)
        }
    }

    /// Calls `body` with the opened bytes of the sealed value `sealed`. (A
    /// function of its own: its temporary allocation looks up generic
    /// metadata, which a plain table's reads must not pay for.)
    @inline(never)
    private func open<R>(
        _ sealed: UnsafeRawBufferPointer, of table: Table, key: UnsafeRawBufferPointer, with cipher: Cipher,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try withUnsafeTemporaryAllocation(byteCount: max(sealed.count - Cipher.overhead, 1), alignment: 8) { plain in
            defer { SecretBytes.wipe(plain) }
            guard cipher.open(sealed, table: table.name, key: key, into: plain) else {
                throw Transaction.unreadable(table, path: path)
            }
            return try body(UnsafeRawBufferPointer(rebasing: plain[0..<(sealed.count - Cipher.overhead)]))
        }
    }

    /// Calls `body` with the value stored under a 64-bit key (big-endian).
    @inline(__always)
    package func withValue<R>(
        in table: Table, key: UInt64, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        var bigEndian = key.bigEndian
        return try withUnsafeBytes(of: &bigEndian) { try withValue(in: table, key: $0, body) }
    }

    /// A copy of the value under `key`, or nil.
    package func value(in table: Table, key: some Collection<UInt8>) throws -> [UInt8]? {
        try Array(key).withUnsafeBytes { k in try withValue(in: table, key: k) { $0.map { Array($0) } } }
    }

    /// The number of entries in `table` (for a multi-value table, of values).
    package func count(of table: Table) throws -> Int {
        let txn = try live()
        guard isVisible(table) else { return 0 }
        var stat = MDB_stat()
        try withMapAccess {
            try LMDBCall.check(LMDBCall.run { mdb_stat(txn, table.dbi, &stat) }, "counting table \(table.name)", path: path)
        }
        return stat.ms_entries
    }

    /// Opens a cursor on `table` for the duration of `body`.
    package func withCursor<R>(on table: Table, _ body: (Cursor) throws -> R) throws -> R {
        let txn = try live()
        guard isVisible(table) else { return try body(Cursor.empty) }
        return try withMapAccess {
            var cursor: OpaquePointer?
            try LMDBCall.check(
                LMDBCall.run { mdb_cursor_open(txn, table.dbi, &cursor) }, "opening a cursor on \(table.name)", path: path)
            guard let cursor else { preconditionFailure("mdb_cursor_open returned no cursor") }
            defer { mdb_cursor_close(cursor) }
            let opener = table.isSealed ? environment.cipher.map { SealedValues(cipher: $0, table: table) } : nil
            return try body(Cursor(cursor: cursor, path: path, sealed: opener, transaction: self, table: table.name))
        }
    }
}

/// A read-only snapshot. It can be parked (``reset()``) while idle so that it
/// does not pin old pages, and picked up again with ``renew()``.
package final class ReadTransaction: Transaction {
    // (A snapshot is used by one thread at a time: no dynamic exclusivity checks.)
    @exclusivity(unchecked) private var isReset = false

    /// Whether the snapshot is parked by ``reset()`` and needs ``renew()``.
    package var isParked: Bool { isReset }

    package init(environment: Environment) throws {
        var txn: OpaquePointer?
        var attempts = 0
        var limit: MDB_dbi = 0
        while true {
            limit = environment.tableSlotLimit
            environment.gate.enterShared()
            let rc = LMDBCall.run { mdb_txn_begin(environment.handle, nil, UInt32(MDB_RDONLY), &txn) }
            environment.gate.leaveShared()
            if rc == MDB_MAP_RESIZED, attempts < 100 {
                attempts += 1
                try environment.adoptMapSize()
                continue
            }
            try LMDBCall.check(rc, "starting a read transaction", path: environment.path)
            break
        }
        super.init(environment: environment, txn: txn!, visibleTableLimit: limit)
        readableEnd = environment.fileLength
    }

    /// What ``readCache`` held when the snapshot was last released, and the
    /// snapshot's transaction id: the layer above may keep the entries the
    /// commits since did not change (``takeParkedCache()``). Nothing in it
    /// may be read before that layer has checked it against the new snapshot.
    @exclusivity(unchecked) private var parkedCache: (id: Int, entries: [UInt32: AnyObject])?

    /// Releases the snapshot but keeps the reader slot.
    package func reset() {
        guard let txn, !isReset else { return readCache.removeAll() }
        park()
        mdb_txn_reset(txn)
        isReset = true
    }

    private func park() {
        parkedCache = readCache.isEmpty ? nil : (id, readCache)
        readCache.removeAll()
    }

    /// The read cache of the snapshot before the last ``renew()``, once: see ``parkedCache``.
    package func takeParkedCache() -> (id: Int, entries: [UInt32: AnyObject])? {
        defer { parkedCache = nil }
        return parkedCache
    }

    /// Takes a fresh snapshot of the latest commit.
    package func renew() throws {
        guard let txn else { return readCache.removeAll() }
        if !isReset {
            park()
            mdb_txn_reset(txn)
        }
        readCache.removeAll()
        let limit = environment.tableSlotLimit
        var rc = withMapAccess { mdb_txn_renew(txn) }
        if rc == MDB_MAP_RESIZED {
            try environment.adoptMapSize()
            rc = withMapAccess { mdb_txn_renew(txn) }
        }
        try LMDBCall.check(rc, "renewing a read transaction", path: path)
        readableEnd = environment.fileLength
        isReset = false
        visibleTableLimit = limit
    }

    /// Ends the snapshot for good.
    package func end() {
        if let txn { mdb_txn_abort(txn) }
        txn = nil
    }

    deinit {
        if let txn { mdb_txn_abort(txn) }
    }
}
