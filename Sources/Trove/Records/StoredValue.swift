import Foundation

/// A value as Trove stores it: one case per stored type, plus `null`.
///
/// You meet it when working with a schema dynamically (the CLI, migrations,
/// query arguments); typed models never need it.
public enum StoredValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case uuid(UUID)
    case decimal(Decimal)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    /// A link held in a mixed value: the target's type and object key.
    case object(typeName: String, key: UInt64)
    /// A list held in a mixed value (its elements may be lists and dictionaries again).
    case list([StoredValue])
    /// A dictionary held in a mixed value, by string key.
    case dictionary([String: StoredValue])

    /// Whether the value is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as text: strings quoted, dates in ISO 8601, data as its byte
    /// count, null as `nil`.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let v): return String(v)
        case .int(let v): return String(v)
        case .float(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"\(v)\""
        case .data(let v): return "<\(v.count) bytes>"
        case .date(let v): return ISO8601DateFormatter().string(from: v)
        case .uuid(let v): return v.uuidString
        case .decimal(let v): return v.description
        case .objectId(let v): return v.stringValue
        case .decimal128(let v): return v.description
        case .object(let typeName, let key): return "\(typeName)#\(key)"
        case .list(let v): return "[" + v.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let v):
            return "[" + v.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]"
        }
    }

    /// Whether a nested list or dictionary holds a link, at any depth.
    package var holdsNestedLink: Bool {
        switch self {
        case .list(let elements): return elements.contains { $0.isLink || $0.holdsNestedLink }
        case .dictionary(let entries): return entries.values.contains { $0.isLink || $0.holdsNestedLink }
        default: return false
        }
    }

    private var isLink: Bool {
        if case .object = self { return true }
        return false
    }

    /// The name of the stored type, for error messages.
    var typeName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "Bool"
        case .int: return "Int"
        case .float: return "Float"
        case .double: return "Double"
        case .string: return "String"
        case .data: return "Data"
        case .date: return "Date"
        case .uuid: return "UUID"
        case .decimal: return "Decimal"
        case .objectId: return "ObjectId"
        case .decimal128: return "Decimal128"
        case .object: return "Object"
        case .list: return "List"
        case .dictionary: return "Dictionary"
        }
    }

    /// The value as a Double, for numeric comparisons across types.
    @usableFromInline package var numeric: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .float(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        case .decimal128(let v): return v.doubleValue
        case .bool(let v): return v ? 1 : 0
        default: return nil
        }
    }

    /// The value as a Decimal128, for exact comparisons with decimal128 values.
    @usableFromInline package var decimal128Value: Decimal128? {
        switch self {
        case .decimal128(let v): return v
        case .int(let v): return Decimal128(v)
        case .float(let v): return Decimal128(v)
        case .double(let v): return Decimal128(v)
        case .decimal(let v): return try? Decimal128(string: v.description)
        default: return nil
        }
    }

    /// Converts a Swift value given as a query argument or a dynamic value.
    package init?(any value: Any?) {
        guard let value else {
            self = .null
            return
        }
        if let plain = StoredValue(plain: value) {
            self = plain
            return
        }
        switch value {
        case let v as StoredValue: self = v
        case is NSNull: self = .null
        case let v as any _TroveStorable: self = v._troveStored
        case let v as NSNumber: self = .double(v.doubleValue)
        case let v as NSString: self = .string(v as String)
        default:
            if case Optional<Any>.none = value as Any? {
                self = .null
                return
            }
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                if let child = mirror.children.first {
                    self.init(any: child.value)
                    return
                }
                self = .null
                return
            }
            return nil
        }
    }
}

