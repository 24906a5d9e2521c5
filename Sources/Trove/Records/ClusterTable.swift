import TroveStorage

/// A type's objects in column clusters (issue 18; ``ObjectStore`` uses it
/// for a `clu:<Type>` table): runs of up to ``capacity`` objects in object-key order,
/// each stored as one LMDB value per column under `start ‖ part` (the
/// cluster's first key u64 big-endian, a u16 big-endian part: 0 holds the
/// cluster's object keys, `1 + column` each property stored in the record).
///
/// Each cluster of a plain table also holds a stamp, part ``stampPart``:
/// the ``WriteTransaction/stamp`` of the last transaction that wrote it.
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
struct ClusterTable {
    /// Objects per cluster: 509 eight-byte values fill one 4 KiB overflow page.
    nonisolated(unsafe) static var capacity = 509
    let table: Table
    let layout: RecordLayout

    /// One cluster as a write changes it. A column becomes a
    /// ``ColumnBuffer`` when the write first changes it (or the cluster's
    /// keys); until then it stays a copy of its stored bytes, so changing one
    /// property of many objects copies one column per cluster.
    final class Cluster {
        // A write transaction is used by one thread at a time: the fields
        // skip Swift's dynamic exclusivity checks (a runtime call per access
        // cost a fifth of a bulk insert's instructions).
        @exclusivity(unchecked) var start: UInt64
        @exclusivity(unchecked) var keys: [UInt64]
        /// Per column of the layout: the column being changed (nil for collections and stored columns).
        @exclusivity(unchecked) var buffers: [ColumnBuffer?]
        /// Per column: its stored bytes (a copy the cluster owns) until it is changed.
        @exclusivity(unchecked) var stored: [ClusterColumn?]
        /// Per column: the memory of its stored bytes' copy, when it has one.
        @exclusivity(unchecked) private var copies: [UnsafeMutableRawBufferPointer?]
        @exclusivity(unchecked) var keysChanged = false
        /// Per column: changed since the cluster was last written.
        @exclusivity(unchecked) private(set) var changedColumns: [Bool]
        @exclusivity(unchecked) private var anyColumnChanged = false
        /// Slots deleted but still in ``keys`` and the columns (nil: none),
        /// in this write or stored so (``deletedPart``). A cluster that only
        /// lost objects is written as these bits alone; the slots leave the
        /// keys and every column in one pass (``applyDeletes(_:)``) when
        /// keys go in, or when most of the cluster is deleted.
        @exclusivity(unchecked) private(set) var deleted: [Bool]?
        @exclusivity(unchecked) private(set) var deletedCount = 0
        /// Whether ``deleted`` changed since the cluster was last written.
        @exclusivity(unchecked) private(set) var deletesChanged = false
        /// Whether the file holds deleted-slot bits for the cluster.
        @exclusivity(unchecked) var deletesStored = false
        /// Where the columns a write has not read yet are read from (nil
        /// once none is left): a change to one column of a cluster, or a
        /// delete, reads only what it needs.
        @exclusivity(unchecked) private var source: LazySource?

        /// The table and write a cluster's unread columns come from. (The
        /// stored columns do not change under it: the write changes this
        /// cluster only through it, and reads a column before changing it.)
        final class LazySource {
            let table: ClusterTable
            unowned(unsafe) let transaction: Transaction
            /// Per column: not read yet.
            var unread: [Bool]

            init(_ table: ClusterTable, _ transaction: Transaction, unread: [Bool]) {
                self.table = table
                self.transaction = transaction
                self.unread = unread
            }
        }

        /// A cluster of `keys` whose columns are empty buffers (the caller fills them) or, after ``keep(_:at:)``, stored bytes.
        init(start: UInt64, keys: [UInt64], layout: RecordLayout) {
            self.start = start
            self.keys = keys
            buffers = (0..<layout.columnCount).map { layout.inRecord[$0] ? ColumnBuffer(type: layout.types[$0]) : nil }
            stored = Array(repeating: nil, count: layout.columnCount)
            copies = Array(repeating: nil, count: layout.columnCount)
            changedColumns = Array(repeating: false, count: layout.columnCount)
        }

