import Foundation
@_spi(Reflection) import Swift

/// The stored fields of a ``Persistable`` struct, read and written in place:
/// a value is built straight from its stored values and taken apart the
/// same way, with no `Decoder` or `Encoder` between (the Codable round
/// trip cost ~17,000 instructions a value, 2.4× the class model's read).
///
/// Used only when it is known to give what Codable gives: every stored
/// field is a plain stored type named as its coding key, and decoding and
/// encoding three probe values through Codable agree with the direct path
/// (a custom `init(from:)` or `encode(to:)` that changes values, renamed
/// keys or extra fields all keep the Codable path).
/// Unchecked: immutable, and its closures capture only an offset and a type.
final class StructFields: @unchecked Sendable {
    struct Field {
        /// The field's position in the schema's properties.
        let property: Int
        /// Initializes the field (at its offset from the given base) from a stored value.
        let initialize: (UnsafeMutableRawPointer, StoredValue) -> Void
        /// The field's stored value, read at its offset from the given base.
        let stored: (UnsafeRawPointer) -> StoredValue
        /// The stored type a record slot must hold for ``direct``.
        let type: PropertyType
        /// How the field is read straight from a record's slot of ``type``, when
        /// it can be: non-optional numbers, flags, strings and data of their plain Swift types.
        let direct: Direct?
        /// The field's offset in the value.
        let offset: Int
    }

    let fields: [Field]

    private init(fields: [Field]) { self.fields = fields }

    private static let cache = Locked<[ObjectIdentifier: StructFields?]>([:])

    /// The direct fields of `type`, or nil when values of it must go through Codable.
    static func of<T: Persistable>(_ type: T.Type, schema: ObjectSchema) -> StructFields? {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let found = make(type, schema: schema)
        cache.withLock { $0[ObjectIdentifier(type)] = found }
        return found
    }

