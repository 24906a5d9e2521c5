import TroveStorage

extension ClusterTable {
    /// The clusters one write transaction changed, by start.
    final class ClusterCache: TransactionCache {
        @exclusivity(unchecked) private(set) var clusters: [UInt64: Cluster] = [:]
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
        /// The file format this write raised the file to (0: none), for
        /// deleted-slot bits or column patches.
        @exclusivity(unchecked) var raisedFormat: UInt32 = 0

        init(owner: ClusterTable) { self.owner = owner }

        /// The cluster changed last when it is still held and `key` belongs
        /// in it: found without a search (a loop over objects in key order).
        @inline(__always)
        func recentCluster(spanning key: UInt64) -> Cluster? {
            guard let (cluster, limit) = recent, key >= cluster.start, limit.map({ key < $0 }) ?? true, cluster.isKept
            else { return nil }
            return cluster
        }

        /// Holds `cluster` under its start (changed by this write).
        @inline(__always)
        func keep(_ cluster: Cluster) {
            guard !cluster.isKept else { return }
            if let replaced = clusters.updateValue(cluster, forKey: cluster.start) { replaced.isKept = false }
            cluster.isKept = true
        }

        /// Lets go of the cluster held under `start`.
        func forget(_ start: UInt64) {
            clusters.removeValue(forKey: start)?.isKept = false
        }

        /// Lets go of every cluster (they were written out).
        func forgetAll() {
            for cluster in clusters.values { cluster.isKept = false }
            clusters.removeAll()
            recent = nil
        }

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

        /// The most clusters a cache carries from one write into the next
        /// (``carry(into:)``): small writes' clusters, not a bulk write's.
        static let carriedClusters = 8

        /// Makes this cache, written out by a write that committed, the
        /// cache of `transaction`, the next write of the file: its clusters
        /// are what the file holds, read and decoded already. False when it
        /// holds too many clusters to be worth keeping.
        func carry(into transaction: WriteTransaction) -> Bool {
            guard clusters.count <= Self.carriedClusters else { return false }
            for cluster in clusters.values { cluster.adopt(transaction) }
            if let recent, !recent.cluster.isKept { self.recent = nil }
            writes += 1  // (views the last write read are not this one's)
            return true
        }
    }
}
