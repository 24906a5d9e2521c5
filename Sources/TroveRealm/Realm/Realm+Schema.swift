import Trove

extension Realm {
    /// The schema of every type stored in the Realm (Realm's `realm.schema`).
    ///
    /// ```swift
    /// let photo = realm.schema["PhotoData"]
    /// print(photo?.primaryKeyProperty?.name ?? "no primary key")
    /// ```
    ///
    /// With Realm's default configuration (no `objectTypes`), it also holds
    /// every model class of the program the file does not store yet, as
    /// Realm's default schema does.
    public var schema: Schema {
        var schemas = (try? database.storedSchemas()) ?? []
        if configuration.objectTypes == nil {
            let stored = Set(schemas.map(\.className))
            schemas += ModelClasses.all.filter { !stored.contains($0.objectTypeName) }.compactMap { $0.sharedSchema() }
            schemas.sort { $0.className < $1.className }
        }
        return Schema(objectSchema: schemas)
    }

    /// Binds the model class of the program stored under `typeName` (and
    /// those it links to), giving the file the type if it lacks it: Realm's
    /// default configuration has every model class from the start, and its
    /// dynamic reads hand out linked objects as their classes. A class whose
    /// stored schema differs is left alone (the dynamic API reads the file's).
    /// A Trove handle wrapped by ``Realm/init(_:)`` keeps the classes it uses.
    func registerModelClass(named typeName: String) {
        guard configuration.objectTypes == nil, Realm.opened(database), let type = ModelClasses.named(typeName) else {
            return
        }
        try? database.bind(type)
    }

    /// Realm's `Realm.Schema`: the top-level ``TroveRealm/Schema``.
    public typealias Schema = TroveRealm.Schema
}

/// Every object type of a Realm, with its properties.
public struct Schema: Sendable, Equatable, CustomStringConvertible {
    /// The types, in name order.
    public let objectSchema: [ObjectSchema]

    /// The schema of the type named `className`, or nil.
    public subscript(className: String) -> ObjectSchema? { objectSchema.first { $0.className == className } }

    /// The type names and their properties.
    public var description: String {
        objectSchema.map { schema in
            "\(schema.className) {" + schema.properties.map { " \($0.name): \($0.typeDescription)" }.joined(separator: ",")
                + " }"
        }.joined(separator: "\n")
    }
}

extension PropertySchema {
    /// Whether the property is a list (Realm's `Property.isArray`).
    ///
    /// ```swift
    /// let lists = schema.properties.filter(\.isArray)
    /// ```
    public var isArray: Bool { collection == .list }

    /// Whether the property is a set (Realm's `Property.isSet`).
    ///
    /// ```swift
    /// let sets = schema.properties.filter(\.isSet)
    /// ```
    public var isSet: Bool { collection == .set }

    /// Whether the property is a map (Realm's `Property.isMap`).
    ///
    /// ```swift
    /// let maps = schema.properties.filter(\.isMap)
    /// ```
    public var isMap: Bool { collection == .map }
}

extension PropertyType {
    /// Realm's name for a link to an object: ``Trove/PropertyType/link``.
    ///
    /// ```swift
    /// if property.type == .object { print("links to", property.objectType ?? "?") }
    /// ```
    public static var object: PropertyType { .link }

    /// Realm's name for an inverse link. Trove stores an inverse link as a link
    /// whose collection kind is `.linkingObjects`, so this is ``Trove/PropertyType/link``
    /// too: tell the two apart by `property.collection`.
    ///
    /// ```swift
    /// let inverse = property.type == .linkingObjects && property.collection == .linkingObjects
    /// ```
    public static var linkingObjects: PropertyType { .link }

    /// Realm's name for a mixed value (`AnyRealmValue`): ``Trove/PropertyType/mixed``.
    ///
    /// ```swift
    /// if property.type == .any { … }
    /// ```
    public static var any: PropertyType { .mixed }

    /// Realm's spelling of ``Trove/PropertyType/uuid``.
    ///
    /// ```swift
    /// if property.type == .UUID { … }
    /// ```
    public static var UUID: PropertyType { .uuid }
}
