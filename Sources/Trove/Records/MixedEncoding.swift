import Foundation

/// How a mixed value sits in a record's heap: a tag byte for its type, then
/// the value (numbers little-endian, text as UTF-8, a link as its object key
/// and its type's name).
enum MixedEncoding {
    private enum Tag: UInt8 {
        case bool = 1, int, float, double, string, data, date, uuid, decimal, objectId, decimal128, object
    }

    static func encode(_ value: StoredValue) -> [UInt8] {
        var bytes: [UInt8] = []
        func put<T: FixedWidthInteger>(_ number: T) { withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) } }
        switch value {
        case .null: return []
        case .bool(let v): bytes = [Tag.bool.rawValue, v ? 1 : 0]
        case .int(let v): bytes = [Tag.int.rawValue]; put(v)
        case .float(let v): bytes = [Tag.float.rawValue]; put(v.bitPattern)
        case .double(let v): bytes = [Tag.double.rawValue]; put(v.bitPattern)
        case .string(let v): bytes = [Tag.string.rawValue] + Array(v.utf8)
        case .data(let v): bytes = [Tag.data.rawValue] + Array(v)
        case .date(let v): bytes = [Tag.date.rawValue]; put(v.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let v): bytes = [Tag.uuid.rawValue]; withUnsafeBytes(of: v.uuid) { bytes.append(contentsOf: $0) }
        case .decimal(let v): bytes = [Tag.decimal.rawValue] + Array(v.description.utf8)
        case .objectId(let v): bytes = [Tag.objectId.rawValue] + v.bytes
        case .decimal128(let v): bytes = [Tag.decimal128.rawValue]; put(v.bid.low); put(v.bid.high)
        case .object(let typeName, let key): bytes = [Tag.object.rawValue]; put(key); bytes += Array(typeName.utf8)
        }
        return bytes
    }

    /// The length of ``encode(_:)``'s bytes for `value`, without making them
    /// (the record writer sizes a record before it writes it).
    static func encodedSize(of value: StoredValue) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 2
        case .float: return 5
        case .int, .double, .date: return 9
        case .string(let v): return 1 + v.utf8.count
        case .data(let v): return 1 + v.count
        case .uuid, .decimal128: return 17
        case .decimal(let v): return 1 + v.description.utf8.count
        case .objectId: return 13
        case .object(let typeName, _): return 9 + typeName.utf8.count
        }
    }

    /// The value of `bytes`, or nil when they are not a mixed encoding.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> StoredValue? {
        guard let first = bytes.first, let tag = Tag(rawValue: first) else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[1...])
        func number<T: FixedWidthInteger>(_: T.Type, at offset: Int = 0) -> T? {
            guard body.count >= offset + MemoryLayout<T>.size else { return nil }
            return T(littleEndian: body.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        switch tag {
        case .bool: return body.count == 1 ? .bool(body[0] != 0) : nil
        case .int: return number(Int64.self).map { .int($0) }
        case .float: return number(UInt32.self).map { .float(Float(bitPattern: $0)) }
        case .double: return number(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case .string: return .string(String(decoding: body, as: UTF8.self))
        case .data: return .data(Data(body))
        case .date: return number(UInt64.self).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case .uuid:
            guard body.count == 16 else { return nil }
            return .uuid(UUID(uuid: body.loadUnaligned(as: uuid_t.self)))
        case .decimal: return Decimal(string: String(decoding: body, as: UTF8.self)).map { .decimal($0) }
        case .objectId: return body.count == 12 ? .objectId(ObjectId(bytes: Array(body))) : nil
        case .decimal128:
            guard let low = number(UInt64.self), let high = number(UInt64.self, at: 8) else { return nil }
            return .decimal128(Decimal128(bid: (low: low, high: high)))
        case .object:
            guard let key = number(UInt64.self) else { return nil }
            return .object(
                typeName: String(decoding: UnsafeRawBufferPointer(rebasing: body[8...]), as: UTF8.self), key: key)
        }
    }
}
