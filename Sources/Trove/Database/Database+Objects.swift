import TroveStorage

extension Database {
    /// Adds an unmanaged object; from now on it reads and writes the database.
    ///
    /// ```swift
    /// try db.write {
    ///     try db.add(photo)                       // insert
    ///     try db.add(edited, update: .modified)   // upsert by primary key
    /// }
    /// ```
    ///
    /// Adding an object that is already managed by this handle does nothing.
    /// With `update: .error` (the default), an existing object with the same
    /// primary key throws `TroveError.Kind.primaryKeyExists` and the
    /// transaction stays usable. An upsert with `.modified` writes the new
    /// embedded objects into the places of the stored ones (embedded objects
    /// read before show the new values, as in Realm); `.all` replaces them.
    public func add(_ object: Object, update: UpdatePolicy = .error) throws {
        try add(object, update: update, owned: false)
    }

    /// `owned`: added as the target of a link (the only way an embedded object is added).
    func add(_ object: Object, update: UpdatePolicy, owned: Bool) throws {
        let state = try requireWrite("add(_:)")
        if object is EmbeddedObject, !owned, object._database == nil {
            throw TroveError(
                .invalidObject,
                "a \(type(of: object)) is an embedded object: assign it to a property of the object that holds it, which adds it",
                path: path)
        }
        if let owner = object._database {
            if owner === self, !object.isInvalidated { return }
            throw TroveError(
                .invalidObject,
                owner === self
                    ? "this \(type(of: object)) was deleted; add a new object instead"
                    : "this \(type(of: object)) belongs to another Database handle; add a copy or pass its primary key",
                path: path)
        }
        let binding = try objectBinding(for: type(of: object))
        var values = binding.table.layout.fallbacks
        object.withBaseAddress { base in
            for reader in binding.fieldReaders {
                values[reader.column] = reader.storable._troveLoad(from: base + reader.valueOffset)
            }
        }
        // An upsert of what changed keeps the stored object's embedded objects: the new
        // ones take their places (`.all` replaces them), as Realm does.
        let places = update == .modified ? try embeddedPlaces(ofObjectWith: values, in: binding.table, state) : nil
        let stored = try storeRecord(values, in: binding.table, policy: update, state)
        // Legacy fields are attached once what they hold unmanaged is stored.
        object.bind(to: self, objectKey: stored.objectKey, binding: binding, attachingLegacyFields: false)
        try storeRelations(of: object, binding: binding, update: update, reusing: places, state)
    }

    /// Stores the links and lists of an object just bound (once it is bound,
    /// so a cycle back to it finds it managed), then lets go of what it held
    /// unmanaged and of the embedded objects of `places` no new one took.
    private func storeRelations(
        of object: Object, binding: ObjectBinding, update: UpdatePolicy, reusing places: [Int: [UInt64]]?,
        _ state: WriteState
    ) throws {
        if !binding.relationFields.isEmpty {
            try storeRelations(of: object, binding: binding, update: update, places, state)
            object.dropUnmanagedRelations(binding)
        }
        if !binding.legacyAttachments.isEmpty { object.attachLegacyFields(binding) }
        guard let places else { return }
        for (column, keys) in places {
            let typeName = binding.table.schema.properties[column].objectType ?? ""
            for key in keys {
                state.keptEmbedded.remove(EmbeddedPlace(typeName: typeName, key: key))
                if try !hasOwner(key, typeName: typeName) { try deleteObjects([(try tableInfo(named: typeName), key)], state) }
            }
        }
    }

    /// The embedded objects (to-one links and lists of them) of the stored
    /// object an upsert of `values` replaces, by column, kept from deletion
    /// until the upsert is done; none when there is no such object.
    private func embeddedPlaces(ofObjectWith values: [StoredValue], in table: TableInfo, _ state: WriteState) throws
        -> [Int: [UInt64]]?
    {
        guard let column = table.primaryKeyColumn, table.schema.properties.contains(where: { $0.ownsTargets == true }),
            let existing = try objectKey(ofType: table.name, primaryKey: values[column])
        else { return nil }
        return try embeddedPlaces(of: existing, in: table, state)
    }

