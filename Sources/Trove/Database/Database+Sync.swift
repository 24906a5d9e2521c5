import TroveStorage

/// What TroveSync needs of a handle: a hook inside every write, just before
/// it commits, and reads of stored objects by object key. Not public: an
/// app uses `TroveSync`, which keeps its bookkeeping in the same file, in
/// tables named `sync:…` that observers are not told of.
extension Database {
    /// The objects a write changed, by type (see ``CommitHook``).
    package struct ChangedObjects: Sendable {
        /// By type name: the object keys written, inserted or deleted, or
        /// whose lists, sets or maps changed; nil when not known (too many).
        package var types: [String: Set<UInt64>?]
        /// The write changed what the record cannot describe (a schema
        /// change): every object of every type may have changed.
        package var everything: Bool
    }

    /// Runs inside a write just before it commits, with what the write
    /// changed; it may read objects and write `sync:` tables through
    /// ``openWriteTransaction``. An error it throws rolls the write back and
    /// is thrown by `write` / `commitWrite()`.
    package typealias CommitHook = (ChangedObjects) throws -> Void

    /// The prefix of the names of tables that hold TroveSync's bookkeeping.
    package static var syncTablePrefix: String { Catalog.syncTablePrefix }

    /// Whether the file is encrypted.
    package var isEncrypted: Bool { environment.cipher != nil }

    /// The open write's transaction (nil outside a write).
    package var openWriteTransaction: WriteTransaction? { writeState?.transaction }

    /// The snapshot reads use now (the open write's, inside one).
    package var currentTransaction: Transaction { readTransaction() }

    /// The stored schema of `typeName`.
    package func storedSchema(ofType typeName: String) throws -> ObjectSchema {
        try tableInfo(named: typeName).schema
    }

    /// Every property of a stored object, in the schema's order (lists,
    /// sets, maps and inverse links as `.null`; a link as the target's object
    /// key, `.int`); nil when there is no such object.
    package func storedValues(objectKey: UInt64, ofType typeName: String) throws -> [StoredValue]? {
        let table = try tableInfo(named: typeName)
        return try recordValues(objectKey, in: table, readTransaction())
    }

    /// The object key of the stored object of `typeName` with `primaryKey`.
    package func objectKey(forPrimaryKey primaryKey: StoredValue, ofType typeName: String) throws -> UInt64? {
        try objectKey(forPrimaryKey: primaryKey, in: try tableInfo(named: typeName))
    }

    /// The object keys of every stored object of `typeName`, in key order.
    package func objectKeys(ofType typeName: String) throws -> [UInt64] {
        let table = try tableInfo(named: typeName)
        return try table.store.keys(in: readTransaction(), from: 0, through: nil)
    }

    /// The contents of collection `property` of a stored object: a list's
    /// elements in order, a set's members, a map's entries in key order (the
    /// key is "" for lists and sets); a link as the target's object key (`.int`).
    package func storedCollection(objectKey: UInt64, ofType typeName: String, property: String) throws
        -> [(key: String, value: StoredValue)]
    {
        let table = try tableInfo(named: typeName)
        let column = try collectionColumn(property, of: table)
        let isMap = table.schema.properties[column].collection == .map
        return try collectionEntries(owner: objectKey, column: column, table: table, readTransaction()).map {
            (isMap ? String(decoding: $0.key, as: UTF8.self) : "", $0.value)
        }
    }

    /// Replaces the contents of collection `property` of a stored object,
    /// inside a write, with `entries` as ``storedCollection(objectKey:ofType:property:)``
    /// gives them (a map's keys used, others' ignored).
    package func replaceCollection(
        _ entries: [(key: String, value: StoredValue)], objectKey: UInt64, ofType typeName: String, property: String
    ) throws {
        let state = try requireWrite("replaceCollection(_:objectKey:ofType:property:)")
        let table = try tableInfo(named: typeName)
        let column = try collectionColumn(property, of: table)
        try collectionRemoveAll(owner: objectKey, column: column, table: table, state)
        for (position, entry) in entries.enumerated() {
            try checkElement(entry.value, column: column, table: table)
            switch table.schema.properties[column].collection {
            case .list:
                try putElement(
                    entry.value, replacing: nil, owner: objectKey, column: column, position: position, table: table, state)
            case .set: _ = try setInsert(entry.value, owner: objectKey, column: column, table: table, state)
            case .map: try mapSet(entry.value, forKey: entry.key, owner: objectKey, column: column, table: table, state)
            case .linkingObjects, nil: break
            }
        }
        generation &+= 1
    }

    /// The objects of `ownerType` that hold, through link `property`, the
    /// stored object `objectKey` (an embedded object's owner).
    package func owners(of objectKey: UInt64, ownerType: String, property: String) throws -> [UInt64] {
        let table = try tableInfo(named: ownerType)
        guard let column = table.columnIndex[property], let refs = table.refs[column] else { return [] }
        return try Database.sources(of: objectKey, in: refs, readTransaction())
    }

