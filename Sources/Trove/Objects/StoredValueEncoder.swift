import Foundation

/// Encodes a ``Persistable`` value into one stored value per coding key.
enum StoredValueEncoder {
    static func encode<T: Encodable>(_ value: T) throws -> [String: StoredValue] {
        let sink = EncodingSink()
        try value.encode(to: FieldEncoder(sink: sink, key: nil))
        return sink.fields
    }

    /// Encodes straight into a record's values: each coding key's value goes
    /// to its column (`columns`), the others keep `defaults`.
    static func encode<T: Encodable>(_ value: T, columns: ValueColumns, defaults: [StoredValue]) throws -> [StoredValue] {
        let sink = EncodingSink(columns: columns, values: defaults)
        try value.encode(to: FieldEncoder(sink: sink, key: nil))
        return sink.values
    }
}

func unsupported(_ type: Any.Type, _ key: String) -> TroveError {
    TroveError(
        .invalidModel,
        "property '\(key)' has type \(type), which Trove cannot store; use Bool, Int (8-64 bits), Float, Double, String, Data, Date, UUID, Decimal, an optional of one, or a PersistableEnum"
    )
}

/// Where encoded values go: by coding key, or by column when the sink knows
/// the columns. Synthesized `encode(to:)` writes the keys in declaration
/// order, so each key is first compared with the one expected next.
final class EncodingSink {
    var fields: [String: StoredValue] = [:]
    private let columns: ValueColumns?
    // One encode runs on one thread: the checks for overlapping access cost more than the writes.
    @exclusivity(unchecked) private(set) var values: [StoredValue]
    @exclusivity(unchecked) private var next = 0

    init(columns: ValueColumns? = nil, values: [StoredValue] = []) {
        self.columns = columns
        self.values = values
    }

    func store(_ value: StoredValue, for key: String) {
        guard let columns else {
            fields[key] = value
            return
        }
        if let column = columns.column(for: key, expected: &next) { values[column] = value }
    }
}

/// At the top level a keyed container; below a key, a single value (an enum's raw value).
struct FieldEncoder: Encoder {
    let sink: EncodingSink
    let key: String?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedFieldEncoder<Key>(sink: sink, nested: key))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnsupportedUnkeyedEncoder(key: key ?? "value")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleFieldEncoder(sink: sink, key: key ?? "value")
    }
}

struct UnsupportedUnkeyedEncoder: UnkeyedEncodingContainer {
    let key: String
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    private func fail() -> TroveError {
        TroveError(.invalidModel, "property '\(key)' is an array; Persistable properties must be single values")
    }
    mutating func encodeNil() throws { throw fail() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw fail() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedFieldEncoder<NestedKey>(sink: EncodingSink(), nested: key))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { FieldEncoder(sink: EncodingSink(), key: key) }
}

struct SingleFieldEncoder: SingleValueEncodingContainer {
    let sink: EncodingSink
    let key: String
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { sink.store(.null, for: key) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        guard let storable = value as? any _TroveStorable else { throw unsupported(T.self, key) }
        sink.store(storable._troveStored, for: key)
    }
    mutating func encode(_ value: Bool) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: String) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Double) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Float) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Int) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Int8) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Int16) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Int32) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: Int64) throws { sink.store(value._troveStored, for: key) }
    mutating func encode(_ value: UInt) throws { throw unsupported(UInt.self, key) }
    mutating func encode(_ value: UInt8) throws { throw unsupported(UInt8.self, key) }
    mutating func encode(_ value: UInt16) throws { throw unsupported(UInt16.self, key) }
    mutating func encode(_ value: UInt32) throws { throw unsupported(UInt32.self, key) }
    mutating func encode(_ value: UInt64) throws { throw unsupported(UInt64.self, key) }
}

struct KeyedFieldEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: EncodingSink
    let nested: String?
    var codingPath: [any CodingKey] { [] }

    private func store(_ value: StoredValue, _ key: Key) throws {
        if let nested {
            throw TroveError(
                .invalidModel, "property '\(nested)' is a nested struct; Persistable properties must be single values")
        }
        sink.store(value, for: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { try store(.null, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let storable = value as? any _TroveStorable {
            try store(storable._troveStored, key)
        } else {
            try value.encode(to: FieldEncoder(sink: sink, key: key.stringValue))
        }
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try store(value._troveStored, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { throw unsupported(UInt.self, key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { throw unsupported(UInt8.self, key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { throw unsupported(UInt16.self, key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { throw unsupported(UInt32.self, key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { throw unsupported(UInt64.self, key.stringValue) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(KeyedFieldEncoder<NestedKey>(sink: sink, nested: key.stringValue))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnsupportedUnkeyedEncoder(key: key.stringValue)
    }
    mutating func superEncoder() -> any Encoder { FieldEncoder(sink: sink, key: nil) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { FieldEncoder(sink: sink, key: key.stringValue) }
}
