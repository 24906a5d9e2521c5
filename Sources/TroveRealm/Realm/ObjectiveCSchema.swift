import Foundation
import Trove

// Realm's Objective-C schema classes, as Swift code that mixes in Realm's
// Objective-C API uses them: to build a file with a schema of its own (an old
// version of a model, to test a migration) and to read a file's schema
// without model classes. Only that part of the Objective-C API is here.

/// The type of an ``RLMProperty`` (Realm's `RLMPropertyType`).
public enum RLMPropertyType: Int, Sendable {
    case int, bool, float, double, string, data, any, date, object, linkingObjects, objectId, decimal128, UUID

    /// Trove's stored type for it.
    var storedType: PropertyType {
        switch self {
        case .int: return .int
        case .bool: return .bool
        case .float: return .float
        case .double: return .double
        case .string: return .string
        case .data: return .data
        case .any: return .mixed
        case .date: return .date
        case .object, .linkingObjects: return .link
        case .objectId: return .objectId
        case .decimal128: return .decimal128
        case .UUID: return .uuid
        }
    }

    /// Realm's type for a stored type (every integer width is `.int`).
    init(_ property: PropertySchema) {
        switch property.type {
        case .bool: self = .bool
        case .int, .int8, .int16, .int32: self = .int
        case .float: self = .float
        case .double: self = .double
        case .string: self = .string
        case .data: self = .data
        case .date: self = .date
        case .uuid: self = .UUID
        case .decimal, .decimal128: self = .decimal128
        case .objectId: self = .objectId
        case .mixed: self = .any
        case .link: self = property.collection == .linkingObjects ? .linkingObjects : .object
        }
    }
}

/// One property of an ``RLMObjectSchema`` (Realm's `RLMProperty`).
///
/// ```swift
/// let old = RLMProperty(name: "age", type: .string, objectClassName: nil,
///                       linkOriginPropertyName: nil, indexed: false, optional: false)
/// ```
public final class RLMProperty: @unchecked Sendable {
    /// The property's name.
    public var name: String
    /// Its type.
    public var type: RLMPropertyType
    /// For a link: the type linked to.
    public var objectClassName: String?
    /// For an inverse link: the link property of `objectClassName` that points here.
    public var linkOriginPropertyName: String?
    /// Whether it is indexed.
    public var indexed: Bool
    /// Whether it can hold nil.
    public var optional: Bool
    /// Realm's name for the property in the file; Trove stores properties
    /// under their names, so only `name` counts.
    public var columnName: String?

    /// A property of a type and options, as Realm's Objective-C initializer takes them.
    public init(
        name: String, type: RLMPropertyType, objectClassName: String?, linkOriginPropertyName: String?, indexed: Bool,
        optional: Bool
    ) {
        self.name = name
        self.type = type
        self.objectClassName = objectClassName
        self.linkOriginPropertyName = linkOriginPropertyName
        self.indexed = indexed
        self.optional = optional
    }

    /// Realm's view of a stored property.
    convenience init(_ property: PropertySchema) {
        self.init(
            name: property.name, type: RLMPropertyType(property), objectClassName: property.objectType,
            linkOriginPropertyName: property.originProperty, indexed: property.isIndexed, optional: property.isOptional)
    }

    /// The property as Trove stores it.
    var schema: PropertySchema {
        PropertySchema(
            name: name, type: type.storedType, isOptional: optional || type == .object, isIndexed: indexed,
            objectType: objectClassName, collection: type == .linkingObjects ? .linkingObjects : nil,
            originProperty: linkOriginPropertyName)
    }
}

/// One type of an ``RLMSchema`` (Realm's `RLMObjectSchema`).
///
/// ```swift
/// let person = RLMObjectSchema(className: "Person", objectClass: MigrationObject.self, properties: [name, age])
/// ```
public final class RLMObjectSchema: @unchecked Sendable {
    /// The type's name.
    public var className: String
    /// Its properties, in order.
    public var properties: [RLMProperty]

    /// A type of `properties` (``RLMProperty`` values); `objectClass` is
    /// accepted for Realm's signature: the type is stored by its name.
    public init(className: String, objectClass: AnyClass, properties: [AnyObject]) {
        self.className = className
        self.properties = properties.compactMap { $0 as? RLMProperty }
    }

