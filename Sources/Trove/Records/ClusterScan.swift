import TroveStorage

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
                guard view.isLive(slot) else {
                    slot += 1
                    continue
                }
                let key = view.key(slot)
                let record = try view.record(slot, into: scratch)
                slot += 1
                if key == .max { finished = true } else { from = key + 1 }
                return (key, record)
            }
            guard let next = try loadNextCluster() else {
                finished = true
                return nil
            }
            slot = next.firstSlot(atLeast: from)
        }
    }

    /// The next cluster, whole (what ``next()`` would go through object by object).
    mutating func nextView() throws -> ClusterView? {
        if finished { return nil }
        if starts == nil || (cache != nil && view != nil && view!.writes != cache!.writes) { try reposition() }
        guard let view = try loadNextCluster() else {
            finished = true
            return nil
        }
        slot = view.count
        if let last = view.lastKey {
            if last == .max { finished = true } else { from = last + 1 }
        }
        return view
    }

    /// Reads the cluster after the current one (nil after the last) and makes it current.
    private mutating func loadNextCluster() throws -> ClusterView? {
        while let starts, nextStart < starts.count {
            let start = starts[nextStart]
            if cache == nil, let known = transaction.readCacheEntry(clusters.table.slot) as? ClusterViewCache {
                // A snapshot's scans share the clusters (and columns) an earlier one read.
                if let seen = known.views[start].flatMap({ known.confirmed($0, in: transaction) }), seen.isCurrent(nil) {
                    view = seen
                } else {
                    view = try ClusterView(clusters, start: start, in: transaction, writes: 0)
                    if let view { known.remember(view) }
                }
            } else {
                view = try ClusterView(clusters, start: start, in: transaction, writes: cache?.writes ?? 0)
            }
            nextStart += 1
            if let view { return view }
        }
        return nil
    }

    /// Reads the clusters' starts again and goes to the one that may hold `from`.
    private mutating func reposition() throws {
        let all: [UInt64]
        if let cache, let write = transaction as? WriteTransaction {
            try clusters.flush(cache, in: write)
            all = try clusters.starts(in: transaction)
        } else if let cached = transaction.readCacheEntry(clusters.table.slot) as? ClusterViewCache, !cached.startsAreCarried,
            let known = cached.starts
        {
            // A snapshot's clusters do not change: listed once for all its scans.
            all = known
        } else {
            all = try clusters.starts(in: transaction)
            let known = transaction.readCacheEntry(clusters.table.slot) as? ClusterViewCache ?? ClusterViewCache(clusters)
            known.starts = all
            known.startsAreCarried = false
            transaction.readCache[clusters.table.slot] = known
        }
        nextStart = max(all.partitioningIndex { $0 <= from } - 1, 0)
        starts = all
        view = nil
        slot = 0
    }
}