    private func embeddedPlaces(of key: UInt64, in table: TableInfo, _ state: WriteState) throws -> [Int: [UInt64]] {
        var places: [Int: [UInt64]] = [:]
        for (column, property) in table.schema.properties.enumerated() where property.ownsTargets == true {
            let typeName = property.objectType ?? ""
            var keys: [UInt64] = []
            switch property.collection {
            case nil:
                let link = try table.store.withRecord(key, in: state.transaction) { $0?.value(at: column) }
                if case .int(let target)? = link { keys = [UInt64(bitPattern: target)] }
            case .list:
                keys = try listValues(owner: key, column: column, table: table, state.transaction).compactMap {
                    if case .int(let target) = $0 { return UInt64(bitPattern: target) }
                    return nil
                }
            default: continue
            }
            if keys.isEmpty { continue }
            places[column] = keys
            for target in keys { state.keptEmbedded.insert(EmbeddedPlace(typeName: typeName, key: target)) }
        }
        return places
    }

    /// Writes an unmanaged embedded object into the place of a stored one
    /// (`key`), which an upsert kept: objects bound to that place read the
    /// new values, as Realm's do; its own embedded objects are kept alike.
    private func storeEmbedded(_ object: Object, at key: UInt64, update: UpdatePolicy, _ state: WriteState) throws {
        let binding = try objectBinding(for: type(of: object))
        var values = binding.table.layout.fallbacks
        object.withBaseAddress { base in
            for reader in binding.fieldReaders {
                values[reader.column] = reader.storable._troveLoad(from: base + reader.valueOffset)
            }
        }
        let places = try embeddedPlaces(of: key, in: binding.table, state)
        _ = try replaceRecord(values, objectKey: key, in: binding.table, state)
        object.bind(to: self, objectKey: key, binding: binding, attachingLegacyFields: false)
        try storeRelations(of: object, binding: binding, update: update, reusing: places, state)
    }

    private func storedElement(_ element: Any, property: PropertySchema, table: TableInfo, update: UpdatePolicy) throws
        -> StoredValue
    {
        if let target = element as? Object ?? (element as? any _TroveLinkCarrier)?._troveCarriedObject {
            return .int(Int64(bitPattern: try linkKey(for: target, property: property, of: table, update: update)))
        }
        if let mixed = element as? Mixed { return try storedMixed(mixed) }
        return StoredValue(any: element) ?? .null
    }

    /// Writes the links and lists an unmanaged object held, adding the objects
    /// they reach with the same update policy (as Realm does: an upsert also
    /// upserts linked objects that have primary keys).
    private func storeRelations(
        of object: Object, binding: ObjectBinding, update: UpdatePolicy, _ places: [Int: [UInt64]]?, _ state: WriteState
    ) throws {
        let table = binding.table
        for field in binding.relationFields {
            let held = object.withBaseAddress { field.storable._troveLoadAny(from: $0 + field.valueOffset) }
            let property = table.schema.properties[field.column]
            switch property.collection {
            case nil:
                // A mixed value, or one inside a wrapper (TroveRealm's `RealmProperty<AnyRealmValue>`).
                if let mixed = held as? Mixed ?? (held as? any _TroveWrappedValue)?._troveWrappedValue as? Mixed {
                    let value = try storedMixed(mixed)
                    guard value != .null, let record = try fetchRecord(object._objectKey, table: table) else { continue }
                    let updated = try updateColumn(
                        field.column, to: value, objectKey: object._objectKey, record: record, table: table, state)
                    object.keepRecord(updated, layout: table.layout, generation: generation)
                    continue
                }
                guard let target = held as? Object ?? (held as? any _TroveLinkCarrier)?._troveCarriedObject else { continue }
                if let place = places?[field.column]?.first, target is EmbeddedObject, target._database == nil {
                    try storeEmbedded(target, at: place, update: update, state)
                }
                let key = try linkKey(for: target, property: property, of: table, update: update)
                guard let record = try fetchRecord(object._objectKey, table: table) else { continue }
                let updated = try updateColumn(
                    field.column, to: .int(Int64(bitPattern: key)), objectKey: object._objectKey, record: record, table: table,
                    state)
                object.keepRecord(updated, layout: table.layout, generation: generation)
            case .list, .set:
                guard let list = held as? any _TroveListStorage else { continue }
                let kept = places?[field.column] ?? []
                for (position, element) in list._unmanagedElements.enumerated() {
                    if position < kept.count, let embedded = element as? EmbeddedObject, embedded._database == nil {
                        try storeEmbedded(embedded, at: kept[position], update: update, state)
                    }
                    let value = try storedElement(element, property: property, table: table, update: update)
                    if property.collection == .list {
                        try listInsert(value, at: position, owner: object._objectKey, column: field.column, table: table, state)
                    } else {
                        try setInsert(value, owner: object._objectKey, column: field.column, table: table, state)
                    }
                }
            case .map:
                guard let map = held as? any _TroveMapStorage else { continue }
                for entry in map._unmanagedEntries {
                    let value = try storedElement(entry.value, property: property, table: table, update: update)
                    try mapSet(value, forKey: entry.key, owner: object._objectKey, column: field.column, table: table, state)
                }
            case .linkingObjects:
                continue
            }
        }
    }

