import TroveStorage

/// Reading a cluster's stored parts for a view: the parts after the
/// columns, the stamp, a single part, and where a part's bytes may stay.
extension ClusterView {
    /// Reads the parts after the columns in one cursor walk: the columns'
    /// patches, the tail, the deleted-slot bits and the stamp (always the
    /// last part, with the deleted-slot bits after it in a plain table's
    /// cluster without a tail); each kept where it stays put, or copied into `owned`.
    static func trailingParts(
        _ table: ClusterTable, _ start: UInt64, in transaction: Transaction, _ owned: inout [UnsafeMutableRawBufferPointer]
    ) throws -> TrailingParts {
        var found = TrailingParts()
        let isSealed = table.table.isSealed
        let pageSize = transaction.environment.pageSize
        try transaction.withCursor(on: table.table) { cursor in
            var entry = try ClusterTable.withKey(start, part: ClusterTable.patchBase) { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.count == 10, ClusterTable.start(of: current.key) == start {
                let part = ClusterTable.part(of: current.key)
                if part == ClusterTable.stampPart {
                    found.stamp = stamp(current.value)
                    // (Taken as it is: the view copies the bits; an encrypted table's stamp part holds none.)
                    found.deletedWithStamp = isSealed ? nil : ClusterTable.deletesAfterStamp(current.value)
                    break
                }
                // (Opened values of an encrypted table live only while the cursor stands on them;
                // the tail is settled by the view, which keeps its keys apart.)
                let bytes =
                    isSealed
                    ? copy(current.value, into: &owned)
                    : part == ClusterTable.tailPart
                        ? current.value : settled(current.value, pageSize: pageSize, isSealed: false, into: &owned)
                if part == ClusterTable.deletedPart {
                    found.deleted = bytes
                } else if part == ClusterTable.tailPart {
                    found.tail = bytes
                } else if let column = ClusterTable.patchedColumn(part) {
                    found.patches.append((column, bytes))
                }
                entry = try cursor.next()
            }
        }
        return found
    }

    /// The parts after a cluster's columns (``trailingParts(_:_:in:_:)``).
    /// (A struct: a tuple this long was copied and destroyed through the
    /// runtime's generic tuple functions, ~400 instructions a view.)
    struct TrailingParts {
        var patches: [(Int, UnsafeRawBufferPointer)] = []
        var tail: UnsafeRawBufferPointer?
        var deleted: UnsafeRawBufferPointer?
        var stamp: UInt64?
        var deletedWithStamp: UnsafeRawBufferPointer?
    }

    /// The stamp the cluster at `start` has in `transaction`'s snapshot:
    /// its stamp part's, or its tail's when it has none (one lookup each:
    /// a cursor's search costs more than both for a cluster without a tail).
    static func stamp(_ table: ClusterTable, _ start: UInt64, in transaction: Transaction) throws -> UInt64? {
        let part = try ClusterTable.withKey(start, part: ClusterTable.stampPart) { key in
            try transaction.withValue(in: table.table, key: key) { stamp($0) }
        }
        if let part { return part }
        return try ClusterTable.withKey(start, part: ClusterTable.tailPart) { key in
            try transaction.withValue(in: table.table, key: key) { $0.flatMap(ClusterTail.stamp) }
        }
    }

    /// The stamp a stamp part holds (its first eight bytes); nil when it holds none.
    static func stamp(_ bytes: UnsafeRawBufferPointer?) -> UInt64? {
        guard let bytes, bytes.count >= 8 else { return nil }
        return UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    /// `bytes` where the view can keep them for as long as the cluster is
    /// not written: a part in overflow pages stays put (a write elsewhere
    /// copies B-tree leaves, not the overflow pages they point to), so it is
    /// read in place; a part small enough to lie inside a leaf (up to about
    /// 2 KiB: a bool or Int8 column of 500 objects) moves whenever a
    /// neighbour's write copies the leaf, and its old page may be reused
    /// once the snapshot is released, so it is copied. A view then stays
    /// good in later snapshots until its own cluster is written
    /// (``ClusterViewCache/carry(_:mapStart:in:)``), with nothing to check.
    static func settled(
        _ bytes: UnsafeRawBufferPointer, pageSize: Int, isSealed: Bool, into owned: inout [UnsafeMutableRawBufferPointer]
    ) -> UnsafeRawBufferPointer {
        // (An encrypted table's parts are opened into copies already.)
        guard !isSealed, let base = bytes.baseAddress, UInt(bitPattern: base) % UInt(pageSize) != 16 else { return bytes }
        return copy(bytes, into: &owned)
    }

    /// A copy of `bytes` the view owns (kept in `owned`, freed with the view).
    static func copy(_ bytes: UnsafeRawBufferPointer, into owned: inout [UnsafeMutableRawBufferPointer])
        -> UnsafeRawBufferPointer
    {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        copy.copyMemory(from: bytes)
        owned.append(copy)
        return UnsafeRawBufferPointer(rebasing: copy[0..<bytes.count])
    }

    /// One stored part of a cluster (0 = keys, 1 + column), in place or, for
    /// an encrypted table, opened into a copy kept in `owned`.
    static func part(
        _ table: ClusterTable, _ start: UInt64, _ part: Int, _ transaction: Transaction,
        _ owned: inout [UnsafeMutableRawBufferPointer]
    ) throws -> UnsafeRawBufferPointer? {
        try ClusterTable.withKey(start, part: part) { key in
            try transaction.withValue(in: table.table, key: key) { bytes -> UnsafeRawBufferPointer? in
                guard let bytes else { return nil }
                guard table.table.isSealed else { return bytes }
                return copy(bytes, into: &owned)
            }
        }
    }
}
