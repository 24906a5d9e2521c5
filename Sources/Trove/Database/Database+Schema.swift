import TroveStorage

extension Database {
    func objectBinding(for type: Object.Type) throws -> ObjectBinding {
        if let last = lastBinding, last.info.type == type, !last.table.isRetired { return last }
        if let known = objectBindings[ObjectIdentifier(type)], !known.table.isRetired {
            lastBinding = known
            return known
        }
        let info = ModelInfo.of(type)
        let problems = info.validate()
        if !problems.isEmpty {
            throw TroveError(.invalidModel, problems.joined(separator: "; "), path: path)
        }
        let table = try register(info.schema)
        let columns = info.fields.map { table.columnIndex[$0.schema.name]! }
        let binding = ObjectBinding(table: table, info: info, columns: columns)
        objectBindings[ObjectIdentifier(type)] = binding
        // The types it links to need their tables before any link is written (cycles end above).
        for field in info.fields {
            guard let target = field.linkTarget else { continue }
            let targetBinding = try objectBinding(for: target)
            guard field.schema.collection == .linkingObjects, let origin = field.schema.originProperty else { continue }
            let property = targetBinding.table.schema[origin]
            if property?.isLink != true || !info.schema.isKind(of: property?.objectType ?? "") {
                objectBindings[ObjectIdentifier(type)] = nil
                throw TroveError(
                    .invalidModel,
                    "\(info.typeName).\(field.schema.name): the origin property '\(origin)' must be a link (or list of links) from \(targetBinding.table.name) to \(info.typeName)"
                        + (targetBinding.table.suggestion(for: origin).map { "; did you mean '\($0)'?" } ?? ""),
                    path: path)
            }
        }
        return binding
    }

    /// Gives the file a type described by a schema alone, with no class
    /// (TroveRealm's `RLMRealm` with a custom schema); nothing if it has it.
    package func createType(_ schema: ObjectSchema) throws {
        _ = try register(schema)
    }

    /// Binds a model class to its table in this handle (creating the table
    /// if the file lacks it), and the classes it links to; throws what
    /// ``objectBinding(for:)`` throws.
    package func bind(_ type: Object.Type) throws {
        _ = try objectBinding(for: type)
    }

    /// The binding for a type, trapping on a schema error: for APIs that
    /// cannot throw (`objects(_:)`), where a mismatch is a setup mistake.
    func objectBindingOrTrap(for type: Object.Type) -> ObjectBinding {
        do {
            return try objectBinding(for: type)
        } catch {
            fatalError(
                "Trove: cannot use \(type) with \(path): \(error). List the type in Configuration.objectTypes to get this as an error thrown when the database opens."
            )
        }
    }

    /// Makes sure `codeSchema`'s table exists in the file with a compatible
    /// schema, applying additive changes (new properties, indexes); returns it.
    func register(_ codeSchema: ObjectSchema) throws -> TableInfo {
        let name = codeSchema.name
        if let pending = writeState?.pendingTables[name] {
            return try check(codeSchema, against: pending.schema, existing: pending)
        }
        if let published = catalog.table(named: name), !needsConversion(published),
            let table = try? check(codeSchema, against: published.schema, existing: published)
        {
            return table
        }
        if let stored = try Catalog.storedSchema(name, in: readTransaction()) {
            let result = codeSchema.reconcile(withStored: stored)
            try throwIfBlocking(result.blocking, type: name)
            if result.additive.isEmpty, let table = try Database.openTables(for: result.merged, in: readTransaction()),
                !needsConversion(table)
            {
                if let writeState {
                    // Opened inside the user's write: valid only if it commits.
                    writeState.pendingTables[name] = table
                } else {
                    catalog.publish(table)
                }
                return table
            }
        }
        if let writeState {
            let table = try createOrUpdateTables(for: codeSchema, in: writeState.transaction)
            writeState.pendingTables[name] = table
            generation &+= 1
            return table
        }
        var created: TableInfo?
        try withWriteTransaction { transaction in
            created = try createOrUpdateTables(for: codeSchema, in: transaction)
        }
        catalog.publish(created!)
        return created!
    }