    /// Gives a stored object a new embedded object in link `property`, made
    /// from `values` by property name (the others their defaults), or none
    /// for nil, inside a write; the embedded object it held goes.
    package func replaceEmbedded(
        _ values: [String: StoredValue]?, forProperty property: String, objectKey: UInt64, ofType typeName: String
    ) throws {
        let state = try requireWrite("replaceEmbedded(_:forProperty:objectKey:ofType:)")
        let table = try tableInfo(named: typeName)
        guard let column = table.columnIndex[property], table.schema.properties[column].ownsTargets == true,
            let targetName = table.schema.properties[column].objectType
        else { throw TroveError(.invalidProperty, "\(typeName) has no embedded object \(property)", path: path) }
        var link = StoredValue.null
        if let values {
            link = .int(Int64(bitPattern: try storeEmbedded(values, in: try tableInfo(named: targetName), state)))
        }
        guard let record = try fetchRecord(objectKey, table: table) else { return }
        _ = try updateColumn(column, to: link, objectKey: objectKey, record: record, table: table, state)
    }

    /// Replaces the elements of list `property` (of embedded objects) of a
    /// stored object with new embedded objects made from `objects`, inside a
    /// write; the ones it held go.
    package func replaceEmbeddedList(
        _ objects: [[String: StoredValue]], forProperty property: String, objectKey: UInt64, ofType typeName: String
    ) throws {
        let state = try requireWrite("replaceEmbeddedList(_:forProperty:objectKey:ofType:)")
        let table = try tableInfo(named: typeName)
        let column = try collectionColumn(property, of: table)
        guard table.schema.properties[column].ownsTargets == true, let targetName = table.schema.properties[column].objectType
        else { throw TroveError(.invalidProperty, "\(typeName).\(property) is not a list of embedded objects", path: path) }
        let target = try tableInfo(named: targetName)
        try collectionRemoveAll(owner: objectKey, column: column, table: table, state)
        for (position, values) in objects.enumerated() {
            let key = try storeEmbedded(values, in: target, state)
            try putElement(
                .int(Int64(bitPattern: key)), replacing: nil, owner: objectKey, column: column, position: position, table: table,
                state)
        }
        generation &+= 1
    }

    /// Stores a new embedded object from values by property name (the others their defaults); its key.
    private func storeEmbedded(_ values: [String: StoredValue], in target: TableInfo, _ state: WriteState) throws -> UInt64 {
        var record = target.layout.fallbacks
        for (name, value) in values {
            guard let index = target.columnIndex[name] else { throw target.unknownProperty(name) }
            record[index] = value.isNull ? .null : (value.converted(to: target.schema.properties[index].type) ?? value)
        }
        return try storeRecord(record, in: target, policy: .error, state).objectKey
    }

    private func collectionColumn(_ property: String, of table: TableInfo) throws -> Int {
        guard let column = table.schema.properties.firstIndex(where: { $0.name == property }),
            [.list, .set, .map].contains(table.schema.properties[column].collection)
        else { throw TroveError(.invalidProperty, "\(table.name) has no list, set or map \(property)", path: path) }
        return column
    }

    /// Deletes the stored object `objectKey` of `typeName`, inside a write, as `delete(_:)` does.
    package func deleteObject(objectKey: UInt64, ofType typeName: String) throws {
        let state = try requireWrite("deleteObject(objectKey:ofType:)")
        let table = try tableInfo(named: typeName)
        if try isLinked(table) {
            guard try table.store.contains(objectKey, in: readTransaction()) else { return }
            try deleteObjects([(table, objectKey)], state)
        } else {
            try deleteRecord(objectKey, in: table, state)
        }
    }

    /// A write to a synced type through a handle that does not record its
    /// changes (no TroveSync client) would never reach the other devices:
    /// refused, saying what to do. Files that never synced pay one table
    /// lookup, and none in a write right after this handle's last (``syncedTypes``).
    func refuseUncapturedSyncWrites(_ state: WriteState) throws {
        let transaction = state.transaction
        let id = transaction.id
        let synced: [String]
        if let known = syncedTypes, known.readIn == id - 1 {
            synced = known.types
            // (Read in this write: if it commits, the next write of this handle with nothing committed between has id + 1.)
            syncedTypes!.readIn = id
        } else {
            let name = Catalog.syncTablePrefix + "meta"
            if try transaction.hasTable(name), let meta = try transaction.existingTable(name), transaction.canSee(meta),
                let names = try transaction.value(in: meta, key: Array("types".utf8))
            {
                synced = String(decoding: names, as: UTF8.self).split(separator: "\n").map(String.init)
            } else {
                synced = []
            }
            syncedTypes = (synced, id)
        }
        guard let changed = synced.first(where: { state.recorder.mayHaveChanged($0) }) else { return }
        throw TroveError(
            .fileAccess,
            "\(path) syncs \(changed) (TroveSync): a write to it must go through a handle with a SyncClient, which records the change for the other devices; make the SyncClient for this handle first",
            path: path)
    }
}
