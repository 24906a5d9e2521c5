import Foundation

/// Reads properties out of one record in place. Valid only while the buffer
/// it was made from is (inside the closure that produced it).
struct RecordReader {
    let bytes: UnsafeRawBufferPointer
    let layout: RecordLayout
    let columns: Int
    let header: Int
    /// The key of the object the record belongs to, where the reader knows it
    /// (query scans): what queries through collections start from.
    var objectKey: UInt64 = 0

    init(_ bytes: UnsafeRawBufferPointer, layout: RecordLayout) {
        self.bytes = bytes
        self.layout = layout
        let stored = bytes.count >= 2 ? Int(bytes[0]) | Int(bytes[1]) << 8 : 0
        // Columns beyond the schema (written by a newer model) are not read.
        columns = min(stored, layout.columnCount)
        header = 2 + RecordLayout.bitmapSize(stored)
        let fixedEnd = header + (columns == 0 ? 0 : layout.slotOffsets[columns - 1] + layout.slotWidth(columns - 1))
        if bytes.count < max(2, fixedEnd) {
            RecordReader.damaged(layout, "is \(bytes.count) bytes, shorter than its \(stored) columns need")
        }
    }

    /// A record that does not fit its own header cannot be read safely.
    static func damaged(_ layout: RecordLayout, _ detail: String) -> Never {
        fatalError(
            "Trove: a stored \(layout.typeName) record (table obj:\(layout.typeName), properties \(layout.properties.map(\.name))) \(detail): the file is damaged (TroveError.corruptFile); `trove verify FILE` or Database.verify() lists every damaged record without stopping; restore the file from a copy"
        )
    }

    @inline(__always)
    func isNull(_ column: Int) -> Bool { Self.isNull(column, in: bytes) }

    @inline(__always)
    private static func isNull(_ column: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        bytes[2 + column / 8] & (1 << UInt8(column % 8)) != 0
    }

    /// The value of `column`; columns the record predates read as defaults.
    func value(at column: Int) -> StoredValue {
        Self.value(at: column, in: bytes, columns: columns, header: header, layout: layout)
    }

    /// ``value(at:)`` over a checked record without a reader: the layout is
    /// borrowed, so a managed property read retains nothing.
    @inline(__always)
    static func value(
        at column: Int, in bytes: UnsafeRawBufferPointer, columns: Int, header: Int, layout: RecordLayout
    ) -> StoredValue {
        func load<T: FixedWidthInteger>(_ type: T.Type, _ offset: Int) -> T { Self.load(type, offset, in: bytes) }
        func heap(_ slot: Int) -> UnsafeRawBufferPointer {
            let offset = Int(load(UInt32.self, slot))
            let count = Int(load(UInt32.self, slot + 4))
            if offset + count > bytes.count { RecordReader.damaged(layout, "points past its end") }
            return UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
        }
        // Collections (not in the record) are never read here: their readers go to their own tables.
        guard column < columns else { return layout.fallbacks[column] }
        if isNull(column, in: bytes) { return .null }
        let slot = header + layout.slotOffsets[column]
        let type = layout.types[column]
        if type.isVariableSize {
            guard let value = variableValue(type, heap(slot)) else {
                RecordReader.damaged(layout, "holds a damaged mixed value")
            }
            return value
        }
        return fixedValue(type, in: bytes, at: slot)
    }