    /// Realm's view of a stored type.
    init(_ schema: ObjectSchema) {
        className = schema.name
        properties = schema.properties.map(RLMProperty.init)
    }

    /// The property named `name`, or nil.
    public subscript(name: String) -> RLMProperty? { properties.first { $0.name == name } }
}

/// The types of a file (Realm's `RLMSchema`).
public final class RLMSchema: @unchecked Sendable {
    /// The types.
    public var objectSchema: [RLMObjectSchema] = []

    /// No types yet; set ``objectSchema``.
    public init() {}

    /// The type named `className`, or nil.
    public func schema(forClassName className: String) -> RLMObjectSchema? {
        objectSchema.first { $0.className == className }
    }

    /// The type named `className`, or nil.
    public subscript(className: String) -> RLMObjectSchema? { schema(forClassName: className) }
}

/// How to open an ``RLMRealm`` (Realm's `RLMRealmConfiguration`).
public final class RLMRealmConfiguration: @unchecked Sendable {
    /// The file; the default configuration's when nil.
    public var fileURL: URL?
    /// The types to give the file, instead of the program's classes.
    public var customSchema: RLMSchema?
    /// Open the file as it is, with no model classes (its types read dynamically).
    public var dynamic = false
    /// The schema version written with a custom schema.
    public var schemaVersion: UInt64 = 0

    /// A configuration of the default file.
    public init() {}
}

/// A Realm seen through Realm's Objective-C API (`RLMRealm`): a file opened
/// with a schema of its own, or dynamically. The Swift ``Realm`` reads the
/// same file afterwards.
///
/// ```swift
/// let config = RLMRealmConfiguration()
/// config.fileURL = url
/// config.customSchema = oldSchema
/// let old = try RLMRealm(configuration: config)
/// try old.transaction { old.createObject("Person", withValue: ["Ann", "30"]) }
/// ```
public final class RLMRealm {
    /// The Trove handle underneath.
    public let database: Database

    /// Opens the file of `configuration`, giving it the custom schema's types.
    public init(configuration: RLMRealmConfiguration) throws {
        var trove = Realm.Configuration.defaultConfiguration.troveConfiguration
        if let fileURL = configuration.fileURL { trove.fileURL = fileURL }
        trove.objectTypes = []
        trove.valueTypes = []
        trove.schemaVersion = configuration.schemaVersion
        trove.acceptsAnySchemaVersion = configuration.customSchema == nil
        database = try realmErrors { try Database(configuration: trove) }
        for type in configuration.customSchema?.objectSchema ?? [] {
            try realmErrors {
                try database.createType(ObjectSchema(name: type.className, properties: type.properties.map(\.schema)))
            }
        }
    }

    /// The file's types.
    public var schema: RLMSchema {
        let schema = RLMSchema()
        schema.objectSchema = ((try? database.storedSchemas()) ?? []).map(RLMObjectSchema.init)
        return schema
    }

    /// Runs `block` in a write transaction.
    public func transaction(_ block: () throws -> Void) throws {
        try realmErrors { try database.write(block) }
    }

    /// Creates an object of a type named as a string from values (an array
    /// in property order or a dictionary), inside a write.
    @discardableResult
    public func createObject(_ className: String, withValue value: Any) -> DynamicObject {
        do {
            return try database.create(className, value: value)
        } catch {
            realmMisuse("Cannot create a \(className)", error)
        }
    }
}

extension Array where Element == ObjectSchema {
    /// The types (Realm's `Schema.objectSchema`, for a migration's
    /// `oldSchema` and `newSchema`).
    ///
    /// ```swift
    /// migration.oldSchema.objectSchema.count
    /// ```
    public var objectSchema: [ObjectSchema] { self }

    /// The type named `className`, or nil (Realm's `Schema[className]`).
    ///
    /// ```swift
    /// migration.oldSchema["Person"]?["age"]?.type
    /// ```
    public subscript(className: String) -> ObjectSchema? { first { $0.name == className } }
}
