import Foundation
import TroveStorage

/// One property's values for the objects of a cluster, as one stored value
/// (the column-cluster layout: one LMDB value per cluster and
/// column, so a scan reads only the columns it needs and an update of one
/// property rewrites only that column).
///
/// `[u16 count, top bit set when a null bitmap follows][null bitmap, a bit
/// per slot, set = nil, only when some slot is nil]` then either
/// `count` fixed-size slots (the record slot encoding: bool and Int8 1 byte,
/// Int16 2, Int32 and Float 4, Int, link, Double and Date 8, ObjectId 12,
/// UUID and Decimal128 16) or, for String, Data, Decimal and Mixed,
/// `count + 1` u32 offsets from the start of the bytes that follow them.
/// All integers are little-endian; values are read unaligned (LMDB aligns an
/// inline value to 2 bytes only). Without nils, 509 eight-byte values fill
/// one 4 KiB overflow page (4,080 bytes after LMDB's page header).
struct ClusterColumn {
    let bytes: UnsafeRawBufferPointer
    let type: PropertyType
    let count: Int
    let hasNulls: Bool
    /// Where the slots (or the offsets) start in ``bytes``.
    let dataStart: Int

    /// Reads a column; nil when its structure is damaged (never traps).
    init?(_ bytes: UnsafeRawBufferPointer, type: PropertyType) {
        guard bytes.count >= 2 else { return nil }
        let header = Int(bytes.loadUnaligned(as: UInt16.self).littleEndian)
        let count = header & 0x7FFF
        hasNulls = header & 0x8000 != 0
        let dataStart = 2 + (hasNulls ? RecordLayout.bitmapSize(count) : 0)
        self.bytes = bytes
        self.type = type
        self.count = count
        self.dataStart = dataStart
        if type.isVariableSize {
            // Each value's offsets are checked as it is read (a lookup reads one of hundreds).
            guard bytes.count >= dataStart + 4 * (count + 1) else { return nil }
        } else {
            guard bytes.count >= dataStart + count * type.slotWidth else { return nil }
        }
    }

    @inline(__always)
    func isNull(_ slot: Int) -> Bool { hasNulls && bytes[2 + slot / 8] & (1 << UInt8(slot % 8)) != 0 }

    /// Where the fixed-size value of `slot` starts in ``bytes``.
    @inline(__always)
    func slotOffset(_ slot: Int) -> Int { dataStart + slot * type.slotWidth }

    /// ``slotOffset(_:)`` with the type's slot width known.
    @inline(__always)
    func slotOffset(_ slot: Int, width: Int) -> Int { dataStart + slot * width }

    /// The value in `slot`; nil for a damaged mixed value.
    func value(_ slot: Int) -> StoredValue? {
        if isNull(slot) { return .null }
        if type.isVariableSize { return RecordReader.variableValue(type, variableBytes(slot)) }
        return RecordReader.fixedValue(type, in: bytes, at: dataStart + slot * type.slotWidth)
    }

