import Foundation
import TroveStorage

/// One cluster column as a write changes it: the stored encoding
/// (``ClusterColumn``) kept open for edits. Fixed-size values sit in their
/// slots, variable-size ones in a heap behind a span (start, length) per
/// slot, nils in a flag per slot. Inserting, removing or changing a value
/// edits bytes; nothing is decoded into ``StoredValue``s. A removed or
/// replaced variable-size value leaves its bytes in the heap (moving the
/// heap per removal cost most of a scattered delete): ``encoded()`` writes
/// the live values only, and the heap is compacted when it is mostly dead.
///
/// Values must already fit the column (the record writer checked them).
final class ColumnBuffer {
    let type: PropertyType
    /// Slot width of a fixed-size type; 0 for String, Data, Decimal and Mixed.
    let width: Int
    @exclusivity(unchecked) private(set) var count = 0
    /// Fixed-size slots (`count * width` bytes), or the variable-size values' bytes.
    @exclusivity(unchecked) private var bytes: [UInt8] = []
    /// Variable-size types: where each slot's value lies in ``bytes``.
    @exclusivity(unchecked) private var spans: [Span] = []
    /// Variable-size types: heap bytes no span points at.
    @exclusivity(unchecked) private var deadBytes = 0

    private struct Span {
        var start: UInt32
        var length: UInt32
    }
    @exclusivity(unchecked) private var nulls: [Bool] = []
    @exclusivity(unchecked) private var nullCount = 0

    init(type: PropertyType) {
        self.type = type
        width = type.isVariableSize ? 0 : type.slotWidth
    }

    /// A copy of a stored column, ready for edits, with room for a few
    /// more values (a write that appends one object per commit copies the
    /// column once, and the append grows nothing). Bytes are copied at
    /// once; only a variable-size column's offsets are read one by one,
    /// each checked (a damaged column traps, as a read of it would).
    convenience init(_ column: ClusterColumn) {
        self.init(type: column.type)
        if let slot = fill(from: column) { ClusterColumn.damaged(type, slot) }
    }

    /// A copy of a stored column as ``init(_:)`` makes, or nil when one of
    /// its offsets points outside it or before the previous one (a damaged
    /// column the caller reports instead of trapping on).
    static func copying(_ column: ClusterColumn) -> ColumnBuffer? {
        let buffer = ColumnBuffer(type: column.type)
        return buffer.fill(from: column) == nil ? buffer : nil
    }