extension StoredValue {
    /// A value of exactly `String`, `Int`, `Double`, `Bool` or `Date` (what
    /// query arguments mostly are), found by comparing its type: a cast from
    /// `Any` to a protocol or a class looks up conformances, ~2,000
    /// instructions each on Linux. nil for any other type (an `NSNumber` too).
    @inline(__always)
    init?(plain value: Any) {
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(String.self) {
            self = .string(value as! String)
        } else if type == ObjectIdentifier(Int.self) {
            self = .int(Int64(value as! Int))
        } else if type == ObjectIdentifier(Double.self) {
            self = .double(value as! Double)
        } else if type == ObjectIdentifier(Bool.self) {
            self = .bool(value as! Bool)
        } else if type == ObjectIdentifier(Date.self) {
            self = .date(value as! Date)
        } else {
            return nil
        }
    }
}

extension StoredValue: Codable {
    private enum CodingKeys: String, CodingKey { case type, value }

    /// Decodes a value from the form ``encode(to:)`` writes. Throws
    /// `DecodingError` for an unknown type name; a decimal string that does not
    /// parse reads as 0.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "null": self = .null
        case "bool": self = .bool(try container.decode(Bool.self, forKey: .value))
        case "int": self = .int(try container.decode(Int64.self, forKey: .value))
        case "float": self = .float(try container.decode(Float.self, forKey: .value))
        case "double": self = .double(try container.decode(Double.self, forKey: .value))
        case "string": self = .string(try container.decode(String.self, forKey: .value))
        case "data": self = .data(try container.decode(Data.self, forKey: .value))
        case "date": self = .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: .value)))
        case "uuid": self = .uuid(try container.decode(UUID.self, forKey: .value))
        case "decimal": self = .decimal(Decimal(string: try container.decode(String.self, forKey: .value)) ?? 0)
        case "objectId": self = .objectId(try container.decode(ObjectId.self, forKey: .value))
        case "decimal128": self = .decimal128(try container.decode(Decimal128.self, forKey: .value))
        case "object":
            let parts = try container.decode(String.self, forKey: .value).split(separator: "#")
            guard parts.count == 2, let key = UInt64(parts[1]) else {
                throw DecodingError.dataCorruptedError(forKey: .value, in: container, debugDescription: "not Type#key")
            }
            self = .object(typeName: String(parts[0]), key: key)
        case "list": self = .list(try container.decode([StoredValue].self, forKey: .value))
        case "dictionary": self = .dictionary(try container.decode([String: StoredValue].self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown type \(type)")
        }
    }

    /// Encodes the value as its type name and value: `{"type": "int", "value": 42}`.
    /// Dates are seconds since 2001-01-01 (`timeIntervalSinceReferenceDate`),
    /// decimals, ObjectIds and Decimal128s are strings, and null has only its type.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .null: try container.encode("null", forKey: .type)
        case .bool(let v): try container.encode("bool", forKey: .type); try container.encode(v, forKey: .value)
        case .int(let v): try container.encode("int", forKey: .type); try container.encode(v, forKey: .value)
        case .float(let v): try container.encode("float", forKey: .type); try container.encode(v, forKey: .value)
        case .double(let v): try container.encode("double", forKey: .type); try container.encode(v, forKey: .value)
        case .string(let v): try container.encode("string", forKey: .type); try container.encode(v, forKey: .value)
        case .data(let v): try container.encode("data", forKey: .type); try container.encode(v, forKey: .value)
        case .date(let v):
            try container.encode("date", forKey: .type)
            try container.encode(v.timeIntervalSinceReferenceDate, forKey: .value)
        case .uuid(let v): try container.encode("uuid", forKey: .type); try container.encode(v, forKey: .value)
        case .decimal(let v): try container.encode("decimal", forKey: .type); try container.encode(v.description, forKey: .value)
        case .objectId(let v): try container.encode("objectId", forKey: .type); try container.encode(v, forKey: .value)
        case .decimal128(let v): try container.encode("decimal128", forKey: .type); try container.encode(v, forKey: .value)
        case .object(let typeName, let key):
            try container.encode("object", forKey: .type)
            try container.encode("\(typeName)#\(key)", forKey: .value)
        case .list(let v): try container.encode("list", forKey: .type); try container.encode(v, forKey: .value)
        case .dictionary(let v): try container.encode("dictionary", forKey: .type); try container.encode(v, forKey: .value)
        }
    }
}