    /// Adds every object of a sequence; see ``add(_:update:)``.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws where S.Element: Object {
        for object in objects { try add(object, update: update) }
    }

    /// Deletes a managed object. Afterwards it reports ``Object/isInvalidated``.
    public func delete(_ object: Object) throws {
        let state = try requireWrite("delete(_:)")
        guard object._database === self, let table = object._table else {
            throw TroveError(
                .invalidObject,
                object._database == nil
                    ? "this \(type(of: object)) is not stored (it was never added); there is nothing to delete"
                    : "this \(type(of: object)) belongs to another Database handle", path: path)
        }
        if try isLinked(table) {
            guard try table.store.contains(object._objectKey, in: readTransaction()) else {
                throw TroveError(.invalidObject, "this \(type(of: object)) was already deleted", path: path)
            }
            try deleteObjects([(table, object._objectKey)], state)
        } else if try !deleteRecord(object._objectKey, in: table, state) {
            throw TroveError(.invalidObject, "this \(type(of: object)) was already deleted", path: path)
        }
    }

    /// Deletes every object a ``Results`` selects. Deleting a whole type
    /// (`db.delete(db.objects(T.self))`) empties its table in one step.
    public func delete<T: Object>(_ results: Results<T>) throws {
        let state = try requireWrite("delete(_:)")
        try deleteMatches(table: results.table, predicate: results.predicate, state)
    }

    /// Deletes every object of a sequence. Throws, as deleting one object
    /// does, outside a write and for an object that is unmanaged, of another
    /// handle, or already deleted; an object that a cascade from an earlier
    /// one (or an earlier duplicate in the sequence) deleted is skipped.
    public func delete<S: Sequence>(_ objects: S) throws where S.Element: Object {
        _ = try requireWrite("delete(_:)")
        let targets = Array(objects)
        if let gone = targets.firstIndex(where: { $0.isInvalidated }) {
            throw TroveError(
                .invalidObject, "object \(gone) of the sequence (a \(type(of: targets[gone]))) was already deleted", path: path)
        }
        for object in targets where !object.isInvalidated { try delete(object) }
    }

    /// Deletes every object of every type; the schema stays.
    public func deleteAll() throws {
        let state = try requireWrite("deleteAll()")
        let transaction = state.transaction
        for name in try Catalog.storedTypeNames(in: transaction) {
            guard let schema = try Catalog.storedSchema(name, in: transaction) else { continue }
            var tables = [TableInfo.objectsName(name), TableInfo.clustersName(name)]
            if schema.primaryKey != nil { tables.append(TableInfo.primaryKeyName(name)) }
            for property in schema.properties where property.isIndexed && !property.isPrimaryKey {
                tables.append(TableInfo.indexName(name, property.name))
            }
            for property in schema.properties where property.isFullTextIndexed {
                let index = FullTextIndex.tableName(name, property.name)
                state.fullText[index]?.reset()
                tables.append(index)
            }
            for tableName in tables {
                guard
                    let table = try transaction.existingTable(
                        tableName, isMultiValue: tableName.hasPrefix(Environment.multiValuePrefix))
                else { continue }
                // Remember the largest key and auto-increment value, so neither is handed out again.
                var last = try transaction.withCursor(on: table) { cursor in try cursor.last().map { Array($0.key) } }
                if tableName == TableInfo.clustersName(name) {
                    // The largest object key is the last cluster's last.
                    let clusters = ClusterTable(table: table, layout: RecordLayout(schema))
                    last = try clusters.lastKey(in: transaction, nil).map { key in
                        withUnsafeBytes(of: key.bigEndian) { Array($0) }
                    }
                }
                if let last, tableName == TableInfo.objectsName(name) || tableName == TableInfo.clustersName(name) {
                    let key = last.withUnsafeBytes { OrderedKey.objectKey(from: $0) }
                    let counter = "seq:\(schema.keySpace)"
                    state.deletedBeyond[counter] = max(state.deletedBeyond[counter] ?? 0, key + 1)
                    if TableInfo.keysByPrimaryKey(schema, integerKeysAreIndexed: integerKeysAreIndexed),
                        schema.primaryKey?.isAutoIncrement == true
                    {
                        let value = TableInfo.integer(forObjectKey: key)
                        if value >= 0 {
                            state.deletedBeyond["auto:\(name)"] = max(state.deletedBeyond["auto:\(name)"] ?? 0, UInt64(value) + 1)
                        }
                    }
                } else if let last, tableName == TableInfo.primaryKeyName(name), schema.primaryKey?.isAutoIncrement == true,
                    let value = last.withUnsafeBytes({ OrderedKey.int64(from: $0) }), value >= 0
                {
                    state.deletedBeyond["auto:\(name)"] = max(state.deletedBeyond["auto:\(name)"] ?? 0, UInt64(value) + 1)
                }
                try transaction.clear(table)
            }
        }
        generation &+= 1
    }

    /// Every stored object of a type, as a lazy, live ``Results``.
    ///
    /// ```swift
    /// let all = db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
    /// ```
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        checkIsolation()
        let binding = objectBindingOrTrap(for: type)
        return Results(database: self, source: .object(binding))
    }

    /// The object of a type with the given primary key, or nil.
    ///
    /// ```swift
    /// let photo = db.object(ofType: PhotoData.self, forPrimaryKey: id)
    /// ```
    public func object<T: Object>(ofType type: T.Type, forPrimaryKey key: some _TroveStorable) -> T? {
        object(ofType: type, forPrimaryKeyValue: key._troveStored)
    }

    /// ``object(ofType:forPrimaryKey:)`` with the key as a stored value (null for a nil key).
    package func object<T: Object>(ofType type: T.Type, forPrimaryKeyValue key: StoredValue) -> T? {
        checkIsolation()
        let binding = objectBindingOrTrap(for: type)
        do {
            // Reading the record is the existence check: one lookup for an integer key.
            guard let objectKey = try objectKey(forPrimaryKey: key, in: binding.table, checkingExistence: false)
            else { return nil }
            return try loadedObject(type, objectKey: objectKey, binding: binding)
        } catch {
            fatalError("Trove: cannot look up a \(binding.table.name) by primary key in \(path): \(error)")
        }
    }

    /// The object with an object key, or nil when it does not exist in this handle's state.
    func object<T: Object>(_ type: T.Type, objectKey: UInt64) -> T? {
        let binding = objectBindingOrTrap(for: type)
        do {
            return try loadedObject(type, objectKey: objectKey, binding: binding)
        } catch {
            fatalError("Trove: cannot read a \(binding.table.name) object from \(path): \(error)")
        }
    }

    /// The object with `objectKey`, holding the record that showed it exists
    /// (so its first property read looks nothing up), or nil.
    func loadedObject<T: Object>(_ type: T.Type, objectKey: UInt64, binding: ObjectBinding) throws -> T? {
        let table = binding.table
        if table.isRetired { return nil }
        // Where the snapshot's views already show the key: no object is made for a missing key, and
        // a found one is bound to its slot as it is made (``keepRecord(of:table:)`` does the rest).
        if writeState == nil, readsInPlace(table), let known = table.store.knownPlace(of: objectKey, in: readTransaction()) {
            guard let (view, slot) = known else { return nil }
            if view.layout === table.layout, try view.prepareForObjects() {
                let object = binding.info.type == T.self ? T() : binding.info.type.init() as! T
                object.bindFresh(
                    to: self, objectKey: objectKey, binding: binding, view: view, slot: slot, generation: generation)
                return object
            }
        }
        let object = materialize(type, objectKey: objectKey, binding: binding)
        return try keepRecord(of: object, table: table) ? object : nil
    }

    func materialize<T: Object>(_ type: T.Type, objectKey: UInt64, binding: ObjectBinding) -> T {
        // The binding's class, not the static `T`: a metatype held as `Object.Type`
        // (`object(ofType: type(of: photo), …)`) must make a photo, whose fields
        // the binding stamps (an `Object`-sized instance has no room for them).
        let object = binding.info.type == T.self ? T() : binding.info.type.init() as! T
        object.bind(to: self, objectKey: objectKey, binding: binding)
        return object
    }
}
