import Foundation

/// Decodes a ``Persistable`` value from one stored value per coding key.
/// With a ``SchemaProbe`` instead of values, it records the shape: every key
/// asked for, its type and whether it is optional.
enum StoredValueDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from fields: [String: StoredValue]) throws -> T {
        try T(from: FieldDecoder(source: .values(fields), key: nil))
    }

    /// Decodes straight from a stored record: each coding key's column is
    /// read in place, nothing is collected first.
    static func decode<T: Decodable>(_ type: T.Type, from record: RecordReader, columns: ValueColumns) throws -> T {
        try T(from: FieldDecoder(source: .record(RecordFields(record, columns)), key: nil))
    }
}

/// The columns of a Persistable type's coding keys, in the order its
/// Codable implementation reads them (the schema's order).
final class ValueColumns: Sendable {
    let names: [String]
    let columns: [Int]

    init(names: [String], columns: [Int]) {
        self.names = names
        self.columns = columns
    }

    /// The column of `key`. `expected` is the position of the key expected
    /// next (Codable reads and writes keys in declaration order): compared
    /// first, and moved past the key found.
    @inline(__always)
    func column(for key: String, expected: inout Int) -> Int? {
        if expected < names.count, names[expected] == key {
            expected += 1
            return columns[expected - 1]
        }
        guard let position = names.firstIndex(of: key) else { return nil }
        expected = position + 1
        return columns[position]
    }
}

/// One record being decoded, read by coding key.
final class RecordFields {
    let reader: RecordReader
    let columns: ValueColumns
    @exclusivity(unchecked) private var next = 0

    init(_ reader: RecordReader, _ columns: ValueColumns) {
        self.reader = reader
        self.columns = columns
    }

    func value(_ key: String) -> StoredValue {
        columns.column(for: key, expected: &next).map { reader.value(at: $0) } ?? .null
    }
}

/// Collects the properties of a Persistable type while it decodes.
final class SchemaProbe {
    var properties: [PropertySchema] = []

    func note(_ name: String, _ type: any _TroveStorable.Type, optional: Bool) {
        guard !properties.contains(where: { $0.name == name }) else { return }
        properties.append(PropertySchema(name: name, type: type._troveType, isOptional: optional || type._troveIsOptional))
    }
}

enum DecodingSource {
    case values([String: StoredValue])
    case record(RecordFields)
    case probe(SchemaProbe)

    /// The stored value of `key` (null when there is none); nil while probing.
    @inline(__always)
    func stored(_ key: String) -> StoredValue? {
        switch self {
        case .values(let fields): return fields[key] ?? .null
        case .record(let fields): return fields.value(key)
        case .probe: return nil
        }
    }

    var keys: [String] {
        switch self {
        case .values(let fields): return Array(fields.keys)
        case .record(let fields): return fields.columns.names
        case .probe: return []
        }
    }
}

func SchemaProbeDecoder(probe: SchemaProbe) -> some Decoder {
    FieldDecoder(source: .probe(probe), key: nil)
}

struct FieldDecoder: Decoder {
    let source: DecodingSource
    let key: String?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if let key {
            throw TroveError(.invalidModel, "property '\(key)' is a nested struct; Persistable properties must be single values")
        }
        return KeyedDecodingContainer(KeyedFieldDecoder<Key>(source: source))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw TroveError(.invalidModel, "property '\(key ?? "value")' is an array; Persistable properties must be single values")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleFieldDecoder(source: source, key: key ?? "value")
    }
}

/// Produces a value of a storable type from the source (or a placeholder while probing).
private func produce<T>(_ type: T.Type, key: String, source: DecodingSource, optional: Bool) throws -> T? {
    guard let storable = type as? any _TroveStorable.Type else { return nil }
    switch source {
    case .probe(let probe):
        probe.note(key, storable, optional: optional)
        return (storable._troveDefault as! T)
    case .values, .record:
        let value = source.stored(key) ?? .null
        if optional, value.isNull { return nil }
        return (storable._troveFromStored(value) as! T)
    }
}

struct KeyedFieldDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let source: DecodingSource
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { source.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { source.stored(key.stringValue)?.isNull ?? false }

    /// A property of a storable type read without the generic path's dynamic casts.
    @inline(__always)
    private func direct<T: _TroveStorable & Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        guard let value = source.stored(key.stringValue) else { return try decode(type, key.stringValue) }
        return T._troveFromStored(value)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ key: String) throws -> T {
        if let value = try produce(type, key: key, source: source, optional: false) { return value }
        if let enumType = type as? any CaseIterable.Type, case .probe = source {
            // A Codable enum that is not a PersistableEnum: learn its raw type, use its first case.
            _ = try? T(from: FieldDecoder(source: source, key: key))
            if let first = firstCase(of: enumType) as? T { return first }
        }
        return try T(from: FieldDecoder(source: source, key: key))
    }

    private func decodeOptional<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        if case .probe(let probe) = source {
            if let storable = type as? any _TroveStorable.Type {
                probe.note(key, storable, optional: true)
                return nil
            }
            let before = probe.properties.count
            _ = try? decode(type, key)
            if probe.properties.count > before { probe.properties[probe.properties.count - 1].isOptional = true }
            return nil
        }
        if try decodeNil(forKey: Key(stringValue: key)!) { return nil }
        return try decode(type, key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decode(type, key.stringValue) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decodeOptional(type, key.stringValue)
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try direct(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try direct(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try direct(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try direct(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try direct(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try direct(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try direct(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try direct(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try direct(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeOptional(type, key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { throw unsupported(type, key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { throw unsupported(type, key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { throw unsupported(type, key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { throw unsupported(type, key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { throw unsupported(type, key.stringValue) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw TroveError(
            .invalidModel, "property '\(key.stringValue)' is a nested struct; Persistable properties must be single values")
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw TroveError(.invalidModel, "property '\(key.stringValue)' is an array; Persistable properties must be single values")
    }
    func superDecoder() throws -> any Decoder { FieldDecoder(source: source, key: nil) }
    func superDecoder(forKey key: Key) throws -> any Decoder { FieldDecoder(source: source, key: key.stringValue) }
}

struct SingleFieldDecoder: SingleValueDecodingContainer {
    let source: DecodingSource
    let key: String
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { source.stored(key)?.isNull ?? false }

    private func decode<T>(_ type: T.Type, generic: Void) throws -> T {
        guard let value = try produce(type, key: key, source: source, optional: false) else { throw unsupported(type, key) }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = try produce(type, key: key, source: source, optional: false) { return value }
        throw unsupported(type, key)
    }
    func decode(_ type: Bool.Type) throws -> Bool { try decode(type as Bool.Type, generic: ()) }
    func decode(_ type: String.Type) throws -> String { try decode(type as String.Type, generic: ()) }
    func decode(_ type: Double.Type) throws -> Double { try decode(type as Double.Type, generic: ()) }
    func decode(_ type: Float.Type) throws -> Float { try decode(type as Float.Type, generic: ()) }
    func decode(_ type: Int.Type) throws -> Int { try decode(type as Int.Type, generic: ()) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decode(type as Int8.Type, generic: ()) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decode(type as Int16.Type, generic: ()) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decode(type as Int32.Type, generic: ()) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decode(type as Int64.Type, generic: ()) }
    func decode(_ type: UInt.Type) throws -> UInt { throw unsupported(type, key) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { throw unsupported(type, key) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { throw unsupported(type, key) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { throw unsupported(type, key) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { throw unsupported(type, key) }
}

private func firstCase<E: CaseIterable>(of type: E.Type) -> Any? { E.allCases.first }
