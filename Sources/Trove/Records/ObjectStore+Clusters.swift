import TroveStorage

/// The cluster layout behind ``ObjectStore``: a
/// type whose objects table is `clu:<Type>` keeps them in a ``ClusterTable``.
/// Readers are given each object as a record built from its cluster's
/// columns (``ClusterView``); filters and aggregates read the columns
/// themselves (``ClusterFilter``).
extension ObjectStore {
    static let clusterPrefix = "clu:"

    /// The write's cache of changed clusters of this type (nil outside a write).
    /// A schema change inside the write (a migration) makes a new layout: the
    /// clusters cached with the old one are written out first.
    func clusterCache(_ transaction: Transaction) throws -> ClusterTable.ClusterCache? {
        guard clusters != nil, let write = transaction as? WriteTransaction else { return nil }
        if let cache = write.objectCacheEntry(table.slot) as? ClusterTable.ClusterCache {
            if cache.owner.layout === layout { return cache }
            try cache.owner.flush(cache, in: write)
            cache.forgetAll()  // (objects holding its clusters look again)
        }
        let cache = ClusterTable.ClusterCache(owner: clusters!)
        write.objectCaches[table.slot] = cache
        return cache
    }

    /// Writes the write's changed clusters of this type to the file and lets
    /// the write forget them (a long conversion keeps memory bounded).
    func writeOutClusters(in transaction: WriteTransaction) throws {
        guard let clusters, let cache = try clusterCache(transaction) else { return }
        try clusters.flush(cache, in: transaction)
        cache.forgetAll()
        cache.writes += 1
    }

    /// Visits the clusters in key order until `visit` returns false (a
    /// write's changed clusters are written out first).
    func forEachClusterView(in transaction: Transaction, _ visit: (ClusterView) throws -> Bool) throws {
        guard let clusters else { return }
        var scan = ClusterScan(clusters, transaction, try clusterCache(transaction), from: 0)
        try transaction.withMapAccess {
            while let view = try scan.nextView() {
                guard try visit(view) else { return }
            }
        }
    }

    /// Tells the change record that an object changed (the cluster parts LMDB writes say nothing of which).
    func noteChange(_ objectKey: UInt64, _ transaction: WriteTransaction) {
        guard let hook = transaction.changeHook else { return }
        var bigEndian = objectKey.bigEndian
        withUnsafeBytes(of: &bigEndian) { hook(table, $0) }
    }
}

/// A record built from cluster columns, kept until the next one replaces it.
final class RecordScratch {
    private var writer = RecordWriter()
    private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    deinit { buffer.deallocate() }

    func record(_ values: [StoredValue], layout: RecordLayout) throws -> UnsafeRawBufferPointer {
        try writer.encode(values, layout: layout)
        let record = buffer(writer.bytes.count)
        writer.bytes.withUnsafeBytes { record.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(record)
    }

    /// The first `size` bytes of the buffer, grown when needed (the previous record is gone).
    @inline(__always)
    func buffer(_ size: Int) -> UnsafeMutableRawBufferPointer {
        if buffer.count < size {
            buffer.deallocate()
            buffer = .allocate(byteCount: max(size, 2 * buffer.count, 64), alignment: 8)
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<size])
    }
}
