import TroveStorage

/// A few changed values of one stored cluster column, kept beside it
/// (part ``ClusterTable/patchPart(_:)``) instead of rewriting the column:
/// readers see the column with these values in their slots
/// (``ClusterColumn/patched(with:count:)``). The stored column may be
/// shorter than the cluster's keys (objects appended since it was
/// written): the patch then holds a value for every slot past its end.
///
/// Stored as `[u16 count n][n u16 slots, ascending]` and then the `n`
/// values as a ``ClusterColumn`` of the column's type. All integers are
/// little-endian.
struct ColumnPatch {
    /// The slots whose values the patch holds, ascending.
    let slots: [Int]
    /// Their values, in the same order (pointing into the patch's bytes).
    let values: ClusterColumn

    /// Reads a patch of a column of `count` slots whose stored part holds
    /// the first `stored` (at most `count`; nil: all of them); nil when it
    /// is damaged (slots not ascending or past the column, a slot past the
    /// stored part missing, values pointing outside the patch, or,
    /// `checkingValues`, text that is not UTF-8 or a damaged mixed value:
    /// ``Database/verify()`` checks them, readers do not). Never traps.
    init?(
        _ bytes: UnsafeRawBufferPointer, type: PropertyType, count: Int, stored: Int? = nil, checkingValues: Bool = false
    ) {
        let stored = stored ?? count
        guard bytes.count >= 2, stored <= count else { return nil }
        let n = Int(UInt16(littleEndian: bytes.loadUnaligned(as: UInt16.self)))
        let valuesStart = 2 + 2 * n
        guard n > 0, bytes.count >= valuesStart else { return nil }
        var slots: [Int] = []
        slots.reserveCapacity(n)
        for index in 0..<n {
            let slot = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 2 + 2 * index, as: UInt16.self)))
            guard slot < count, slots.last.map({ slot > $0 }) ?? true else { return nil }
            slots.append(slot)
        }
        // (Ascending and below `count`: the slots past the stored part are all there when the last
        // `appended` slots are past it and the one before them is not.)
        let appended = count - stored
        guard appended <= n, appended == 0 || slots[n - appended] >= stored, appended == n || slots[n - 1 - appended] < stored
        else { return nil }
        let valueBytes = UnsafeRawBufferPointer(rebasing: bytes[valuesStart...])
        guard let values = ClusterColumn(valueBytes, type: type), values.count == n, values.offsetsAreSound else {
            return nil
        }
        if checkingValues {
            guard ClusterColumn.damagedSlots(in: valueBytes, type: type, count: n)?.isEmpty == true else { return nil }
        }
        self.slots = slots
        self.values = values
    }

    /// The stored patch of `slots` (ascending, at least one) holding their
    /// values in `buffer`, encoded straight from its bytes (no value is
    /// decoded: a single-object commit writes its patch in a few hundred instructions).
    static func encode(slots: [Int], from buffer: ColumnBuffer) -> [UInt8] {
        var encoded: [UInt8] = []
        buffer.appendPatch(of: slots, inOrder: false, to: &encoded)
        return encoded
    }

    /// ``encode(slots:from:)`` appended to `encoded` (a cluster's tail holds every column's patch).
    static func append(slots: [Int], from buffer: ColumnBuffer, to encoded: inout [UInt8]) {
        buffer.appendPatch(of: slots, inOrder: false, to: &encoded)
    }

    /// The stored patch of `slots` (ascending, at least one) whose values
    /// are `values`' first ones, in the same order.
    static func encode(slots: [Int], inOrder values: ColumnBuffer) -> [UInt8] {
        var encoded: [UInt8] = []
        append(slots: slots, inOrder: values, to: &encoded)
        return encoded
    }

    /// ``encode(slots:inOrder:)`` appended to `encoded`.
    static func append(slots: [Int], inOrder values: ColumnBuffer, to encoded: inout [UInt8]) {
        precondition(values.count >= slots.count, "Trove: a column patch has a value for each slot")
        values.appendPatch(of: slots, inOrder: true, to: &encoded)
    }

    /// The stored patch of `slots` (ascending, at least one) holding `value(slot)` for each.
    static func encode(slots: [Int], type: PropertyType, value: (Int) throws -> StoredValue) rethrows -> [UInt8] {
        precondition(!slots.isEmpty && slots.count <= 0x7FFF, "Trove: a column patch holds 1 to 32,767 values")
        var encoded = [UInt8](filledWith: 0, count: 2 + 2 * slots.count)
        encoded.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt16(slots.count).littleEndian, as: UInt16.self)
            for (index, slot) in slots.enumerated() {
                raw.storeBytes(of: UInt16(slot).littleEndian, toByteOffset: 2 + 2 * index, as: UInt16.self)
            }
        }
        encoded += ClusterColumn.encode(try slots.map(value), type: type)
        return encoded
    }
}

