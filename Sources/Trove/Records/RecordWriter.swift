import Foundation

/// Builds one record from stored values. Reuse one writer for many records:
/// its buffer keeps its capacity.
struct RecordWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the last ``encode(_:layout:)`` converted a value (an Int
    /// into a Double column...): the values given are then not as stored.
    private(set) var converted = false

    /// Encodes `values` (one per column of `layout`, in column order).
    ///
    /// One pass checks each value (nil only where optional; another type
    /// converted exactly, or refused) and sizes the record; a second writes
    /// it straight into the buffer, which keeps its capacity between records.
    mutating func encode(_ input: [StoredValue], layout: RecordLayout) throws {
        let (values, size, converted) = try Self.checked(input, layout: layout)
        self.converted = converted
        write(values, size: size, layout: layout)
    }

    /// One value as `column` stores it: nil only where optional, another
    /// type converted exactly (an Int into a Double column...), or refused.
    static func checked(_ value: StoredValue, column: Int, layout: RecordLayout) throws -> StoredValue {
        let type = layout.types[column]
        if case .null = value {
            guard layout.properties[column].isOptional else {
                throw TroveError(.invalidValue, "property \(layout.properties[column].name) is not optional and cannot store nil")
            }
            return value
        }
        if fits(value, type) { return value }
        guard let exact = value.converted(to: type), fits(exact, type) else {
            throw TroveError(
                .invalidValue,
                "property \(layout.properties[column].name) stores \(type.swiftName), not \(value.typeName) (\(value))"
                    + (type.isInteger && value.typeName == "Int" ? ": out of its range" : ""))
        }
        return exact
    }

    /// The first pass of ``encode(_:layout:)`` alone: `input` checked
    /// against the layout (nil only where optional; another type converted
    /// exactly, or refused), as the values are stored, with the size of
    /// their record. The cluster layout stores the values without the record.
    static func checked(_ input: [StoredValue], layout: RecordLayout) throws -> (
        values: [StoredValue], size: Int, converted: Bool
    ) {
        let (values, converted) = try checkedValues(input, layout: layout)
        let columns = layout.columnCount
        let fixedEnd = 2 + RecordLayout.bitmapSize(columns) + layout.fixedSize
        var size = fixedEnd
        for column in 0..<columns where layout.inRecord[column] {
            let type = layout.types[column]
            if case .null = values[column] { continue }
            if type == .mixed {
                size += MixedEncoding.encodedSize(of: values[column])
                continue
            }
            switch values[column] {
            case .string(let v): size += v.utf8.count
            case .data(let v): size += v.count
            case .decimal(let v): size += v.description.utf8.count
            default: break
            }
        }
        return (values, size, converted)
    }

    /// `input` checked against the layout as ``checked(_:layout:)`` checks
    /// it, without the size of a record (the cluster layout stores none).
    static func checkedValues(_ input: [StoredValue], layout: RecordLayout) throws -> (
        values: [StoredValue], converted: Bool
    ) {
        var values = input  // copied only when a value is converted
        var converted = false
        let types = layout.types
        let inRecord = layout.inRecord
        for column in 0..<layout.columnCount where inRecord[column] {
            // (Read in place: a copy of each value retained and released its string.)
            let fits = values.withUnsafeBufferPointer { values -> Bool? in
                if case .null = values[column] { return nil }
                return Self.fits(values[column], types[column])
            }
            switch fits {
            case nil: _ = try checked(.null, column: column, layout: layout)
            case false?:
                values[column] = try checked(values[column], column: column, layout: layout)
                converted = true
            case true?: break
            }
        }
        return (values, converted)
    }

    /// The second pass: writes checked values, `size` bytes in all, into the buffer.
    private mutating func write(_ values: [StoredValue], size: Int, layout: RecordLayout) {
        let columns = layout.columnCount
        let header = 2 + RecordLayout.bitmapSize(columns)
        let fixedEnd = header + layout.fixedSize
        if bytes.count > size {
            bytes.removeLast(bytes.count - size)
        } else if bytes.count < size {
            bytes.append(contentsOf: repeatElement(0, count: size - bytes.count))
        }
        bytes.withUnsafeMutableBytes { record in
            record.initializeMemory(as: UInt8.self, repeating: 0)
            record.storeBytes(of: UInt16(columns).littleEndian, as: UInt16.self)
            // Where the next heap value goes, behind a pointer: a captured `var` paid a
            // dynamic exclusivity check on each use (four per string or data value).
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 1) { heapSlot in
                let heap = heapSlot.baseAddress!
                heap.initialize(to: fixedEnd)
                func append(_ source: UnsafeRawBufferPointer, slot: Int) {
                    // The sizing pass above must have counted every heap value.
                    precondition(
                        heap.pointee + source.count <= record.count, "Trove: a record value was not sized before writing")
                    record.storeBytes(of: UInt32(heap.pointee).littleEndian, toByteOffset: slot, as: UInt32.self)
                    record.storeBytes(of: UInt32(source.count).littleEndian, toByteOffset: slot + 4, as: UInt32.self)
                    if let base = source.baseAddress, source.count > 0 {
                        (record.baseAddress! + heap.pointee).copyMemory(from: base, byteCount: source.count)
                    }
                    heap.pointee += source.count
                }
                for column in 0..<columns where layout.inRecord[column] {
                    let slot = header + layout.slotOffsets[column]
                    switch (layout.types[column], values[column]) {
                    case (_, .null): record[2 + column / 8] |= 1 << UInt8(column % 8)
                    case (.bool, .bool(let v)): record[slot] = v ? 1 : 0
                    case (.int8, .int(let v)): record[slot] = UInt8(bitPattern: Int8(truncatingIfNeeded: v))
                    case (.int16, .int(let v)):
                        record.storeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian, toByteOffset: slot, as: UInt16.self)
                    case (.int32, .int(let v)):
                        record.storeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian, toByteOffset: slot, as: UInt32.self)
                    case (.int, .int(let v)), (.link, .int(let v)):
                        record.storeBytes(of: UInt64(bitPattern: v).littleEndian, toByteOffset: slot, as: UInt64.self)
                    case (.float, .float(let v)):
                        record.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: slot, as: UInt32.self)
                    case (.double, .double(let v)):
                        record.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: slot, as: UInt64.self)
                    case (.date, .date(let v)):
                        record.storeBytes(
                            of: v.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: slot, as: UInt64.self)
                    case (.uuid, .uuid(let v)): record.storeBytes(of: v.uuid, toByteOffset: slot, as: uuid_t.self)
                    case (.objectId, .objectId(let v)):
                        for (index, byte) in v.bytes.enumerated() { record[slot + index] = byte }
                    case (.decimal128, .decimal128(let v)):
                        record.storeBytes(of: v.bid.low.littleEndian, toByteOffset: slot, as: UInt64.self)
                        record.storeBytes(of: v.bid.high.littleEndian, toByteOffset: slot + 8, as: UInt64.self)
                    case (.string, .string(var v)): v.withUTF8 { append(UnsafeRawBufferPointer($0), slot: slot) }
                    case (.data, .data(let v)): v.withUnsafeBytes { append($0, slot: slot) }
                    case (.mixed, let v):
                        MixedEncoding.encode(v).withUnsafeBytes { append($0, slot: slot) }
                    case (.decimal, .decimal(let v)):
                        var text = v.description
                        text.withUTF8 { append(UnsafeRawBufferPointer($0), slot: slot) }
                    default: preconditionFailure("Trove: a value the check above let through does not fit its column")
                    }
                }
            }
        }
    }

    /// Whether `value` is stored as it is in a column of `type` (integers of
    /// every width are `.int`; a narrow column takes only what it can hold,
    /// so 300 is refused by an `Int8` rather than stored as 44).
    static func fits(_ value: StoredValue, _ type: PropertyType) -> Bool {
        switch (type, value) {
        case (.mixed, _): return true
        case (.int8, .int(let v)): return Int8(exactly: v) != nil
        case (.int16, .int(let v)): return Int16(exactly: v) != nil
        case (.int32, .int(let v)): return Int32(exactly: v) != nil
        case (.bool, .bool), (.int, .int), (.link, .int), (.float, .float),
            (.double, .double), (.date, .date), (.uuid, .uuid), (.string, .string), (.data, .data), (.decimal, .decimal),
            (.objectId, .objectId), (.decimal128, .decimal128):
            return true
        default: return false
        }
    }
}