    /// Fills an empty buffer with `column`'s values; the first damaged slot, if any.
    private func fill(from column: ClusterColumn) -> Int? {
        let count = column.count
        self.count = count
        let room = count + 8
        nulls = [Bool](allocatingCapacity: room, filler: false) { buffer, initialized in
            if column.hasNulls {
                for slot in 0..<count { buffer[slot] = column.isNull(slot) }
            } else {
                buffer.baseAddress.unsafelyUnwrapped.initialize(repeating: false, count: count)
            }
            initialized = count
        }
        if column.hasNulls { nullCount = nulls.count { $0 } }
        let source = column.bytes.baseAddress.unsafelyUnwrapped
        if width > 0 {
            let start = column.slotOffset(0, width: width)
            bytes = [UInt8](allocatingCapacity: room * width, filler: 0) { buffer, initialized in
                UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped).copyMemory(
                    from: source + start, byteCount: count * width)
                initialized = count * width
            }
            return nil
        }
        let heapStart = column.dataStart + 4 * (count + 1)
        var previous = UInt32(littleEndian: column.bytes.loadUnaligned(fromByteOffset: column.dataStart, as: UInt32.self))
        guard heapStart + Int(previous) <= column.bytes.count else { return 0 }
        var damaged: Int?
        spans = [Span](allocatingCapacity: room, filler: Span(start: 0, length: 0)) { buffer, initialized in
            for slot in 0..<count {
                let end = UInt32(
                    littleEndian: column.bytes.loadUnaligned(fromByteOffset: column.dataStart + 4 * (slot + 1), as: UInt32.self))
                guard end >= previous, heapStart + Int(end) <= column.bytes.count else {
                    damaged = slot
                    break
                }
                buffer[slot] = Span(start: previous, length: end - previous)
                previous = end
                initialized = slot + 1
            }
        }
        if let damaged { return damaged }
        let heapCount = Int(previous)
        bytes = [UInt8](allocatingCapacity: heapCount + max(256, heapCount / 32), filler: 0) { buffer, initialized in
            UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped).copyMemory(
                from: source + heapStart, byteCount: heapCount)
            initialized = heapCount
        }
        return nil
    }

    /// `count` copies of `value` (a column the cluster predates, read as its default).
    convenience init(type: PropertyType, repeating value: StoredValue, count: Int) {
        self.init(type: type)
        for _ in 0..<count { append(value) }
    }

    // MARK: Reading

    @inline(__always)
    func isNull(_ slot: Int) -> Bool { nullCount > 0 && nulls[slot] }

    func value(_ slot: Int) -> StoredValue {
        if isNull(slot) { return .null }
        return bytes.withUnsafeBytes { raw in
            if width > 0 { return RecordReader.fixedValue(type, in: raw, at: slot * width) }
            return RecordReader.variableValue(type, rawValue(slot, raw)) ?? .null
        }
    }

    @inline(__always)
    private func rawValue(_ slot: Int, _ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let span = spans[slot]
        return UnsafeRawBufferPointer(rebasing: raw[Int(span.start)..<Int(span.start + span.length)])
    }

    /// Calls `body` with the slot's stored bytes (its fixed-size slot, or its variable-size value).
    @inline(__always)
    func withSlotBytes<R>(_ slot: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            if width > 0 { return body(UnsafeRawBufferPointer(rebasing: raw[(slot * width)..<(slot * width + width)])) }
            return body(rawValue(slot, raw))
        }
    }

    // MARK: Changing

    func append(_ value: StoredValue) { insert(value, at: count) }

    func insert(_ value: StoredValue, at slot: Int) {
        let isNull = value.isNull
        if isNull { nullCount += 1 }
        if slot == count {
            // Appends (inserts in key order) grow the arrays at their ends.
            nulls.append(isNull)
            if width > 0 {
                if isNull || !appendFixed(value) {
                    // (A slice of an array appends with one copy; `repeatElement` appended byte by byte.)
                    bytes.append(contentsOf: Self.zeros[0..<width])
                    if !isNull { store(value, at: slot) }
                }
            } else {
                spans.append(appendToHeap(isNull ? nil : value))
            }
            count += 1
            return
        }
        nulls.insert(isNull, at: slot)
        if width > 0 {
            bytes.insert(contentsOf: repeatElement(0, count: width), at: slot * width)
            if !isNull { store(value, at: slot) }
        } else {
            spans.insert(appendToHeap(isNull ? nil : value), at: slot)
        }
        count += 1
    }

    /// Appends the slot of a number, bool or date the way the record
    /// encoding stores it (bulk inserts append); false for other types.
    @inline(__always)
    private func appendFixed(_ value: StoredValue) -> Bool {
        func append<T: FixedWidthInteger>(_ stored: T) {
            withUnsafeBytes(of: stored.littleEndian) { bytes.append(contentsOf: $0) }
        }
        switch (type, value) {
        case (.int, .int(let v)), (.link, .int(let v)): append(UInt64(bitPattern: v))
        // A narrow value out of range takes the general path, which traps.
        case (.int32, .int(let v)) where Int32(exactly: v) != nil: append(UInt32(truncatingIfNeeded: v))
        case (.int16, .int(let v)) where Int16(exactly: v) != nil: append(UInt16(truncatingIfNeeded: v))
        case (.int8, .int(let v)) where Int8(exactly: v) != nil: bytes.append(UInt8(truncatingIfNeeded: v))
        case (.bool, .bool(let v)): bytes.append(v ? 1 : 0)
        case (.double, .double(let v)): append(v.bitPattern)
        case (.float, .float(let v)): append(v.bitPattern)
        case (.date, .date(let v)): append(v.timeIntervalSinceReferenceDate.bitPattern)
        default: return false
        }
        return true
    }

    /// The heap's size, live and dead bytes (variable-size types).
    var heapSize: Int { width == 0 ? bytes.count : 0 }

    /// Adds a value's bytes at the heap's end (none for nil) and says where they are.
    private func appendToHeap(_ value: StoredValue?) -> Span {
        let start = bytes.count
        if let value { Self.appendVariable(value, type, to: &bytes) }
        return Span(start: UInt32(start), length: UInt32(bytes.count - start))
    }

    /// Rewrites the heap with the live values only, once most of it is dead.
    private func compactHeapIfMostlyDead() {
        guard deadBytes > 4_096, deadBytes * 2 > bytes.count else { return }
        var heap: [UInt8] = []
        heap.reserveCapacity(bytes.count - deadBytes)
        bytes.withUnsafeBytes { raw in
            for slot in spans.indices {
                let start = heap.count
                heap.append(contentsOf: rawValue(slot, raw))
                spans[slot].start = UInt32(start)
            }
        }
        bytes = heap
        deadBytes = 0
    }

    func remove(at slot: Int) {
        if nulls.remove(at: slot) { nullCount -= 1 }
        if width > 0 {
            bytes.removeSubrange((slot * width)..<(slot * width + width))
        } else {
            deadBytes += Int(spans.remove(at: slot).length)
            compactHeapIfMostlyDead()
        }
        count -= 1
    }

    /// Removes every slot `marks` flags, in one pass (``count`` marks):
    /// each run of kept slots moves down at once.
    func removeAll(marked marks: [Bool]) {
        var kept = 0
        marks.withUnsafeBufferPointer { marks in
            nulls.withUnsafeMutableBufferPointer { nulls in
                spans.withUnsafeMutableBufferPointer { spans in
                    bytes.withUnsafeMutableBytes { raw in
                        var slot = 0
                        while slot < count {
                            if marks[slot] {
                                if nulls[slot] { nullCount -= 1 }
                                if width == 0 { deadBytes += Int(spans[slot].length) }
                                slot += 1
                                continue
                            }
                            var end = slot + 1
                            while end < count, !marks[end] { end += 1 }
                            let run = end - slot
                            if kept != slot {
                                // (Moving down: the slots written are all below the run.)
                                (nulls.baseAddress! + kept).update(from: nulls.baseAddress! + slot, count: run)
                                if width == 0 {
                                    (spans.baseAddress! + kept).update(from: spans.baseAddress! + slot, count: run)
                                } else {
                                    (raw.baseAddress! + kept * width).copyMemory(
                                        from: raw.baseAddress! + slot * width, byteCount: run * width)
                                }
                            }
                            kept += run
                            slot = end
                        }
                    }
                }
            }
        }
        nulls.removeLast(count - kept)
        if width > 0 {
            bytes.removeLast((count - kept) * width)
        } else {
            spans.removeLast(count - kept)
        }
        count = kept
        if width == 0 { compactHeapIfMostlyDead() }
    }

    /// Replaces the value in `slot`; false when it was already `value`.
    @discardableResult
    func set(_ value: StoredValue, at slot: Int) -> Bool { set(value, replacing: self.value(slot), at: slot) }

    /// ``set(_:at:)`` given the slot's current value, `old`, as read before.
    func set(_ value: StoredValue, replacing old: StoredValue, at slot: Int) -> Bool {
        if old.isStoredIdentically(as: value) { return false }
        let isNull = value.isNull
        if nulls[slot] != isNull {
            nulls[slot] = isNull
            nullCount += isNull ? 1 : -1
        }
        if width > 0 {
            if isNull {
                bytes.withUnsafeMutableBytes { raw in
                    for index in (slot * width)..<(slot * width + width) { raw[index] = 0 }
                }
            } else {
                store(value, at: slot)  // every type's store fills its whole slot
            }
        } else {
            let old = spans[slot]
            let encoded = isNull ? [] : Self.encodeVariable(value, type)
            if encoded.count <= old.length {
                // In place: the old value's tail becomes dead.
                if !encoded.isEmpty {
                    bytes.withUnsafeMutableBytes { raw in
                        encoded.withUnsafeBytes {
                            (raw.baseAddress! + Int(old.start)).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
                        }
                    }
                }
                spans[slot].length = UInt32(encoded.count)
                deadBytes += Int(old.length) - encoded.count
            } else {
                spans[slot] = Span(start: UInt32(bytes.count), length: UInt32(encoded.count))
                bytes.append(contentsOf: encoded)
                deadBytes += Int(old.length)
            }
            compactHeapIfMostlyDead()
        }
        return true
    }

    /// Puts the value `column` holds at `index` into `slot` (an existing
    /// one, or ``count`` to append it), copying its stored bytes: a stored
    /// patch goes into a column without decoding its values.
    func put(from column: ClusterColumn, at index: Int, into slot: Int) {
        let isNull = column.isNull(index)
        let value =
            width > 0
            ? UnsafeRawBufferPointer(
                start: column.bytes.baseAddress.unsafelyUnwrapped + column.slotOffset(index, width: width), count: width)
            : isNull ? UnsafeRawBufferPointer(start: nil, count: 0) : column.variableBytes(index)
        put(value, isNull: isNull, into: slot)
    }

    /// Puts a value's stored bytes (a fixed-size slot, or a variable-size
    /// value; none for nil) into `slot`, or appends them when `slot` is ``count``.
    func put(_ value: UnsafeRawBufferPointer, isNull: Bool, into slot: Int) {
        if slot == count {
            nulls.append(isNull)
            if isNull { nullCount += 1 }
            if width > 0 {
                bytes.append(contentsOf: value)
            } else {
                spans.append(Span(start: UInt32(bytes.count), length: UInt32(value.count)))
                bytes.append(contentsOf: value)
            }
            count += 1
            return
        }
        if nulls[slot] != isNull {
            nulls[slot] = isNull
            nullCount += isNull ? 1 : -1
        }
        if width > 0 {
            bytes.withUnsafeMutableBytes { raw in
                (raw.baseAddress.unsafelyUnwrapped + slot * width).copyMemory(
                    from: value.baseAddress.unsafelyUnwrapped, byteCount: width)
            }
            return
        }
        deadBytes += Int(spans[slot].length)
        spans[slot] = Span(start: UInt32(bytes.count), length: UInt32(value.count))
        bytes.append(contentsOf: value)
        compactHeapIfMostlyDead()
    }

    /// Keeps the first `count` values, moving the rest into a new buffer (a split).
    func split(keeping kept: Int) -> ColumnBuffer {
        let upper = ColumnBuffer(type: type)
        for slot in kept..<count { upper.append(value(slot)) }
        while count > kept { remove(at: count - 1) }
        return upper
    }

    /// Appends the stored patch (``ColumnPatch``) of `slots` (ascending, at
    /// least one) to `encoded`: the value of `slots[index]` is this buffer's
    /// slot `index` when `inOrder`, else its slot `slots[index]`. Values are
    /// copied as stored bytes (a run of fixed-size slots at once), none decoded.
    func appendPatch(of slots: [Int], inOrder: Bool, to encoded: inout [UInt8]) {
        precondition(!slots.isEmpty && slots.count <= 0x7FFF, "Trove: a column patch holds 1 to 32,767 values")
        let count = slots.count
        let first = encoded.count
        slots.withUnsafeBufferPointer { slots in
            @inline(__always) func place(_ index: Int) -> Int { inOrder ? index : slots[index] }
            var anyNull = false
            if nullCount > 0 { for index in 0..<count where nulls[place(index)] { anyNull = true } }
            let valuesStart = 2 &+ 2 &* count
            let dataStart = valuesStart &+ 2 &+ (anyNull ? RecordLayout.bitmapSize(count) : 0)
            var size = dataStart &+ count &* width
            if width == 0 {
                size = dataStart &+ 4 &* (count &+ 1)
                spans.withUnsafeBufferPointer { spans in
                    for index in 0..<count { size &+= Int(spans[place(index)].length) }
                }
            }
            if encoded.isEmpty {
                encoded = [UInt8](filledWith: 0, count: size)
            } else {
                encoded.append(filledWith: 0, count: size)
            }
            // (Fixed-size values of consecutive slots lie side by side: one copy.)
            let run = width > 0 && (inOrder || slots[count &- 1] &- slots[0] == count &- 1)
            encoded.withUnsafeMutableBytes { whole in
                let raw = UnsafeMutableRawBufferPointer(rebasing: whole[first...])
                let base = raw.baseAddress.unsafelyUnwrapped
                raw.storeBytes(of: UInt16(count).littleEndian, as: UInt16.self)
                raw.storeBytes(
                    of: (UInt16(count) | (anyNull ? 0x8000 : 0)).littleEndian, toByteOffset: valuesStart, as: UInt16.self)
                for index in 0..<count {
                    raw.storeBytes(of: UInt16(slots[index]).littleEndian, toByteOffset: 2 &+ 2 &* index, as: UInt16.self)
                }
                if anyNull {
                    for index in 0..<count where nulls[place(index)] {
                        raw[valuesStart &+ 2 &+ index &>> 3] |= 1 &<< UInt8(index & 7)
                    }
                }
                bytes.withUnsafeBytes { source in
                    let from = source.baseAddress
                    if width > 0 {
                        let values = base + dataStart
                        let stored = from.unsafelyUnwrapped
                        if run {
                            values.copyMemory(from: stored + place(0) &* width, byteCount: count &* width)
                        } else {
                            for index in 0..<count {
                                let target = values + index &* width
                                target.copyMemory(from: stored + place(index) &* width, byteCount: width)
                            }
                        }
                        return
                    }
                    let heapStart = dataStart &+ 4 &* (count &+ 1)
                    var written = 0
                    spans.withUnsafeBufferPointer { spans in
                        for index in 0..<count {
                            raw.storeBytes(
                                of: UInt32(written).littleEndian, toByteOffset: dataStart &+ 4 &* index, as: UInt32.self)
                            let span = spans[place(index)]
                            let length = Int(span.length)
                            if length > 0 {
                                (base + (heapStart &+ written)).copyMemory(
                                    from: from.unsafelyUnwrapped + Int(span.start), byteCount: length)
                            }
                            written &+= length
                        }
                    }
                    raw.storeBytes(of: UInt32(written).littleEndian, toByteOffset: dataStart &+ 4 &* count, as: UInt32.self)
                }
            }
        }
    }

    /// The bytes of the stored patch `previous` (one this code wrote; nil:
    /// none) extended with the values of this buffer's slots `places`,
    /// which follow its slots (``writePatch(extending:slots:places:to:)``); 0: no patch.
    func patchSize(extending previous: UnsafeRawBufferPointer?, places: Range<Int>) -> Int {
        let old = previous.map { Int(UInt16(littleEndian: $0.loadUnaligned(as: UInt16.self))) } ?? 0
        let count = old &+ places.count
        guard count > 0 else { return 0 }
        precondition(count <= 0x7FFF, "Trove: a column patch holds 1 to 32,767 values")
        let oldValuesStart = 2 &+ 2 &* old
        let oldHasNulls =
            previous.map { UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: oldValuesStart, as: UInt16.self)) & 0x8000 != 0 }
            ?? false
        let hasNulls = oldHasNulls || newNull(places)
        let dataStart = 2 &+ 2 &* count &+ 2 &+ (hasNulls ? RecordLayout.bitmapSize(count) : 0)
        if width > 0 { return dataStart &+ count &* width }
        var heap = 0
        if let previous {
            let oldDataStart = oldValuesStart &+ 2 &+ (oldHasNulls ? RecordLayout.bitmapSize(old) : 0)
            heap = Int(UInt32(littleEndian: previous.loadUnaligned(fromByteOffset: oldDataStart &+ 4 &* old, as: UInt32.self)))
        }
        spans.withUnsafeBufferPointer { spans in for place in places { heap &+= Int(spans[place].length) } }
        return dataStart &+ 4 &* (count &+ 1) &+ heap
    }

    @inline(__always)
    private func newNull(_ places: Range<Int>) -> Bool {
        guard nullCount > 0 else { return false }
        for place in places where nulls[place] { return true }
        return false
    }

    /// Writes the patch `previous` with the values of `places` after its
    /// own, as the patch's `slots`, at `base`, which has room for
    /// ``patchSize(extending:places:)`` bytes (any contents: every byte is
    /// written). The previous patch's parts are copied at once, not value by value.
    func writePatch(
        extending previous: UnsafeRawBufferPointer?, slots: Range<Int>, places: Range<Int>, to base: UnsafeMutableRawPointer
    ) {
        let old = previous.map { Int(UInt16(littleEndian: $0.loadUnaligned(as: UInt16.self))) } ?? 0
        let added = slots.count
        let count = old &+ added
        let oldValuesStart = 2 &+ 2 &* old
        let oldHasNulls =
            previous.map { UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: oldValuesStart, as: UInt16.self)) & 0x8000 != 0 }
            ?? false
        let oldDataStart = oldValuesStart &+ 2 &+ (oldHasNulls ? RecordLayout.bitmapSize(old) : 0)
        let newNull = newNull(places)
        let hasNulls = oldHasNulls || newNull
        let valuesStart = 2 &+ 2 &* count
        let dataStart = valuesStart &+ 2 &+ (hasNulls ? RecordLayout.bitmapSize(count) : 0)
        let from = previous?.baseAddress
        base.storeBytes(of: UInt16(count).littleEndian, as: UInt16.self)
        if old > 0 { (base + 2).copyMemory(from: from.unsafelyUnwrapped + 2, byteCount: 2 &* old) }
        for (index, slot) in slots.enumerated() {
            base.storeBytes(of: UInt16(slot).littleEndian, toByteOffset: 2 &+ 2 &* (old &+ index), as: UInt16.self)
        }
        base.storeBytes(of: (UInt16(count) | (hasNulls ? 0x8000 : 0)).littleEndian, toByteOffset: valuesStart, as: UInt16.self)
        if hasNulls {
            let bitmap = base + (valuesStart &+ 2)
            bitmap.initializeMemory(as: UInt8.self, repeating: 0, count: RecordLayout.bitmapSize(count))
            if oldHasNulls {
                bitmap.copyMemory(from: from.unsafelyUnwrapped + (oldValuesStart &+ 2), byteCount: RecordLayout.bitmapSize(old))
            }
            if newNull {
                let flags = bitmap.assumingMemoryBound(to: UInt8.self)
                for (index, place) in places.enumerated() where nulls[place] {
                    let bit = old &+ index
                    flags[bit &>> 3] |= 1 &<< UInt8(bit & 7)
                }
            }
        }
        bytes.withUnsafeBytes { source in
            if width > 0 {
                let values = base + dataStart
                if old > 0 { values.copyMemory(from: from.unsafelyUnwrapped + oldDataStart, byteCount: old &* width) }
                if added > 0 {
                    (values + old &* width).copyMemory(
                        from: source.baseAddress.unsafelyUnwrapped + places.lowerBound &* width, byteCount: added &* width)
                }
                return
            }
            let heapStart = dataStart &+ 4 &* (count &+ 1)
            var written = 0
            if old > 0 {
                // The old offsets hold (start at 0, the heap follows them alike), and the old heap.
                written = Int(
                    UInt32(
                        littleEndian: from.unsafelyUnwrapped.loadUnaligned(
                            fromByteOffset: oldDataStart &+ 4 &* old, as: UInt32.self)))
                (base + dataStart).copyMemory(from: from.unsafelyUnwrapped + oldDataStart, byteCount: 4 &* old)
                if written > 0 {
                    (base + heapStart).copyMemory(
                        from: from.unsafelyUnwrapped + (oldDataStart &+ 4 &* (old &+ 1)), byteCount: written)
                }
            }
            spans.withUnsafeBufferPointer { spans in
                for (index, place) in places.enumerated() {
                    base.storeBytes(
                        of: UInt32(written).littleEndian, toByteOffset: dataStart &+ 4 &* (old &+ index), as: UInt32.self)
                    let span = spans[place]
                    let length = Int(span.length)
                    if length > 0 {
                        (base + (heapStart &+ written)).copyMemory(
                            from: source.baseAddress.unsafelyUnwrapped + Int(span.start), byteCount: length)
                    }
                    written &+= length
                }
            }
            base.storeBytes(of: UInt32(written).littleEndian, toByteOffset: dataStart &+ 4 &* count, as: UInt32.self)
        }
    }

    /// The column in its stored encoding (``ClusterColumn``).
    func encoded() -> [UInt8] {
        let size = encodedSize
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            encode(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = size
        }
    }

    /// The size of ``encoded()``: the header, the slots or offsets, and the
    /// live values' bytes (dead bytes of the heap are left out).
    var encodedSize: Int {
        precondition(count <= 0x7FFF, "Trove: a cluster holds at most 32,767 objects")
        let dataStart = 2 + (nullCount > 0 ? RecordLayout.bitmapSize(count) : 0)
        if width > 0 { return dataStart + bytes.count }
        var live = 0
        spans.withUnsafeBufferPointer { spans in for span in spans { live &+= Int(span.length) } }
        return dataStart + 4 * (count + 1) + live
    }

    /// Writes ``encoded()`` into `target`, ``encodedSize`` bytes (any
    /// contents before: every byte is written) — into the stored value's
    /// place, say, so the encoding is not copied again.
    func encode(into target: UnsafeMutableRawBufferPointer) {
        let hasNulls = nullCount > 0
        let dataStart = 2 + (hasNulls ? RecordLayout.bitmapSize(count) : 0)
        let base = target.baseAddress.unsafelyUnwrapped
        base.initializeMemory(as: UInt8.self, repeating: 0, count: dataStart)
        target.storeBytes(of: (UInt16(count) | (hasNulls ? 0x8000 : 0)).littleEndian, as: UInt16.self)
        if hasNulls { for slot in 0..<count where nulls[slot] { target[2 + slot / 8] |= 1 << UInt8(slot % 8) } }
        bytes.withUnsafeBytes { heap in
            if width > 0 {
                if !heap.isEmpty { (base + dataStart).copyMemory(from: heap.baseAddress!, byteCount: heap.count) }
                return
            }
            // Offsets of the live values laid end to end, then their bytes in slot order.
            var written = dataStart + 4 * (count + 1)
            var offset: UInt32 = 0
            // Values that lie end to end in the heap are copied as one run.
            var run = 0..<0
            func copy(_ run: Range<Int>) {
                guard !run.isEmpty else { return }
                (base + written).copyMemory(from: heap.baseAddress! + run.lowerBound, byteCount: run.count)
                written += run.count
            }
            for (slot, span) in spans.enumerated() {
                target.storeBytes(of: offset.littleEndian, toByteOffset: dataStart + 4 * slot, as: UInt32.self)
                offset += span.length
                let start = Int(span.start)
                if start == run.upperBound {
                    run = run.lowerBound..<(start + Int(span.length))
                } else {
                    copy(run)
                    run = start..<(start + Int(span.length))
                }
            }
            target.storeBytes(of: offset.littleEndian, toByteOffset: dataStart + 4 * count, as: UInt32.self)
            copy(run)
            precondition(written == target.count, "Trove: a column's encoding differs from its size")
        }
    }

    private func store(_ value: StoredValue, at slot: Int) {
        let stored = bytes.withUnsafeMutableBytes { RecordWriter.storeFixed(value, type, into: $0, at: slot * width) }
        precondition(stored, "Trove: a \(value.typeName) value in a \(type) column")
    }

    /// As many zero bytes as the widest fixed-size slot.
    private static let zeros = [UInt8](repeating: 0, count: 16)

    static func appendVariable(_ value: StoredValue, _ type: PropertyType, to bytes: inout [UInt8]) {
        switch value {
        case .string(let text) where type == .string:
            // (Not `withUTF8`, which mutates its string: an exclusivity check per value.)
            if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
                bytes.append(contentsOf: text.utf8)
            }
        case .data(let data) where type == .data: data.withUnsafeBytes { bytes.append(contentsOf: $0) }
        default: bytes.append(contentsOf: encodeVariable(value, type))
        }
    }

    static func encodeVariable(_ value: StoredValue, _ type: PropertyType) -> [UInt8] {
        if type == .mixed { return MixedEncoding.encode(value) }
        switch value {
        case .string(var text): return text.withUTF8 { Array($0) }
        case .data(let data): return Array(data)
        case .decimal(let decimal): return Array(decimal.description.utf8)
        default: preconditionFailure("Trove: a \(value.typeName) value in a \(type) column")
        }
    }
}

extension StoredValue {
    /// Whether the two are stored as the same bytes: stricter than `==`,
    /// which holds for canonically equivalent strings ("café" composed and
    /// decomposed) and for 0.0 and -0.0.
    func isStoredIdentically(as other: StoredValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        default: return self == other
        }
    }
}
