import TroveStorage

/// A type's objects in column clusters (issue 18, not yet used by
/// ``ObjectStore``): runs of up to ``capacity`` objects in object-key order,
/// each stored as one LMDB value per column under `start ‖ part` (the
/// cluster's first key u64 big-endian, a u16 big-endian part: 0 holds the
/// cluster's object keys, `1 + column` each property stored in the record).
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

    /// One cluster, decoded, as a write changes it.
    final class Cluster {
        var start: UInt64
        var keys: [UInt64]
        /// Per column of the layout: its values (empty for collections).
        var columns: [[StoredValue]]
        var keysChanged = false
        var changedColumns = Set<Int>()

        init(start: UInt64, keys: [UInt64], columns: [[StoredValue]]) {
            self.start = start
            self.keys = keys
            self.columns = columns
        }

        var isChanged: Bool { keysChanged || !changedColumns.isEmpty }

        /// Every column of the object in `slot`.
        func values(_ slot: Int, _ layout: RecordLayout) -> [StoredValue] {
            (0..<layout.columnCount).map { layout.inRecord[$0] ? columns[$0][slot] : layout.fallbacks[$0] }
        }
    }

    /// The clusters one write transaction changed, by start.
    final class ClusterCache: TransactionCache {
        var clusters: [UInt64: Cluster] = [:]
        /// The table they belong to (to write them before the commit).
        let owner: ClusterTable
        /// Values this write put in the table or deleted from it: a
        /// ``ClusterView`` loaded before the last one points at stale pages.
        var writes = 0

        init(owner: ClusterTable) { self.owner = owner }

        func writeOut(in transaction: WriteTransaction) throws { try owner.flush(self, in: transaction) }
    }

    // MARK: Keys

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

    /// Reads a cluster from the file, decoded for changing.
    func load(_ start: UInt64, in transaction: Transaction) throws -> Cluster? {
        guard let view = try ClusterView(self, start: start, in: transaction, writes: 0) else { return nil }
        var columns: [[StoredValue]] = []
        for column in 0..<layout.columnCount {
            guard layout.inRecord[column] else {
                columns.append([])
                continue
            }
            columns.append(try (0..<view.count).map { try view.value($0, column) })
        }
        return Cluster(start: start, keys: (0..<view.count).map { view.key($0) }, columns: columns)
    }

    private func value<R>(
        _ start: UInt64, part: Int, in transaction: Transaction, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try Self.withKey(start, part: part) { try transaction.withValue(in: table, key: $0, body) }
    }

    /// The cluster `key` belongs in, from the cache or the file.
    private func cluster(for key: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> Cluster? {
        guard let start = try clusterStart(for: key, in: transaction) else { return nil }
        if let cached = cache?.clusters[start] { return cached }
        guard let loaded = try load(start, in: transaction) else { return nil }
        return loaded
    }

    /// Every column of the object with `key`, or nil when it is not stored.
    func values(of key: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> [StoredValue]? {
        guard let start = try clusterStart(for: key, in: transaction) else { return nil }
        if let cluster = cache?.clusters[start] {
            guard let slot = Self.slot(of: key, in: cluster.keys) else { return nil }
            return cluster.values(slot, layout)
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
        var count = 0
        for start in try starts(in: transaction) {
            count += try value(start, part: 0, in: transaction) { bytes in
                bytes.flatMap { ClusterColumn($0, type: .int)?.count } ?? 0
            }
        }
        return count
    }

    /// The largest object key, or nil when there is none.
    func lastKey(in transaction: Transaction, _ cache: ClusterCache?) throws -> UInt64? {
        try cluster(for: .max, in: transaction, cache)?.keys.last
    }

    /// The object keys from `from` through `through`, in order, from the
    /// clusters' key columns alone (the cache is written out first).
    func keys(in transaction: Transaction, _ cache: ClusterCache?, from: UInt64, through: UInt64?) throws -> [UInt64] {
        guard transaction.canSee(table) else { return [] }
        if let cache, let write = transaction as? WriteTransaction { try flush(cache, in: write) }
        var keys: [UInt64] = []
        try transaction.withCursor(on: table) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                if current.key.count == 10, current.key[8] == 0, current.key[9] == 0 {
                    guard let column = ClusterColumn(current.value, type: .int) else {
                        throw TroveError(.corruptFile, "the object keys of a \(layout.typeName) cluster are damaged")
                    }
                    for slot in 0..<column.count {
                        let key = UInt64(bitPattern: column.int(slot) ?? 0)
                        if key < from { continue }
                        if let through, key > through { return }
                        keys.append(key)
                    }
                }
                entry = try cursor.next()
            }
        }
        return keys
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

    /// The cluster starting at `start`, from the cache or the file.
    func cluster(at start: UInt64, in transaction: Transaction, _ cache: ClusterCache?) throws -> Cluster? {
        try cache?.clusters[start] ?? load(start, in: transaction)
    }

    /// The position of `key` in ascending `keys`.
    static func slot(of key: UInt64, in keys: [UInt64]) -> Int? {
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
            for (slot, key) in cluster.keys.enumerated() {
                let values = (0..<layout.columnCount).map {
                    layout.inRecord[$0] ? cluster.columns[$0][slot] : layout.fallbacks[$0]
                }
                guard try visit(key, values) else { return }
            }
        }
    }

    // MARK: Writing

    /// Stores a new object; false (nothing changed) when `key` is taken.
    func insert(_ key: UInt64, values: [StoredValue], in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        guard let cluster = try cluster(for: key, in: transaction, cache) else {
            let cluster = Cluster(
                start: key, keys: [key], columns: values.indices.map { layout.inRecord[$0] ? [values[$0]] : [] })
            try write(cluster, in: transaction, allColumns: true, cache)
            return true
        }
        let position = cluster.keys.partitioningIndex { $0 < key }
        if position < cluster.keys.count, cluster.keys[position] == key { return false }
        cache.clusters[cluster.start] = cluster
        if cluster.keys.count >= Self.capacity {
            // A full cluster: a key past its end starts a new cluster; one inside splits it in two.
            if position == cluster.keys.count {
                let next = Cluster(
                    start: key, keys: [key], columns: values.indices.map { layout.inRecord[$0] ? [values[$0]] : [] })
                try write(next, in: transaction, allColumns: true, cache)
                return true
            }
            let half = cluster.keys.count / 2
            let upper = Cluster(
                start: cluster.keys[half], keys: Array(cluster.keys[half...]),
                columns: cluster.columns.map { $0.isEmpty ? [] : Array($0[half...]) })
            cluster.keys.removeSubrange(half...)
            for column in cluster.columns.indices where !cluster.columns[column].isEmpty {
                cluster.columns[column].removeSubrange(half...)
            }
            try write(cluster, in: transaction, allColumns: true, cache)
            try write(upper, in: transaction, allColumns: true, cache)
            cache.clusters[upper.start] = upper
            return try insert(key, values: values, in: transaction, cache)
        }
        cluster.keys.insert(key, at: position)
        cluster.keysChanged = true
        for column in cluster.columns.indices where layout.inRecord[column] {
            cluster.columns[column].insert(values[column], at: position)
            cluster.changedColumns.insert(column)
        }
        if key < cluster.start { try move(cluster, to: key, in: transaction, cache) }
        return true
    }

    /// Replaces the stored object's values; false when it is not stored.
    func replace(_ key: UInt64, values: [StoredValue], in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        guard let cluster = try cluster(for: key, in: transaction, cache), let slot = Self.slot(of: key, in: cluster.keys)
        else { return false }
        cache.clusters[cluster.start] = cluster
        for column in cluster.columns.indices where layout.inRecord[column] && cluster.columns[column][slot] != values[column] {
            cluster.columns[column][slot] = values[column]
            cluster.changedColumns.insert(column)
        }
        return true
    }

    /// Deletes a stored object; false when it is not stored.
    func delete(_ key: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws -> Bool {
        guard let cluster = try cluster(for: key, in: transaction, cache), let slot = Self.slot(of: key, in: cluster.keys)
        else { return false }
        cluster.keys.remove(at: slot)
        if cluster.keys.isEmpty {
            try erase(cluster.start, in: transaction, cache)
            cache.clusters[cluster.start] = nil
            return true
        }
        cache.clusters[cluster.start] = cluster
        cluster.keysChanged = true
        for column in cluster.columns.indices where layout.inRecord[column] {
            cluster.columns[column].remove(at: slot)
            cluster.changedColumns.insert(column)
        }
        return true
    }

    /// Writes every changed column of every cached cluster, once.
    func flush(_ cache: ClusterCache, in transaction: WriteTransaction) throws {
        for cluster in cache.clusters.values where cluster.isChanged {
            try write(cluster, in: transaction, allColumns: false, cache)
        }
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
        cache.writes += 1
        if allColumns || cluster.keysChanged {
            let keys = ClusterColumn.encode(cluster.keys.map { .int(Int64(bitPattern: $0)) }, type: .int)
            try put(keys, cluster.start, part: 0, transaction)
        }
        for column in cluster.columns.indices where layout.inRecord[column] {
            guard allColumns || cluster.changedColumns.contains(column) else { continue }
            try put(
                ClusterColumn.encode(cluster.columns[column], type: layout.types[column]), cluster.start, part: column + 1,
                transaction)
        }
        cluster.keysChanged = false
        cluster.changedColumns.removeAll()
    }

    private func put(_ value: [UInt8], _ start: UInt64, part: Int, _ transaction: WriteTransaction) throws {
        try Self.withKey(start, part: part) { key in
            try value.withUnsafeBytes { _ = try transaction.put(table, key: key, value: $0) }
        }
    }

    private func erase(_ start: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        cache.writes += 1
        for part in 0...layout.columnCount {
            try Self.withKey(start, part: part) { _ = try transaction.delete(table, key: $0) }
        }
    }
}

/// The objects of a ``ClusterTable`` in key order, one cluster at a time,
/// each given as a record built from the cluster's columns (``RecordCursor``
/// over clusters). Inside a write, the write's changed clusters are written
/// out first; when the body writes to the table, the scan finds its place
/// again after the last key it returned.
struct ClusterScan {
    private let clusters: ClusterTable
    private let transaction: Transaction
    private let cache: ClusterTable.ClusterCache?
    /// The next key returned is at least this one.
    private var from: UInt64
    private var finished = false
    private var starts: [UInt64]?
    private var nextStart = 0
    private var view: ClusterView?
    private var slot = 0
    private let scratch = RecordScratch()

    init(_ clusters: ClusterTable, _ transaction: Transaction, _ cache: ClusterTable.ClusterCache?, from: UInt64) {
        self.clusters = clusters
        self.transaction = transaction
        self.cache = cache
        self.from = from
    }

    /// The next object's key and record, valid until the next call.
    mutating func next() throws -> (UInt64, UnsafeRawBufferPointer)? {
        if finished { return nil }
        if starts == nil || (cache != nil && view != nil && view!.writes != cache!.writes) { try reposition() }
        while true {
            if let view, slot < view.count {
                let key = view.key(slot)
                let record = try view.record(slot, into: scratch)
                slot += 1
                if key == .max { finished = true } else { from = key + 1 }
                return (key, record)
            }
            guard let starts, nextStart < starts.count else {
                finished = true
                return nil
            }
            view = try ClusterView(clusters, start: starts[nextStart], in: transaction, writes: cache?.writes ?? 0)
            nextStart += 1
            slot = view?.firstSlot(atLeast: from) ?? 0
        }
    }

    /// Reads the clusters' starts again and goes to the one that may hold `from`.
    private mutating func reposition() throws {
        if let cache, let write = transaction as? WriteTransaction { try clusters.flush(cache, in: write) }
        let all = try clusters.starts(in: transaction)
        nextStart = max(all.partitioningIndex { $0 <= from } - 1, 0)
        starts = all
        view = nil
        slot = 0
    }
}
