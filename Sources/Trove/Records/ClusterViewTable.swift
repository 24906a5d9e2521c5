/// Cluster views by their cluster's start: an open-addressing hash table
/// (linear probing, a multiplicative hash of the start). A lookup by
/// primary key finds its view here once per call; a `Dictionary` spent ~140
/// instructions a lookup hashing the start with SipHash, this ~20. Starts
/// come from the file, but a table holds at most ``ClusterViewCache/limit``
/// views, so even starts made to collide cost a bounded probe.
struct ClusterViewTable {
    private var starts: [UInt64] = []
    /// Per slot: its view, nil when the slot is empty.
    private var views: [ClusterView?] = []
    /// 64 minus log2 of the slot count: the hash is the product's top bits.
    private var shift = 64
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ start: UInt64) -> Int {
        Int(truncatingIfNeeded: (start &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The slot holding `start`, or the empty slot where it would go.
    @inline(__always)
    private func slot(of start: UInt64) -> (index: Int, found: Bool) {
        let mask = views.count - 1
        var index = home(start)
        while views[index] != nil {
            if starts[index] == start { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    subscript(start: UInt64) -> ClusterView? {
        get {
            guard !views.isEmpty else { return nil }
            let (index, found) = slot(of: start)
            return found ? views[index] : nil
        }
        set {
            guard let newValue else { return remove(start) }
            if (count + 1) * 2 > views.count { grow() }
            let (index, found) = slot(of: start)
            if !found {
                starts[index] = start
                count += 1
            }
            views[index] = newValue
        }
    }

    private mutating func grow() {
        let old = entries
        let slots = Swift.max(16, views.count * 2)
        shift = 64 - slots.trailingZeroBitCount
        starts = Array(repeating: 0, count: slots)
        views = Array(repeating: nil, count: slots)
        count = 0
        for (start, view) in old { self[start] = view }
    }

    /// Removes `start`'s view, moving back the entries after it in its run
    /// so that every entry stays reachable from its home slot.
    private mutating func remove(_ start: UInt64) {
        guard !views.isEmpty else { return }
        var (hole, found) = slot(of: start)
        guard found else { return }
        views[hole] = nil
        count -= 1
        let mask = views.count - 1
        var next = (hole + 1) & mask
        while views[next] != nil {
            let home = home(starts[next])
            // The entry stays when its home lies cyclically after the hole, up to where it is.
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                starts[hole] = starts[next]
                views[hole] = views[next]
                views[next] = nil
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    mutating func removeAll(keepingCapacity: Bool = false) {
        guard keepingCapacity else { return self = ClusterViewTable() }
        for index in views.indices { views[index] = nil }
        count = 0
    }

    /// Every start with its view, in no particular order.
    var entries: [(start: UInt64, view: ClusterView)] {
        zip(starts, views).compactMap { start, view in view.map { (start, $0) } }
    }
}
