import TroveStorage

/// Where one type's objects are stored: the only code that knows how records
/// lie in the file. Everything above it — writes, queries, live results,
/// verification, export — finds, scans, counts and changes objects through
/// these operations and reads them through ``RecordReader``.
///
/// A type is stored in column clusters (`clu:<Type>`, ``ClusterTable``, the
/// default) or one LMDB record per object in `obj:<Type>`, keyed by its
/// object key (u64 big-endian) and holding the record encoding (see
/// `docs/architecture/objects.md`, Records, and `docs/architecture/clusters.md`).
/// Reads inside a write transaction see the transaction's own changes.
///
/// A class: it is handed to every lookup, scan and write of its type, and a
/// struct of its references was copied (retains and releases) at each.
final class ObjectStore {
    /// The `obj:<Type>` table (or `clu:<Type>`, see ``clusters``).
    let table: Table
    let layout: RecordLayout
    /// Set when the objects are stored in column clusters (`clu:<Type>`).
    let clusters: ClusterTable?

    init(table: Table, layout: RecordLayout) {
        self.table = table
        self.layout = layout
        clusters = table.name.hasPrefix(Self.clusterPrefix) ? ClusterTable(table: table, layout: layout) : nil
    }

    // MARK: Reading

    /// Whether a snapshot can see the table (one created after the snapshot began is empty to it).
    func isVisible(in transaction: Transaction) -> Bool { transaction.canSee(table) }

    func count(in transaction: Transaction) throws -> Int {
        if let clusters { return try clusters.count(in: transaction, try clusterCache(transaction)) }
        return try transaction.count(of: table)
    }

    func contains(_ objectKey: UInt64, in transaction: Transaction) throws -> Bool {
        if clusters != nil { return try withRecordBytes(objectKey, in: transaction) { $0 != nil } }
        return try transaction.withValue(in: table, key: objectKey) { $0 != nil }
    }

    /// Calls `body` with a reader of the object's record, or nil when it is not stored.
    func withRecord<R>(_ objectKey: UInt64, in transaction: Transaction, _ body: (RecordReader?) throws -> R) throws -> R {
        try withRecordBytes(objectKey, in: transaction) { bytes in
            guard let bytes else { return try body(nil) }
            var reader = RecordReader(bytes, layout: layout)
            reader.objectKey = objectKey
            return try body(reader)
        }
    }

    /// The raw bytes of the object's record in place, for checks that must
    /// not trap on a damaged record (``RecordReader`` does).
    func withRecordBytes<R>(
        _ objectKey: UInt64, in transaction: Transaction, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        if clusters != nil {
            return try withLookupCursor(in: transaction, many: false) { lookups in try body(try lookups.record(objectKey)) }
        }
        return try transaction.withValue(in: table, key: objectKey, body)
    }

    /// A copy of the object's record, or nil when it is not stored.
    func recordCopy(_ objectKey: UInt64, in transaction: Transaction) throws -> [UInt8]? {
        try withRecordBytes(objectKey, in: transaction) { $0.map { Array($0) } }
    }

    /// The largest object key stored, or nil when there is none.
    func lastKey(in transaction: Transaction) throws -> UInt64? {
        if let clusters { return try clusters.lastKey(in: transaction, try clusterCache(transaction)) }
        return try transaction.withCursor(on: table) { cursor in try cursor.last().map { OrderedKey.objectKey(from: $0.key) } }
    }

    /// Visits the records in key order from the first key at least `start`,
    /// until `visit` returns false.
    func scan(in transaction: Transaction, from start: UInt64 = 0, _ visit: (RecordReader) throws -> Bool) throws {
        try withRecordCursor(in: transaction, from: start) { records in
            while let reader = try records.next() {
                guard try visit(reader) else { return }
            }
        }
    }

    /// Calls `body` with a cursor over the records in key order from the
    /// first key at least `start`. Hot loops (query scans) step it
    /// themselves: a closure call per record costs more than reading it.
    func withRecordCursor<R>(
        in transaction: Transaction, from start: UInt64 = 0, _ body: (inout RecordCursor) throws -> R
    ) throws -> R {
        if let clusters {
            var records = RecordCursor(
                clusters: ClusterScan(clusters, transaction, try clusterCache(transaction), from: start), layout: layout)
            return try transaction.withMapAccess { try body(&records) }
        }
        return try transaction.withCursor(on: table) { cursor in
            var records = RecordCursor(cursor: cursor, layout: layout, start: start)
            return try body(&records)
        }
    }

