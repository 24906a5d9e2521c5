import TroveStorage

/// Which objects a query's ``ClusterFilter`` matched in every cluster of one
/// snapshot: a flag per object, in key order, with the clusters' starts. A
/// ``Results`` keeps it for its generation, so a count, the aggregates after
/// it and the list of keys run the filter once (a count of matches in the
/// cluster layout needs neither keys nor records).
final class ClusterMatches {
    /// Each cluster's start and where its flags lie in ``flags``.
    private(set) var clusters: [(start: UInt64, flags: Range<Int>)] = []
    private(set) var flags: [Bool] = []
    private(set) var count = 0

    /// Runs `filter` over every cluster of the table; nil when the table is
    /// not in clusters or the predicate is not a column filter (or an index answers it).
    static func find(table: TableInfo, predicate: BoundPredicate?, in transaction: Transaction) throws -> ClusterMatches? {
        guard table.store.clusters != nil else { return nil }
        if case .objectKeys = predicate { return nil }
        let predicate = try predicate?.resolvingFullText(transaction)
        if let predicate, try QueryPlanner.indexPlan(predicate, table: table, transaction) != nil { return nil }
        guard let filter = predicate.map({ ClusterFilter($0, table.layout) }) ?? .constant(true) else { return nil }
        let matches = ClusterMatches()
        // (Appending a slice copies it at once; `repeatElement` appended flag by flag.)
        var unset: [Bool] = []
        try table.store.forEachClusterView(in: transaction) { view in
            let start = matches.flags.count
            if unset.count < view.count { unset = [Bool](repeating: false, count: view.count) }
            matches.flags.append(contentsOf: unset[0..<view.count])
            try matches.flags.withUnsafeMutableBufferPointer { all in
                let flags = UnsafeMutableBufferPointer(rebasing: all[start..<(start + view.count)])
                try filter.evaluate(view, table.layout, into: flags)
                matches.count += Self.countSet(UnsafeBufferPointer(flags))
            }
            matches.clusters.append((view.start, start..<(start + view.count)))
            return true
        }
        return matches
    }

    /// How many flags are set, eight at a time: a Bool is stored as the
    /// byte 0 or 1, so multiplying eight of them as one word adds them up
    /// in its top byte.
    static func countSet(_ flags: UnsafeBufferPointer<Bool>) -> Int {
        let raw = UnsafeRawPointer(flags.baseAddress.unsafelyUnwrapped)
        var found = 0
        var slot = 0
        while slot + 8 <= flags.count {
            found &+= Int(((raw + slot).loadUnaligned(as: UInt64.self) &* 0x0101_0101_0101_0101) >> 56)
            slot += 8
        }
        while slot < flags.count {
            found &+= flags[slot] ? 1 : 0
            slot += 1
        }
        return found
    }

    /// Calls `visit` with each cluster's view and its flags, in key order;
    /// false when the snapshot's clusters are not the ones matched (nothing visited then).
    func forEachCluster(
        of table: TableInfo, in transaction: Transaction, _ visit: (ClusterView, UnsafeBufferPointer<Bool>) throws -> Void
    ) throws -> Bool {
        var index = 0
        var agrees = true
        try table.store.forEachClusterView(in: transaction) { view in
            guard index < clusters.count, clusters[index].start == view.start, clusters[index].flags.count == view.count else {
                agrees = false
                return false
            }
            let range = clusters[index].flags
            try flags.withUnsafeBufferPointer { try visit(view, UnsafeBufferPointer(rebasing: $0[range])) }
            index += 1
            return true
        }
        return agrees && index == clusters.count
    }

    /// The matching objects' keys, in order; nil when the snapshot's clusters are not the ones matched.
    func keys(of table: TableInfo, in transaction: Transaction) throws -> [UInt64]? {
        var keys: [UInt64] = []
        keys.reserveCapacity(count)
        let agrees = try forEachCluster(of: table, in: transaction) { view, flags in
            for slot in flags.indices where flags[slot] { keys.append(view.key(slot)) }
        }
        return agrees ? keys : nil
    }
}
