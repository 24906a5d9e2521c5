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
    }

    /// The clusters one write transaction changed, by start.
    final class ClusterCache: TransactionCache {
        var clusters: [UInt64: Cluster] = [:]
        /// The table they belong to (to write them before the commit).
        let owner: ClusterTable

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

    static func start(of key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    // MARK: Reading

    /// The start of the cluster `key` belongs in: the largest start at most
    /// `key`, else the first cluster's; nil when there is no cluster.
    func clusterStart(for key: UInt64, in transaction: Transaction) throws -> UInt64? {
        guard transaction.canSee(table) else { return nil }
        return try transaction.withCursor(on: table) { cursor in
            let found = try Self.key(key, part: 0).withUnsafeBytes { try cursor.seek(atLeast: $0) }
            if let found, Self.start(of: found.key) == key { return key }
            let previous = found == nil ? try cursor.last() : try cursor.previous()
            if let previous { return Self.start(of: previous.key) }
            return try cursor.first().map { Self.start(of: $0.key) }
        }
    }

    /// Reads a cluster from the file.
    func load(_ start: UInt64, in transaction: Transaction) throws -> Cluster? {
        guard
            let keys = try value(
                start, part: 0, in: transaction,
                { bytes -> [UInt64]? in
                    guard let bytes, let column = ClusterColumn(bytes, type: .int) else { return nil }
                    return (0..<column.count).map { UInt64(bitPattern: column.int($0) ?? 0) }
                })
        else { return nil }
        var columns: [[StoredValue]] = []
        for column in 0..<layout.columnCount {
            guard layout.inRecord[column] else {
                columns.append([])
                continue
            }
            let type = layout.types[column]
            let values = try value(start, part: column + 1, in: transaction) { bytes -> [StoredValue]? in
                guard let bytes else { return nil }
                guard let stored = ClusterColumn(bytes, type: type), stored.count == keys.count else {
                    throw TroveError(
                        .corruptFile, "a \(layout.typeName) cluster's \(layout.properties[column].name) column is damaged")
                }
                return (0..<stored.count).map { stored.value($0) ?? .null }
            }
            // A column the cluster predates reads as the column's default.
            columns.append(values ?? Array(repeating: layout.fallbacks[column], count: keys.count))
        }
        return Cluster(start: start, keys: keys, columns: columns)
    }

    private func value<R>(
        _ start: UInt64, part: Int, in transaction: Transaction, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try Self.key(start, part: UInt16(part)).withUnsafeBytes { try transaction.withValue(in: table, key: $0, body) }
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
        guard let cluster = try cluster(for: key, in: transaction, cache),
            let slot = Self.slot(of: key, in: cluster.keys)
        else { return nil }
        return (0..<layout.columnCount).map { layout.inRecord[$0] ? cluster.columns[$0][slot] : layout.fallbacks[$0] }
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
            try write(cluster, in: transaction, allColumns: true)
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
                try write(next, in: transaction, allColumns: true)
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
            try write(cluster, in: transaction, allColumns: true)
            try write(upper, in: transaction, allColumns: true)
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
            try erase(cluster.start, in: transaction)
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
            try write(cluster, in: transaction, allColumns: false)
        }
    }

    /// Moves a cluster to a new start (its smallest key went below the old one).
    private func move(_ cluster: Cluster, to start: UInt64, in transaction: WriteTransaction, _ cache: ClusterCache) throws {
        try erase(cluster.start, in: transaction)
        cache.clusters[cluster.start] = nil
        cluster.start = start
        cache.clusters[start] = cluster
        try write(cluster, in: transaction, allColumns: true)
    }

    private func write(_ cluster: Cluster, in transaction: WriteTransaction, allColumns: Bool) throws {
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
        try Self.key(start, part: UInt16(part)).withUnsafeBytes { key in
            try value.withUnsafeBytes { _ = try transaction.put(table, key: key, value: $0) }
        }
    }

    private func erase(_ start: UInt64, in transaction: WriteTransaction) throws {
        for part in 0...layout.columnCount {
            try Self.key(start, part: UInt16(part)).withUnsafeBytes { _ = try transaction.delete(table, key: $0) }
        }
    }
}

/// The objects of a ``ClusterTable`` in key order, one cluster at a time,
/// each given as a record (``RecordCursor`` over clusters).
struct ClusterScan {
    private let clusters: ClusterTable
    private let transaction: Transaction
    private let cache: ClusterTable.ClusterCache?
    private let from: UInt64
    private var starts: [UInt64]?
    private var nextStart = 0
    private var current: ClusterTable.Cluster?
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
        if starts == nil {
            if let cache, let write = transaction as? WriteTransaction { try clusters.flush(cache, in: write) }
            starts = try clusters.starts(in: transaction)
        }
        while true {
            if let cluster = current, slot < cluster.keys.count {
                let key = cluster.keys[slot]
                let layout = clusters.layout
                let values = (0..<layout.columnCount).map {
                    layout.inRecord[$0] ? cluster.columns[$0][slot] : layout.fallbacks[$0]
                }
                slot += 1
                if key < from { continue }
                return (key, try scratch.record(values, layout: layout))
            }
            guard let starts, nextStart < starts.count else { return nil }
            current = try clusters.cluster(at: starts[nextStart], in: transaction, cache)
            nextStart += 1
            slot = 0
        }
    }
}