    /// Every stored entry as it lies in the file, key bytes and record bytes,
    /// for ``Database/verify()``: nothing is decoded, so damage is reported, not trapped on.
    /// In the cluster layout each object's record is built from its
    /// columns, once the cluster's stored structure checks out; a damaged
    /// cluster is reported to `damaged` and its objects are skipped.
    func forEachStoredEntry(
        in transaction: Transaction, damaged: (DamagedObjects.Part) -> Void = { _ in }, _ visit: (Entry) throws -> Void
    ) throws {
        if let clusters { return try clusters.forEachCheckedRecord(in: transaction, damaged: damaged, visit) }
        try Self.forEachEntry(of: table, in: transaction, from: 0) {
            try visit($0)
            return true
        }
    }

    /// The object keys from `start` through `end` (inclusive), in order, without reading records.
    func keys(in transaction: Transaction, from start: UInt64, through end: UInt64?) throws -> [UInt64] {
        if let clusters { return try clusters.keys(in: transaction, try clusterCache(transaction), from: start, through: end) }
        return try Self.keys(of: table, in: transaction, from: start, through: end)
    }

    /// The first `limit` object keys in ascending or descending order, without reading records.
    func keys(in transaction: Transaction, ascending: Bool, limit: Int) throws -> [UInt64] {
        guard isVisible(in: transaction) else { return [] }
        if clusters != nil {
            let all = try keys(in: transaction, from: 0, through: nil)
            return Array(ascending ? all.prefix(limit) : all.reversed().prefix(limit))
        }
        var keys: [UInt64] = []
        try transaction.withCursor(on: table) { cursor in
            var entry = try ascending ? cursor.first() : cursor.last()
            while let current = entry, keys.count < limit {
                keys.append(OrderedKey.objectKey(from: current.key))
                entry = try ascending ? cursor.next() : cursor.previous()
            }
        }
        return keys
    }

    /// Calls `body` with a cursor for looking up many objects in a row;
    /// `stepping` when the keys often follow each other in the table.
    /// `reading` names the only columns the caller reads from the records,
    /// when it knows (the cluster layout then builds records of those).
    func withLookupCursor<R>(
        in transaction: Transaction, stepping: Bool = true, reading: [Int]? = nil, many: Bool = true,
        _ body: (inout LookupCursor) throws -> R
    ) throws -> R {
        if clusters != nil {
            let wanted = reading.map { columns in (0..<layout.columnCount).map { columns.contains($0) } }
            // The snapshot lends its record buffer to one cursor at a time (a nested lookup makes its own).
            let shared = transaction.readCacheEntry(table.slot) as? ClusterViewCache
            let scratch = shared?.spareScratch ?? RecordScratch()
            shared?.spareScratch = nil
            defer { shared?.spareScratch = scratch }
            // One cursor for many lookups; a single one often needs no search (the snapshot's last cluster).
            guard many, transaction.canSee(table), !table.isSealed else {
                var lookups = LookupCursor(store: self, transaction: transaction, cursor: nil, wanted: wanted, scratch: scratch)
                return try transaction.withMapAccess { try body(&lookups) }
            }
            return try transaction.withCursor(on: table) { cursor in
                var lookups = LookupCursor(
                    store: self, transaction: transaction, cursor: cursor, wanted: wanted, scratch: scratch)
                return try transaction.withMapAccess { try body(&lookups) }
            }
        }
        return try transaction.withCursor(on: table) { cursor in
            var lookups = LookupCursor(cursor: cursor, stepping: stepping)
            return try body(&lookups)
        }
    }

    /// Where `key` lies in the cluster views a read's snapshot already holds
    /// (the last lookup's cluster, or one found by the listed starts), with
    /// no cursor: `.some(nil)` when the view spanning it does not hold it
    /// (it is not stored), nil when finding it takes a search of the file
    /// (``LookupCursor/place(of:)``). Only outside a write.
    func knownPlace(of key: UInt64, in transaction: Transaction) -> (view: ClusterView, slot: Int)?? {
        guard clusters != nil, let known = transaction.readCacheEntry(table.slot) as? ClusterViewCache, known.writes == 0,
            known.mapStart.map({ $0 == transaction.environment.mapStart }) ?? true
        else { return nil }
        var found: ClusterView?
        if let last = known.last, key >= last.start, let end = last.lastKey, key <= end {
            found = known.confirmed(last, in: transaction)
        }
        if found == nil, let starts = known.starts {
            found = known.listedView(for: key, in: starts, transaction)
            // (A carried list may miss a cluster past the view it names: only a view spanning the key answers.)
            if let view = found, key < view.start || key > view.lastKey ?? 0 { found = nil }
        }
        guard let view = found else { return nil }
        known.last = view
        return .some(view.slot(of: key).map { (view, $0) })
    }

