import TroveStorage

/// Objects of a type named as a string, as live ``DynamicObject``s: read,
/// queried, created, changed and deleted without the type's model class.
extension Database {
    /// Every stored object of a type named as a string, as live
    /// ``DynamicObject``s; filter and sort them like any ``Results``.
    ///
    /// ```swift
    /// for photo in try db.dynamicObjects("PhotoData").filter("memo CONTAINS 'cat'") {
    ///     print(photo["id"] as? String ?? "-", photo.memo as? String ?? "-")
    /// }
    /// ```
    ///
    /// Throws `TroveError.Kind.invalidModel` when the file has no such type.
    public func dynamicObjects(_ typeName: String) throws -> Results<DynamicObject> {
        checkIsolation()
        return Results(database: self, source: .object(try dynamicBinding(named: typeName)))
    }

    /// The object of a type named as a string with the given primary key, or nil.
    ///
    /// ```swift
    /// if let dog = try db.dynamicObject(ofType: "Dog", forPrimaryKey: "Rex") { print(dog.age as? Int ?? 0) }
    /// ```
    ///
    /// Throws `TroveError.Kind.invalidModel` when the file has no such type,
    /// and `TroveError.Kind.invalidPrimaryKey` when it has no primary key or
    /// `key` is not of the key's type.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) throws -> DynamicObject? {
        checkIsolation()
        let table = try tableInfo(named: typeName)
        guard let column = table.primaryKeyColumn else {
            throw TroveError(.invalidPrimaryKey, "\(typeName) has no primary key", path: path)
        }
        let property = NamedProperty(column: column, schema: table.schema.properties[column])
        guard let converted = property.storable._troveConvertAny(key) else {
            throw TroveError(
                .invalidPrimaryKey,
                "the primary key \(typeName).\(property.schema.name) is \(property.schema.typeDescription), not \(type(of: key))",
                path: path)
        }
        guard let objectKey = try objectKey(forPrimaryKey: converted._troveStored, in: table) else { return nil }
        return dynamicObject(in: table, objectKey: objectKey)
    }

    /// The object of a type named as a string with an object key (as links
    /// store it), or nil when there is none: how tools name objects of types
    /// without a primary key.
    package func dynamicObject(ofType typeName: String, objectKey: UInt64) throws -> DynamicObject? {
        let table = try tableInfo(named: typeName)
        guard contains(objectKey: objectKey, in: table) else { return nil }
        return dynamicObject(in: table, objectKey: objectKey)
    }

    /// The object key of the object of a type named as a string with the
    /// given primary key, or nil when there is none.
    package func objectKey(ofType typeName: String, primaryKey: StoredValue) throws -> UInt64? {
        try objectKey(forPrimaryKey: primaryKey, in: try tableInfo(named: typeName))
    }

    /// Makes an object of a type named as a string from values and adds it,
    /// inside a write (Realm's `dynamicCreate`). `value` is what
    /// ``Object/init(value:)`` takes — a dictionary by property name, an
    /// array in property order, or another object — with nested values (or
    /// objects) for links and collections, made as objects of the types they
    /// link to. Properties not given take their defaults.
    ///
    /// With `update: .modified` or `.all`, an object whose primary key is
    /// already stored is updated in place (only the properties a dictionary
    /// gives) and returned.
    ///
    /// ```swift
    /// try db.write {
    ///     let dog = try db.create("Dog", value: ["name": "Rex", "owner": ["name": "Ann"]])
    ///     try db.create("Dog", value: ["name": "Rex", "age": 4], update: .modified)
    /// }
    /// ```
    ///
    /// Throws `TroveError.Kind.invalidValue` for a value of the wrong type,
    /// `TroveError.Kind.invalidProperty` for a name the type does not have,
    /// `TroveError.Kind.primaryKeyExists` with `.error` for a stored primary
    /// key, and `TroveError.Kind.invalidObject` for an embedded type (create it
    /// as the value of the property that holds it).
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) throws
        -> DynamicObject
    {
        try create(typeName, value: value, update: update, owned: false)
    }

    /// `owned`: made as the target of a link (the only way an embedded object is made).
    func create(_ typeName: String, value: Any, update: UpdatePolicy, owned: Bool) throws -> DynamicObject {
        let state = try requireWrite("create(_:value:update:)")
        let table = try tableInfo(named: typeName)
        if !owned, try isEmbedded(table) {
            throw TroveError(
                .invalidObject,
                "\(typeName) is an embedded object: make it as the value of the property of the object that holds it",
                path: path)
        }
        let properties = table.schema.properties.enumerated().map { NamedProperty(column: $0, schema: $1) }
        let key = try Database.primaryKey(in: value, among: properties, of: typeName)
        if update != .error, let key, let existing = try objectKey(forPrimaryKey: key._troveStored, in: table) {
            let object = dynamicObject(in: table, objectKey: existing)
            try object._populate(from: value, database: self, update: update)
            return object
        }
        var record = table.layout.fallbacks
        if let column = table.primaryKeyColumn, let key { record[column] = key._troveStored }
        let objectKey = try storeRecord(record, in: table, policy: .error, state).objectKey
        let object = dynamicObject(in: table, objectKey: objectKey)
        // Property setters keep their failures for the commit; this call reports them.
        let failedBefore = state.deferredError != nil
        do {
            try object._populate(from: value, database: self, update: update)
            if !failedBefore, let error = state.deferredError {
                state.deferredError = nil
                throw error
            }
        } catch {
            try? deleteObjects([(table, objectKey)], state)
            throw error
        }
        return object
    }

    /// Whether other types embed the objects of a type (own them through their links).
    private func isEmbedded(_ table: TableInfo) throws -> Bool {
        try incomingLinks(to: table.name).contains { $0.table.schema.properties[$0.column].ownsTargets == true }
    }

    // MARK: Binding dynamic objects

    /// The binding of dynamic objects to the stored type `typeName`.
    func dynamicBinding(named typeName: String) throws -> ObjectBinding {
        dynamicBinding(for: try tableInfo(named: typeName))
    }

    /// The binding of dynamic objects to `table`, made once per table (a
    /// dynamic object reads any column of its table; it has no fields to stamp).
    func dynamicBinding(for table: TableInfo) -> ObjectBinding {
        if let known = dynamicBindings[table.name], known.table === table { return known }
        let binding = ObjectBinding(table: table, info: ModelInfo.of(DynamicObject.self), columns: [])
        dynamicBindings[table.name] = binding
        return binding
    }

    /// The binding of objects of class `target` stored as `typeName` (a link's
    /// targets, a reference's object): the model class's, or for
    /// ``DynamicObject`` the stored type's. Traps, as a type the handle cannot
    /// read is a setup mistake.
    func bindingOrTrap(for target: Object.Type, storedAs typeName: String) -> ObjectBinding {
        guard target == DynamicObject.self else { return objectBindingOrTrap(for: target) }
        do {
            return try dynamicBinding(named: typeName)
        } catch {
            fatalError("Trove: cannot read \(typeName) objects from \(path): \(error)")
        }
    }

    /// The dynamic object of `table` with `objectKey`.
    func dynamicObject(in table: TableInfo, objectKey: UInt64) -> DynamicObject {
        materialize(DynamicObject.self, objectKey: objectKey, binding: dynamicBinding(for: table))
    }

    /// A stored object of this handle read as a ``DynamicObject`` (its
    /// properties by name); nil for an unmanaged, deleted or another handle's object.
    package func dynamicView(of object: Object) -> DynamicObject? {
        if let dynamic = object as? DynamicObject, dynamic._database === self { return dynamic }
        guard object._database === self, let table = object._table, !object.isInvalidated else { return nil }
        return dynamicObject(in: table, objectKey: object._objectKey)
    }

    /// The object of a model class with `objectKey`, or nil when it does not exist.
    func object(ofClass type: Object.Type, objectKey: UInt64) -> Object? {
        let binding = objectBindingOrTrap(for: type)
        guard !binding.table.isRetired, contains(objectKey: objectKey, in: binding.table) else { return nil }
        return object(of: binding, objectKey: objectKey)
    }

    /// An object of the class `binding` binds (known only at run time), bound to `objectKey`.
    private func object(of binding: ObjectBinding, objectKey: UInt64) -> Object {
        let object = binding.info.type.init()
        object.bind(to: self, objectKey: objectKey, binding: binding)
        return object
    }

    /// The object a dynamic read of a link hands out, as Realm does: the model
    /// class's object when this handle uses a class stored under `typeName`,
    /// a ``DynamicObject`` otherwise (in a migration, always).
    func dynamicallyLinkedObject(typeName: String, objectKey: UInt64) throws -> Object {
        if let binding = objectBindings.values.first(where: { $0.info.typeName == typeName && !$0.table.isRetired }) {
            return object(of: binding, objectKey: objectKey)
        }
        return dynamicObject(in: try tableInfo(named: typeName), objectKey: objectKey)
    }

    /// A link or mixed value as a dynamic read hands it out: the object
    /// linked to (see ``dynamicallyLinkedObject(typeName:objectKey:)``), the
    /// value a mixed holds as its own type, nil for nil or a link to a type
    /// the file no longer has.
    func dynamicValue(_ stored: StoredValue, of property: PropertySchema) -> Any? {
        switch stored {
        case .null:
            return nil
        case .int(let key) where property.type == .link:
            let declared = property.objectType ?? ""
            let typeName = (try? linkedTypeName(UInt64(bitPattern: key), declaredAs: declared)) ?? declared
            return try? dynamicallyLinkedObject(typeName: typeName, objectKey: UInt64(bitPattern: key))
        case .object(let typeName, let key):
            guard let table = try? tableInfo(named: typeName), contains(objectKey: key, in: table) else { return nil }
            return try? dynamicallyLinkedObject(typeName: typeName, objectKey: key)
        default:
            return Mixed(_troveStored: stored).boxedValue
        }
    }
}