    /// A value built from its properties' stored values (`value(property)`).
    @inline(__always)
    func make<T>(_ type: T.Type, _ value: (Int) -> StoredValue) -> T {
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer in
            initialize(UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped), value)
            return buffer.baseAddress.unsafelyUnwrapped.move()
        }
    }

    /// Initializes the value at `base` from a stored record (`columns`:
    /// each property's column): fields with a ``Field/direct`` read their
    /// slots as their Swift type, without a ``StoredValue`` (W3's struct
    /// scan: 145M → 106M instructions at `--divide 10`); the others, nils and
    /// columns the record predates go through the stored value.
    func initialize(_ base: UnsafeMutableRawPointer, from record: RecordReader, columns: [Int]) {
        let types = record.layout.types
        let slots = record.layout.slotOffsets
        let fixed = record.bytes.baseAddress.unsafelyUnwrapped + record.header
        // (Each field's parts read through the buffer: copying a `Field` retained its closures.)
        fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                let column = columns[fields[index].property]
                if let direct = fields[index].direct, column < record.columns, types[column] == fields[index].type,
                    !record.isNull(column)
                {
                    let field = base + fields[index].offset
                    if direct.isVariable {
                        // (A slot pointing past the record traps in `heapBytes`, as the general read does.)
                        Self.load(direct, into: field, bytes: record.heapBytes(at: column).unsafelyUnwrapped)
                    } else {
                        Self.load(direct, into: field, from: fixed + slots[column])
                    }
                } else {
                    fields[index].initialize(base, record.value(at: column))
                }
            }
        }
    }

    /// Initializes the value at `base` in place from `slot` of a cluster
    /// `view` prepared for objects (``ClusterView/prepareForObjects()``;
    /// `columns`: each property's column): fields with a ``Field/direct``
    /// read their column's bytes as their Swift type, with no record built;
    /// the others and nils go through the stored value. On a throw the
    /// fields initialized so far are left initialized.
    func initialize(_ base: UnsafeMutableRawPointer, from view: ClusterView, slot: Int, columns: [Int]) throws {
        let types = view.layout.types
        try fields.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                let column = columns[fields[index].property]
                if let direct = fields[index].direct, types[column] == fields[index].type {
                    let field = base + fields[index].offset
                    if direct.isVariable {
                        if let bytes = view.variablePlace(slot, column) {
                            Self.load(direct, into: field, bytes: bytes)
                            continue
                        }
                    } else if let place = view.fixedPlace(slot, column) {
                        Self.load(direct, into: field, from: place)
                        continue
                    }
                }
                // (No field of a direct type holds a mixed value, the only one that throws here.)
                fields[index].initialize(base, try view.value(slot, column))
            }
        }
    }

    /// Initializes every stored field (checked when the fields were found), so the whole value.
    /// Not generic, so that the loop is compiled once, not run through unspecialized generic code.
    private func initialize(_ base: UnsafeMutableRawPointer, _ value: (Int) -> StoredValue) {
        fields.withUnsafeBufferPointer { fields in
            for index in fields.indices { fields[index].initialize(base, value(fields[index].property)) }
        }
    }

    /// Each property's stored value, by schema position.
    func storedValues<T>(of value: T) -> [StoredValue] {
        var values = [StoredValue](repeating: .null, count: fields.count)
        store(value, into: &values, columns: Array(values.indices))
        return values
    }

    /// Puts each property's stored value at its column (`columns`, by schema position) in `values`.
    func store<T>(_ value: T, into values: inout [StoredValue], columns: [Int]) {
        withUnsafeBytes(of: value) { bytes in
            let base = bytes.baseAddress.unsafelyUnwrapped
            fields.withUnsafeBufferPointer { fields in
                for index in fields.indices { values[columns[fields[index].property]] = fields[index].stored(base) }
            }
        }
    }

    private static func make<T: Persistable>(_ type: T.Type, schema: ObjectSchema) -> StructFields? {
        let properties = schema.properties
        var fields: [Field] = []
        var covered = Set<Int>()
        var plain = true
        // Options 0: a struct's fields (a class is refused: its values are references).
        let walked = _forEachField(of: type, options: _EachFieldOptions(rawValue: 0)) { name, offset, fieldType, _ in
            let fieldName = String(cString: name)
            guard let storable = fieldType as? any _TroveStorable.Type,
                let property = properties.firstIndex(where: { $0.name == fieldName }),
                covered.insert(property).inserted,
                let field = field(storable, offset: offset, property: property, schema: properties[property])
            else {
                plain = false
                return false
            }
            fields.append(field)
            return true
        }
        guard walked, plain, covered.count == properties.count, !fields.isEmpty else { return nil }
        let candidate = StructFields(fields: fields)
        // Three probes (every value set; optionals nil and the others changed; every value zero or empty)
        // must read and write as Codable does.
        for variant in 0..<3 {
            let values = properties.enumerated().map { probeValue($0.element, $0.offset, variant: variant) }
            guard
                let expected = try? StoredValueDecoder.decode(
                    type,
                    from: Dictionary(
                        uniqueKeysWithValues: zip(properties.map(\.name), values)))
            else { return nil }
            let direct = candidate.make(type) { values[$0] }
            // (Compared with each other, not with the probe: an enum reads an unknown raw value as its first case.)
            let read = candidate.storedValues(of: direct)
            guard candidate.storedValues(of: expected) == read, let encoded = try? StoredValueEncoder.encode(direct),
                properties.indices.allSatisfy({ (encoded[properties[$0].name] ?? .null) == read[$0] })
            else { return nil }
        }
        return candidate
    }

    /// The field of a stored type Trove can probe; nil for links, collections and mixed values.
    private static func field<V: _TroveStorable>(
        _ type: V.Type, offset: Int, property: Int, schema: PropertySchema
    ) -> Field? {
        guard V._troveLinkTarget == nil, V._troveCollection == nil, V._troveType == schema.type,
            V._troveIsOptional == schema.isOptional, probeValue(schema, 0, variant: 0) != .null
        else { return nil }
        return Field(
            property: property,
            initialize: { base, stored in (base + offset).initializeMemory(as: V.self, to: V._troveFromStored(stored)) },
            stored: { base in base.load(fromByteOffset: offset, as: V.self)._troveStored },
            type: schema.type, direct: schema.isOptional ? nil : direct(V.self, type: schema.type), offset: offset)
    }

    /// A field's ``Field/direct`` when `V` is the plain Swift type of `type`
    /// (an enum or other wrapper stored as it keeps the general path).
    private static func direct<V>(_: V.Type, type: PropertyType) -> Direct? {
        switch type {
        case .int: V.self == Int.self ? .int : V.self == Int64.self ? .int64 : nil
        case .int32: V.self == Int32.self ? .int32 : nil
        case .int16: V.self == Int16.self ? .int16 : nil
        case .int8: V.self == Int8.self ? .int8 : nil
        case .bool: V.self == Bool.self ? .bool : nil
        case .double: V.self == Double.self ? .double : nil
        case .float: V.self == Float.self ? .float : nil
        case .string: V.self == String.self ? .string : nil
        case .data: V.self == Data.self ? .data : nil
        default: nil
        }
    }

    enum Direct {
        case int, int64, int32, int16, int8, bool, double, float, string, data

        /// A string or data, read from its bytes rather than a fixed-size slot.
        var isVariable: Bool { self == .string || self == .data }
    }

    /// Initializes `field` from the fixed-size value at `place` (a column's
    /// slot, little-endian, of the field's stored type; not a string or data).
    @inline(__always)
    private static func load(_ direct: Direct, into field: UnsafeMutableRawPointer, from place: UnsafeRawPointer) {
        func bits64() -> UInt64 { UInt64(littleEndian: place.loadUnaligned(as: UInt64.self)) }
        func bits32() -> UInt32 { UInt32(littleEndian: place.loadUnaligned(as: UInt32.self)) }
        switch direct {
        case .int: field.initializeMemory(as: Int.self, to: Int(Int64(bitPattern: bits64())))
        case .int64: field.initializeMemory(as: Int64.self, to: Int64(bitPattern: bits64()))
        case .int32: field.initializeMemory(as: Int32.self, to: Int32(bitPattern: bits32()))
        case .int16:
            let bits = UInt16(littleEndian: place.loadUnaligned(as: UInt16.self))
            field.initializeMemory(as: Int16.self, to: Int16(bitPattern: bits))
        case .int8: field.initializeMemory(as: Int8.self, to: Int8(bitPattern: place.load(as: UInt8.self)))
        case .bool: field.initializeMemory(as: Bool.self, to: place.load(as: UInt8.self) != 0)
        case .double: field.initializeMemory(as: Double.self, to: Double(bitPattern: bits64()))
        case .float: field.initializeMemory(as: Float.self, to: Float(bitPattern: bits32()))
        case .string, .data: preconditionFailure("Trove: a string or data field read as a fixed-size value")
        }
    }

    /// Initializes a string or data `field` from its stored bytes.
    @inline(__always)
    private static func load(_ direct: Direct, into field: UnsafeMutableRawPointer, bytes: UnsafeRawBufferPointer) {
        if direct == .string {
            field.initializeMemory(as: String.self, to: String(decoding: bytes, as: UTF8.self))
        } else {
            field.initializeMemory(as: Data.self, to: Data(bytes))
        }
    }

    /// Variant 0 and 1: a value no default would hold (nil in the second for
    /// optionals); variant 2: zero, empty or nil, what a decoder might replace.
    private static func probeValue(_ property: PropertySchema, _ index: Int, variant: Int) -> StoredValue {
        if variant == 2 { return property.isOptional ? .null : property.type.zeroValue }
        if variant == 1, property.isOptional { return .null }
        let n = index % 100 + 3 + variant * 7
        switch property.type {
        case .bool: return .bool(variant == 0)
        case .int, .int8, .int16, .int32: return .int(Int64(variant == 0 ? n : -n))
        case .float: return .float(Float(n) + 0.5)
        case .double: return .double(Double(n) + 0.25)
        case .string: return .string("probe \(n)")
        case .data: return .data(Data([UInt8(n), 0, 255]))
        case .date: return .date(Date(timeIntervalSince1970: Double(n) * 1_000))
        case .uuid: return .uuid(UUID(uuid: (UInt8(n), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))
        case .decimal: return .decimal(Decimal(n) + Decimal(sign: .plus, exponent: -2, significand: 25))
        case .objectId: return .objectId(ObjectId(bytes: (0..<12).map { UInt8(truncatingIfNeeded: n &+ $0) }))
        case .decimal128: return .decimal128(Decimal128(n * 1_000 + 7))
        case .mixed, .link: return .null
        }
    }
}