extension RecordWriter {
    /// Changes one fixed-size, non-null column of an encoded record in place
    /// (the common update: a number, a date, a flag). Returns false when the
    /// record must be re-encoded instead (variable size, nil involved, or a
    /// column the record predates).
    static func patch(_ record: inout [UInt8], column: Int, value: StoredValue, layout: RecordLayout) -> Bool {
        record.withUnsafeMutableBytes { patch($0, column: column, value: value, layout: layout) }
    }

    /// ``patch(_:column:value:layout:)`` of a record where it lies (a managed object's copy).
    static func patch(_ record: UnsafeMutableRawBufferPointer, column: Int, value: StoredValue, layout: RecordLayout)
        -> Bool
    {
        let type = layout.types[column]
        guard !type.isVariableSize, record.count >= 2 else { return false }
        let columns = Int(record[0]) | Int(record[1]) << 8
        guard column < columns, record[2 + column / 8] & (1 << UInt8(column % 8)) == 0 else { return false }
        let slot = 2 + RecordLayout.bitmapSize(columns) + layout.slotOffsets[column]
        return storeFixed(value, type, into: record, at: slot)
    }

    /// Writes a fixed-size value into its slot at `slot`; false when the value
    /// is not of the slot's type (or out of a narrow integer's range).
    @inline(__always)
    static func storeFixed(_ value: StoredValue, _ type: PropertyType, into bytes: UnsafeMutableRawBufferPointer, at slot: Int)
        -> Bool
    {
        switch (type, value) {
        case (.bool, .bool(let v)): bytes[slot] = v ? 1 : 0
        case (.int8, .int(let v)):
            guard let narrow = Int8(exactly: v) else { return false }
            bytes[slot] = UInt8(bitPattern: narrow)
        case (.int16, .int(let v)):
            guard let narrow = Int16(exactly: v) else { return false }
            bytes.storeBytes(of: UInt16(bitPattern: narrow).littleEndian, toByteOffset: slot, as: UInt16.self)
        case (.int32, .int(let v)):
            guard let narrow = Int32(exactly: v) else { return false }
            bytes.storeBytes(of: UInt32(bitPattern: narrow).littleEndian, toByteOffset: slot, as: UInt32.self)
        case (.int, .int(let v)), (.link, .int(let v)):
            bytes.storeBytes(of: UInt64(bitPattern: v).littleEndian, toByteOffset: slot, as: UInt64.self)
        case (.float, .float(let v)): bytes.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: slot, as: UInt32.self)
        case (.double, .double(let v)): bytes.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: slot, as: UInt64.self)
        case (.date, .date(let v)):
            bytes.storeBytes(
                of: v.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: slot, as: UInt64.self)
        case (.uuid, .uuid(let v)):
            withUnsafeBytes(of: v.uuid) { source in
                for index in 0..<16 { bytes[slot + index] = source[index] }
            }
        case (.objectId, .objectId(let v)):
            for (index, byte) in v.bytes.enumerated() { bytes[slot + index] = byte }
        case (.decimal128, .decimal128(let v)):
            bytes.storeBytes(of: v.bid.low.littleEndian, toByteOffset: slot, as: UInt64.self)
            bytes.storeBytes(of: v.bid.high.littleEndian, toByteOffset: slot + 8, as: UInt64.self)
        default: return false
        }
        return true
    }
}

