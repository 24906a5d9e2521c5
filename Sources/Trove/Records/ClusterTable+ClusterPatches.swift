import TroveStorage

/// A cluster's patches and tail as a write stores them (``ColumnPatch``,
/// ``ClusterTail``): encoded from the slots each column noted, or a tail
/// extended by the objects appended since it was last written.
extension ClusterTable.Cluster {
    /// The patch to store for a changed `column` instead of the column
    /// (``ColumnPatch``), or nil when the column is to be written whole:
    /// its stored part is smaller than `minimum` bytes, its slots moved,
    /// or the patch would exceed `1 / share` of the part.
    func patch(_ column: Int, _ layout: RecordLayout, minimum: Int, share: Int) throws -> [UInt8]? {
        guard !slotsMoved, let slots = patchSlots[column], !slots.isEmpty, storedBytes[column] >= minimum,
            slots.count * 2 * share <= storedBytes[column]
        else { return nil }
        let sorted = Self.ascending(slots)
        guard sorted.count * 2 * share <= storedBytes[column] else { return nil }
        var patch: [UInt8] = []
        try appendPatch(column, slots: sorted, layout, to: &patch)
        return patch.count * share <= storedBytes[column] ? patch : nil
    }

    /// The cluster's tail (``ClusterTail``): the keys after the stored
    /// keys part's and every column's patch, in the cluster's memory for
    /// the next tail (``nextTailMemory(_:)``, valid until the next call);
    /// nil when a column cannot be patched (it changed whole) or the tail
    /// would exceed `maximum` bytes.
    func tail(_ layout: RecordLayout, stamp: UInt64, maximum: Int) throws -> UnsafeRawBufferPointer? {
        guard !slotsMoved, storedKeyCount > 0, keys.count > storedKeyCount || tailStored,
            8 * (keys.count - storedKeyCount) < maximum
        else { return nil }
        for column in 0..<layout.columnCount where layout.inRecord[column] {
            let isPending = !pending.isEmpty && pending[column] != nil
            // (A column the write has not read: its stored patch is read to be written again.)
            if !isPending, let source, source.unread[column], patchStored[column] { try read(column) }
            let unread = !isPending && source?.unread[column] == true
            guard unread || patchSlots[column] != nil else { return nil }
        }
        // Only objects appended since the last tail: its bytes, with theirs after each column's patch.
        if let lastTail, let previous = ClusterTail(lastTail, columnCount: layout.columnCount) {
            switch extendedTail(previous, appended: lastTailKeyCount..<keys.count, stamp: stamp, layout, maximum: maximum) {
            case .tail(let tail):
                #if DEBUG
                    let fresh = try encodedTail(layout, stamp: stamp, maximum: nil)
                    precondition(fresh == Array(tail), "Trove: an extended cluster tail differs from the one encoded afresh")
                #endif
                return tail
            case .tooLarge: return nil
            case .unavailable: break
            }
        }
        guard let encoded = try encodedTail(layout, stamp: stamp, maximum: maximum) else { return nil }
        let memory = nextTailMemory(encoded.count)
        encoded.withUnsafeBytes { memory.copyMemory(from: $0) }
        return UnsafeRawBufferPointer(memory)
    }

    /// The cluster's tail encoded from every column's patch slots; nil
    /// when it would exceed `maximum` bytes (nil: no limit).
    private func encodedTail(_ layout: RecordLayout, stamp: UInt64, maximum: Int?) throws -> [UInt8]? {
        var fits = true
        let tail = try ClusterTail.encode(
            stamp: stamp, keys: keys[storedKeyCount...], columns: layout.columnCount, capacity: (maximum ?? 0) + 256
        ) { column, encoded in
            guard fits, layout.inRecord[column], let slots = patchSlots[column], !slots.isEmpty else { return }
            try appendPatch(column, slots: Self.ascending(slots), layout, to: &encoded)
            if let maximum, encoded.count > maximum { fits = false }
        }
        return fits ? tail : nil
    }

    private enum Extension {
        case tail(UnsafeRawBufferPointer)
        case tooLarge
        /// A column is neither pending nor a buffer (or the last tail does not read): encoded afresh.
        case unavailable
    }

