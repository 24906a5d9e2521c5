import Foundation

/// A stored object read and written by property name, without its model
/// class (Realm's `DynamicObject`): what tools, migrations and code that
/// knows a type only by its name see of a file.
///
/// ```swift
/// let dogs = try db.dynamicObjects("Dog").filter("age > 3")
/// for dog in dogs { print(dog["name"] as? String ?? "-", dog.age as? Int ?? 0) }
/// try db.write {
///     let rex = try db.create("Dog", value: ["name": "Rex", "age": 5])
///     rex["age"] = 6                     // or rex.age = 6
///     rex.dynamicList("toys").append(try db.create("Toy", value: ["name": "ball"]))
/// }
/// ```
///
/// It is a live ``Object`` like any other: it sits in ``Results``, in a
/// `List<DynamicObject>` and in links, reports ``Object/isInvalidated`` once
/// deleted, and equals the model class's object for the same stored object.
/// Each value reads as the Swift type of its stored type (`Int8` for an
/// int8, `String?` for an optional string, `List<String>`, `Map<String, Double?>`),
/// a list, set or map of objects as `List<DynamicObject>`, `MutableSet<DynamicObject>`
/// or `Map<String, DynamicObject?>`, and a link (or an object in a `Mixed`)
/// as Realm hands it: the model class's object when this handle uses a
/// class stored under that name, a `DynamicObject` otherwise. A name the
/// type does not have traps, naming its properties.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// A migration's old object: its type's schema and its values before the
    /// migration. It is bound to the object of the new schema with the same
    /// key, whose collections it reads; its values it reads from here.
    private var snapshot: (schema: ObjectSchema, values: [StoredValue])?

    /// The old object of a migration, bound to the object it became.
    convenience init(snapshotOf schema: ObjectSchema, values: [StoredValue]) {
        self.init()
        snapshot = (schema, values)
    }

    /// The property named `member`, as `object[member]` reads and sets it
    /// (Realm's `@dynamicMemberLookup`): `dog.name` is `dog["name"]`. A name
    /// that ``Object`` already uses (`description`, `realm`…) needs the subscript.
    ///
    /// ```swift
    /// let name = dog.name as? String
    /// try db.write { dog.age = 4 }
    /// ```
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// The schema of the object's stored type, as the file has it (for a
    /// migration's old object, the type's schema before the migration).
    ///
    /// ```swift
    /// print(dog.objectSchema.name, dog.objectSchema.properties.map(\.name))
    /// ```
    public override var objectSchema: ObjectSchema {
        snapshot?.schema ?? _table?.schema ?? ObjectSchema(name: "DynamicObject", properties: [])
    }

    /// The stored values, one per property of ``objectSchema`` in its order,
    /// as the file holds them: a link as its target's object key, a
    /// collection as `.null` (read it with ``Database/elements(of:property:)``).
    /// What tools such as the `trove` command line read.
    ///
    /// ```swift
    /// for (property, value) in zip(dog.objectSchema.properties, dog.storedValues) { print(property.name, value) }
    /// ```
    public var storedValues: [StoredValue] {
        if let snapshot { return snapshot.values }
        guard let database = _database, let table = _table else { return [] }
        do {
            guard let values = try database.recordValues(_objectKey, in: table, database.readTransaction()) else {
                preconditionFailure("Trove: this \(table.name) object was deleted; check `isInvalidated` before reading it")
            }
            return values
        } catch {
            fatalError("Trove: cannot read a \(table.name) object from \(database.path): \(error)")
        }
    }

    /// The object's key in its file (what links to it store).
    package var objectKey: UInt64 { _objectKey }

    /// The type name and each value the object holds, as Realm prints an
    /// object (``Object/description``); `[invalid object]` once deleted.
    ///
    /// ```swift
    /// print(try db.dynamicObjects("Dog").first?.description ?? "no dogs")
    /// ```
    public override var description: String {
        guard _table != nil else { return "DynamicObject <unmanaged>" }
        if snapshot == nil, isInvalidated { return "[invalid object]" }
        return RealmStyleDescription.object(self, depth: RealmStyleDescription.maxDepth, checkingValidity: false)
    }

    // MARK: Properties by name

    override func _namedProperty(_ key: String) -> NamedProperty? {
        let schema = checkedSchema()
        let column = snapshot == nil ? _table?.columnIndex[key] : schema.properties.firstIndex { $0.name == key }
        return column.map { NamedProperty(column: $0, schema: schema.properties[$0]) }
    }

    override var _namedProperties: [NamedProperty] {
        checkedSchema().properties.enumerated().map { NamedProperty(column: $0, schema: $1) }
    }

    override func _readProperty(_ property: NamedProperty) -> Any? {
        let schema = property.schema
        if let snapshot { return oldValue(of: property, stored: snapshot.values[property.column]) }
        if schema.isInRecord, schema.type == .link || schema.type == .mixed {
            return _database!.dynamicValue(_readManaged(column: property.column), of: schema)
        }
        return property.storable._troveAnyGet(self, column: property.column)
    }

    override func _storeProperty(_ value: Any?, in property: NamedProperty) -> Bool {
        guard snapshot == nil else {
            preconditionFailure("Trove: the old object of a migration is read-only; set \(property.schema.name) on the new one")
        }
        let schema = property.schema
        if schema.isInRecord, schema.type == .link {
            let target = value.flatMap(flattenOptional).flatMap { $0 is NSNull ? nil : $0 }
            guard target == nil || target is Object else { return false }
            _writeLink(property.column, target as? Object)
            return true
        }
        if schema.isPrimaryKey, let database = _database, database.isMigrating {
            guard let key = value.flatMap({ property.storable._troveConvertAny($0) }) else { return false }
            database.changePrimaryKey(of: self, to: key._troveStored)
            return true
        }
        return property.storable._troveAnySet(value, self, column: property.column)
    }

    /// The schema names are looked up in; an object made with `DynamicObject()` has none.
    private func checkedSchema() -> ObjectSchema {
        guard _table != nil else {
            preconditionFailure(
                "Trove: a DynamicObject comes from a database (dynamicObjects(_:), create(_:value:)); one made with DynamicObject() has no type"
            )
        }
        return objectSchema
    }

    /// A value of a migration's old object: its values as they were; its
    /// collections are the ones the object still has under the same name.
    private func oldValue(of property: NamedProperty, stored: StoredValue) -> Any? {
        let schema = property.schema
        if schema.isInRecord {
            if schema.type == .link || schema.type == .mixed { return _database!.dynamicValue(stored, of: schema) }
            return property.storable._troveAny(fromStored: stored)
        }
        guard let table = _table, let column = table.columnIndex[schema.name],
            table.schema.properties[column].collection == schema.collection
        else {
            preconditionFailure(
                "Trove: \(objectSchema.name).\(schema.name) is a collection the new schema does not keep; an old object reads only the collections its type still has"
            )
        }
        return NamedProperty(column: column, schema: table.schema.properties[column]).storable._troveAnyGet(self, column: column)
    }
}