    /// Every object key of an objects table (``table``), for callers that
    /// keep the table rather than the store in their values.
    static func allKeys(inObjectTable table: Table, _ transaction: Transaction) throws -> [UInt64] {
        if table.name.hasPrefix(clusterPrefix) {
            // Only a full-text search of exclusions alone gets here, with the store's table.
            let layout = RecordLayout(ObjectSchema(name: String(table.name.dropFirst(4)), properties: []))
            return try ObjectStore(table: table, layout: layout).keys(in: transaction, from: 0, through: nil)
        }
        return try keys(of: table, in: transaction, from: 0, through: nil)
    }

    private static func keys(of table: Table, in transaction: Transaction, from start: UInt64, through end: UInt64?)
        throws -> [UInt64]
    {
        var keys: [UInt64] = []
        try forEachEntry(of: table, in: transaction, from: start) { entry in
            let key = OrderedKey.objectKey(from: entry.key)
            if let end, key > end { return false }
            keys.append(key)
            return true
        }
        return keys
    }

    /// The table's entries in key order from the first object key at least `start`, until `visit` returns false.
    private static func forEachEntry(
        of table: Table, in transaction: Transaction, from start: UInt64, _ visit: (Entry) throws -> Bool
    ) throws {
        try transaction.withCursor(on: table) { cursor in
            var entry = try firstEntry(cursor, atLeast: start)
            while let current = entry {
                guard try visit(current) else { return }
                entry = try cursor.next()
            }
        }
    }

    // MARK: Writing

    /// Stores a new object's record; false (and nothing written) when the key is taken.
    /// `values`, when given, are the record's values as stored (the cluster
    /// layout then skips reading them back).
    func insert(
        _ objectKey: UInt64, record: UnsafeRawBufferPointer, values stored: [StoredValue]? = nil,
        in transaction: WriteTransaction
    ) throws -> Bool {
        if let clusters {
            let values = stored ?? RecordReader(record, layout: layout).allValues()
            guard try clusters.insert(objectKey, values: values, in: transaction, try clusterCache(transaction)!) else {
                return false
            }
            noteChange(objectKey, transaction)
            return true
        }
        return try transaction.put(table, key: objectKey, value: record, mode: .insertOnly)
    }

    /// Whether new objects are stored from their checked values alone
    /// (``insert(_:values:in:)``): the cluster layout needs no record.
    var storesValues: Bool { clusters != nil }

    /// Stores a new object's values, checked as ``RecordWriter/checked(_:layout:)``
    /// returns them (cluster layout only); false (nothing written) when the key is taken.
    func insert(_ objectKey: UInt64, values: [StoredValue], in transaction: WriteTransaction) throws -> Bool {
        guard try clusters!.insert(objectKey, values: values, in: transaction, try clusterCache(transaction)!) else {
            return false
        }
        noteChange(objectKey, transaction)
        return true
    }

    /// Replaces a stored object's values (cluster layout only, values as for ``insert(_:values:in:)``).
    func replace(_ objectKey: UInt64, values: [StoredValue], in transaction: WriteTransaction) throws {
        _ = try clusters!.replace(objectKey, values: values, in: transaction, try clusterCache(transaction)!)
        noteChange(objectKey, transaction)
    }

    /// Stores a record under a key that is known to be new and usually the
    /// largest (LMDB appends then, and searches otherwise).
    func append(
        _ objectKey: UInt64, record: UnsafeRawBufferPointer, values: [StoredValue]? = nil, in transaction: WriteTransaction
    ) throws {
        if clusters != nil {
            if try !insert(objectKey, record: record, values: values, in: transaction) {
                try replace(objectKey, record: record, in: transaction)
            }
            return
        }
        _ = try transaction.put(table, key: objectKey, value: record, mode: .append)
    }

