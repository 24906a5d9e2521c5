import TroveStorage

/// What a migration block gets: the schemas before and after, and the
/// operations that carry the data from one to the other. Everything happens
/// in one write transaction: if the block throws (or the process dies), the
/// file stays at its old version, untouched.
///
/// ```swift
/// let config = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [PhotoData.self]) { migration, oldVersion in
///     if oldVersion < 2 {
///         migration.renameProperty(onType: "PhotoData", from: "text", to: "memo")
///         try migration.enumerateObjects(ofType: "PhotoData") { old, new in
///             new["dateAdded"] = old["date"].flatMap { ... } ?? .date(Date())
///         }
///     }
/// }
/// ```
public final class Migration {
    /// The schema of every type stored in the file before the migration.
    public let oldSchema: [ObjectSchema]
    /// The schema of every type the model declares (`Configuration.objectTypes`).
    public let newSchema: [ObjectSchema]

    let database: Database
    let state: WriteState
    var renames: [String: [(from: String, to: String)]] = [:]
    var conversions: [String: TypeConversion] = [:]
    /// Types whose records were already rewritten to the new schema.
    var converted: Set<String> = []
    var deleted: Set<String> = []

    init(database: Database, state: WriteState, oldSchema: [ObjectSchema], newSchema: [ObjectSchema]) {
        self.database = database
        self.state = state
        self.oldSchema = oldSchema
        self.newSchema = newSchema
    }

    /// Carries a property's values over to its new name (call before
    /// ``enumerateObjects(ofType:_:)`` for that type).
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        renames[typeName, default: []].append((oldName, newName))
    }

    /// Gives a stored type a new name (Realm's `renameType`): its objects,
    /// indexes, collections and counters move over, and links to it from
    /// other types follow. Call it before touching either name.
    ///
    /// ```swift
    /// config.migration = { migration, _ in
    ///     try migration.renameType(from: "Photo", to: "PhotoData")
    /// }
    /// ```
    public func renameType(from oldName: String, to newName: String) throws {
        if converted.contains(oldName) || converted.contains(newName) {
            throw TroveError(
                .invalidModel,
                "renameType(from: \"\(oldName)\", to: \"\(newName)\") must come before enumerateObjects, create or deleteData on either type"
            )
        }
        try database.renameType(from: oldName, to: newName, state)
    }

    /// Calls `block` for every object of a type with its values before the
    /// migration (`old`, read-only) and after (`new`, already carried over:
    /// same-named properties copied, converted where the type changed, new
    /// ones at their defaults). Changes to `new` are stored.
    public func enumerateObjects(ofType typeName: String, _ block: (DynamicObject, MigrationObject) throws -> Void) throws {
        let converted = try database.convertType(typeName, in: self)
        for (key, old) in converted.objects {
            let object = MigrationObject(schema: converted.table.schema, values: converted.newValues[key] ?? [])
            try block(old, object)
            if object.changed {
                try database.rewriteRecord(object.values, objectKey: key, in: converted.table, state)
            }
        }
    }

    /// Deletes every object of a type and the type itself (for a model type,
    /// it is created again, empty, with its new schema).
    public func deleteData(forType typeName: String) throws {
        try database.deleteType(typeName, state)
        deleted.insert(typeName)
        converted.insert(typeName)
    }

    /// Adds an object of a type in its new schema.
    public func create(_ typeName: String, value: [String: StoredValue]) throws {
        _ = try database.convertType(typeName, in: self, needValues: false)
        try database.add(value, ofType: typeName, update: .error)
    }
}

/// The new values of one object during a migration, by property name.
public final class MigrationObject {
    /// The type's schema after the migration: the properties the subscript
    /// reads and sets.
    public let schema: ObjectSchema
    var values: [StoredValue]
    var changed = false

    init(schema: ObjectSchema, values: [StoredValue]) {
        self.schema = schema
        self.values = values
    }

    /// The value of a property; setting it stores it when the block returns.
    public subscript(name: String) -> StoredValue? {
        get { schema.properties.firstIndex { $0.name == name }.map { values[$0] } }
        set {
            guard let column = schema.properties.firstIndex(where: { $0.name == name }) else {
                preconditionFailure("Trove: \(schema.name) has no property '\(name)' in its new schema")
            }
            values[column] = newValue ?? .null
            changed = true
        }
    }
}