    /// Converts every type the file stores as records into column clusters,
    /// each in the write transaction that opens it (the handle must store
    /// types in clusters and be writable); returns the names of the types
    /// converted. For tools that open a file without its model types.
    package func convertStoredTypes() throws -> [String] {
        precondition(configuration.storesNewTypesInClusters && !configuration.readOnly)
        var converted: [String] = []
        for name in try Catalog.storedTypeNames(in: readTransaction()) {
            guard let schema = try Catalog.storedSchema(name, in: readTransaction()) else { continue }
            if try storageLayout(ofType: name) == .columnClusters { continue }
            let table = try register(schema)
            if table.store.clusters != nil { converted.append(name) }
        }
        return converted
    }

    /// How the file stores a type's objects (for tools).
    package func storageLayout(ofType name: String) throws -> StorageLayout {
        try tableInfo(named: name).store.clusters == nil ? .records : .columnClusters
    }

    /// Whether tables opened by another handle do not fit this one: its
    /// records are to be converted into clusters (the handle stores types in
    /// clusters and can write), or they were opened, read-only, before the
    /// file's lists were converted to chunks.
    private func needsConversion(_ table: TableInfo) -> Bool {
        !configuration.readOnly
            && (!table.listsArePacked || configuration.storesNewTypesInClusters && table.store.clusters == nil)
    }

    private func check(_ codeSchema: ObjectSchema, against stored: ObjectSchema, existing: TableInfo) throws -> TableInfo {
        let result = codeSchema.reconcile(withStored: stored)
        try throwIfBlocking(result.blocking, type: codeSchema.name)
        guard result.additive.isEmpty else {
            throw TroveError(
                .schemaMismatch, "two models named \(codeSchema.name) are in use: \(result.additive.joined(separator: "; "))",
                path: path)
        }
        return existing
    }

    private func throwIfBlocking(_ blocking: [String], type: String) throws {
        guard !blocking.isEmpty else { return }
        let stored = storedSchemaVersion
        let listed = configuration.objectTypes.contains { ModelInfo.of($0).schema.name == type }
        let hint =
            configuration.acceptsAnySchemaVersion
            ? "; this handle opens the file without migrating (acceptsAnySchemaVersion): use the model the file was written with"
            : !listed
                ? "; list \(type) in Configuration.objectTypes and raise Configuration.schemaVersion above \(stored), so that a migration covers it"
                : configuration.schemaVersion <= stored
                    ? "; raise Configuration.schemaVersion above \(stored) and give a migration block where values must change (or set deleteDatabaseIfMigrationNeeded for a cache)"
                    : ""
        throw TroveError(
            .migrationRequired,
            "the schema of \(type) in \(path) (schema version \(stored)) differs from the model: "
                + blocking.joined(separator: "; ") + hint,
            path: path)
    }

    /// Opens the tables of a stored schema; nil if one is missing.
    static func openTables(for schema: ObjectSchema, in transaction: Transaction) throws -> TableInfo? {
        guard
            let objects = try transaction.existingTable(TableInfo.clustersName(schema.name))
                ?? transaction.existingTable(TableInfo.objectsName(schema.name))
        else { return nil }
        var primaryKeyIndex: Table?
        var indexes: [Int: Table] = [:]
        var refs: [Int: Table] = [:]
        var collections: [Int: Table] = [:]
        var fullTextIndexes: [Int: Table] = [:]
        let indexedIntegers = try Catalog.integerKeysAreIndexed(in: transaction)
        for (column, property) in schema.properties.enumerated() {
            if property.isPrimaryKey {
                if TableInfo.keysByPrimaryKey(schema, integerKeysAreIndexed: indexedIntegers) { continue }
                guard let table = try transaction.existingTable(TableInfo.primaryKeyName(schema.name)) else { return nil }
                primaryKeyIndex = table
            } else if property.isIndexed {
                let indexName = TableInfo.indexName(schema.name, property.name)
                guard let table = try transaction.existingTable(indexName, isMultiValue: true) else { return nil }
                indexes[column] = table
            }
            if property.isFullTextIndexed {
                guard let table = try transaction.existingTable(FullTextIndex.tableName(schema.name, property.name)) else {
                    return nil
                }
                fullTextIndexes[column] = table
            }
            if property.isLink {
                guard let table = try transaction.existingTable(TableInfo.refsName(schema.name, property.name)) else {
                    return nil
                }
                refs[column] = table
            }
            if let name = TableInfo.collectionName(schema.name, property) {
                guard let table = try transaction.existingTable(name) else { return nil }
                collections[column] = table
            }
        }
        return TableInfo(
            schema: schema, objects: objects, primaryKeyIndex: primaryKeyIndex, indexes: indexes, refs: refs,
            collections: collections, fullTextIndexes: fullTextIndexes, keyTokens: transaction.environment.keyTokens,
            integerKeysAreIndexed: indexedIntegers, listsArePacked: try Catalog.listsArePacked(in: transaction))
    }