        @inline(__always)
        func markChanged(_ column: Int) {
            changedColumns[column] = true
            anyColumnChanged = true
        }

        func markWritten() {
            keysChanged = false
            deletesChanged = false
            guard anyColumnChanged else { return }
            for column in changedColumns.indices { changedColumns[column] = false }
            anyColumnChanged = false
        }

        deinit { for copy in copies { copy?.deallocate() } }

        /// A cluster whose columns are read from `transaction` when first used.
        static func reading(
            _ table: ClusterTable, start: UInt64, keys: [UInt64], in transaction: Transaction
        ) -> Cluster {
            let cluster = Cluster(start: start, keys: keys, layout: table.layout)
            cluster.buffers = Array(repeating: nil, count: table.layout.columnCount)
            cluster.source = LazySource(table, transaction, unread: table.layout.inRecord)
            return cluster
        }

        /// Reads `column` from the file if the write has not yet.
        @inline(__always)
        func read(_ column: Int) throws {
            guard let source, source.unread[column] else { return }
            try read(column, from: source)
        }

        /// Reads every column the write has not read yet.
        func readAll() throws {
            guard let source else { return }
            for column in source.unread.indices where source.unread[column] { try read(column, from: source) }
            self.source = nil
        }

        private func read(_ column: Int, from source: LazySource) throws {
            source.unread[column] = false
            let layout = source.table.layout
            try ClusterTable.withKey(start, part: column + 1) { key in
                try source.transaction.withValue(in: source.table.table, key: key) { bytes in
                    guard let bytes else {
                        // A column the cluster predates reads as the column's default.
                        buffers[column] = ColumnBuffer(
                            type: layout.types[column], repeating: layout.fallbacks[column], count: keys.count)
                        return
                    }
                    guard let stored = ClusterColumn(bytes, type: layout.types[column]), stored.count == keys.count else {
                        throw TroveError(
                            .corruptFile,
                            "a \(layout.typeName) cluster's \(layout.properties[column].name) column (cluster at \(start)) is damaged"
                        )
                    }
                    keep(stored, at: column)
                }
            }
        }

        /// Keeps a copy of a column's stored bytes, made a buffer when first changed.
        func keep(_ column: ClusterColumn, at index: Int) {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(column.bytes.count, 1), alignment: 8)
            copy.copyMemory(from: column.bytes)
            keep(copy: UnsafeMutableRawBufferPointer(rebasing: copy[0..<column.bytes.count]), type: column.type, at: index)
        }

        /// Makes `copy` (owned from now on) the column's stored bytes.
        private func keep(copy: UnsafeMutableRawBufferPointer, type: PropertyType, at index: Int) {
            copies[index]?.deallocate()
            copies[index] = copy
            stored[index] = ClusterColumn(UnsafeRawBufferPointer(copy), type: type)
            buffers[index] = nil
        }

