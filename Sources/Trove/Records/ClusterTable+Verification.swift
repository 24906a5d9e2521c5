import TroveStorage

extension ClusterTable {
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
                func condemn(_ detail: String) {
                    damaged(
                        .init(
                            start: start, limit: limit, keys: (0..<view.count).filter(view.isLive).map(view.key),
                            detail: "\(name): \(detail)"))
                    sound = false
                }
                for column in 0..<layout.columnCount where sound && layout.inRecord[column] {
                    let property = layout.properties[column].name
                    // (A column may hold fewer values than the keys: its patch holds the objects appended since.)
                    let checked = try value(start, part: column + 1, in: transaction) { bytes -> ([Int: String], Int)? in
                        guard let bytes else { return ([:], keys.count) }  // a column the cluster predates
                        let type = layout.types[column]
                        guard let stored = ClusterColumn(bytes, type: type)?.count, stored <= keys.count,
                            let slots = ClusterColumn.damagedSlots(in: bytes, type: type, count: stored)
                        else { return nil }
                        return (slots, stored)
                    }
                    guard let (slots, stored) = checked else {
                        condemn("its \(property) column is damaged")
                        break
                    }
                    guard let patched = view.patchedSlots(column, stored: stored) else {
                        condemn(
                            stored < keys.count && !view.patchedColumns.contains(column)
                                ? "its \(property) column holds \(stored) values for \(keys.count) objects"
                                : "its \(property) column patch is damaged")
                        break
                    }
                    // (A deleted object's value is read by nothing: it leaves with the next rewrite; a patched one is replaced.)
                    for (slot, problem) in slots.sorted(by: { $0.key < $1.key })
                    where view.isLive(slot) && !patched.contains(slot) && badSlots.insert(slot).inserted {
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
}
