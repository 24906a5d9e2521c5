import TroveStorage

/// The clusters of one type a snapshot has read, by start, for lookups
/// (``Transaction/readCache``): a key in a cluster read before costs one
/// search for its start and a slot search, no part read again. Bounded;
/// emptied when the write writes to the table. When the handle moves to a
/// newer snapshot, the views of clusters no commit since wrote are kept
/// (``carry(_:mapStart:in:)``).
final class ClusterViewCache {
    // A cache belongs to one handle's snapshot, used by one thread at a
    // time: its fields skip Swift's dynamic exclusivity checks (two
    // `swift_beginAccess` calls, ~80 instructions, per lookup by primary key).

    /// The clusters these are views of.
    let clusters: ClusterTable
    @exclusivity(unchecked) var views = ClusterViewTable()
    /// The view of the last lookup: the next key is often in it.
    @exclusivity(unchecked) var last: ClusterView?
    /// Every cluster's start, once a scan of the snapshot has listed them.
    @exclusivity(unchecked) var starts: [UInt64]?
    /// Whether ``starts`` was listed in an earlier snapshot and brought up
    /// to date from the change log: a lookup then trusts it only for a key
    /// inside the keys of the cluster it names, and a scan lists again.
    @exclusivity(unchecked) var startsAreCarried = false
    /// The ``ClusterTable/ClusterCache/writes`` the views were read at.
    @exclusivity(unchecked) var writes = 0
    /// Where the map was when the first view was read (a remap moves the pages under every view).
    @exclusivity(unchecked) var mapStart: UInt?
    /// Lookups that searched the file for their cluster (``startsForLookups(_:)``).
    private var searches = 0
    /// A record buffer for the next single lookup (one per lookup cost an allocation and a free).
    var spareScratch: RecordScratch?
    static let limit = 4_096
    /// Views of an encrypted table hold opened copies of their columns: they
    /// are kept up to this many bytes of them (a whole 100,000-object table
    /// of BenchB's ten properties is about 17 MB). A count of views instead
    /// (64) made random lookups in such a table open a cluster for nearly
    /// every lookup: 0.09x SQLite against 2.5x for records.
    nonisolated(unsafe) static var openedBytesLimit = 32 << 20  // a var for the tests

    /// The bytes the views of an encrypted table hold opened (each view adds what it opens).
    final class OpenedBytes {
        var count = 0
    }
    private let opened = OpenedBytes()

    /// How many times the views were carried to a newer snapshot of a
    /// plain file: a view confirmed at an earlier count is compared with its
    /// cluster's stamp before use (``ClusterView/isUnconfirmed``).
    final class Carries {
        @exclusivity(unchecked) var count = 0
    }
    private let carries = Carries()

    init(_ clusters: ClusterTable) {
        self.clusters = clusters
    }

    /// Keeps, for the snapshot after `changes` (what every commit since the
    /// views were read wrote), the views of the clusters those commits did
    /// not write; false when nothing is kept. Their content is the same, and
    /// so is where a view reads it: parts in overflow pages stay put until
    /// their cluster is written, and a view copies the small parts that lie
    /// inside B-tree leaves (``ClusterView``), which move when a neighbour is
    /// written. The list of starts is brought up to date in `transaction` (the new snapshot).
    func carry(_ changes: ChangeRecord, mapStart now: UInt, in transaction: Transaction) -> Bool {
        guard !changes.everything, changes.knowsClusters, mapStart.map({ $0 == now }) ?? true else { return false }
        searches = 0
        if !clusters.table.isSealed {
            // A plain file's log is not authenticated: each view is compared
            // with its cluster's stamp before use (one without a stamp is
            // then let go), and the list of starts is trusted only as far as
            // a confirmed view bears it out.
            carries.count += 1
            if last?.stamp == nil { last = nil }
            startsAreCarried = starts != nil
        }
        guard let type = changes.types[clusters.layout.typeName], type.clusters?.isEmpty != true else {
            return !views.isEmpty || starts != nil
        }
        guard let written = type.clusters else { return false }
        for start in written { views[start] = nil }
        if let last, written.contains(last.start) { self.last = nil }
        // A cluster written may be new, or gone: only those starts can have changed.
        if var list = starts {
            do {
                for start in written {
                    let position = list.partitioningIndex { $0 < start }
                    let listed = position < list.count && list[position] == start
                    let exists = try clusters.exists(start, in: transaction)
                    if exists, !listed { list.insert(start, at: position) }
                    if !exists, listed { list.remove(at: position) }
                }
                starts = list
            } catch {
                starts = nil  // listed again when lookups need it
            }
        }
        return !views.isEmpty || starts != nil
    }

    /// Every cluster's start, for lookups to find their cluster by a
    /// binary search in memory instead of a search of the file, once the
    /// snapshot's lookups have searched the file about as often as listing
    /// costs (``ClusterTable/startsOnceSearchingCostsAsMuch(searches:in:)``).
    func startsForLookups(_ transaction: Transaction) throws -> [UInt64]? {
        if let starts { return starts }
        searches += 1
        starts = try clusters.startsOnceSearchingCostsAsMuch(searches: searches, in: transaction)
        startsAreCarried = false
        return starts
    }

    /// The view of the cluster `starts` names for `key`, when it may be
    /// read and holds `key` in its range (``startsAreCarried``: a cluster
    /// the list misses may lie past it).
    @inline(__always)
    func listedView(for key: UInt64, in starts: [UInt64], _ transaction: Transaction) -> ClusterView? {
        guard let (start, _) = ClusterTable.bounds(for: key, in: starts), let view = views[start],
            let view = confirmed(view, in: transaction)
        else { return nil }
        guard startsAreCarried else { return view }
        guard key >= view.start, let last = view.lastKey, key <= last else { return nil }
        return view
    }

    /// `view` (one of ``views`` or ``last``) when it may be read in
    /// `transaction`: read in it, or kept from an earlier snapshot and its
    /// cluster's stamp unchanged; nil after forgetting it otherwise.
    @inline(__always)
    func confirmed(_ view: ClusterView, in transaction: Transaction) -> ClusterView? {
        guard view.isUnconfirmed else { return view }
        return confirm(view, in: transaction)
    }

    private func confirm(_ view: ClusterView, in transaction: Transaction) -> ClusterView? {
        if view.isConfirmed(in: transaction) {
            view.isUnconfirmed = false
            return view
        }
        if views[view.start] === view { views[view.start] = nil }
        if last === view { last = nil }
        return nil
    }

    func remember(_ view: ClusterView) {
        if mapStart != view.mapStart {
            // Views read before a remap point at old pages: only views of one map are kept.
            if mapStart != nil { views.removeAll() }
            mapStart = view.mapStart
        }
        if views.count >= Self.limit || (view.isSealed && opened.count >= Self.openedBytesLimit) {
            views.removeAll(keepingCapacity: true)
            opened.count = 0
        }
        if view.isSealed, view.openedBytes == nil { view.openedBytes = opened }
        if view.carries !== carries {
            view.carries = carries
            view.isUnconfirmed = false
        }
        views[view.start] = view
        last = view
    }
}