        /// The object in `slot` as a record, each column's slot copied from
        /// its stored bytes or its buffer.
        func record(_ slot: Int, _ layout: RecordLayout, into scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
            try readAll()
            let fixedEnd = 2 + RecordLayout.bitmapSize(layout.columnCount) + layout.fixedSize
            var size = fixedEnd
            for column in layout.recordSlots where column.width == 0 {
                if let stored = stored[column.column] {
                    if !stored.isNull(slot) { size += stored.variableLength(slot) }
                } else if let buffer = buffers[column.column], !buffer.isNull(slot) {
                    size += buffer.withSlotBytes(slot) { $0.count }
                }
            }
            let record = scratch.buffer(size)
            let base = record.baseAddress.unsafelyUnwrapped
            base.initializeMemory(as: UInt8.self, repeating: 0, count: fixedEnd)
            record.storeBytes(of: UInt16(layout.columnCount).littleEndian, as: UInt16.self)
            var heap = fixedEnd
            func put(_ bytes: UnsafeRawBufferPointer, _ column: (column: Int, offset: Int, width: Int)) {
                if column.width > 0 {
                    (base + column.offset).copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: column.width)
                    return
                }
                record.storeBytes(of: UInt32(heap).littleEndian, toByteOffset: column.offset, as: UInt32.self)
                record.storeBytes(of: UInt32(bytes.count).littleEndian, toByteOffset: column.offset + 4, as: UInt32.self)
                if !bytes.isEmpty { (base + heap).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                heap += bytes.count
            }
            for column in layout.recordSlots {
                if let stored = stored[column.column] {
                    if stored.isNull(slot) {
                        record[2 + column.column / 8] |= 1 << UInt8(column.column % 8)
                    } else if column.width > 0 {
                        put(
                            UnsafeRawBufferPointer(
                                start: stored.bytes.baseAddress! + stored.slotOffset(slot, width: column.width),
                                count: column.width), column)
                    } else {
                        put(stored.variableBytes(slot), column)
                    }
                } else if let buffer = buffers[column.column] {
                    if buffer.isNull(slot) {
                        record[2 + column.column / 8] |= 1 << UInt8(column.column % 8)
                    } else {
                        buffer.withSlotBytes(slot) { put($0, column) }
                    }
                }
            }
            return UnsafeRawBufferPointer(record)
        }

        var isChanged: Bool { keysChanged || anyColumnChanged || deletesChanged }

        /// Whether the object in `slot` was deleted in this write (its slot not yet removed).
        @inline(__always)
        func isDeleted(_ slot: Int) -> Bool { deletedCount > 0 && deleted![slot] }

        /// The objects not deleted.
        var liveCount: Int { keys.count - deletedCount }

        /// Marks the object in `slot` deleted; its slot goes at the next ``applyDeletes(_:)``.
        func markDeleted(_ slot: Int) {
            if deleted == nil { deleted = Array(repeating: false, count: keys.count) }
            deleted![slot] = true
            deletedCount += 1
            deletesChanged = true
        }

        /// The largest key not deleted.
        var lastLiveKey: UInt64? {
            guard deletedCount > 0 else { return keys.last }
            return keys.indices.last { !deleted![$0] }.map { keys[$0] }
        }

        /// Whether the slots of deleted objects are to leave the columns when
        /// the cluster is written: most of it is deleted. (Otherwise only the
        /// bits are written: deleting a few objects of many clusters then
        /// costs a few bytes per cluster, not a copy of each.)
        var isMostlyDeleted: Bool { deletedCount * 4 >= keys.count * 3 }

        /// The deleted-slot bits as stored (``deletedPart``).
        func encodedDeletes() -> [UInt8] {
            var bits = [UInt8](repeating: 0, count: (keys.count + 7) / 8)
            if let deleted { for slot in deleted.indices where deleted[slot] { bits[slot >> 3] |= 1 << UInt8(slot & 7) } }
            return bits
        }

        /// Removes the slots of the objects deleted, from the keys and every column.
        func applyDeletes(_ layout: RecordLayout) throws {
            guard deletedCount > 0, let marks = deleted else { return }
            try readAll()
            let runs = Self.runs(keeping: marks)
            var kept = 0
            for slot in keys.indices where !marks[slot] {
                keys[kept] = keys[slot]
                kept += 1
            }
            keys.removeLast(keys.count - kept)
            for column in 0..<layout.columnCount where layout.inRecord[column] {
                if let bytes = stored[column] {
                    // Not opened for edits: its stored bytes without the slots, in one pass.
                    keep(copy: bytes.encoded(keeping: runs, kept: kept), type: bytes.type, at: column)
                } else {
                    try buffer(column).removeAll(marked: marks)
                }
                markChanged(column)
            }
            keysChanged = true
            deleted = nil
            deletedCount = 0
            deletesChanged = true
        }

