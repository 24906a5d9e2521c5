import Foundation

/// How a mixed value sits in a record's heap: a tag byte for its type, then
/// the value (numbers little-endian, text as UTF-8, a link as its object key
/// and its type's name). A nested list is its count, then each element's
/// length and encoding; a dictionary its count, then each key's length and
/// bytes and its value's length and encoding, in key order.
enum MixedEncoding {
    private enum Tag: UInt8 {
        case bool = 1, int, float, double, string, data, date, uuid, decimal, objectId, decimal128, object, list, dictionary
    }

    /// How deep collections may nest in one value (a hostile file cannot recurse without end).
    static let maxDepth = 100

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
        case .list(let elements):
            bytes = [Tag.list.rawValue]
            put(UInt32(elements.count))
            for element in elements {
                let encoded = encode(element)
                put(UInt32(encoded.count))
                bytes += encoded
            }
        case .dictionary(let entries):
            bytes = [Tag.dictionary.rawValue]
            put(UInt32(entries.count))
            for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
                put(UInt32(key.utf8.count))
                bytes += Array(key.utf8)
                let encoded = encode(value)
                put(UInt32(encoded.count))
                bytes += encoded
            }
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
        case .list(let elements): return elements.reduce(5) { $0 + 4 + encodedSize(of: $1) }
        case .dictionary(let entries): return entries.reduce(5) { $0 + 8 + $1.key.utf8.count + encodedSize(of: $1.value) }
        }
    }

    /// The value of `bytes`, or nil when they are not a mixed encoding.
    static func decode(_ bytes: UnsafeRawBufferPointer, depth: Int = 0) -> StoredValue? {
        guard depth <= maxDepth, let first = bytes.first, let tag = Tag(rawValue: first) else { return nil }
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
        case .list, .dictionary:
            guard let count = number(UInt32.self) else { return nil }
            var offset = 4
            /// The next length-prefixed part of the body, or nil when the body ends first.
            func part() -> UnsafeRawBufferPointer? {
                guard let length = number(UInt32.self, at: offset).map(Int.init), body.count - offset - 4 >= length else {
                    return nil
                }
                defer { offset += 4 + length }
                return UnsafeRawBufferPointer(rebasing: body[(offset + 4)..<(offset + 4 + length)])
            }
            func element() -> StoredValue? {
                guard let bytes = part() else { return nil }
                return bytes.isEmpty ? .null : decode(bytes, depth: depth + 1)
            }
            // Each element takes at least its 4-byte length: a count beyond that is damage.
            guard Int(count) <= (body.count - 4) / 4 else { return nil }
            if tag == .list {
                var elements: [StoredValue] = []
                elements.reserveCapacity(Int(count))
                for _ in 0..<count {
                    guard let value = element() else { return nil }
                    elements.append(value)
                }
                return offset == body.count ? .list(elements) : nil
            }
            var entries: [String: StoredValue] = [:]
            for _ in 0..<count {
                guard let key = part(), let value = element() else { return nil }
                entries[String(decoding: key, as: UTF8.self)] = value
            }
            return offset == body.count ? .dictionary(entries) : nil
        }
    }
}