    /// Replaces (or stores) the object's record.
    func replace(_ objectKey: UInt64, record: UnsafeRawBufferPointer, in transaction: WriteTransaction) throws {
        if let clusters {
            let values = RecordReader(record, layout: layout).allValues()
            let cache = try clusterCache(transaction)!
            if try !clusters.replace(objectKey, values: values, in: transaction, cache) {
                _ = try clusters.insert(objectKey, values: values, in: transaction, cache)
            }
            return noteChange(objectKey, transaction)
        }
        _ = try transaction.put(table, key: objectKey, value: record)
    }

    /// Replaces the object's record after a change of one column (`record`
    /// holds the new value): the cluster layout changes that column alone.
    func replace(
        _ objectKey: UInt64, record: UnsafeRawBufferPointer, changing column: Int, in transaction: WriteTransaction
    ) throws {
        guard let clusters else { return try replace(objectKey, record: record, in: transaction) }
        let value = RecordReader(record, layout: layout).value(at: column)
        if try !clusters.set(objectKey, column: column, to: value, in: transaction, try clusterCache(transaction)!) {
            return try replace(objectKey, record: record, in: transaction)
        }
        noteChange(objectKey, transaction)
    }

    /// Sets one column of a stored object in the cluster layout; false when the object is not stored.
    func set(_ objectKey: UInt64, column: Int, to value: StoredValue, in transaction: WriteTransaction) throws -> Bool {
        guard try clusters!.set(objectKey, column: column, to: value, in: transaction, try clusterCache(transaction)!)
        else { return false }
        noteChange(objectKey, transaction)
        return true
    }

    /// ``ClusterTable/editablePlace(of:in:_:)`` in the cluster layout; nil otherwise.
    func editablePlace(of objectKey: UInt64, in transaction: WriteTransaction) throws
        -> (cluster: ClusterTable.Cluster, slot: Int)?
    {
        guard let clusters, let cache = try clusterCache(transaction) else { return nil }
        return try clusters.editablePlace(of: objectKey, in: transaction, cache)
    }

    @discardableResult
    func delete(_ objectKey: UInt64, in transaction: WriteTransaction) throws -> Bool {
        if let clusters {
            guard try clusters.delete(objectKey, in: transaction, try clusterCache(transaction)!) else { return false }
            noteChange(objectKey, transaction)
            return true
        }
        return try transaction.delete(table, key: objectKey)
    }

    /// Deletes every object.
    func clear(in transaction: WriteTransaction) throws {
        transaction.objectCaches[table.slot] = nil
        try transaction.clear(table)
    }
}

/// The first entry whose object key is at least `start`.
@inline(__always)
private func firstEntry(_ cursor: Cursor, atLeast start: UInt64) throws -> Entry? {
    if start == 0 { return try cursor.first() }
    var bigEndian = start.bigEndian
    return try withUnsafeBytes(of: &bigEndian) { try cursor.seek(atLeast: $0) }
}

/// Records in key order, read one at a time (``ObjectStore/withRecordCursor(in:from:_:)``).
struct RecordCursor {
    private let cursor: Cursor?
    private var clusters: ClusterScan?
    private let layout: RecordLayout
    private var start: UInt64?

    fileprivate init(cursor: Cursor, layout: RecordLayout, start: UInt64) {
        self.cursor = cursor
        self.layout = layout
        self.start = start
    }

    init(clusters: ClusterScan, layout: RecordLayout) {
        cursor = nil
        self.clusters = clusters
        self.layout = layout
    }

    /// The next record, or nil after the last; valid until the next call.
    @inline(__always)
    mutating func next() throws -> RecordReader? {
        guard let cursor else {
            guard let (key, bytes) = try clusters?.next() else { return nil }
            var reader = RecordReader(bytes, layout: layout)
            reader.objectKey = key
            return reader
        }
        let entry: Entry?
        if let first = start {
            start = nil
            entry = try firstEntry(cursor, atLeast: first)
        } else {
            entry = try cursor.next()
        }
        guard let entry else { return nil }
        var reader = RecordReader(entry.value, layout: layout)
        reader.objectKey = OrderedKey.objectKey(from: entry.key)
        return reader
    }
}