    /// The tail last written (`previous`) with the objects of the
    /// `appended` slots after its own, sized first and written into the
    /// memory for the next tail: a commit that appends an object writes its
    /// cluster's tail again, and growing it column by column cost most of
    /// the commit's encoding.
    private func extendedTail(
        _ previous: ClusterTail, appended: Range<Int>, stamp: UInt64, _ layout: RecordLayout, maximum: Int
    ) -> Extension {
        let columns = layout.columnCount
        let keyCount = keys.count - storedKeyCount
        let offsetsStart = 10 + 8 * keyCount + 2
        let patchesStart = offsetsStart + 4 * (columns + 1)
        // (Unretained: the buffers are the cluster's, and a trivial type costs no destroy through metadata.)
        typealias Source = (
            buffer: Unmanaged<ColumnBuffer>?, places: Range<Int>, size: Int, patch: UnsafeRawBufferPointer?
        )
        return withUnsafeTemporaryAllocation(of: Source.self, capacity: columns) { sources in
            sources.baseAddress.unsafelyUnwrapped.initialize(repeating: (nil, 0..<0, 0, nil), count: columns)
            var total = patchesStart
            for column in 0..<columns {
                guard layout.inRecord[column], patchSlots[column]?.isEmpty == false else { continue }
                let buffer: Unmanaged<ColumnBuffer>
                let places: Range<Int>
                if let values = pendingValues(column) {
                    // (Pending values are in slot order: the appended ones last.)
                    buffer = values
                    let count = values._withUnsafeGuaranteedRef { $0.count }
                    places = (count - appended.count)..<count
                } else if let columnBuffer = unretainedBuffer(column) {
                    buffer = columnBuffer
                    places = appended
                } else {
                    return .unavailable
                }
                let patch = previous.patch(column)
                let size = buffer._withUnsafeGuaranteedRef { $0.patchSize(extending: patch, places: places) }
                sources[column] = (buffer, places, size, patch)
                total += size
            }
            guard total <= maximum else { return .tooLarge }
            let tail = nextTailMemory(total)
            do {
                let base = tail.baseAddress.unsafelyUnwrapped
                base.storeBytes(of: stamp.littleEndian, as: UInt64.self)
                base.storeBytes(of: UInt16(keyCount).littleEndian, toByteOffset: 8, as: UInt16.self)
                for index in 0..<keyCount {
                    base.storeBytes(
                        of: keys[storedKeyCount + index].littleEndian, toByteOffset: 10 + 8 * index, as: UInt64.self)
                }
                base.storeBytes(of: UInt16(columns).littleEndian, toByteOffset: 10 + 8 * keyCount, as: UInt16.self)
                var offset = 0
                base.storeBytes(of: UInt32(0), toByteOffset: offsetsStart, as: UInt32.self)
                for column in 0..<columns {
                    let source = sources[column]
                    if let buffer = source.buffer, source.size > 0 {
                        buffer._withUnsafeGuaranteedRef {
                            $0.writePatch(
                                extending: source.patch, slots: appended, places: source.places,
                                to: base + (patchesStart + offset))
                        }
                        offset += source.size
                    }
                    base.storeBytes(
                        of: UInt32(offset).littleEndian, toByteOffset: offsetsStart + 4 * (column + 1), as: UInt32.self)
                }
            }
            return .tail(UnsafeRawBufferPointer(tail))
        }
    }

    /// `slots` ascending, each once.
    @inline(__always)
    private static func ascending(_ slots: [Int]) -> [Int] {
        var sorted = slots
        var ascending = true
        for index in 1..<max(slots.count, 1) where slots[index - 1] >= slots[index] {
            ascending = false
            break
        }
        if !ascending {
            // (Appended objects' slots come in order: only set ones need sorting.)
            sorted.sort()
            var unique = 0
            for slot in sorted where unique == 0 || sorted[unique - 1] != slot {
                sorted[unique] = slot
                unique += 1
            }
            sorted.removeLast(sorted.count - unique)
        }
        return sorted
    }

    /// Appends the patch of `column` holding `slots` (ascending) to `encoded`.
    private func appendPatch(_ column: Int, slots: [Int], _ layout: RecordLayout, to encoded: inout [UInt8]) throws {
        if !pending.isEmpty, let pending = pending[column] {
            // (Only appends changed it: the slots are the stored patch's and the appended ones, in order.)
            ColumnPatch.append(slots: slots, inOrder: pending.values, to: &encoded)
        } else if let buffer = buffers[column] {
            ColumnPatch.append(slots: slots, from: buffer, to: &encoded)
        } else {
            encoded += try ColumnPatch.encode(slots: slots, type: layout.types[column]) { try value($0, column, layout) }
        }
    }
}