extension ClusterColumn {
    /// Whether every offset of a String, Data, Decimal or Mixed column lies
    /// inside it and after the previous one (a fixed-size column's slots
    /// were checked when it was read): its values' bytes then read without trapping.
    var offsetsAreSound: Bool {
        guard type.isVariableSize else { return true }
        let heapStart = dataStart + 4 * (count + 1)
        var previous = 0
        for slot in 0...count {
            let offset = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: dataStart + 4 * slot, as: UInt32.self)))
            guard offset >= previous else { return false }
            previous = offset
        }
        return heapStart + previous <= bytes.count
    }

    /// This column's encoding with `patch`'s values in their slots, in one
    /// pass: runs of unpatched slots (and their bytes) are copied at once.
    /// `total` (at least this column's count; nil: the same) is the count of
    /// the result: the patch holds the values of the slots past this
    /// column's end (``ColumnPatch/init(_:type:count:stored:checkingValues:)``
    /// checked that). Nil when an offset of the column points outside it or
    /// before the previous one (never traps). The caller owns the memory returned.
    func patched(with patch: ColumnPatch, count total: Int? = nil) -> UnsafeMutableRawBufferPointer? {
        let total = total ?? count
        precondition(total >= count, "Trove: a patched column is never shorter than its stored part")
        let values = patch.values
        var patchedNulls: [Bool] = []
        var anyNull = false
        if hasNulls || values.hasNulls {
            // (Only then: whether any slot is nil after the patch decides the bitmap.)
            patchedNulls = (0..<patch.slots.count).map { values.isNull($0) }
            var index = 0
            for slot in 0..<total {
                if index < patch.slots.count, patch.slots[index] == slot {
                    anyNull = anyNull || patchedNulls[index]
                    index += 1
                } else if slot < count, isNull(slot) {
                    anyNull = true
                }
            }
        }
        let newDataStart = 2 + (anyNull ? RecordLayout.bitmapSize(total) : 0)
        let source = bytes.baseAddress.unsafelyUnwrapped
        if !type.isVariableSize {
            let width = type.slotWidth
            let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: newDataStart + total * width, alignment: 8)
            let target = raw.baseAddress.unsafelyUnwrapped
            (target + newDataStart).copyMemory(from: source + dataStart, byteCount: count * width)
            for (index, slot) in patch.slots.enumerated() {
                (target + newDataStart + slot * width).copyMemory(
                    from: values.bytes.baseAddress.unsafelyUnwrapped + values.slotOffset(index, width: width),
                    byteCount: width)
            }
            writeHeader(raw, total: total, anyNull: anyNull, patch: patch, patchedNulls: patchedNulls)
            return raw
        }
        @inline(__always) func offset(_ slot: Int) -> Int {
            Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: dataStart &+ 4 &* slot, as: UInt32.self)))
        }
        let heapStart = dataStart + 4 * (count + 1)
        guard offsetsAreSound else { return nil }
        var heapBytes = offset(count) - offset(0)
        for (index, slot) in patch.slots.enumerated() {
            heapBytes += values.variableLength(index) - (slot < count ? offset(slot + 1) - offset(slot) : 0)
        }
        let newHeapStart = newDataStart + 4 * (total + 1)
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: newHeapStart + heapBytes, alignment: 8)
        let target = raw.baseAddress.unsafelyUnwrapped
        var written = 0
        var slot = 0
        func copyBase(upTo end: Int) {
            // Slots `slot..<end` unpatched: their bytes lie side by side in the base heap.
            guard slot < end else { return }
            let (first, last) = (offset(slot), offset(end))
            for each in slot..<end {
                raw.storeBytes(
                    of: UInt32(written + offset(each) - first).littleEndian, toByteOffset: newDataStart + 4 * each,
                    as: UInt32.self)
            }
            (target + newHeapStart + written).copyMemory(from: source + heapStart + first, byteCount: last - first)
            written += last - first
            slot = end
        }
        for (index, patchedSlot) in patch.slots.enumerated() {
            copyBase(upTo: min(patchedSlot, count))
            let value = values.variableBytes(index)
            raw.storeBytes(of: UInt32(written).littleEndian, toByteOffset: newDataStart + 4 * patchedSlot, as: UInt32.self)
            if !value.isEmpty {
                (target + newHeapStart + written).copyMemory(from: value.baseAddress.unsafelyUnwrapped, byteCount: value.count)
            }
            written += value.count
            slot = patchedSlot + 1
        }
        copyBase(upTo: count)
        raw.storeBytes(of: UInt32(written).littleEndian, toByteOffset: newDataStart + 4 * total, as: UInt32.self)
        writeHeader(raw, total: total, anyNull: anyNull, patch: patch, patchedNulls: patchedNulls)
        return raw
    }

    /// The count (with the null flag) and the null bitmap of a patched copy of this column, `total` slots long.
    private func writeHeader(
        _ raw: UnsafeMutableRawBufferPointer, total: Int, anyNull: Bool, patch: ColumnPatch, patchedNulls: [Bool]
    ) {
        raw.storeBytes(of: (UInt16(total) | (anyNull ? 0x8000 : 0)).littleEndian, as: UInt16.self)
        guard anyNull else { return }
        let bitmap = RecordLayout.bitmapSize(total)
        raw.baseAddress.unsafelyUnwrapped.advanced(by: 2).initializeMemory(as: UInt8.self, repeating: 0, count: bitmap)
        if hasNulls {
            raw.baseAddress.unsafelyUnwrapped.advanced(by: 2).copyMemory(
                from: bytes.baseAddress.unsafelyUnwrapped + 2, byteCount: RecordLayout.bitmapSize(count))
        }
        for (index, slot) in patch.slots.enumerated() {
            if patchedNulls[index] {
                raw[2 + slot / 8] |= 1 << UInt8(slot % 8)
            } else {
                raw[2 + slot / 8] &= ~(1 << UInt8(slot % 8))
            }
        }
    }
}