        /// The runs of slots not `marked`, in order.
        static func runs(keeping marked: [Bool]) -> [Range<Int>] {
            var runs: [Range<Int>] = []
            var slot = 0
            while slot < marked.count {
                while slot < marked.count, marked[slot] { slot += 1 }
                let start = slot
                while slot < marked.count, !marked[slot] { slot += 1 }
                if slot > start { runs.append(start..<slot) }
            }
            return runs
        }

        /// The buffer of a column, made from its stored bytes the first time.
        @discardableResult
        func buffer(_ column: Int) throws -> ColumnBuffer {
            try read(column)
            if let buffer = buffers[column] { return buffer }
            let buffer = ColumnBuffer(stored[column]!)
            buffers[column] = buffer
            stored[column] = nil
            return buffer
        }

        /// Makes every stored column a buffer (before the keys change).
        func decodeAll(_ layout: RecordLayout) throws {
            try readAll()
            for column in stored.indices where stored[column] != nil { try buffer(column) }
        }

        /// The value of `column` for the object in `slot`.
        func value(_ slot: Int, _ column: Int, _ layout: RecordLayout) throws -> StoredValue {
            guard layout.inRecord[column] else { return layout.fallbacks[column] }
            try read(column)
            if let stored = stored[column] { return stored.value(slot) ?? .null }
            return buffers[column]!.value(slot)
        }

        /// Every column of the object in `slot`.
        func values(_ slot: Int, _ layout: RecordLayout) throws -> [StoredValue] {
            try (0..<layout.columnCount).map { try value(slot, $0, layout) }
        }

