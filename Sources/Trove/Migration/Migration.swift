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
///         migration.enumerateObjects(ofType: "PhotoData") { old, new in
///             new?["memo"] = "from \(old?["date"] as? String ?? "?")"
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

    /// Calls `block` for every object of a type with the object before the
    /// migration (`oldObject`: its old schema and values, read-only) and the
    /// object after it (`newObject`: live in the new schema, its values
    /// already carried over — same-named properties copied, converted where
    /// the type changed, new ones at their defaults). Both are
    /// ``DynamicObject``s, given as optionals as Realm gives them; what the
    /// block sets on the new one is stored. An object deleted earlier in the
    /// migration is skipped.
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
    ///     let first = oldObject!["firstName"] as! String, last = oldObject!["lastName"] as! String
    ///     newObject!["fullName"] = "\(first) \(last)"
    /// }
    /// ```
    ///
    /// A type in neither schema has no objects: the block is not called (as
    /// in Realm). It throws only what `block` throws: a failure of its own (a
    /// value a property cannot take) is thrown by the migration, which then
    /// leaves the file untouched.
    public func enumerateObjects(
        ofType typeName: String, _ block: (_ oldObject: DynamicObject?, _ newObject: DynamicObject?) throws -> Void
    ) rethrows {
        guard state.deferredError == nil else { return }
        // A type in neither schema has no objects to visit, nor one whose data
        // was deleted: what the migration creates is not enumerated (as in Realm).
        guard oldSchema.contains(where: { $0.name == typeName }) || newSchema.contains(where: { $0.name == typeName }),
            !deleted.contains(typeName)
        else { return }
        let converted: TypeConversion
        do {
            converted = try database.convertType(typeName, in: self)
        } catch {
            state.deferredError = error
            return
        }
        let binding = database.dynamicBinding(for: converted.table)
        for (key, old) in converted.objects where database.contains(objectKey: key, in: converted.table) {
            let oldObject = DynamicObject(snapshotOf: converted.oldSchema, values: old)
            oldObject.bind(to: database, objectKey: key, binding: binding)
            try block(oldObject, database.materialize(DynamicObject.self, objectKey: key, binding: binding))
        }
    }

    /// Deletes every object of a type and the type itself (for a model type,
    /// it is created again, empty, with its new schema); returns whether the
    /// file had the type. As with ``delete(_:)``, a failure fails the
    /// migration (Realm's does not throw here either).
    ///
    /// ```swift
    /// migration.deleteData(forType: "Thumbnail")   // a cache the new version rebuilds
    /// ```
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard state.deferredError == nil else { return false }
        do {
            let existed = try database.deleteType(typeName, state)
            deleted.insert(typeName)
            converted.insert(typeName)
            return existed
        } catch {
            state.deferredError = error
            return false
        }
    }

    /// Adds an object of a type in its new schema, from stored values by
    /// property name; returns it.
    ///
    /// ```swift
    /// try migration.create("Memo", value: ["id": .int(10), "body": .string("fresh")])
    /// ```
    @discardableResult
    public func create(_ typeName: String, value: [String: StoredValue]) throws -> DynamicObject {
        try createObject(typeName, from: value)
    }

    /// Adds an object of a type in its new schema from what
    /// ``Database/create(_:value:update:)`` takes (for layers built on Trove).
    package func createObject(_ typeName: String, from value: Any) throws -> DynamicObject {
        _ = try database.convertType(typeName, in: self, needValues: false)
        return try database.create(typeName, value: value)
    }

    /// Deletes an object during the migration (a new object that
    /// ``enumerateObjects(ofType:_:)`` handed over, or one ``create(_:value:)``
    /// made). A failure is thrown by the migration, as Realm's does not throw here.
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: "Memo") { _, newObject in
    ///     if newObject!["body"] as? String == "" { migration.delete(newObject!) }
    /// }
    /// ```
    public func delete(_ object: DynamicObject) {
        guard state.deferredError == nil else { return }
        do {
            try database.delete(object)
        } catch {
            state.deferredError = error
        }
    }
}
