import TroveStorage

/// A type's objects in column clusters (``ObjectStore`` uses it
/// for a `clu:<Type>` table): runs of up to ``capacity`` objects in object-key order,
/// each stored as one LMDB value per column under `start ‖ part` (the
/// cluster's first key u64 big-endian, a u16 big-endian part: 0 holds the
/// cluster's object keys, `1 + column` each property stored in the record).
///
/// Each cluster of a plain table also holds a stamp, part ``stampPart``
/// (in its tail instead while it has one, ``ClusterTail``): the
/// ``WriteTransaction/stamp`` of the last transaction that wrote it.
/// A reader that kept a view of the cluster from an earlier snapshot uses
/// it again only while the stamp is the one it read with
/// (``ClusterViewCache``): the change log that says which clusters a commit
/// wrote can be rewritten by anyone who can write the file. (An encrypted
/// table's log is authenticated and its clusters carry no stamp.)
///
/// Every key of a cluster is at least its start and below the next
/// cluster's start. A write transaction keeps the clusters it changed in a
/// ``ClusterCache`` and writes each changed column once, at ``flush(_:in:)``;
/// a cluster that splits, moves its start or empties is written at once, so
/// the starts in the file and in the cache always agree.
final class ClusterTable {
    /// Objects per cluster: 509 eight-byte values fill one 4 KiB overflow page.
    static let capacity = 509
    let table: Table
    let layout: RecordLayout
    /// Objects per cluster this table's writes fill (``capacity``; tests make it small).
    let clusterCapacity: Int
    /// A column is patched (``ColumnPatch``) rather than rewritten only when
    /// its stored bytes are at least this many (a smaller part lies inside a
    /// B-tree leaf: copying it costs about what the patch would)...
    let patchMinimumColumnBytes: Int
    /// ...and the patch stays within this share of them (an eighth): every
    /// reader of the cluster merges it, and a write rewrites it whole.
    let patchShare: Int
    /// A cluster's tail (``ClusterTail``) is written while it stays within
    /// this many bytes (one 4 KiB overflow page); past it, the keys part and
    /// the columns are written whole instead (0: never). W2's single-object
    /// inserts at `--divide 10`: 247.0M instructions with tails of at most
    /// 2,000 bytes (inside a B-tree leaf), 236.0M at 3,000, 232.1M at 4,000,
    /// 237.2M at 6,000 (each commit re-encodes a longer tail); the commits'
    /// time was the same at 2,000 and 4,000 within the runs' spread.
    let tailMaximumBytes: Int

    /// The clusters of `table`; the other parameters are for tests (constants,
    /// so reading them on every insert costs no exclusivity check).
    init(
        table: Table, layout: RecordLayout, clusterCapacity: Int = ClusterTable.capacity, patchMinimumColumnBytes: Int = 2048,
        patchShare: Int = 8, tailMaximumBytes: Int = 4000
    ) {
        self.table = table
        self.layout = layout
        self.clusterCapacity = clusterCapacity
        self.patchMinimumColumnBytes = patchMinimumColumnBytes
        self.patchShare = patchShare
        self.tailMaximumBytes = tailMaximumBytes
    }

    // MARK: Keys

    /// The part holding the cluster's stamp (u64), while it has no tail:
    /// after every column's. In a plain table it holds the deleted-slot bits
    /// after the stamp, when some slots are deleted (so that a delete puts
    /// one value: ``deletesWithStampFormatVersion``).
    static let stampPart = Int(UInt16.max)
    /// The part holding which slots' objects are deleted, when some are and
    /// the stamp part does not hold them (an encrypted table's clusters,
    /// which have no stamp, and a cluster with a tail): a bit per slot (set:
    /// deleted), in `(count + 7) / 8` bytes.
    static let deletedPart = stampPart - 1
    /// The part holding the cluster's tail (``ClusterTail``), when it has
    /// one: the objects appended since its keys part was written, every
    /// column's patch and the stamp (the cluster then has no patch part and
    /// no stamp part).
    static let tailPart = deletedPart - 1
    /// The first part holding a column's patch (``ColumnPatch``): part
    /// `patchBase + column`, after every column's and before the deleted-slot bits.
    static let patchBase = 0x8000

    /// The part holding a patch of `column`'s values.
    @inline(__always)
    static func patchPart(_ column: Int) -> Int { patchBase + column }

