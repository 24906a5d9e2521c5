import Foundation

/// Builds one record from stored values. Reuse one writer for many records:
/// its buffer keeps its capacity.
struct RecordWriter {
    private(set) var bytes: [UInt8] = []

    /// Encodes `values` (one per column of `layout`, in column order).
    mutating func encode(_ values: [StoredValue], layout: RecordLayout) throws {
        if try !encodeExact(values, layout: layout) { try encodeConverting(values, layout: layout) }
    }

    /// The common case in one pass: every value already has its column's
    /// type (decimals and values to convert go to ``encodeConverting``).
    /// The record is sized first and written straight into its buffer.
    private mutating func encodeExact(_ values: [StoredValue], layout: RecordLayout) throws -> Bool {
        let columns = layout.columnCount
        let header = 2 + RecordLayout.bitmapSize(columns)
        let fixedEnd = header + layout.fixedSize
        var size = fixedEnd
        for column in 0..<columns where layout.inRecord[column] {
            switch (layout.types[column], values[column]) {
            case (.string, .string(let v)): size += v.utf8.count
            case (.data, .data(let v)): size += v.count
            case (.decimal, _): return false
            default: continue
            }
        }
        var exact = true
        // Resized in place: the buffer keeps its capacity from record to record.
        if bytes.count > size {
            bytes.removeLast(bytes.count - size)
        } else if bytes.count < size {
            bytes.append(contentsOf: repeatElement(0, count: size - bytes.count))
        }
        try bytes.withUnsafeMutableBytes { record in
            record.initializeMemory(as: UInt8.self, repeating: 0)
            record.storeBytes(of: UInt16(columns).littleEndian, as: UInt16.self)
            var heap = fixedEnd
            func append(_ source: UnsafeRawBufferPointer, slot: Int) {
                record.storeBytes(of: UInt32(heap).littleEndian, toByteOffset: slot, as: UInt32.self)
                record.storeBytes(of: UInt32(source.count).littleEndian, toByteOffset: slot + 4, as: UInt32.self)
                if let base = source.baseAddress, source.count > 0 {
                    (record.baseAddress! + heap).copyMemory(from: base, byteCount: source.count)
                }
                heap += source.count
            }
            for column in 0..<columns where layout.inRecord[column] {
                let slot = header + layout.slotOffsets[column]
                switch (layout.types[column], values[column]) {
                case (_, .null):
                    guard layout.properties[column].isOptional else { throw RecordWriter.notOptional(layout, column) }
                    record[2 + column / 8] |= 1 << UInt8(column % 8)
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
                case (.string, .string(var v)): v.withUTF8 { append(UnsafeRawBufferPointer($0), slot: slot) }
                case (.data, .data(let v)): v.withUnsafeBytes { append($0, slot: slot) }
                default:
                    exact = false
                    return
                }
            }
        }
        return exact
    }

    /// Encodes any values, converting those stored as another type.
    private mutating func encodeConverting(_ values: [StoredValue], layout: RecordLayout) throws {
        let columns = layout.columnCount
        let bitmap = RecordLayout.bitmapSize(columns)
        let header = 2 + bitmap
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: repeatElement(0, count: header + layout.fixedSize))
        bytes[0] = UInt8(columns & 0xFF)
        bytes[1] = UInt8(columns >> 8)
        for column in 0..<columns where layout.inRecord[column] {
            let value = values[column]
            let slot = header + layout.slotOffsets[column]
            let type = layout.types[column]
            if case .null = value {
                guard layout.properties[column].isOptional else { throw RecordWriter.notOptional(layout, column) }
                bytes[2 + column / 8] |= 1 << UInt8(column % 8)
                continue
            }
            try write(value, as: type, at: slot, property: layout.properties[column].name)
        }
    }

    private static func notOptional(_ layout: RecordLayout, _ column: Int) -> TroveError {
        TroveError(.invalidValue, "property \(layout.properties[column].name) is not optional and cannot store nil")
    }

    private mutating func write(_ value: StoredValue, as type: PropertyType, at slot: Int, property: String) throws {
        switch (type, value) {
        case (.bool, .bool(let v)): bytes[slot] = v ? 1 : 0
        case (.int8, .int(let v)): store(UInt8(bitPattern: Int8(truncatingIfNeeded: v)), at: slot)
        case (.int16, .int(let v)): store(UInt16(bitPattern: Int16(truncatingIfNeeded: v)).littleEndian, at: slot)
        case (.int32, .int(let v)): store(UInt32(bitPattern: Int32(truncatingIfNeeded: v)).littleEndian, at: slot)
        case (.int, .int(let v)), (.link, .int(let v)): store(UInt64(bitPattern: v).littleEndian, at: slot)
        case (.float, .float(let v)): store(v.bitPattern.littleEndian, at: slot)
        case (.double, .double(let v)): store(v.bitPattern.littleEndian, at: slot)
        case (.date, .date(let v)): store(v.timeIntervalSinceReferenceDate.bitPattern.littleEndian, at: slot)
        case (.uuid, .uuid(let v)): withUnsafeBytes(of: v.uuid) { replace(slot, with: $0) }
        case (.string, .string(var v)): v.withUTF8 { appendHeap(UnsafeRawBufferPointer($0), slot: slot) }
        case (.data, .data(let v)): v.withUnsafeBytes { appendHeap($0, slot: slot) }
        case (.decimal, .decimal(let v)):
            var text = v.description
            text.withUTF8 { appendHeap(UnsafeRawBufferPointer($0), slot: slot) }
        default:
            if let converted = value.converted(to: type) {
                try write(converted, as: type, at: slot, property: property)
            } else {
                throw TroveError(
                    .invalidValue, "property \(property) stores \(type.swiftName), not \(value.typeName) (\(value))")
            }
        }
    }

    @inline(__always)
    private mutating func store<T: FixedWidthInteger>(_ value: T, at slot: Int) {
        withUnsafeBytes(of: value) { replace(slot, with: $0) }
    }

    @inline(__always)
    private mutating func replace(_ slot: Int, with source: UnsafeRawBufferPointer) {
        bytes.withUnsafeMutableBytes { target in
            target.baseAddress!.advanced(by: slot).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
    }

    private mutating func appendHeap(_ source: UnsafeRawBufferPointer, slot: Int) {
        store(UInt32(bytes.count).littleEndian, at: slot)
        store(UInt32(source.count).littleEndian, at: slot + 4)
        bytes.append(contentsOf: source)
    }
}

extension RecordWriter {
    /// Changes one fixed-size, non-null column of an encoded record in place
    /// (the common update: a number, a date, a flag). Returns false when the
    /// record must be re-encoded instead (variable size, nil involved, or a
    /// column the record predates).
    static func patch(_ record: inout [UInt8], column: Int, value: StoredValue, layout: RecordLayout) -> Bool {
        let type = layout.types[column]
        guard !type.isVariableSize, record.count >= 2 else { return false }
        let columns = Int(record[0]) | Int(record[1]) << 8
        guard column < columns, record[2 + column / 8] & (1 << UInt8(column % 8)) == 0 else { return false }
        let slot = 2 + RecordLayout.bitmapSize(columns) + layout.slotOffsets[column]
        return record.withUnsafeMutableBytes { bytes -> Bool in
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
            default: return false
            }
            return true
        }
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
        default: return nil
        }
    }
}