/// Looks up objects one after another (``ObjectStore/withLookupCursor(in:stepping:_:)``):
/// keys that follow each other in the table are read by stepping instead
/// of a new search, as long as stepping keeps finding them.
struct LookupCursor {
    private let cursor: Cursor?
    private var previous: UInt64?
    private var stepping: Bool
    private let clustered: (store: ObjectStore, transaction: Transaction, scratch: RecordScratch)?
    /// The cluster of the last lookup (cluster layout): the next key is often in it.
    private var view: ClusterView?
    private var previousSlot: Int?

    /// `clustered`'s scratch and whether its transaction writes, apart: a
    /// read's next key in the last view touches nothing else (binding
    /// `clustered` retains its three references).
    private let scratch: RecordScratch?
    private let inWrite: Bool
    /// `clustered`'s transaction, apart (see ``scratch``).
    private unowned(unsafe) let transaction: Transaction?
    /// A read's cache of the clusters its snapshot read, once a search found it.
    private var readViews: ClusterViewCache?

    fileprivate init(cursor: Cursor, stepping: Bool) {
        self.cursor = cursor
        self.stepping = stepping
        clustered = nil
        partsCursor = nil
        wanted = nil
        scratch = nil
        inWrite = false
        transaction = nil
    }

    /// The cluster layout's cursor over its parts (nil: one is opened per search).
    private let partsCursor: Cursor?
    /// The columns the caller reads, when not all.
    private let wanted: [Bool]?

    init(store: ObjectStore, transaction: Transaction, cursor: Cursor?, wanted: [Bool]?, scratch: RecordScratch) {
        self.cursor = nil
        stepping = false
        clustered = (store, transaction, scratch)
        partsCursor = cursor
        self.wanted = wanted
        self.scratch = scratch
        self.transaction = transaction
        inWrite = transaction is WriteTransaction
    }

    @inline(__always)
    private func build(_ view: ClusterView, _ slot: Int, _ scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
        if let wanted { return try view.record(slot, only: wanted, into: scratch) }
        return try view.record(slot, into: scratch)
    }

    /// The record of `key` in place, or nil when it is not stored; valid until the next call.
    @inline(__always)
    mutating func record(_ key: UInt64) throws -> UnsafeRawBufferPointer? {
        guard let cursor else { return try clusterRecord(key) }
        var entry: Entry?
        if stepping, let previous, key > previous {
            if let next = try cursor.next(), OrderedKey.objectKey(from: next.key) == key {
                entry = next
            } else {
                stepping = false
            }
        }
        if entry == nil {
            var bigEndian = key.bigEndian
            entry = try withUnsafeBytes(of: &bigEndian) { try cursor.seek(exactly: $0) }
        }
        previous = entry == nil ? nil : key
        return entry?.value
    }

    private mutating func clusterRecord(_ key: UInt64) throws -> UnsafeRawBufferPointer? {
        if !inWrite {
            guard let view = try readView(spanning: key), let slot = slot(of: key, in: view) else { return nil }
            return try build(view, slot, scratch.unsafelyUnwrapped)
        }
        return try searchingClusterRecord(key)
    }

    /// The view of `key`'s cluster and its slot there, for an object to read
    /// its columns in place; nil when `key` is not stored. Only where
    /// ``readsColumnsInPlace``.
    mutating func place(of key: UInt64) throws -> (view: ClusterView, slot: Int)? {
        guard let view = try readView(spanning: key), let slot = slot(of: key, in: view) else { return nil }
        return (view, slot)
    }

    /// Whether ``slot(of:column:)`` can be used: the cluster layout, outside a write.
    var readsColumnsInPlace: Bool { scratch != nil && !inWrite }

    /// Where `key`'s value of `column` lies, read in place: its cluster's
    /// column (nil when the cluster predates the property, which then reads
    /// as its default) and the key's slot; nil when the key is not stored.
    /// Only where ``readsColumnsInPlace``: no record is built (aggregates over listed keys).
    mutating func slot(of key: UInt64, column: Int) throws -> (column: ClusterColumn?, slot: Int)? {
        guard let view = try readView(spanning: key), let slot = slot(of: key, in: view) else { return nil }
        return (try view.column(column), slot)
    }

