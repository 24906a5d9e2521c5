import Foundation
import TroveStorage

extension Database {
    /// The schema of every type stored in the file, by name.
    public func storedSchemas() throws -> [ObjectSchema] {
        let transaction = readTransaction()
        return try Catalog.storedTypeNames(in: transaction).compactMap { try Catalog.storedSchema($0, in: transaction) }
    }

    /// The schema version stored in the file.
    public var storedSchemaVersion: UInt64 {
        let transaction = readTransaction()
        guard let meta = try? transaction.existingTable(Catalog.metaTable) else { return 0 }
        return (try? Catalog.integer(UInt64.self, key: "schemaVersion", in: meta, transaction)) ?? 0
    }

    /// The newest file format this Trove reads and writes: a file of a
    /// newer one is refused with `fileFormatTooNew`.
    ///
    /// ```swift
    /// print("reads file formats up to \(Database.newestFileFormatVersion)")
    /// ```
    public static var newestFileFormatVersion: UInt32 { formatVersion }

    /// The file format version of the file.
    public var fileFormatVersion: UInt32 {
        let transaction = readTransaction()
        guard let meta = try? transaction.existingTable(Catalog.metaTable) else { return 0 }
        return (try? Catalog.integer(UInt32.self, key: "format", in: meta, transaction)) ?? 0
    }

    /// Bytes of the file holding data (the rest is free space LMDB reuses).
    public var usedFileSize: Int { environment.usedSize }

    /// The commit this handle's reads show (for layers built on Trove).
    package var visibleCommit: Int { readTransaction().id }

    /// Reader slots in use by every process with the file open.
    public var openReaders: Int { environment.readersInUse }

    /// One snapshot being read, by any process with the file open.
    public struct Reader: Sendable, Equatable {
        /// The process holding it.
        public var processID: Int32
        /// How many commits the file has had since the snapshot was taken;
        /// nil for an idle slot. Pages freed by those commits cannot be reused
        /// while the snapshot is held, so a large number means a stuck or
        /// long-running reader and a growing file.
        public var commitsBehind: Int?
    }

    /// The snapshots held on the file right now, by every process (readers
    /// of processes that died are cleared first). `trove info` shows them.
    ///
    /// ```swift
    /// for reader in db.readers where (reader.commitsBehind ?? 0) > 1_000 {
    ///     print("process \(reader.processID) holds an old snapshot")
    /// }
    /// ```
    public var readers: [Reader] {
        environment.clearStaleReaders()
        let last = environment.lastCommittedTransaction
        return environment.readerSlots().map { slot in
            Reader(processID: slot.processID, commitsBehind: slot.transaction.map { Swift.max(0, last - $0) })
        }
    }

    /// Sets one property of the stored object of `typeName` with the given
    /// primary key, inside a write. Returns false when there is no such object.
    ///
    /// ```swift
    /// try db.write { try db.setValue(.string("rainy"), forProperty: "memo", ofType: "PhotoData", primaryKey: .string(id)) }
    /// ```
    @discardableResult
    public func setValue(_ value: StoredValue, forProperty property: String, ofType typeName: String, primaryKey: StoredValue)
        throws
        -> Bool
    {
        let state = try requireWrite("setValue(_:forProperty:ofType:primaryKey:)")
        let table = try dynamicTable(typeName)
        guard let objectKey = try objectKey(forPrimaryKey: primaryKey, in: table) else { return false }
        return try setValue(value, forProperty: property, objectKey: objectKey, table: table, state)
    }

    /// Sets one property (a value or a link, given as the target's object
    /// key) of a stored object, inside a write, checking the value as
    /// ``setValue(_:forProperty:ofType:primaryKey:)`` does. Returns false when
    /// the object was deleted.
    package func setValue(_ value: StoredValue, forProperty property: String, of object: DynamicObject) throws -> Bool {
        let state = try requireWrite("setValue(_:forProperty:of:)")
        let table = try dynamicTable(object.objectSchema.name)
        return try setValue(value, forProperty: property, objectKey: object._objectKey, table: table, state)
    }

    private func setValue(
        _ value: StoredValue, forProperty property: String, objectKey: UInt64, table: TableInfo, _ state: WriteState
    ) throws -> Bool {
        let typeName = table.name
        guard let column = table.columnIndex[property] else { throw table.unknownProperty(property) }
        let schema = table.schema.properties[column]
        if column == table.primaryKeyColumn {
            throw TroveError(.invalidValue, "\(typeName).\(property) is the primary key; it cannot change", path: path)
        }
        if value.isNull, !schema.isOptional {
            throw TroveError(.invalidValue, "\(typeName).\(property) is \(schema.typeDescription) and cannot be nil", path: path)
        }
        let converted = value.isNull ? value : (value.converted(to: schema.type) ?? value)
        if schema.isInRecord, !converted.isNull, !RecordWriter.fits(converted, schema.type) {
            throw TroveError(
                .invalidValue, "\(typeName).\(property) is \(schema.typeDescription), not \(value)", path: path)
        }
        guard let record = try fetchRecord(objectKey, table: table) else { return false }
        _ = try updateColumn(column, to: converted, objectKey: objectKey, record: record, table: table, state)
        return true
    }

