/// The stored shape of one object type: its name and its properties in
/// record order.
public struct ObjectSchema: Codable, Sendable, Equatable {
    /// The type's name in the file: for a model type, its Swift name without
    /// the module.
    public var name: String
    /// The persisted properties, in record order.
    public var properties: [PropertySchema]
    /// The stored model classes this one descends from, nearest first
    /// (`["User"]` for `class Me: User`); nil for a class that descends
    /// from ``Object`` directly. Stored only when set.
    ///
    /// The objects of one class hierarchy share their object keys, so a
    /// link or a list declared with a base class can hold objects of its
    /// subclasses.
    public var ancestors: [String]?

    /// A schema with the given type name and properties (in record order).
    public init(name: String, properties: [PropertySchema], ancestors: [String]? = nil) {
        self.name = name
        self.properties = properties
        self.ancestors = ancestors?.isEmpty == true ? nil : ancestors
    }

    /// The model class this one descends from directly, if it is a stored one.
    public var superclassName: String? { ancestors?.first }

    /// The class whose object keys the type shares: the top of its hierarchy, or itself.
    var keySpace: String { ancestors?.last ?? name }

    /// Whether the type is `typeName` or one of its subclasses.
    func isKind(of typeName: String) -> Bool { name == typeName || ancestors?.contains(typeName) == true }

    /// The primary key property, if the type has one.
    public var primaryKey: PropertySchema? { properties.first { $0.isPrimaryKey } }

    /// The property named `name`, or nil if the type has none.
    public subscript(name: String) -> PropertySchema? { properties.first { $0.name == name } }

    /// Realm's name for ``name``: the type's name in the file.
    public var className: String { name }

    /// The model class objects of the type are read as: the class of this
    /// name the program has, or ``DynamicObject`` for a type only the file knows
    /// (Realm's `objectClass`).
    ///
    /// ```swift
    /// let type = realm.schema["Dog"]?.objectClass   // Dog.self
    /// ```
    public var objectClass: AnyClass { ModelInfo.knownType(named: name) ?? DynamicObject.self }
    /// Realm's name for ``primaryKey``.
    public var primaryKeyProperty: PropertySchema? { primaryKey }

    /// Compares a schema from code (`self`) with the one stored in a file and
    /// says how to reconcile them: a list of additive changes that can be
    /// applied on open, and the differences that need a migration.
    func reconcile(withStored stored: ObjectSchema) -> (merged: ObjectSchema, additive: [String], blocking: [String]) {
        // A class's place in a hierarchy is fixed when it is first stored: its objects' keys depend on it.
        var merged = stored
        var additive: [String] = []
        var blocking: [String] = []
        for property in properties {
            guard let index = stored.properties.firstIndex(where: { $0.name == property.name }) else {
                merged.properties.append(property)
                additive.append("\(name).\(property.name): new property of type \(property.typeDescription)")
                if property.isPrimaryKey {
                    blocking.append("\(name).\(property.name): new primary key; changing the primary key needs a migration")
                }
                continue
            }
            let old = stored.properties[index]
            if old.type != property.type || old.isOptional != property.isOptional || old.objectType != property.objectType
                || old.collection != property.collection
            {
                blocking.append(
                    "\(name).\(property.name): type changed from \(old.typeDescription) to \(property.typeDescription); raise the schema version and migrate"
                )
            }
            if old.isPrimaryKey != property.isPrimaryKey {
                blocking.append(
                    "\(name).\(property.name): \(property.isPrimaryKey ? "became" : "is no longer") the primary key; raise the schema version and migrate"
                )
            }
            if old.isIndexed != property.isIndexed && !property.isPrimaryKey {
                merged.properties[index].isIndexed = property.isIndexed
                additive.append("\(name).\(property.name): index \(property.isIndexed ? "added" : "removed")")
            }
            if old.isFullTextIndexed != property.isFullTextIndexed {
                merged.properties[index].isFullTextIndexed = property.isFullTextIndexed
                additive.append(
                    "\(name).\(property.name): full-text index \(property.isFullTextIndexed ? "added" : "removed")")
            }
            merged.properties[index].isAutoIncrement = property.isAutoIncrement
            // Delete rules and inverse links are behaviour, not layout: the code decides.
            merged.properties[index].deleteRule = property.deleteRule
            merged.properties[index].originProperty = property.originProperty
            merged.properties[index].ownsTargets = property.ownsTargets
            merged.properties[index].columnName = property.columnName
        }
        for old in stored.properties where !properties.contains(where: { $0.name == old.name }) {
            blocking.append(
                "\(name).\(old.name): property of type \(old.typeDescription) is in the file but not in the model; raise the schema version and migrate (or delete the data)"
            )
        }
        return (merged, additive, blocking)
    }
}