    /// A read's view of the cluster that would hold `key`; nil when none does.
    @inline(__always)
    private mutating func readView(spanning key: UInt64) throws -> ClusterView? {
        // A read has no changed clusters to look at first: the last view may hold the key.
        // (Current before its keys: after a remap, a view from before it points at pages no longer mapped.)
        if let view, key >= view.start, let last = view.lastKey, key <= last, view.isCurrent(nil) { return view }
        // Or another cluster this snapshot read, found in memory. Nothing
        // writes during a read, and the map stays put while lookups run.
        if let known = readViews, let starts = known.starts,
            let cached = known.listedView(for: key, in: starts, transaction.unsafelyUnwrapped)
        {
            view = cached
            known.last = cached
            return cached
        }
        let (store, transaction, _) = clustered!
        if let view = lastView(spanning: key, cache: nil, store, transaction) { return view }
        return try searchView(for: key, cache: nil, store, transaction)
    }

    /// The slot of `key` in `view`, which spans it; nil when it is not stored.
    @inline(__always)
    private mutating func slot(of key: UInt64, in view: ClusterView) -> Int? {
        // Keys looked up in order are usually in the next slot.
        if let previous = previousSlot, previous + 1 < view.count, view.key(previous + 1) == key {
            previousSlot = view.isLive(previous + 1) ? previous + 1 : nil
        } else {
            previousSlot = view.slot(of: key)
        }
        return previousSlot
    }

    private mutating func searchingClusterRecord(_ key: UInt64) throws -> UnsafeRawBufferPointer? {
        let (store, transaction, scratch) = clustered!
        let cache = try store.clusterCache(transaction)
        // The write's changed clusters are read from its cache; the one it changed last without a search
        // (first: a loop that changes each object finds the next one there).
        if let cluster = cache?.recentCluster(spanning: key) {
            guard let slot = ClusterTable.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot) else { return nil }
            return try cluster.record(slot, store.layout, into: scratch)
        }
        if let view = lastView(spanning: key, cache: cache, store, transaction) {
            return try slot(of: key, in: view).map { try build(view, $0, scratch) }
        }
        if let cache, !cache.clusters.isEmpty {
            let listed = cache.bounds(for: key).map { $0?.0 }
            guard let start = try listed ?? store.clusters!.clusterStart(for: key, in: transaction) else { return nil }
            if let cluster = cache.clusters[start] {
                guard let slot = ClusterTable.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot) else { return nil }
                return try cluster.record(slot, store.layout, into: scratch)
            }
        }
        guard let view = try searchView(for: key, cache: cache, store, transaction) else { return nil }
        previousSlot = view.slot(of: key)
        return try previousSlot.map { try build(view, $0, scratch) }
    }

    /// The last view (this cursor's, else the snapshot's) when it is current and spans `key`.
    private mutating func lastView(
        spanning key: UInt64, cache: ClusterTable.ClusterCache?, _ store: ObjectStore, _ transaction: Transaction
    ) -> ClusterView? {
        if view == nil, let known = transaction.readCacheEntry(store.table.slot) as? ClusterViewCache, let last = known.last {
            view = known.confirmed(last, in: transaction)
        }
        guard let view, view.isCurrent(cache), key >= view.start, let last = view.lastKey, key <= last else { return nil }
        return view
    }

    /// The view of the stored cluster that would hold `key`, from the snapshot's views or read from the file.
    private mutating func searchView(
        for key: UInt64, cache: ClusterTable.ClusterCache?, _ store: ObjectStore, _ transaction: Transaction
    ) throws -> ClusterView? {
        let writes = cache?.writes ?? 0
        let known: ClusterViewCache
        if let cached = transaction.readCacheEntry(store.table.slot) as? ClusterViewCache, cached.writes == writes,
            cached.mapStart.map({ $0 == transaction.environment.mapStart }) ?? true
        {
            known = cached
        } else {
            known = ClusterViewCache(store.clusters!)
            known.writes = writes
            transaction.readCache[store.table.slot] = known
        }
        // The cached view found, if any.
        var seen: ClusterView?
        if cache == nil, let starts = try known.startsForLookups(transaction),
            let cached = known.listedView(for: key, in: starts, transaction)
        {
            // A cluster this snapshot (or one before it) read: no search of the file.
            seen = cached
            view = cached
        } else {
            // One walk over the cluster's parts reads them all.
            view = try ClusterView.containing(key, store.clusters!, in: transaction, writes: writes, cursor: partsCursor) {
                start in
                seen = known.views[start].flatMap { cache?.clusters[start] == nil ? $0 : nil }
                return seen
            }
        }
        if !inWrite { readViews = known }
        guard let view else { return nil }
        if view === seen { known.last = view } else { known.remember(view) }
        return view
    }
}