    /// Adds an object of a stored type from values by property name, inside a
    /// write; properties not given take their defaults. With `update`, an
    /// object with the same primary key is overwritten.
    ///
    /// ```swift
    /// try db.write { try db.add(["id": .int(7), "name": .string("Ann")], ofType: "Person") }
    /// ```
    public func add(_ values: [String: StoredValue], ofType typeName: String, update: UpdatePolicy = .error) throws {
        let state = try requireWrite("add(_:ofType:update:)")
        let table = try dynamicTable(typeName)
        var record = table.layout.fallbacks
        for (name, value) in values {
            guard let column = table.columnIndex[name] else { throw table.unknownProperty(name) }
            let property = table.schema.properties[column]
            if value.isNull {
                guard property.isOptional else {
                    throw TroveError(
                        .invalidValue, "\(typeName).\(name) is \(property.typeDescription) and cannot be nil", path: path)
                }
                record[column] = .null
            } else {
                record[column] = value.converted(to: property.type) ?? value
            }
        }
        _ = try storeRecord(record, in: table, policy: update, state)
    }

    /// The elements of a list or set property of a stored object (for a map,
    /// its values in key order; a collection of objects holds object keys).
    ///
    /// ```swift
    /// for room in try db.dynamicObjects("ChatRoom") {
    ///     print(try db.elements(of: room, property: "tags"))
    /// }
    /// ```
    public func elements(of object: DynamicObject, property name: String) throws -> [StoredValue] {
        try entries(of: object, property: name).map(\.value)
    }

    /// The entries of a map property (the key, and the value), in key order;
    /// for a list or set, the keys are the positions.
    public func entries(of object: DynamicObject, property name: String) throws -> [(key: String, value: StoredValue)] {
        let table = try tableInfo(named: object.objectSchema.name)
        guard let column = table.columnIndex[name] else { throw table.unknownProperty(name) }
        let property = table.schema.properties[column]
        guard property.collection != nil, property.collection != .linkingObjects else {
            throw TroveError(.invalidProperty, "\(table.name).\(name) is a \(property.typeDescription), not a list, set or map")
        }
        let entries = try collectionEntries(owner: object._objectKey, column: column, table: table, readTransaction())
        return entries.enumerated().map { index, entry in
            (property.collection == .map ? String(decoding: entry.key, as: UTF8.self) : String(index), entry.value)
        }
    }

    /// The number of elements of a list, set or map property of a stored
    /// object, without reading them (a list's from its last position).
    package func count(of object: DynamicObject, property name: String) throws -> Int {
        let table = try tableInfo(named: object.objectSchema.name)
        guard let column = table.columnIndex[name] else { throw table.unknownProperty(name) }
        let property = table.schema.properties[column]
        let transaction = readTransaction()
        switch property.collection {
        case .list?: return try listCount(owner: object._objectKey, column: column, table: table, transaction)
        case .set?, .map?: return try setCount(owner: object._objectKey, column: column, table: table, transaction)
        default:
            throw TroveError(.invalidProperty, "\(table.name).\(name) is a \(property.typeDescription), not a list, set or map")
        }
    }

    func dynamicTable(_ typeName: String) throws -> TableInfo {
        if let known = catalog.table(named: typeName), !known.isRetired, known.listsArePacked || configuration.readOnly {
            return known
        }
        let snapshot = readTransaction().id
        let stored: ObjectSchema?
        if let known = dynamicTables[typeName], !known.table.isRetired {
            if known.checkedAt == snapshot { return known.table }
            // Another handle or process may have changed the type since (an app's
            // new model version, a migration): checked once per snapshot.
            stored = try Catalog.storedSchema(typeName, in: readTransaction())
            if stored == known.table.schema {
                dynamicTables[typeName] = (known.table, snapshot)
                return known.table
            }
        } else {
            stored = try Catalog.storedSchema(typeName, in: readTransaction())
        }
        guard let schema = stored else {
            let names = (try? Catalog.storedTypeNames(in: readTransaction())) ?? []
            var message = "\(path) has no type named '\(typeName)'"
            if let close = names.min(by: { editDistance($0, typeName) < editDistance($1, typeName) }),
                editDistance(close, typeName) <= max(2, typeName.count / 2)
            {
                message += "; did you mean '\(close)'?"
            } else if !names.isEmpty {
                message += " (it has \(names.joined(separator: ", ")))"
            }
            throw TroveError(.invalidModel, message, path: path)
        }
        guard let table = try Database.openTables(for: schema, in: readTransaction()) else {
            throw TroveError(.corruptFile, "the tables of \(typeName) are missing from \(path)", path: path)
        }
        // Kept per handle, not published: a model's registration decides the shared schema.
        dynamicTables[typeName] = (table, snapshot)
        return table
    }
}
