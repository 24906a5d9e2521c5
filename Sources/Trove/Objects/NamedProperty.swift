import Foundation

/// A property reached by its name — by key-value access (`object["name"]`),
/// `Object(value:)` and `create` — on a model class (one of its `@Persisted`
/// fields) or on a ``DynamicObject`` (a column of its stored type).
struct NamedProperty {
    let schema: PropertySchema
    /// The Swift type its values have: `Int16`, `String?`, `List<Dog>`,
    /// `Map<String, DynamicObject?>`…
    let storable: any _TroveStorable.Type
    /// The class its links reach (``DynamicObject`` for a dynamic object's); nil for values.
    let linkTarget: Object.Type?
    /// The `@Persisted` field of a model class; nil for a dynamic object's column.
    let field: ModelInfo.Field?
    /// The column of a dynamic object's stored type (-1 for a field).
    let column: Int

    /// A `@Persisted` field of a model class.
    init(field: ModelInfo.Field) {
        schema = field.schema
        storable = field.storable
        linkTarget = field.linkTarget
        self.field = field
        column = -1
    }

    /// A column of a stored type, read and written as a ``DynamicObject`` does:
    /// each value as the Swift type of its stored type, objects as dynamic objects.
    init(column: Int, schema: PropertySchema) {
        self.schema = schema
        self.column = column
        field = nil
        linkTarget = schema.type == .link ? DynamicObject.self : nil
        storable = NamedProperty.swiftType(of: schema)
    }

    /// The error for a value the property cannot take, in Realm's words.
    func invalidValue(_ given: Any?, in typeName: String) -> TroveError {
        let shown = given.map { "'\($0)' of type '\(type(of: $0))'" } ?? "nil"
        return TroveError(
            .invalidValue, "Invalid value \(shown) for '\(schema.typeDescription)' property '\(typeName).\(schema.name)'")
    }

    /// The Swift type a dynamic read of `schema` gives: `Int8` for an int8,
    /// `String?` for an optional string, `List<DynamicObject>` for a list of objects.
    static func swiftType(of schema: PropertySchema) -> any _TroveStorable.Type {
        var element = elementType(schema.type)
        // A map holds nil for an object it held that was deleted: its objects are optional.
        if schema.type != .mixed, schema.isOptional || (schema.collection == .map && schema.type == .link) {
            element = optional(element)
        }
        switch schema.collection {
        case nil: return element
        case .list: return list(element)
        case .set: return set(element)
        case .map: return map(element)
        case .linkingObjects: return LinkingObjects<DynamicObject>.self
        }
    }

    private static func elementType(_ type: PropertyType) -> any (_TroveStorable & Hashable).Type {
        switch type {
        case .bool: return Bool.self
        case .int: return Int.self
        case .int8: return Int8.self
        case .int16: return Int16.self
        case .int32: return Int32.self
        case .float: return Float.self
        case .double: return Double.self
        case .string: return String.self
        case .data: return Data.self
        case .date: return Date.self
        case .uuid: return UUID.self
        case .decimal: return Decimal.self
        case .objectId: return ObjectId.self
        case .decimal128: return Decimal128.self
        case .mixed: return Mixed.self
        case .link: return DynamicObject.self
        }
    }

    private static func optional<T: _TroveStorable & Hashable>(_: T.Type) -> any (_TroveStorable & Hashable).Type {
        T?.self
    }

    private static func list<T: _TroveStorable & Hashable>(_: T.Type) -> any _TroveStorable.Type { List<T>.self }

    private static func set<T: _TroveStorable & Hashable>(_: T.Type) -> any _TroveStorable.Type { MutableSet<T>.self }

    private static func map<T: _TroveStorable & Hashable>(_: T.Type) -> any _TroveStorable.Type { Map<String, T>.self }
}