    /// The column whose patch `part` holds, when it holds one.
    @inline(__always)
    static func patchedColumn(_ part: Int) -> Int? {
        part >= patchBase && part < tailPart ? part - patchBase : nil
    }

    /// The deleted-slot bits a stamp part holds after the stamp; nil when it holds none.
    static func deletesAfterStamp(_ stampPart: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        stampPart.count > 8 ? UnsafeRawBufferPointer(rebasing: stampPart[8...]) : nil
    }

    /// The deleted slots of stored deleted-slot bits, in order; nil when the
    /// bits are damaged (not one per slot of `count`, or set past the last).
    static func deletedSlots(_ bits: UnsafeRawBufferPointer, count: Int) -> [Int]? {
        guard bits.count == (count + 7) / 8 else { return nil }
        var slots: [Int] = []
        for (index, byte) in bits.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                let slot = index * 8 + bit
                guard slot < count else { return nil }
                slots.append(slot)
            }
        }
        return slots
    }

    /// The error for a damaged part of `column` (`what`: "column", "column
    /// patch"...) in the cluster at `start`.
    static func damaged(_ what: String, _ column: Int, of layout: RecordLayout, clusterAt start: UInt64) -> TroveError {
        TroveError(
            .corruptFile,
            "a \(layout.typeName) cluster's \(layout.properties[column].name) \(what) (cluster at \(start)) is damaged")
    }

    static func key(_ start: UInt64, part: UInt16) -> [UInt8] {
        var bytes = [UInt8](filledWith: 0, count: 10)
        bytes.withUnsafeMutableBytes {
            $0.storeBytes(of: start.bigEndian, as: UInt64.self)
            $0.storeBytes(of: part.bigEndian, toByteOffset: 8, as: UInt16.self)
        }
        return bytes
    }

    /// Calls `body` with the stored key of one part of a cluster.
    @inline(__always)
    static func withKey<R>(_ start: UInt64, part: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var key = (start.bigEndian, UInt16(part).bigEndian)
        return try withUnsafeBytes(of: &key) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<10])) }
    }

    static func start(of key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    // MARK: Reading

    /// The start of the cluster `key` belongs in: the largest start at most
    /// `key`, else the first cluster's; nil when there is no cluster.
    func clusterStart(for key: UInt64, in transaction: Transaction) throws -> UInt64? {
        guard transaction.canSee(table) else { return nil }
        return try transaction.withCursor(on: table) { cursor in
            let found = try Self.withKey(key, part: 0) { try cursor.seek(atLeast: $0) }
            if let found, Self.start(of: found.key) == key { return key }
            let previous = found == nil ? try cursor.last() : try cursor.previous()
            if let previous { return Self.start(of: previous.key) }
            return try cursor.first().map { Self.start(of: $0.key) }
        }
    }

    /// Reads a cluster from the file, for changing: every column, or (`lazily`,
    /// in a write that keeps it in its cache) each column when first used.
    func load(_ start: UInt64, in transaction: Transaction, lazily: Bool = false, _ cache: ClusterCache? = nil) throws
        -> Cluster?
    {
        try transaction.withMapAccess {
            guard
                let view = try readView(start, cache, transaction) ?? ClusterView(self, start: start, in: transaction, writes: 0)
            else { return nil }
            let keys = view.allKeys()
            let cluster =
                lazily
                ? Cluster.reading(self, start: start, keys: keys, patched: view.patchedColumns, in: transaction)
                : Cluster(start: start, keys: keys, layout: layout)
            if !lazily { cluster.takeStoredPatches(view.patchedColumns) }
            cluster.storedKeyCount = view.storedKeyCount
            cluster.tailStored = view.hasTail
            // (Last written by this write, perhaps its keys part: appends then write it again, not a tail.)
            cluster.keysWrittenBy = view.stamp ?? 0
            if view.deletedCount > 0 {
                cluster.restoreStoredDeletes((0..<view.count).filter { !view.isLive($0) }, withStamp: view.deletedWithStamp)
            }
            guard !lazily else { return cluster }
            for column in 0..<layout.columnCount where layout.inRecord[column] {
                if let stored = try view.column(column) {
                    cluster.keep(stored, at: column)
                } else {
                    // A column the cluster predates reads as the column's default.
                    cluster.buffers[column] = ColumnBuffer(
                        type: layout.types[column], repeating: layout.fallbacks[column], count: view.count)
                }
            }
            return cluster
        }
    }

    /// The view of the cluster at `start` a lookup of this write already
    /// read, while the write has not written the table since (a write that
    /// finds an object and then sets it read the cluster twice).
    private func readView(_ start: UInt64, _ cache: ClusterCache?, _ transaction: Transaction) -> ClusterView? {
        guard let cache, let known = transaction.readCacheEntry(table.slot) as? ClusterViewCache,
            let view = known.views[start], view.writes == cache.writes, !view.isUnconfirmed, view.isCurrent(nil)
        else { return nil }
        return view
    }

    func value<R>(
        _ start: UInt64, part: Int, in transaction: Transaction, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try Self.withKey(start, part: part) { try transaction.withValue(in: table, key: $0, body) }
    }

    /// Calls `body` with the stored patch of `column` in the cluster at
    /// `start`: its part, or (`inTail`) its place in the cluster's tail; nil
    /// when there is none or the tail is damaged.
    func storedPatch<R>(
        _ start: UInt64, _ column: Int, inTail: Bool, in transaction: Transaction,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        guard inTail else { return try value(start, part: Self.patchPart(column), in: transaction, body) }
        return try value(start, part: Self.tailPart, in: transaction) { bytes in
            try body(bytes.flatMap { ClusterTail($0, columnCount: layout.columnCount)?.patch(column) })
        }
    }

    /// The cluster `key` belongs in, from the cache or the file; its
    /// pending deletes applied unless `applyingDeletes` is false.
    private func cluster(
        for key: UInt64, in transaction: Transaction, _ cache: ClusterCache?, applyingDeletes: Bool
    ) throws -> Cluster? {
        let found = try findCluster(for: key, in: transaction, cache)
        if applyingDeletes { try found?.applyDeletes(layout) }
        return found
    }

    private func findCluster(for key: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> Cluster? {
        guard let cache else {
            guard let start = try clusterStart(for: key, in: transaction) else { return nil }
            return try load(start, in: transaction)
        }
        if let cluster = cache.recentCluster(spanning: key) { return cluster }
        let bounds: (UInt64, UInt64?)?
        if let listed = cache.bounds(for: key) {
            bounds = listed
        } else {
            bounds = try clusterBounds(for: key, in: transaction)
            try cache.searched(self, transaction)
        }
        guard let (start, limit) = bounds else { return nil }
        guard let cluster = try cache.clusters[start] ?? load(start, in: transaction, lazily: true, cache) else { return nil }
        if key >= start { cache.recent = (cluster, limit) }
        return cluster
    }

    /// ``clusterStart(for:in:)`` and the start of the cluster after it (nil when none follows), with one search.
    private func clusterBounds(for key: UInt64, in transaction: Transaction) throws -> (UInt64, UInt64?)? {
        guard transaction.canSee(table) else { return nil }
        return try transaction.withCursor(on: table) { cursor in
            let next = key == .max ? nil : try Self.withKey(key + 1, part: 0) { try cursor.seek(atLeast: $0) }
            let limit = next.map { Self.start(of: $0.key) }
            if let previous = try next == nil ? cursor.last() : cursor.previous() {
                return (Self.start(of: previous.key), limit)
            }
            // Below the first cluster: that one (its start moves down when the key goes in).
            return try cursor.first().map { (Self.start(of: $0.key), nil) }
        }
    }

    /// Every column of the object with `key`, or nil when it is not stored.
    func values(of key: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> [StoredValue]? {
        guard let start = try clusterStart(for: key, in: transaction) else { return nil }
        if let cluster = cache?.clusters[start] {
            guard let slot = Self.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot) else { return nil }
            return try cluster.values(slot, layout)
        }
        return try transaction.withMapAccess {
            guard let view = try ClusterView(self, start: start, in: transaction, writes: 0),
                let slot = view.slot(of: key)
            else { return nil }
            return try view.values(slot)
        }
    }

    /// The view of the cluster `key` belongs in from the file, or nil when
    /// there is none or the write's cache holds that cluster (changed, not
    /// yet written): the caller reads it from ``ClusterCache/clusters``.
    func view(for key: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> ClusterView? {
        guard let start = try clusterStart(for: key, in: transaction), cache?.clusters[start] == nil else { return nil }
        return try ClusterView(self, start: start, in: transaction, writes: cache?.writes ?? 0)
    }

    /// The number of objects (the cache is written out first).
    func count(in transaction: Transaction, _ cache: ClusterCache?) throws -> Int {
        if let cache, let write = transaction as? WriteTransaction { try flush(cache, in: write) }
        guard transaction.canSee(table) else { return 0 }
        var count = 0
        try transaction.withCursor(on: table) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if current.key.count == 10 {
                    switch Self.part(of: current.key) {
                    case 0: count += ClusterColumn(current.value, type: .int)?.count ?? 0
                    case Self.tailPart: count += ClusterTail(current.value, columnCount: nil)?.count ?? 0
                    case Self.deletedPart: count -= Self.bitsSet(current.value)
                    case Self.stampPart: count -= Self.deletesAfterStamp(current.value).map(Self.bitsSet) ?? 0
                    default: break
                    }
                }
                entry = try cursor.next()
            }
        }
        return count
    }

    /// The part number of a stored key.
    static func part(of key: UnsafeRawBufferPointer) -> Int {
        Int(UInt16(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
    }

    private static func bitsSet(_ bytes: UnsafeRawBufferPointer) -> Int {
        bytes.reduce(0) { $0 + $1.nonzeroBitCount }
    }

    /// The largest object key, or nil when there is none.
    func lastKey(in transaction: Transaction, _ cache: ClusterCache?) throws -> UInt64? {
        try cluster(for: .max, in: transaction, cache, applyingDeletes: false)?.lastLiveKey
    }

    /// The object keys from `from` through `through`, in order, from the
    /// clusters' key columns alone (the cache is written out first).
    func keys(in transaction: Transaction, _ cache: ClusterCache?, from: UInt64, through: UInt64?) throws -> [UInt64] {
        guard transaction.canSee(table) else { return [] }
        if let cache, let write = transaction as? WriteTransaction { try flush(cache, in: write) }
        var keys: [UInt64] = []
        // A cluster's deleted-slot bits come after its keys: its keys in
        // range are kept (with the slot of the first) until they are read.
        var pending: (first: Int, count: Int, keys: [UInt64]) = (0, 0, [])
        var passedThrough = false
        try transaction.withCursor(on: table) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if current.key.count == 10 {
                    let part = Self.part(of: current.key)
                    if part == 0 {
                        keys += pending.keys
                        pending = (0, 0, [])
                        if passedThrough { return }
                        guard let column = ClusterColumn(current.value, type: .int) else {
                            throw TroveError(.corruptFile, "the object keys of a \(layout.typeName) cluster are damaged")
                        }
                        // (Gathered in locals: each access to a variable the closure captures is
                        // checked for exclusivity at run time, ~88 instructions a key.)
                        var first = 0
                        var inRange: [UInt64] = []
                        inRange.reserveCapacity(column.count)
                        var passed = false
                        for slot in 0..<column.count {
                            let key = UInt64(bitPattern: column.int(slot) ?? 0)
                            if key < from { continue }
                            if let through, key > through {
                                passed = true
                                break
                            }
                            if inRange.isEmpty { first = slot }
                            inRange.append(key)
                        }
                        pending = (first, column.count, inRange)
                        if passed { passedThrough = true }
                    } else if part == Self.tailPart {
                        guard let tail = ClusterTail(current.value, columnCount: nil) else {
                            throw TroveError(.corruptFile, "the appended objects of a \(layout.typeName) cluster are damaged")
                        }
                        // (After the keys part's: past `through` already when they were.)
                        for index in 0..<tail.count where !passedThrough {
                            let key = tail.key(index)
                            if key < from { continue }
                            if let through, key > through {
                                passedThrough = true
                                break
                            }
                            if pending.keys.isEmpty { pending.first = pending.count + index }
                            pending.keys.append(key)
                        }
                        pending.count += tail.count
                    } else if part == Self.deletedPart || part == Self.stampPart, !pending.keys.isEmpty,
                        let bits = part == Self.deletedPart ? current.value : Self.deletesAfterStamp(current.value)
                    {
                        guard let slots = Self.deletedSlots(bits, count: pending.count) else {
                            throw TroveError(.corruptFile, "the deleted-slot bits of a \(layout.typeName) cluster are damaged")
                        }
                        let range = pending.first..<(pending.first + pending.keys.count)
                        for slot in slots.reversed() where range.contains(slot) { pending.keys.remove(at: slot - pending.first) }
                    }
                }
                entry = try cursor.next()
            }
        }
        return keys + pending.keys
    }

    /// Every cluster's start, once `searches` searches of the file for a
    /// cluster have cost about as much as listing them (a walk over every
    /// part: a sixteenth of the table's entries), checked every 16th search;
    /// nil before. Lookups and writes then find clusters in memory
    /// (``bounds(for:in:)``).
    func startsOnceSearchingCostsAsMuch(searches: Int, in transaction: Transaction) throws -> [UInt64]? {
        guard searches >= 16, searches % 16 == 0, searches * 16 >= (try transaction.count(of: table)) else { return nil }
        return try starts(in: transaction)
    }

    /// The start of the cluster `key` belongs in (the largest start at most
    /// `key`, else the first) and the start after it, from a list of every
    /// start; nil when there is no cluster.
    static func bounds(for key: UInt64, in starts: [UInt64]) -> (UInt64, UInt64?)? {
        // (A plain binary search over the buffer: the generic partitioning
        // search with its closure cost ~130 instructions a lookup by primary key.)
        starts.withUnsafeBufferPointer { starts in
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low &+ high) &>> 1
                if starts[middle] <= key { low = middle &+ 1 } else { high = middle }
            }
            if low == 0 { return starts.first.map { ($0, nil) } }
            return (starts[low &- 1], low < starts.count ? starts[low] : nil)
        }
    }

    /// Whether a cluster starts at `start`.
    func exists(_ start: UInt64, in transaction: Transaction) throws -> Bool {
        guard transaction.canSee(table) else { return false }
        return try transaction.withCursor(on: table) { cursor in
            try Self.withKey(start, part: 0) { try cursor.seek(exactly: $0) } != nil
        }
    }

    /// Every cluster's start, in order.
    func starts(in transaction: Transaction) throws -> [UInt64] {
        guard transaction.canSee(table) else { return [] }
        var starts: [UInt64] = []
        try transaction.withCursor(on: table) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if current.key.count == 10, current.key[8] == 0, current.key[9] == 0 {
                    starts.append(Self.start(of: current.key))
                }
                entry = try cursor.next()
            }
        }
        return starts
    }

    /// The position of `key` in ascending `keys`.
    static func slot(of key: UInt64, in keys: [UInt64]) -> Int? {
        if let first = keys.first, key >= first, key &- first < UInt64(keys.count), keys[Int(key &- first)] == key {
            return Int(key &- first)  // consecutive keys (nothing deleted): no search
        }
        let position = keys.partitioningIndex { $0 < key }
        return position < keys.count && keys[position] == key ? position : nil
    }

    /// Visits every object in key order (the cache is written out first).
    func forEach(
        in transaction: Transaction, _ cache: ClusterCache?, _ visit: (UInt64, [StoredValue]) throws -> Bool
    ) throws {
        if let cache, let write = transaction as? WriteTransaction { try flush(cache, in: write) }
        for start in try starts(in: transaction) {
            guard let cluster = try cache?.clusters[start] ?? load(start, in: transaction) else { continue }
            for (slot, key) in cluster.keys.enumerated() where !cluster.isDeleted(slot) {
                guard try visit(key, try cluster.values(slot, layout)) else { return }
            }
        }
    }

    // MARK: Writing

    /// Stores a new object; false (nothing changed) when `key` is taken.
    func insert(_ key: UInt64, values: [StoredValue], in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        // (Keys go in: the deleted slots leave first.)
        guard let cluster = try cluster(for: key, in: transaction, cache, applyingDeletes: true) else {
            // Kept in the cache: appends in key order fill it without reading it back.
            let first = newCluster(key, values)
            try write(first, in: transaction, allColumns: true, cache)
            cache.keep(first)
            return true
        }
        let position = cluster.keys.partitioningIndex { $0 < key }
        if position < cluster.keys.count, cluster.keys[position] == key { return false }
        if position == cluster.keys.count {
            guard position >= clusterCapacity else {
                // Past the last key: the large columns are not read (the value joins their patches).
                cache.keep(cluster)
                try cluster.append(key, values, layout)
                return true
            }
            // A full cluster: a key past its end starts a new cluster.
            cache.recent = nil
            // Kept in the cache: appends in key order fill it without reading it back.
            let next = newCluster(key, values)
            try write(next, in: transaction, allColumns: true, cache)
            cache.keep(next)
            return true
        }
        try cluster.decodeAll(layout)
        cache.keep(cluster)
        if cluster.keys.count >= clusterCapacity {
            // A full cluster: a key inside splits it in two.
            cache.recent = nil
            let half = cluster.keys.count / 2
            let upper = Cluster(start: cluster.keys[half], keys: Array(cluster.keys[half...]), layout: layout)
            for column in cluster.buffers.indices { upper.buffers[column] = cluster.buffers[column]?.split(keeping: half) }
            cluster.keys.removeSubrange(half...)
            cluster.shape &+= 1
            try write(cluster, in: transaction, allColumns: true, cache)
            try write(upper, in: transaction, allColumns: true, cache)
            cache.keep(upper)
            return try insert(key, values: values, in: transaction, cache)
        }
        // (Before the last key: the slots after it move.)
        cluster.keys.insert(key, at: position)
        cluster.shape &+= 1
        cluster.keysChanged = true
        cluster.slotsMoved = true
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            cluster.buffers[column]!.insert(values[column], at: position)
            cluster.markChanged(column)
        }
        if key < cluster.start { try move(cluster, to: key, in: transaction, cache) }
        return true
    }

    /// Replaces the stored object's values; false when it is not stored.
    func replace(_ key: UInt64, values: [StoredValue], in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        guard let cluster = try cluster(for: key, in: transaction, cache, applyingDeletes: false),
            let slot = Self.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot)
        else { return false }
        cache.keep(cluster)
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            guard try !cluster.value(slot, column, layout).isStoredIdentically(as: values[column]) else { continue }
            _ = try cluster.set(values[column], at: slot, column: column)
        }
        return true
    }

    /// Changes one property of a stored object; false when it is not stored.
    func set(_ key: UInt64, column: Int, to value: StoredValue, in transaction: WriteTransaction, _ cache: ClusterCache)
        throws -> Bool
    {
        guard let cluster = try cluster(for: key, in: transaction, cache, applyingDeletes: false),
            let slot = Self.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot)
        else { return false }
        cache.keep(cluster)
        _ = try cluster.set(value, at: slot, column: column)
        return true
    }

    /// The cluster of this write's cache holding `key` (read into the cache,
    /// each column when first used, when it is not there yet) and the key's
    /// slot, for an object that reads and sets its values there; nil when
    /// `key` is not stored.
    func editablePlace(of key: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws
        -> (cluster: Cluster, slot: Int)?
    {
        guard let cluster = try cluster(for: key, in: transaction, cache, applyingDeletes: false),
            let slot = Self.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot)
        else { return nil }
        cache.keep(cluster)
        return (cluster, slot)
    }

    /// Changes one property of the stored objects among `keys` (ascending),
    /// visiting each cluster once: `transform` gets an object's value and
    /// returns its new one; `updated` hears each object it ran for. Keys not
    /// stored are skipped. The column is edited in its buffer: no record is
    /// built, and the cluster is looked up once, not once per object.
    func update(
        _ keys: [UInt64], column: Int, in transaction: WriteTransaction, _ cache: ClusterCache,
        updated: (UInt64) -> Void, _ transform: (StoredValue) throws -> StoredValue
    ) throws {
        var index = 0
        while index < keys.count {
            guard let cluster = try cluster(for: keys[index], in: transaction, cache, applyingDeletes: false),
                let last = cluster.keys.last
            else {
                index += 1
                continue
            }
            let first = index
            var slot = 0
            var changed = false
            // A transform that throws leaves what it already changed marked, so the cache and the file agree.
            defer { if changed { cluster.markChanged(column) } }
            cache.keep(cluster)
            let buffer = try cluster.buffer(column)
            while index < keys.count, keys[index] <= last {
                let key = keys[index]
                index += 1
                while cluster.keys[slot] < key { slot += 1 }
                guard cluster.keys[slot] == key, !cluster.isDeleted(slot) else { continue }
                let old = buffer.value(slot)
                if buffer.set(try transform(old), replacing: old, at: slot) {
                    changed = true
                    cluster.noteChanged(slot, in: column)
                }
                updated(key)
            }
            if index == first { index += 1 }  // between this cluster's last key and the next cluster: not stored
        }
    }

    /// Deletes a stored object; false when it is not stored.
    func delete(_ key: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        guard let cluster = try cluster(for: key, in: transaction, cache, applyingDeletes: false),
            let slot = Self.slot(of: key, in: cluster.keys), !cluster.isDeleted(slot)
        else { return false }
        if cluster.liveCount == 1 {
            try erase(cluster, in: transaction, cache)
            cache.forget(cluster.start)
            return true
        }
        // Marked, not removed: the slots go in one pass when the cluster is next changed or written.
        cluster.markDeleted(slot)
        cache.keep(cluster)
        return true
    }

    /// Writes every changed column of every cached cluster, once.
    func flush(_ cache: ClusterCache, in transaction: WriteTransaction) throws {
        for cluster in cache.clusters.values where cluster.isChanged {
            try write(cluster, in: transaction, allColumns: false, cache)
        }
    }

    /// A cluster of one new object.
    private func newCluster(_ key: UInt64, _ values: [StoredValue]) -> Cluster {
        let cluster = Cluster(start: key, keys: [key], layout: layout)
        for column in 0..<layout.columnCount where layout.inRecord[column] { cluster.buffers[column]!.append(values[column]) }
        return cluster
    }

    /// Moves a cluster to a new start (its smallest key went below the old one).
    private func move(_ cluster: Cluster, to start: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        try erase(cluster, in: transaction, cache)
        cache.forget(cluster.start)
        cluster.start = start
        cache.keep(cluster)
        try write(cluster, in: transaction, allColumns: true, cache)
    }

    private func write(_ cluster: Cluster, in transaction: WriteTransaction, allColumns: Bool, _ cache: ClusterCache) throws {
        if allColumns || cluster.isMostlyDeleted { try cluster.applyDeletes(layout) }
        if allColumns { try cluster.readAll() }
        cache.writes += 1
        // (Written whole: a new cluster, either half of a split or a moved one.)
        if allColumns { cache.addStart(cluster.start) }
        // Keys that moved move every column's slots: a stored patch no longer fits.
        let whole = allColumns || cluster.slotsMoved
        // A tail holding the stamp is written again by any write to its cluster (a delete too): a
        // reader that kept the cluster's view compares the stamp.
        let stampInTail = cluster.tailStored && !table.isSealed
        let tailWanted =
            !whole && tailMaximumBytes > 0 && cluster.keysWrittenBy != transaction.stamp
            && (cluster.keysChanged || cluster.tailStored && cluster.anyColumnChanged
                || stampInTail && cluster.deletesChanged)
        if tailWanted, let tail = try cluster.tail(layout, stamp: transaction.stamp, maximum: tailMaximumBytes) {
            // Appended objects, every patch and the stamp in one part: one put a commit.
            try raiseFormat(to: Database.clusterTailsFormatVersion, in: transaction, cache)
            try put(tail, cluster.start, part: Self.tailPart, transaction)
            if !cluster.tailStored {
                for column in cluster.patchStored.indices where cluster.patchStored[column] {
                    try Self.withKey(cluster.start, part: Self.patchPart(column)) { _ = try transaction.delete(table, key: $0) }
                }
                if !table.isSealed {
                    try Self.withKey(cluster.start, part: Self.stampPart) { _ = try transaction.delete(table, key: $0) }
                }
            }
            cluster.wroteTail(tail, layout)
        } else if allColumns || cluster.keysChanged || cluster.anyColumnChanged || stampInTail {
            // (A tail that outgrew its part: the columns are written whole, so the next tail starts
            // empty. Patches of their own would each hold up to an eighth of the column, and a tail
            // holding them would not fit again until the columns were written whole.)
            try writeParts(cluster, whole: whole || tailWanted, allColumns: allColumns, in: transaction, cache)
        }
        // A plain table's cluster without a tail keeps its deleted-slot bits after its stamp, which every
        // write puts: a delete puts one value. Others keep them in a part of their own.
        let deletesWithStamp = !table.isSealed && !cluster.tailStored
        if deletesWithStamp {
            if cluster.deletesStored {
                try Self.withKey(cluster.start, part: Self.deletedPart) { _ = try transaction.delete(table, key: $0) }
                cluster.deletesStored = false
            }
        } else if cluster.deletesChanged || cluster.deletesWithStamp {
            // (Bits that were with the stamp, which a first tail took away, go to their own part.)
            if cluster.deletedCount > 0 {
                // A Trove that does not know the bits would read deleted objects as stored.
                try raiseFormat(to: Database.deletedSlotsFormatVersion, in: transaction, cache)
                try put(cluster.encodedDeletes(), cluster.start, part: Self.deletedPart, transaction)
                cluster.deletesStored = true
            } else if cluster.deletesStored {
                try Self.withKey(cluster.start, part: Self.deletedPart) { _ = try transaction.delete(table, key: $0) }
                cluster.deletesStored = false
            }
        }
        if deletesWithStamp {
            let bits = cluster.deletedCount > 0 ? (cluster.keys.count + 7) / 8 : 0
            // A Trove before it would read the stamp as damaged, and the deleted objects as stored.
            if bits > 0 { try raiseFormat(to: Database.deletesWithStampFormatVersion, in: transaction, cache) }
            let stamp = transaction.stamp
            try Self.withKey(cluster.start, part: Self.stampPart) { key in
                try transaction.put(table, key: key, reserving: 8 + bits) { value in
                    value.storeBytes(of: stamp.littleEndian, as: UInt64.self)
                    if bits > 0 { cluster.encodeDeletes(into: UnsafeMutableRawBufferPointer(rebasing: value[8...])) }
                }
            }
        }
        cluster.deletesWithStamp = deletesWithStamp && cluster.deletedCount > 0
        cluster.markWritten()
    }

    /// Writes the keys part when the keys changed, and each column that
    /// changed (or whose patch was in the tail, which goes) whole or as its
    /// patch; `whole`: every column that changed whole.
    private func writeParts(
        _ cluster: Cluster, whole: Bool, allColumns: Bool, in transaction: WriteTransaction, _ cache: ClusterCache
    ) throws {
        let hadTail = cluster.tailStored
        if allColumns || cluster.keysChanged || hadTail {
            let keys = ClusterColumn.encodeKeys(cluster.keys)
            try put(keys, cluster.start, part: 0, transaction)
            cluster.storedKeyCount = cluster.keys.count
            cluster.keysWrittenBy = transaction.stamp
        }
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            guard allColumns || cluster.changedColumns[column] || ((whole || hadTail) && cluster.patchStored[column])
            else { continue }
            if !whole, let patch = try cluster.patch(column, layout, minimum: patchMinimumColumnBytes, share: patchShare) {
                // (With keys appended, the patch holds values past the stored column's end.)
                try raiseFormat(
                    to: cluster.keysChanged || hadTail
                        ? Database.appendPatchesFormatVersion : Database.columnPatchesFormatVersion,
                    in: transaction, cache)
                try put(patch, cluster.start, part: Self.patchPart(column), transaction)
                cluster.wrotePatch(column)
                continue
            }
            let bytes: Int
            switch try cluster.wholeColumn(column) {
            case .buffer(let buffer):
                // (Encoded where it is stored: a column written whole was encoded into an array and copied.)
                bytes = buffer.encodedSize
                try Self.withKey(cluster.start, part: column + 1) { key in
                    try transaction.put(table, key: key, reserving: bytes) { buffer.encode(into: $0) }
                }
            case .stored(let encoded):
                bytes = encoded.count
                try put(encoded, cluster.start, part: column + 1, transaction)
            }
            if cluster.patchStored[column] && !hadTail {
                try Self.withKey(cluster.start, part: Self.patchPart(column)) { _ = try transaction.delete(table, key: $0) }
            }
            cluster.wroteWhole(column, bytes: bytes, minimum: patchMinimumColumnBytes)
        }
        if hadTail {
            try Self.withKey(cluster.start, part: Self.tailPart) { _ = try transaction.delete(table, key: $0) }
            cluster.tailStored = false
            cluster.forgetTail()
        }
    }

    /// Raises the file's format to `version` once per write.
    private func raiseFormat(to version: UInt32, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        guard cache.raisedFormat < version else { return }
        try Catalog.raiseFormat(to: version, in: transaction)
        cache.raisedFormat = version
    }

    private func put(_ value: [UInt8], _ start: UInt64, part: Int, _ transaction: WriteTransaction) throws {
        try value.withUnsafeBytes { try put($0, start, part: part, transaction) }
    }

    private func put(_ value: UnsafeRawBufferPointer, _ start: UInt64, part: Int, _ transaction: WriteTransaction) throws {
        try Self.withKey(start, part: part) { key in _ = try transaction.put(table, key: key, value: value) }
    }

    private func erase(_ cluster: Cluster, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        let start = cluster.start
        cache.writes += 1
        cache.recent = nil
        cache.removeStart(start)
        let patches =
            cluster.tailStored
            ? [Self.tailPart] : cluster.patchStored.indices.filter { cluster.patchStored[$0] }.map(Self.patchPart)
        for part in Array(0...layout.columnCount) + patches + [Self.deletedPart, Self.stampPart] {
            try Self.withKey(start, part: part) { _ = try transaction.delete(table, key: $0) }
        }
        cluster.takeStoredPatches([], replacing: true)
    }
}