    /// Creates the tables of a new type, or applies additive changes to a stored one.
    private func createOrUpdateTables(for codeSchema: ObjectSchema, in transaction: WriteTransaction) throws -> TableInfo {
        let stored = try Catalog.storedSchema(codeSchema.name, in: transaction)
        var schema = codeSchema
        var addedIndexes: [Int] = []
        var addedFullText: [Int] = []
        if let stored {
            let result = codeSchema.reconcile(withStored: stored)
            try throwIfBlocking(result.blocking, type: codeSchema.name)
            schema = result.merged
            for (column, property) in schema.properties.enumerated()
            where property.isIndexed && !property.isPrimaryKey
                && !(stored[property.name]?.isIndexed ?? false)
            {
                addedIndexes.append(column)
            }
            for property in stored.properties where property.isIndexed && !(schema[property.name]?.isIndexed ?? false) {
                if let old = try transaction.existingTable(TableInfo.indexName(schema.name, property.name), isMultiValue: true) {
                    try transaction.clear(old)
                }
            }
            for (column, property) in schema.properties.enumerated()
            where property.isFullTextIndexed && !(stored[property.name]?.isFullTextIndexed ?? false) {
                addedFullText.append(column)
            }
            for property in stored.properties
            where property.isFullTextIndexed && !(schema[property.name]?.isFullTextIndexed ?? false) {
                if let old = try transaction.existingTable(FullTextIndex.tableName(schema.name, property.name)) {
                    try transaction.clear(old)
                }
            }
        }
        var objects =
            try transaction.existingTable(TableInfo.clustersName(schema.name))
            ?? transaction.existingTable(TableInfo.objectsName(schema.name))
            ?? transaction.openTable(
                configuration.storesNewTypesInClusters
                    ? TableInfo.clustersName(schema.name) : TableInfo.objectsName(schema.name))!
        if objects.name.hasPrefix(ObjectStore.clusterPrefix) {
            try Catalog.raiseFormat(to: clustersFormat, in: transaction)
        } else if configuration.storesNewTypesInClusters {
            objects = try convertToClusters(objects, schema: schema, in: transaction)
        }
        var primaryKeyIndex: Table?
        var indexes: [Int: Table] = [:]
        var refs: [Int: Table] = [:]
        var collections: [Int: Table] = [:]
        var fullTextIndexes: [Int: Table] = [:]
        for (column, property) in schema.properties.enumerated() {
            if property.isPrimaryKey {
                if TableInfo.keysByPrimaryKey(schema, integerKeysAreIndexed: integerKeysAreIndexed) { continue }
                primaryKeyIndex = try transaction.openTable(TableInfo.primaryKeyName(schema.name))!
            } else if property.isIndexed {
                indexes[column] = try transaction.openTable(TableInfo.indexName(schema.name, property.name), isMultiValue: true)!
            }
            if property.isFullTextIndexed {
                fullTextIndexes[column] = try transaction.openTable(FullTextIndex.tableName(schema.name, property.name))!
            }
            if property.isLink { refs[column] = try transaction.openTable(TableInfo.refsName(schema.name, property.name))! }
            if let name = TableInfo.collectionName(schema.name, property) {
                collections[column] = try transaction.openTable(name)!
            }
        }
        if schema.properties.contains(where: { $0.collection == .list }) {
            try Catalog.raiseFormat(to: Database.packedListsFormatVersion, in: transaction)
        }
        try Catalog.storeSchema(schema, in: transaction)
        let table = TableInfo(
            schema: schema, objects: objects, primaryKeyIndex: primaryKeyIndex, indexes: indexes, refs: refs,
            collections: collections, fullTextIndexes: fullTextIndexes, keyTokens: transaction.environment.keyTokens,
            integerKeysAreIndexed: integerKeysAreIndexed, listsArePacked: try Catalog.listsArePacked(in: transaction))
        if !addedIndexes.isEmpty {
            try Database.buildIndexes(addedIndexes.map { ($0, table.indexes[$0]!) }, of: table, in: transaction)
        }
        if !fullTextIndexes.isEmpty {
            // An older Trove would write without keeping the index in step: it must refuse the file.
            try Catalog.raiseFormat(to: Database.fullTextFormatVersion, in: transaction)
        }
        if !addedFullText.isEmpty {
            try Database.buildFullTextIndexes(addedFullText, of: table, in: transaction)
        }
        return table
    }

