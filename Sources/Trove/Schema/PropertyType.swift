/// The types a persisted property can have.
public enum PropertyType: String, Codable, Sendable, CaseIterable {
    case bool, int, int8, int16, int32, float, double, string, data, date, uuid, decimal
    /// A BSON ObjectId (``ObjectId``): 12 bytes.
    case objectId
    /// An IEEE 754 decimal128 (``Decimal128``): 16 bytes.
    case decimal128
    /// A value of any type, or a link to an object of any type (``Mixed``).
    case mixed
    /// A link to another object: its object key (the target type is
    /// ``PropertySchema/objectType``).
    case link

    /// Bytes of the fixed slot in a record; variable-size types keep an
    /// offset and a length there.
    var slotWidth: Int {
        switch self {
        case .bool, .int8: return 1
        case .int16: return 2
        case .int32, .float: return 4
        case .int, .double, .date, .link: return 8
        case .uuid, .decimal128: return 16
        case .objectId: return 12
        case .string, .data, .decimal, .mixed: return 8
        }
    }

    var isVariableSize: Bool {
        switch self {
        case .string, .data, .decimal, .mixed: return true
        default: return false
        }
    }

    var isInteger: Bool {
        switch self {
        case .int, .int8, .int16, .int32: return true
        default: return false
        }
    }

    var isNumeric: Bool {
        switch self {
        case .int, .int8, .int16, .int32, .float, .double, .decimal, .decimal128: return true
        default: return false
        }
    }

    /// The Swift spelling, for messages and generated code.
    public var swiftName: String {
        switch self {
        case .bool: return "Bool"
        case .int: return "Int"
        case .int8: return "Int8"
        case .int16: return "Int16"
        case .int32: return "Int32"
        case .float: return "Float"
        case .double: return "Double"
        case .string: return "String"
        case .data: return "Data"
        case .date: return "Date"
        case .uuid: return "UUID"
        case .decimal: return "Decimal"
        case .objectId: return "ObjectId"
        case .decimal128: return "Decimal128"
        case .mixed: return "Mixed"
        case .link: return "Object"
        }
    }

    /// Whether a secondary index can be built on this type.
    var isIndexable: Bool {
        switch self {
        case .float, .decimal, .decimal128, .link: return false
        default: return true
        }
    }
}