extension StoredValue {
    /// The same value in another stored type, where the conversion is exact
    /// (an Int into a Double column, a Double with no fraction into an Int).
    func converted(to type: PropertyType) -> StoredValue? {
        switch (self, type) {
        case (.int(let v), .double): return .double(Double(v))
        case (.int(let v), .float): return .float(Float(v))
        case (.int(let v), .decimal): return .decimal(Decimal(v))
        case (.double(let v), .float): return .float(Float(v))
        case (.float(let v), .double): return .double(Double(v))
        case (.double(let v), .decimal): return .decimal(Decimal(v))
        case (.double(let v), .int), (.double(let v), .int32), (.double(let v), .int16), (.double(let v), .int8):
            guard let exact = Int64(exactly: v) else { return nil }
            return StoredValue.int(exact).converted(to: type) ?? .int(exact)
        case (.int(let v), .int8): return Int8(exactly: v).map { _ in .int(v) }
        case (.int(let v), .int16): return Int16(exactly: v).map { _ in .int(v) }
        case (.int(let v), .int32): return Int32(exactly: v).map { _ in .int(v) }
        case (.int, .int): return self
        case (.string(let v), .uuid): return UUID(uuidString: v).map { .uuid($0) }
        case (.string(let v), .decimal): return Decimal(string: v).map { .decimal($0) }
        case (.string(let v), .objectId): return (try? ObjectId(string: v)).map { .objectId($0) }
        case (.string(let v), .decimal128): return (try? Decimal128(string: v)).map { .decimal128($0) }
        case (.int(let v), .decimal128): return .decimal128(Decimal128(v))
        case (.double(let v), .decimal128): return .decimal128(Decimal128(v))
        case (.float(let v), .decimal128): return .decimal128(Decimal128(v))
        case (.decimal(let v), .decimal128): return (try? Decimal128(string: v.description)).map { .decimal128($0) }
        default: return nil
        }
    }
}