    /// The format a file with clusters is raised to: an encrypted file's clusters carry no stamps.
    var clustersFormat: UInt32 {
        environment.cipher == nil ? Database.clusterStampsFormatVersion : Database.clustersFormatVersion
    }

    /// Moves a type's objects from one record each (`obj:`) into column
    /// clusters (`clu:`), inside the transaction that opens the file: a
    /// crash before it commits leaves the records as they were. Object keys
    /// stay, so indexes, links and collections need no change. The emptied
    /// `obj:` table stays behind (a clusters table is always read first).
    private func convertToClusters(_ records: Table, schema: ObjectSchema, in transaction: WriteTransaction) throws -> Table {
        let layout = RecordLayout(schema)
        let rows = ObjectStore(table: records, layout: layout)
        let total = try rows.count(in: transaction)
        let target = ObjectStore(table: try transaction.openTable(TableInfo.clustersName(schema.name))!, layout: layout)
        let report = configuration.conversionProgress
        let progress = { (converted: Int, total: Int) in
            report?(ConversionProgress(typeName: schema.name, converted: converted, total: total))
        }
        progress(0, total)
        var converted = 0
        try rows.withRecordCursor(in: transaction) { records in
            while let reader = try records.next() {
                try target.append(reader.objectKey, record: reader.bytes, values: reader.allValues(), in: transaction)
                converted += 1
                if converted % 16_384 == 0 {
                    // Full clusters go to the file as the conversion goes, not all at the commit.
                    try target.writeOutClusters(in: transaction)
                    progress(converted, total)
                }
            }
        }
        try target.writeOutClusters(in: transaction)
        try transaction.clear(records)
        try Catalog.raiseFormat(to: clustersFormat, in: transaction)
        progress(total, total)
        return target.table
    }

    /// Fills the primary key table, the indexes and the full-text indexes of
    /// every stored type from its objects, creating the tables: a copy whose
    /// keys hold other tokens (``Database/copyTables(from:into:)``) leaves them out.
    static func rebuildIndexes(in transaction: WriteTransaction) throws {
        let indexedIntegers = try Catalog.integerKeysAreIndexed(in: transaction)
        for name in try Catalog.storedTypeNames(in: transaction) {
            guard let schema = try Catalog.storedSchema(name, in: transaction) else { continue }
            for (tableName, isMultiValue) in TableInfo.tableNames(for: schema, integerKeysAreIndexed: indexedIntegers)
            where Database.isIndexTable(tableName) {
                _ = try transaction.openTable(tableName, isMultiValue: isMultiValue)
            }
            guard let table = try Database.openTables(for: schema, in: transaction) else { continue }
            var indexes = table.indexes.map { (column: $0.key, table: $0.value) }
            if let column = table.primaryKeyColumn, let pk = table.primaryKeyIndex { indexes.append((column, pk)) }
            try buildIndexes(indexes, of: table, in: transaction)
            try buildFullTextIndexes(Array(table.fullTextIndexes.keys), of: table, in: transaction)
        }
    }

    /// Whether table `name` is a primary key table, an index or a full-text
    /// index: what ``rebuildIndexes(in:)`` makes from the objects.
    static func isIndexTable(_ name: String) -> Bool {
        name.hasPrefix("pk:") || name.hasPrefix(Environment.multiValuePrefix) || name.hasPrefix("fts:")
    }

    /// Fills indexes (each a column and its table: a secondary index, or
    /// the primary key table) from the records already stored.
    private static func buildIndexes(
        _ indexes: [(column: Int, table: Table)], of table: TableInfo, in transaction: WriteTransaction
    ) throws {
        guard !indexes.isEmpty else { return }
        var entries: [(index: Table, key: [UInt8], objectKey: UInt64)] = []
        try table.store.scan(in: transaction) { reader in
            for index in indexes {
                let key = table.indexKey(reader.value(at: index.column), column: index.column, in: index.table).bytes
                entries.append((index.table, key, reader.objectKey))
            }
            return true
        }
        for entry in entries {
            var bigEndian = entry.objectKey.bigEndian
            try entry.key.withUnsafeBytes { k in
                try withUnsafeBytes(of: &bigEndian) { _ = try transaction.put(entry.index, key: k, value: $0) }
            }
        }
    }
}
