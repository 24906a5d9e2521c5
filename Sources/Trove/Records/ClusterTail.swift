import TroveStorage

/// The objects appended to a cluster since its keys part was written, and
/// every column's patch, in one stored value (part ``ClusterTable/tailPart``):
/// a commit that appends an object writes this part alone, not the keys
/// part, a part per column and the stamp.
///
/// Stored as `[u64 stamp][u16 m][m u64 keys][u16 columns][columns + 1 u32 offsets]`
/// and then each column's ``ColumnPatch`` (from its offset to the next; an
/// empty one: the column has no patch). The stamp is the cluster's (a
/// cluster with a tail has no stamp part). The keys follow the keys part's,
/// ascending; the patches are of the whole cluster (the keys part's and
/// the tail's slots), as patch parts are. A cluster with a tail has no
/// patch part: the tail holds them all. All integers are little-endian.
struct ClusterTail {
    /// The appended keys' bytes (`count` u64 values).
    let keyBytes: UnsafeRawBufferPointer
    let count: Int
    private let bytes: UnsafeRawBufferPointer
    private let offsetsStart: Int
    private let columnCount: Int

    /// Reads a tail of a layout with `columnCount` columns (nil: any, for a
    /// reader of keys alone); nil when it is damaged (too short, more
    /// columns than the layout's, offsets out of order or outside it). A
    /// tail written before properties were added has fewer: those columns
    /// have no patch. The patches are checked when read (``ColumnPatch``),
    /// the keys by the reader.
    init?(_ bytes: UnsafeRawBufferPointer, columnCount: Int?) {
        guard bytes.count >= 10 else { return nil }
        let count = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
        let columnsAt = 10 + 8 * count
        guard count > 0, bytes.count >= columnsAt + 2 else { return nil }
        let columns = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: columnsAt, as: UInt16.self)))
        let offsetsStart = columnsAt + 2
        let patchesStart = offsetsStart + 4 * (columns + 1)
        guard columnCount.map({ columns <= $0 }) ?? true, bytes.count >= patchesStart else { return nil }
        var previous = 0
        for column in 0...columns {
            let offset = Int(
                UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offsetsStart + 4 * column, as: UInt32.self)))
            guard offset >= previous else { return nil }
            previous = offset
        }
        guard patchesStart + previous == bytes.count else { return nil }
        self.bytes = bytes
        self.count = count
        self.columnCount = columns
        self.offsetsStart = offsetsStart
        keyBytes = UnsafeRawBufferPointer(rebasing: bytes[10..<columnsAt])
    }

    /// The stamp of the cluster stored in a tail's bytes (nil: too short to hold one).
    static func stamp(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= 8 else { return nil }
        return UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    /// The appended key at `index`.
    func key(_ index: Int) -> UInt64 {
        UInt64(littleEndian: keyBytes.loadUnaligned(fromByteOffset: 8 * index, as: UInt64.self))
    }

    /// The stored patch of `column` (``ColumnPatch``'s encoding); nil when it has none.
    func patch(_ column: Int) -> UnsafeRawBufferPointer? {
        guard column < columnCount else { return nil }
        let start = offset(column)
        let end = offset(column + 1)
        guard end > start else { return nil }
        let base = offsetsStart + 4 * (columnCount + 1)
        return UnsafeRawBufferPointer(rebasing: bytes[(base + start)..<(base + end)])
    }

    private func offset(_ column: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offsetsStart + 4 * column, as: UInt32.self)))
    }

    /// The keys part's keys (`stored`, a keys column) followed by the tail's,
    /// encoded as one keys column (the memory is the caller's); nil when the
    /// tail's keys are not ascending or not past the stored ones, or there
    /// would be more than a cluster holds.
    func keys(after stored: ClusterColumn) -> UnsafeMutableRawBufferPointer? {
        let total = stored.count + count
        guard total <= 0x7FFF else { return nil }
        var previous: UInt64? =
            stored.count == 0
            ? nil
            : UInt64(
                littleEndian: stored.bytes.loadUnaligned(
                    fromByteOffset: stored.dataStart + 8 * (stored.count - 1), as: UInt64.self))
        for index in 0..<count {
            let key = key(index)
            if let previous, key <= previous { return nil }
            previous = key
        }
        let merged = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 + 8 * total, alignment: 8)
        merged.storeBytes(of: UInt16(total).littleEndian, as: UInt16.self)
        let base = merged.baseAddress.unsafelyUnwrapped
        if stored.count > 0 {
            (base + 2).copyMemory(
                from: stored.bytes.baseAddress.unsafelyUnwrapped + stored.dataStart, byteCount: 8 * stored.count)
        }
        (base + 2 + 8 * stored.count).copyMemory(from: keyBytes.baseAddress.unsafelyUnwrapped, byteCount: 8 * count)
        return merged
    }

    /// Encodes a tail with `stamp`, `keys` (at least one) and each column's
    /// patch, appended by `patch` to the bytes given (none: the column has
    /// none); `capacity`: the bytes to make room for at once.
    static func encode(
        stamp: UInt64, keys: ArraySlice<UInt64>, columns: Int, capacity: Int, patch: (Int, inout [UInt8]) throws -> Void
    ) rethrows -> [UInt8] {
        precondition(!keys.isEmpty && keys.count <= 0x7FFF, "Trove: a cluster tail holds 1 to 32,767 objects")
        let offsetsStart = 10 + 8 * keys.count + 2
        let patchesStart = offsetsStart + 4 * (columns + 1)
        // (Room for the patches at once: growing it column by column copied it each time.)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(max(capacity, patchesStart))
        encoded.append(filledWith: 0, count: patchesStart)
        encoded.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: stamp.littleEndian, as: UInt64.self)
            raw.storeBytes(of: UInt16(keys.count).littleEndian, toByteOffset: 8, as: UInt16.self)
            for (index, key) in keys.enumerated() {
                raw.storeBytes(of: key.littleEndian, toByteOffset: 10 + 8 * index, as: UInt64.self)
            }
            raw.storeBytes(of: UInt16(columns).littleEndian, toByteOffset: 10 + 8 * keys.count, as: UInt16.self)
        }
        for column in 0..<columns {
            try patch(column, &encoded)
            let end = UInt32(encoded.count - patchesStart).littleEndian
            encoded.withUnsafeMutableBytes {
                $0.storeBytes(of: end, toByteOffset: offsetsStart + 4 * (column + 1), as: UInt32.self)
            }
        }
        return encoded
    }
}