    /// A fixed-size value from its slot at `slot` (records and cluster columns share the encoding).
    @inline(__always)
    static func fixedValue(_ type: PropertyType, in bytes: UnsafeRawBufferPointer, at slot: Int) -> StoredValue {
        func load<T: FixedWidthInteger>(_ type: T.Type, _ offset: Int) -> T { Self.load(type, offset, in: bytes) }
        switch type {
        case .bool: return .bool(bytes[slot] != 0)
        case .int8: return .int(Int64(Int8(bitPattern: bytes[slot])))
        case .int16: return .int(Int64(Int16(bitPattern: load(UInt16.self, slot))))
        case .int32: return .int(Int64(Int32(bitPattern: load(UInt32.self, slot))))
        case .int, .link: return .int(Int64(bitPattern: load(UInt64.self, slot)))
        case .float: return .float(Float(bitPattern: load(UInt32.self, slot)))
        case .double: return .double(Double(bitPattern: load(UInt64.self, slot)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: load(UInt64.self, slot))))
        case .uuid:
            let raw = bytes.loadUnaligned(fromByteOffset: slot, as: uuid_t.self)
            return .uuid(UUID(uuid: raw))
        case .objectId: return .objectId(ObjectId(bytes: Array(bytes[slot..<slot + 12])))
        case .decimal128:
            return .decimal128(Decimal128(bid: (low: load(UInt64.self, slot), high: load(UInt64.self, slot + 8))))
        case .string, .data, .decimal, .mixed: preconditionFailure("Trove: \(type) is not a fixed-size value")
        }
    }

    /// A variable-size value from its bytes; nil for a damaged mixed value.
    @inline(__always)
    static func variableValue(_ type: PropertyType, _ bytes: UnsafeRawBufferPointer) -> StoredValue? {
        switch type {
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .data: return .data(Data(bytes))
        case .decimal: return .decimal(Decimal(string: String(decoding: bytes, as: UTF8.self)) ?? 0)
        case .mixed: return MixedEncoding.decode(bytes)
        default: preconditionFailure("Trove: \(type) is not a variable-size value")
        }
    }

    /// An Int (or link) column without building a ``StoredValue`` (hot paths: keys, sums).
    @inline(__always)
    func int(at column: Int) -> Int64? {
        guard column < columns else {
            if case .int(let v) = layout.fallbacks[column] { return v }
            return nil
        }
        if isNull(column) { return nil }
        let slot = header + layout.slotOffsets[column]
        switch layout.types[column] {
        case .int, .link: return Int64(bitPattern: load(UInt64.self, slot))
        case .int32: return Int64(Int32(bitPattern: load(UInt32.self, slot)))
        case .int16: return Int64(Int16(bitPattern: load(UInt16.self, slot)))
        case .int8: return Int64(Int8(bitPattern: bytes[slot]))
        default: return nil
        }
    }

    /// A Float, Double or Date column (a date as its seconds since the
    /// reference date) without building a ``StoredValue``; nil when it is nil.
    @inline(__always)
    func floatingPoint(at column: Int) -> Double? {
        guard column < columns else {
            switch layout.fallbacks[column] {
            case .double(let value): return value
            case .float(let value): return Double(value)
            case .date(let value): return value.timeIntervalSinceReferenceDate
            default: return nil
            }
        }
        if isNull(column) { return nil }
        let slot = header + layout.slotOffsets[column]
        switch layout.types[column] {
        case .double, .date: return Double(bitPattern: load(UInt64.self, slot))
        case .float: return Double(Float(bitPattern: load(UInt32.self, slot)))
        default: return nil
        }
    }

    /// The stored bytes of a String or Data column (a string's UTF-8) in
    /// place, without building a value; nil when it is nil. Only for columns
    /// the record holds (`column < columns`): older records read defaults.
    @inline(__always)
    func heapBytes(at column: Int) -> UnsafeRawBufferPointer? {
        if isNull(column) { return nil }
        let slot = header + layout.slotOffsets[column]
        let offset = Int(load(UInt32.self, slot))
        let count = Int(load(UInt32.self, slot + 4))
        if offset + count > bytes.count { RecordReader.damaged(layout, "points past its end") }
        return UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
    }

    @inline(__always)
    private func load<T: FixedWidthInteger>(_ type: T.Type, _ offset: Int) -> T { Self.load(type, offset, in: bytes) }

    @inline(__always)
    private static func load<T: FixedWidthInteger>(_: T.Type, _ offset: Int, in bytes: UnsafeRawBufferPointer) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Every column, in order.
    func allValues() -> [StoredValue] {
        (0..<layout.columnCount).map { layout.inRecord[$0] ? value(at: $0) : layout.fallbacks[$0] }
    }

    /// What is wrong with a record's structure, or nil when it reads safely.
    /// Never traps: this is what ``Database/verify()`` uses on suspect data.
    static func problem(in bytes: UnsafeRawBufferPointer, layout: RecordLayout) -> String? {
        guard bytes.count >= 2 else { return "is \(bytes.count) bytes, too short for a header" }
        let stored = Int(bytes[0]) | Int(bytes[1]) << 8
        if stored > layout.columnCount { return "has \(stored) columns, the schema \(layout.columnCount)" }
        let header = 2 + RecordLayout.bitmapSize(stored)
        let fixedEnd = header + (stored == 0 ? 0 : layout.slotOffsets[stored - 1] + layout.slotWidth(stored - 1))
        guard bytes.count >= fixedEnd else { return "is \(bytes.count) bytes, shorter than its \(stored) columns need" }
        for column in 0..<stored where layout.types[column].isVariableSize && layout.inRecord[column] {
            if bytes[2 + column / 8] & (1 << UInt8(column % 8)) != 0 { continue }
            let slot = header + layout.slotOffsets[column]
            let offset = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot, as: UInt32.self)))
            let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: slot + 4, as: UInt32.self)))
            if offset < fixedEnd || offset + count > bytes.count {
                return "has \(layout.properties[column].name) pointing outside the record"
            }
            let value = UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
            if layout.types[column] == .string, String(bytes: value, encoding: .utf8) == nil {
                return "has \(layout.properties[column].name) that is not valid UTF-8"
            }
            if layout.types[column] == .mixed, MixedEncoding.decode(value) == nil {
                return "has \(layout.properties[column].name) holding a damaged mixed value"
            }
        }
        for column in 0..<stored where !layout.properties[column].isOptional && layout.inRecord[column] {
            if bytes[2 + column / 8] & (1 << UInt8(column % 8)) != 0 {
                return "has nil in the non-optional \(layout.properties[column].name)"
            }
        }
        return nil
    }
}
