import Trove
import TroveStorage

/// A type that syncs, as the server knows it: its primary key and, per
/// property, the kind of column that holds it (``ServerSchema``).
struct SyncedType {
    let name: String
    let schema: ObjectSchema
    /// The primary key's position in the schema's properties.
    let primaryKeyIndex: Int
    /// The properties that sync, by position in the schema: all but the
    /// primary key and inverse links.
    let synced: [(index: Int, property: PropertySchema, kind: String)]

    /// Refuses a type that cannot sync yet, saying which property and why:
    /// nothing a user declared may be dropped silently.
    init(_ schema: ObjectSchema) throws {
        name = schema.name
        self.schema = schema
        guard let primaryKey = schema.properties.firstIndex(where: \.isPrimaryKey) else {
            throw TroveError(
                .invalidProperty,
                "\(schema.name) cannot sync: a synced type needs a primary key (a String, UUID or ObjectId): declare one with @Persisted(primaryKey: true)"
            )
        }
        let key = schema.properties[primaryKey]
        guard [.string, .uuid, .objectId].contains(key.type), key.collection == nil else {
            throw TroveError(
                .invalidProperty,
                "\(schema.name).\(key.name) is the primary key of a synced type: it must be a String, UUID or ObjectId, not \(key.typeDescription) (two devices would pick the same integers)"
            )
        }
        primaryKeyIndex = primaryKey
        var synced: [(Int, PropertySchema, String)] = []
        for (index, property) in schema.properties.enumerated() where index != primaryKey {
            if property.collection == .linkingObjects { continue }  // computed from the links that sync
            guard let kind = Self.kind(of: property) else {
                throw TroveError(
                    .invalidProperty,
                    "\(schema.name).\(property.name) (\(property.typeDescription)) cannot sync yet: sets and maps of embedded objects, and lists, sets and maps of mixed values, are not synced by this version of TroveSync; leave the type out of the synced types or change the property"
                )
            }
            synced.append((index, property, kind))
        }
        self.synced = synced
    }

    /// The server's kind for a property, or nil when it does not sync yet: a
    /// value's kind, or for a list, set or map `list:`, `set:` or `map:` and
    /// its elements' kind.
    private static func kind(of property: PropertySchema) -> String? {
        if property.ownsTargets == true {
            switch property.collection {
            case nil: return "embedded"
            case .list: return "list:embedded"
            default: return nil
            }
        }
        if let collection = property.collection {
            guard [.list, .set, .map].contains(collection), property.type != .mixed, let element = valueKind(of: property)
            else { return nil }
            return collection.rawValue + ":" + element
        }
        return valueKind(of: property)
    }

    private static func valueKind(of property: PropertySchema) -> String? {
        switch property.type {
        case .bool: return "bool"
        case .int, .int8, .int16, .int32: return "int"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .uuid: return "uuid"
        case .decimal, .decimal128: return "decimal"
        case .objectId: return "objectId"
        case .link: return "link"
        case .mixed: return "mixed"
        }
    }

    /// Whether a kind is a set's or a map's, merged per member or key.
    static func isKeyed(_ kind: String) -> Bool { kind.hasPrefix("set:") || kind.hasPrefix("map:") }

    /// Whether a kind is a list's, one value as a whole.
    static func isList(_ kind: String) -> Bool { kind.hasPrefix("list:") }

    /// Whether a kind is an embedded object's, one value as a whole (a JSON object of its values).
    static func isEmbedded(_ kind: String) -> Bool { kind == "embedded" }

    /// The definition `define_type` takes.
    var definition: [String: Any] {
        var properties = [schema.properties[primaryKeyIndex].name: Self.kind(of: schema.properties[primaryKeyIndex])!]
        for (_, property, kind) in synced { properties[property.name] = kind }
        return ["primaryKey": schema.properties[primaryKeyIndex].name, "properties": properties]
    }
}