        /// Calls `body` with the stored encoding of a column, from its buffer or its stored bytes.
        func withEncoded<R>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
            try read(column)
            if let buffer = buffers[column] { return try buffer.encoded().withUnsafeBytes(body) }
            return try body(stored[column]!.bytes)
        }
    }

    /// The clusters one write transaction changed, by start.
    final class ClusterCache: TransactionCache {
        @exclusivity(unchecked) var clusters: [UInt64: Cluster] = [:]
        /// The table they belong to (to write them before the commit).
        let owner: ClusterTable
        /// Values this write put in the table or deleted from it: a
        /// ``ClusterView`` loaded before the last one points at stale pages.
        @exclusivity(unchecked) var writes = 0
        /// The cluster last changed and where the next cluster starts (nil:
        /// none follows): keys in between belong to it, found without a search.
        @exclusivity(unchecked) var recent: (cluster: Cluster, limit: UInt64?)?

        /// Every cluster's start, once the write's searches for clusters have
        /// cost about as much as listing them (then kept in step with splits,
        /// moves and erases): a cluster is then found by a binary search in memory.
        @exclusivity(unchecked) private(set) var starts: [UInt64]?
        @exclusivity(unchecked) private var searches = 0
        /// Whether this write raised the file's format for deleted-slot bits.
        @exclusivity(unchecked) var formatRaised = false

        init(owner: ClusterTable) { self.owner = owner }

        /// ``ClusterTable/clusterBounds(for:in:)`` from the list of starts; nil when they are not listed.
        func bounds(for key: UInt64) -> (UInt64, UInt64?)?? {
            starts.map { ClusterTable.bounds(for: key, in: $0) }
        }

        /// Counts a search of the file; lists the starts once searching has cost about as much.
        func searched(_ table: ClusterTable, _ transaction: Transaction) throws {
            searches += 1
            if let listed = try table.startsOnceSearchingCostsAsMuch(searches: searches, in: transaction) {
                starts = listed
            }
        }

        func addStart(_ start: UInt64) {
            guard starts != nil else { return }
            let position = starts!.partitioningIndex { $0 < start }
            if position == starts!.count || starts![position] != start { starts!.insert(start, at: position) }
        }

        func removeStart(_ start: UInt64) {
            guard starts != nil else { return }
            let position = starts!.partitioningIndex { $0 < start }
            if position < starts!.count, starts![position] == start { starts!.remove(at: position) }
        }

        func writeOut(in transaction: WriteTransaction) throws { try owner.flush(self, in: transaction) }
    }

    // MARK: Keys

    /// The part holding the cluster's stamp: after every column's.
    static let stampPart = Int(UInt16.max)
    /// The part holding which slots' objects are deleted, when some are: a
    /// bit per slot (set: deleted), in `(count + 7) / 8` bytes.
    static let deletedPart = stampPart - 1

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

    static func key(_ start: UInt64, part: UInt16) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 10)
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
    func load(_ start: UInt64, in transaction: Transaction, lazily: Bool = false) throws -> Cluster? {
        try transaction.withMapAccess {
            guard let view = try ClusterView(self, start: start, in: transaction, writes: 0) else { return nil }
            let keys = (0..<view.count).map { view.key($0) }
            let cluster =
                lazily
                ? Cluster.reading(self, start: start, keys: keys, in: transaction)
                : Cluster(start: start, keys: keys, layout: layout)
            if view.deletedCount > 0 {
                for slot in 0..<view.count where !view.isLive(slot) { cluster.markDeleted(slot) }
                cluster.markWritten()
                cluster.deletesStored = true
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

    private func value<R>(
        _ start: UInt64, part: Int, in transaction: Transaction, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try Self.withKey(start, part: part) { try transaction.withValue(in: table, key: $0, body) }
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
        if let (cluster, limit) = cache.recent, key >= cluster.start, limit.map({ key < $0 }) ?? true,
            cache.clusters[cluster.start] === cluster
        {
            return cluster
        }
        let bounds: (UInt64, UInt64?)?
        if let listed = cache.bounds(for: key) {
            bounds = listed
        } else {
            bounds = try clusterBounds(for: key, in: transaction)
            try cache.searched(self, transaction)
        }
        guard let (start, limit) = bounds else { return nil }
        guard let cluster = try cache.clusters[start] ?? load(start, in: transaction, lazily: true) else { return nil }
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
                    case Self.deletedPart: count -= Self.bitsSet(current.value)
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
                        pending.count = column.count
                        for slot in 0..<column.count {
                            let key = UInt64(bitPattern: column.int(slot) ?? 0)
                            if key < from { continue }
                            if let through, key > through {
                                passedThrough = true
                                break
                            }
                            if pending.keys.isEmpty { pending.first = slot }
                            pending.keys.append(key)
                        }
                    } else if part == Self.deletedPart, !pending.keys.isEmpty {
                        guard let slots = Self.deletedSlots(current.value, count: pending.count) else {
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

    /// Checks every cluster's stored structure without trapping (keys in
    /// order and inside the cluster's range, each column readable and as
    /// long as the keys) and visits the objects of sound clusters with their
    /// records; ``Database/verify()`` reads the file through this.
    func forEachCheckedRecord(
        in transaction: Transaction, damaged: (DamagedObjects.Part) -> Void, _ visit: (Entry) throws -> Void
    ) throws {
        let starts = try starts(in: transaction)
        let scratch = RecordScratch()
        try transaction.withMapAccess {
            for (index, start) in starts.enumerated() {
                let limit = index + 1 < starts.count ? starts[index + 1] : nil
                let name = "the \(layout.typeName) cluster at object key \(start)"
                // (The view keeps the keys readable: an encrypted table's are opened into a copy.)
                let view: ClusterView?
                do {
                    view = try ClusterView(self, start: start, in: transaction, writes: 0)
                } catch let error as TroveError where error.kind == .corruptFile {
                    damaged(.init(start: start, limit: limit, keys: nil, detail: "\(name): \(error.message)"))
                    continue
                }
                guard let view, view.liveCount > 0 else {
                    damaged(.init(start: start, limit: limit, keys: nil, detail: "\(name) has no object keys"))
                    continue
                }
                let keys = view.keys
                var previous: UInt64?
                var sound = true
                for slot in 0..<keys.count {
                    let key = UInt64(bitPattern: keys.int(slot) ?? 0)
                    if keys.isNull(slot) || key < start || limit.map({ key >= $0 }) == true || previous.map({ key <= $0 }) == true
                    {
                        damaged(
                            .init(
                                start: start, limit: limit, keys: nil,
                                detail: "\(name) holds object key \(key) out of order or outside the cluster"))
                        sound = false
                        break
                    }
                    previous = key
                }
                // A column whose structure is damaged condemns the cluster; a
                // damaged value condemns its object (the others' values read).
                var badSlots: Set<Int> = []
                for column in 0..<layout.columnCount where sound && layout.inRecord[column] {
                    let property = layout.properties[column].name
                    let slots = try value(start, part: column + 1, in: transaction) { bytes -> [Int: String]? in
                        guard let bytes else { return [:] }  // a column the cluster predates
                        return ClusterColumn.damagedSlots(in: bytes, type: layout.types[column], count: keys.count)
                    }
                    guard let slots else {
                        damaged(
                            .init(
                                start: start, limit: limit, keys: (0..<view.count).filter(view.isLive).map(view.key),
                                detail: "\(name): its \(property) column is damaged"))
                        sound = false
                        break
                    }
                    // (A deleted object's value is read by nothing: it leaves with the next rewrite.)
                    for (slot, problem) in slots.sorted(by: { $0.key < $1.key })
                    where view.isLive(slot) && badSlots.insert(slot).inserted {
                        damaged(
                            .init(start: start, limit: limit, keys: [view.key(slot)], detail: "its \(property) value \(problem)"))
                    }
                }
                guard sound else { continue }
                for slot in 0..<view.count where view.isLive(slot) && !badSlots.contains(slot) {
                    var bigEndian = view.key(slot).bigEndian
                    let record: UnsafeRawBufferPointer
                    do {
                        record = try view.record(slot, into: scratch)
                    } catch let error as TroveError where error.kind == .corruptFile {
                        damaged(.init(start: start, limit: limit, keys: [view.key(slot)], detail: "\(name): \(error.message)"))
                        continue
                    }
                    try withUnsafeBytes(of: &bigEndian) { try visit(Entry(key: $0, value: record)) }
                }
            }
        }
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
        let next = starts.partitioningIndex { $0 <= key }
        if next == 0 { return starts.first.map { ($0, nil) } }
        return (starts[next - 1], next < starts.count ? starts[next] : nil)
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
            try write(newCluster(key, values), in: transaction, allColumns: true, cache)
            return true
        }
        let position = cluster.keys.partitioningIndex { $0 < key }
        if position < cluster.keys.count, cluster.keys[position] == key { return false }
        try cluster.decodeAll(layout)
        if cache.clusters[cluster.start] !== cluster { cache.clusters[cluster.start] = cluster }
        if cluster.keys.count >= Self.capacity {
            // A full cluster: a key past its end starts a new cluster; one inside splits it in two.
            if position == cluster.keys.count {
                cache.recent = nil
                // Kept in the cache: appends in key order fill it without reading it back.
                let next = newCluster(key, values)
                try write(next, in: transaction, allColumns: true, cache)
                cache.clusters[key] = next
                return true
            }
            cache.recent = nil
            let half = cluster.keys.count / 2
            let upper = Cluster(start: cluster.keys[half], keys: Array(cluster.keys[half...]), layout: layout)
            upper.buffers = cluster.buffers.map { $0?.split(keeping: half) }
            cluster.keys.removeSubrange(half...)
            try write(cluster, in: transaction, allColumns: true, cache)
            try write(upper, in: transaction, allColumns: true, cache)
            cache.clusters[upper.start] = upper
            return try insert(key, values: values, in: transaction, cache)
        }
        cluster.keys.insert(key, at: position)
        cluster.keysChanged = true
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
        cache.clusters[cluster.start] = cluster
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            guard try !cluster.value(slot, column, layout).isStoredIdentically(as: values[column]) else { continue }
            try cluster.buffer(column).set(values[column], at: slot)
            cluster.markChanged(column)
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
        cache.clusters[cluster.start] = cluster
        if try cluster.buffer(column).set(value, at: slot) { cluster.markChanged(column) }
        return true
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
            cache.clusters[cluster.start] = cluster
            let buffer = try cluster.buffer(column)
            while index < keys.count, keys[index] <= last {
                let key = keys[index]
                index += 1
                while cluster.keys[slot] < key { slot += 1 }
                guard cluster.keys[slot] == key, !cluster.isDeleted(slot) else { continue }
                let old = buffer.value(slot)
                if buffer.set(try transform(old), replacing: old, at: slot) { changed = true }
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
            try erase(cluster.start, in: transaction, cache)
            cache.clusters[cluster.start] = nil
            return true
        }
        // Marked, not removed: the slots go in one pass when the cluster is next changed or written.
        cluster.markDeleted(slot)
        cache.clusters[cluster.start] = cluster
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
        try erase(cluster.start, in: transaction, cache)
        cache.clusters[cluster.start] = nil
        cluster.start = start
        cache.clusters[start] = cluster
        try write(cluster, in: transaction, allColumns: true, cache)
    }

    private func write(_ cluster: Cluster, in transaction: WriteTransaction, allColumns: Bool, _ cache: ClusterCache) throws {
        if allColumns || cluster.isMostlyDeleted { try cluster.applyDeletes(layout) }
        if allColumns { try cluster.readAll() }
        cache.writes += 1
        // (Written whole: a new cluster, either half of a split or a moved one.)
        if allColumns { cache.addStart(cluster.start) }
        if allColumns || cluster.keysChanged {
            let keys = ClusterColumn.encodeKeys(cluster.keys)
            try put(keys, cluster.start, part: 0, transaction)
        }
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            guard allColumns || cluster.changedColumns[column] else { continue }
            try cluster.withEncoded(column) { try put($0, cluster.start, part: column + 1, transaction) }
        }
        if cluster.deletesChanged {
            if cluster.deletedCount > 0 {
                if !cache.formatRaised {
                    // A Trove that does not know the bits would read deleted objects as stored.
                    try Catalog.raiseFormat(to: Database.deletedSlotsFormatVersion, in: transaction)
                    cache.formatRaised = true
                }
                try put(cluster.encodedDeletes(), cluster.start, part: Self.deletedPart, transaction)
                cluster.deletesStored = true
            } else if cluster.deletesStored {
                try Self.withKey(cluster.start, part: Self.deletedPart) { _ = try transaction.delete(table, key: $0) }
                cluster.deletesStored = false
            }
        }
        if !table.isSealed {
            var stamp = transaction.stamp.littleEndian
            try withUnsafeBytes(of: &stamp) { try put($0, cluster.start, part: Self.stampPart, transaction) }
        }
        cluster.markWritten()
    }

    private func put(_ value: [UInt8], _ start: UInt64, part: Int, _ transaction: WriteTransaction) throws {
        try value.withUnsafeBytes { try put($0, start, part: part, transaction) }
    }

    private func put(_ value: UnsafeRawBufferPointer, _ start: UInt64, part: Int, _ transaction: WriteTransaction) throws {
        try Self.withKey(start, part: part) { key in _ = try transaction.put(table, key: key, value: value) }
    }

    private func erase(_ start: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        cache.writes += 1
        cache.recent = nil
        cache.removeStart(start)
        for part in Array(0...layout.columnCount) + [Self.deletedPart, Self.stampPart] {
            try Self.withKey(start, part: part) { _ = try transaction.delete(table, key: $0) }
        }
    }
}