    /// An integer column's value without building a ``StoredValue`` (scans, sums).
    @inline(__always)
    func int(_ slot: Int) -> Int64? {
        if isNull(slot) { return nil }
        let at = dataStart + slot * type.slotWidth
        switch type {
        case .int, .link: return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: Int64.self))
        case .int32: return Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: Int32.self)))
        case .int16: return Int64(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: Int16.self)))
        case .int8: return Int64(Int8(bitPattern: bytes[at]))
        default: return nil
        }
    }

    /// A Double column's value without building a ``StoredValue`` (sums).
    @inline(__always)
    func double(_ slot: Int) -> Double? {
        guard type == .double, !isNull(slot) else { return nil }
        return Double(
            bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: slotOffset(slot, width: 8), as: UInt64.self)))
    }

    /// The stored bytes of a String, Data, Decimal or Mixed value in place.
    /// A damaged value traps, as a damaged record does (``problem(in:type:)`` finds it without trapping).
    @inline(__always)
    func variableBytes(_ slot: Int) -> UnsafeRawBufferPointer {
        let heapStart = dataStart + 4 * (count + 1)
        let start = Int(bytes.loadUnaligned(fromByteOffset: dataStart + 4 * slot, as: UInt32.self).littleEndian)
        let end = Int(bytes.loadUnaligned(fromByteOffset: dataStart + 4 * slot + 4, as: UInt32.self).littleEndian)
        guard start <= end, heapStart + end <= bytes.count else { Self.damaged(type, slot) }
        return UnsafeRawBufferPointer(start: bytes.baseAddress.unsafelyUnwrapped + heapStart + start, count: end - start)
    }

    @inline(__always)
    func variableLength(_ slot: Int) -> Int { variableBytes(slot).count }

    static func damaged(_ type: PropertyType, _ slot: Int) -> Never {
        fatalError(
            "Trove: a stored cluster column of \(type) values points outside itself at slot \(slot): the file is damaged (TroveError.corruptFile); `trove verify FILE` or Database.verify() lists every damaged cluster without stopping; restore the file from a copy"
        )
    }

    /// What is wrong with a stored column, or nil when every value reads
    /// safely. Never traps: this is what ``Database/verify()`` uses.
    static func problem(in bytes: UnsafeRawBufferPointer, type: PropertyType, count expected: Int?) -> String? {
        guard let column = ClusterColumn(bytes, type: type) else { return "is \(bytes.count) bytes, too short for its values" }
        if let expected, column.count != expected { return "holds \(column.count) values for \(expected) objects" }
        guard let slots = column.damagedSlots() else { return "points outside itself at slot 0" }
        return slots.min { $0.key < $1.key }.map { "\($0.value) at slot \($0.key)" }
    }

    /// The slots of a stored column whose values do not read (an offset
    /// past the column or before the previous one, text that is not UTF-8,
    /// a damaged mixed value), with what is wrong; nil when the column's own
    /// structure is damaged or it holds another number of values than
    /// `expected`, so that none of it reads. Never traps: the values of the
    /// other slots read safely.
    static func damagedSlots(in bytes: UnsafeRawBufferPointer, type: PropertyType, count expected: Int) -> [Int: String]? {
        guard let column = ClusterColumn(bytes, type: type), column.count == expected else { return nil }
        return column.damagedSlots()
    }

    /// ``damagedSlots(in:type:count:)`` of this column; nil when an empty
    /// column's one offset points past it.
    private func damagedSlots() -> [Int: String]? {
        guard type.isVariableSize else { return [:] }
        let heapStart = dataStart + 4 * (count + 1)
        func offset(_ slot: Int) -> Int {
            Int(bytes.loadUnaligned(fromByteOffset: dataStart + 4 * slot, as: UInt32.self).littleEndian)
        }
        if count == 0 { return heapStart + offset(0) <= bytes.count ? [:] : nil }
        var damaged: [Int: String] = [:]
        for slot in 0..<count {
            let (start, end) = (offset(slot), offset(slot + 1))
            guard start <= end, heapStart + end <= bytes.count else {
                damaged[slot] = "points outside itself"
                continue
            }
            guard !isNull(slot) else { continue }
            let value = UnsafeRawBufferPointer(rebasing: bytes[(heapStart + start)..<(heapStart + end)])
            if type == .string, String(bytes: value, encoding: .utf8) == nil {
                damaged[slot] = "holds a string that is not valid UTF-8"
            } else if type == .mixed, MixedEncoding.decode(value) == nil {
                damaged[slot] = "holds a damaged mixed value"
            }
        }
        return damaged
    }

    /// A cluster's keys as an Int column (no nils): what
    /// ``encode(_:type:)`` makes of them, written directly (the general
    /// path made a ``StoredValue`` of each key and appended it).
    static func encodeKeys(_ keys: [UInt64]) -> [UInt8] {
        precondition(keys.count <= 0x7FFF, "Trove: a cluster holds at most 32,767 objects")
        var encoded = [UInt8](filledWith: 0, count: 2 + 8 * keys.count)
        encoded.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt16(keys.count).littleEndian, as: UInt16.self)
            for (index, key) in keys.enumerated() {
                raw.storeBytes(of: key.littleEndian, toByteOffset: 2 + 8 * index, as: UInt64.self)
            }
        }
        return encoded
    }

    /// This column's encoding with only the slots in `runs` (ascending,
    /// apart, `kept` slots in all: what a write's deletes left), in one pass
    /// over the stored bytes: each run of slots (and, for String, Data,
    /// Decimal and Mixed, its bytes) is copied at once. The same bytes as
    /// opening it as a ``ColumnBuffer``, removing the slots and encoding it,
    /// which cost three copies of the column. A value pointing outside the
    /// column traps, as reading it would. The caller owns the memory returned.
    func encoded(keeping runs: [Range<Int>], kept: Int) -> UnsafeMutableRawBufferPointer {
        let source = bytes.baseAddress.unsafelyUnwrapped
        var keptNulls = 0
        if hasNulls {
            for run in runs { for slot in run where isNull(slot) { keptNulls += 1 } }
        }
        let newDataStart = 2 + (keptNulls > 0 ? RecordLayout.bitmapSize(kept) : 0)
        let width = type.isVariableSize ? 0 : type.slotWidth
        @inline(__always) func offset(_ slot: Int) -> Int {
            Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: dataStart &+ 4 &* slot, as: UInt32.self)))
        }
        let heapStart = dataStart + 4 * (count + 1)
        var heapBytes = 0
        if width == 0 {
            for run in runs {
                let (start, end) = (offset(run.lowerBound), offset(run.upperBound))
                guard start <= end, heapStart + end <= bytes.count else { Self.damaged(type, run.lowerBound) }
                heapBytes += end - start
            }
        }
        let size = width > 0 ? newDataStart + kept * width : newDataStart + 4 * (kept + 1) + heapBytes
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        let target = raw.baseAddress.unsafelyUnwrapped
        raw.storeBytes(of: (UInt16(kept) | (keptNulls > 0 ? 0x8000 : 0)).littleEndian, as: UInt16.self)
        if keptNulls > 0 {
            (target + 2).initializeMemory(as: UInt8.self, repeating: 0, count: newDataStart - 2)
            var index = 0
            for run in runs {
                for slot in run {
                    if isNull(slot) { raw[2 + index / 8] |= 1 << UInt8(index % 8) }
                    index += 1
                }
            }
        }
        if width > 0 {
            var written = newDataStart
            for run in runs {
                (target + written).copyMemory(from: source + dataStart + run.lowerBound * width, byteCount: run.count * width)
                written += run.count * width
            }
        } else {
            // Each kept value's new offset is its old one less the bytes of the values removed before it.
            var index = 0
            var removed = 0
            var heapWritten = newDataStart + 4 * (kept + 1)
            var previousEnd = 0
            for run in runs {
                let start = offset(run.lowerBound)
                removed += start - previousEnd
                for slot in run {
                    raw.storeBytes(
                        of: UInt32(truncatingIfNeeded: offset(slot) &- removed).littleEndian,
                        toByteOffset: newDataStart &+ 4 &* index, as: UInt32.self)
                    index += 1
                }
                previousEnd = offset(run.upperBound)
                (target + heapWritten).copyMemory(from: source + heapStart + start, byteCount: previousEnd - start)
                heapWritten += previousEnd - start
            }
            raw.storeBytes(of: UInt32(heapBytes).littleEndian, toByteOffset: newDataStart + 4 * kept, as: UInt32.self)
        }
        return raw
    }

    /// Encodes `values` (already checked against the column: nil only where
    /// optional, each of the column's type) as a column (through a
    /// ``ColumnBuffer``, the one writer of the encoding).
    static func encode(_ values: [StoredValue], type: PropertyType) -> [UInt8] {
        let buffer = ColumnBuffer(type: type)
        for value in values { buffer.append(value) }
        return buffer.encoded()
    }
}
