import Foundation
import TroveStorage

/// One type carried to its new schema: its new tables, and each object's
/// values before (in `oldSchema`).
struct TypeConversion {
    let table: TableInfo
    let oldSchema: ObjectSchema
    let objects: [(key: UInt64, old: [StoredValue])]
    /// False when the objects were not read (nothing to rewrite, nobody asked).
    let hasValues: Bool
}

extension Database {
    /// Runs the migration when the model's schema version is above the
    /// file's, in one write transaction; refuses a model older than the file.
    func migrateIfNeeded() throws {
        if configuration.acceptsAnySchemaVersion { return }
        let stored = storedSchemaVersion
        let wanted = configuration.schemaVersion
        if wanted < stored {
            throw TroveError(
                .migrationRequired,
                "\(path) is at schema version \(stored), newer than the model's \(wanted); open it with the newer model (or raise Configuration.schemaVersion)",
                path: path)
        }
        guard wanted > stored else { return }
        if configuration.readOnly {
            throw TroveError(
                .migrationRequired,
                "\(path) is at schema version \(stored) and the model at \(wanted); a read-only handle cannot migrate it",
                path: path)
        }
        try beginWrite()
        do {
            let state = writeState!
            state.isMigration = true
            let transaction = state.transaction
            let old = try Catalog.storedTypeNames(in: transaction).compactMap { try Catalog.storedSchema($0, in: transaction) }
            var new = configuration.objectTypes.map { ModelInfo.of($0).schema }
            if let more = configuration.migratedModelClasses?() {
                var names = Set(new.map(\.name))
                for type in more {
                    let info = ModelInfo.of(type)
                    guard info.validate().isEmpty, names.insert(info.schema.name).inserted else { continue }
                    new.append(info.schema)
                }
            }
            let migration = Migration(database: self, state: state, oldSchema: old, newSchema: new)
            try configuration.migration?(migration, stored)
            for schema in new where !migration.converted.contains(schema.name) {
                _ = try convertType(schema.name, in: migration, needValues: false)
            }
            let meta = try transaction.openTable(Catalog.metaTable)!
            try Catalog.put(wanted.littleEndian, key: "schemaVersion", in: meta, transaction)
            try commitWrite()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
    }

    /// Rewrites one type's records to its schema in the model (applying
    /// renames), once per migration; returns the objects before and after.
    /// `needValues`: the caller enumerates the objects (a conversion that
    /// rewrites nothing then reads them; otherwise it does not).
    func convertType(_ name: String, in migration: Migration, needValues: Bool = true) throws -> TypeConversion {
        if let done = migration.conversions[name], done.hasValues || !needValues { return done }
        let state = migration.state
        let transaction = state.transaction
        let oldSchema = try Catalog.storedSchema(name, in: transaction)
        let codeSchema = migration.newSchema.first { $0.name == name }
        guard let target = codeSchema ?? oldSchema else {
            throw TroveError(
                .invalidModel, "the migration names a type '\(name)' that is neither in the file nor in the model", path: path)
        }
        migration.converted.insert(name)
        guard let oldSchema, let oldTable = try Database.openTables(for: oldSchema, in: transaction) else {
            // New type: created empty.
            let table = try register(target)
            let conversion = TypeConversion(table: table, oldSchema: target, objects: [], hasValues: true)
            migration.conversions[name] = conversion
            return conversion
        }
        let renamed = Dictionary(migration.renames[name, default: []].map { ($0.to, $0.from) }, uniquingKeysWith: { $1 })
        let blocking = target.reconcile(withStored: oldSchema).blocking
        if blocking.isEmpty, renamed.isEmpty, !needValues, migration.conversions[name] == nil {
            // Nothing to rewrite, nobody to show the objects to: registration applies additive changes.
            let conversion = TypeConversion(table: try register(target), oldSchema: oldSchema, objects: [], hasValues: false)
            migration.conversions[name] = conversion
            return conversion
        }
        // Every object with its old values.
        var objects: [(key: UInt64, old: [StoredValue])] = []
        try oldTable.store.scan(in: transaction) { reader in
            objects.append((reader.objectKey, reader.allValues()))
            return true
        }
        // Where each new property comes from.
        let sources: [Int?] = target.properties.map { property in
            oldSchema.properties.firstIndex { $0.name == (renamed[property.name] ?? property.name) }
        }
        if blocking.isEmpty, renamed.isEmpty {
            // Nothing to rewrite (additive changes are applied by registration).
            let table = try register(target)
            let conversion = TypeConversion(table: table, oldSchema: oldSchema, objects: objects, hasValues: true)
            migration.conversions[name] = conversion
            return conversion
        }
        // A renamed collection moves its tables (elements, and the inverse-link counts of its objects).
        for (index, property) in target.properties.enumerated() where !property.isInRecord {
            guard let source = sources[index], oldSchema.properties[source].name != property.name else { continue }
            let old = oldSchema.properties[source]
            if let from = TableInfo.collectionName(name, old), let to = TableInfo.collectionName(name, property) {
                try moveTable(from, to: to, isMultiValue: false, transaction)
            }
            if old.isLink, property.isLink {
                try moveTable(
                    TableInfo.refsName(name, old.name), to: TableInfo.refsName(name, property.name), isMultiValue: false,
                    transaction)
            }
        }
        let rekeys =
            oldSchema.primaryKey?.name != target.primaryKey.map { renamed[$0.name] ?? $0.name }
            || oldSchema.primaryKey?.type != target.primaryKey?.type
        if rekeys,
            TableInfo.keysByPrimaryKey(oldSchema, integerKeysAreIndexed: integerKeysAreIndexed)
                || TableInfo.keysByPrimaryKey(target, integerKeysAreIndexed: integerKeysAreIndexed)
        {
            if try oldTable.hasRelations || !incomingLinks(to: name).isEmpty
                || target.properties.contains(where: { !$0.isPlainValue })
            {
                throw TroveError(
                    .migrationRequired,
                    "\(name): changing an integer primary key of a type with links or collections is not supported yet",
                    path: path)
            }
        }
        // Drop the old tables, except collections and inverse links the new schema keeps under the same name.
        let keep = Set(TableInfo.tableNames(for: target, integerKeysAreIndexed: integerKeysAreIndexed).map(\.name)).filter {
            $0.hasPrefix("list:") || $0.hasPrefix("set:") || $0.hasPrefix("map:") || $0.hasPrefix("ref:")
        }
        for (tableName, multi) in TableInfo.tableNames(for: oldSchema, integerKeysAreIndexed: integerKeysAreIndexed)
        where !keep.contains(tableName) {
            if let table = try transaction.existingTable(tableName, isMultiValue: multi) { try transaction.clear(table) }
        }
        try Catalog.storeSchema(target, in: transaction)
        let table = try register(target)
        var newValues: [UInt64: [StoredValue]] = [:]
        for object in objects {
            var values = table.layout.fallbacks
            for (column, property) in target.properties.enumerated() where property.isInRecord {
                guard let source = sources[column] else { continue }
                values[column] = convert(object.old[source], to: property, from: oldSchema.properties[source])
            }
            newValues[object.key] = values
        }
        if rekeys {
            do {
                for object in objects {
                    _ = try storeRecord(newValues[object.key]!, in: table, policy: .error, state)
                }
            } catch let error as TroveError where error.kind == .primaryKeyExists {
                throw TroveError(
                    .migrationRequired,
                    "\(name): the new primary key \(target.primaryKey?.name ?? "") has duplicate values (\(error.message)); make them unique in the migration block",
                    path: path)
            }
        } else {
            for object in objects { try rewriteRecord(newValues[object.key]!, objectKey: object.key, in: table, state) }
        }
        let conversion = TypeConversion(
            table: table, oldSchema: oldSchema, objects: rekeys ? [] : objects, hasValues: true)
        migration.conversions[name] = conversion
        return conversion
    }

    /// A value carried to a property's new type: kept when it fits, converted
    /// when exact (Int -> Double, "12" -> Int, anything -> String), else the default.
    private func convert(_ value: StoredValue, to property: PropertySchema, from old: PropertySchema) -> StoredValue {
        if value.isNull { return property.isOptional ? .null : property.fallback }
        if property.type == .link {
            return old.type == .link && old.objectType == property.objectType
                ? value : (property.isOptional ? .null : property.fallback)
        }
        if property.type == old.type { return value }
        if let converted = value.converted(to: property.type) { return converted }
        switch (property.type, value) {
        case (.string, _): return .string(value.swiftValue.map { "\($0)" } ?? "")
        case (let type, .string(let text)) where type.isInteger: return Int64(text).map { .int($0) } ?? property.fallback
        case (.double, .string(let text)), (.float, .string(let text)):
            return Double(text).map { .double($0).converted(to: property.type) ?? .double($0) } ?? property.fallback
        case (.bool, .int(let number)): return .bool(number != 0)
        case (let type, .bool(let flag)) where type.isInteger: return .int(flag ? 1 : 0)
        default: return property.isOptional ? .null : property.fallback
        }
    }

    /// Whether the handle is running a migration, whose objects may take new primary keys.
    var isMigrating: Bool { writeState?.isMigration ?? false }

    /// Gives an object a new primary key during a migration. A failure (a key
    /// another object has; a new integer key, which is the object's key) is
    /// thrown when the migration ends.
    func changePrimaryKey(of object: Object, to value: StoredValue) {
        guard let state = writeState, state.deferredError == nil, let table = object._table,
            let column = table.primaryKeyColumn
        else { return }
        do {
            guard var values = try recordValues(object._objectKey, in: table, state.transaction) else { return }
            let key = value.converted(to: table.layout.types[column]) ?? value
            if values[column] == key { return }
            if table.keyIsPrimaryKey {
                throw TroveError(
                    .migrationRequired,
                    "\(table.name).\(table.schema.properties[column].name): an integer primary key is the object's key; it cannot change in enumerateObjects (create a new object and delete the old one)",
                    path: path)
            }
            values[column] = key
            try rewriteRecord(values, objectKey: object._objectKey, in: table, state)
        } catch {
            state.deferredError = error
        }
    }

    /// Writes an object's record under its existing key, replacing its index entries.
    func rewriteRecord(_ values: [StoredValue], objectKey: UInt64, in table: TableInfo, _ state: WriteState) throws {
        let transaction = state.transaction
        if let old = try recordValues(objectKey, in: table, transaction) {
            unindexTexts(old, objectKey: objectKey, table: table, state)
            if let column = table.primaryKeyColumn, let pk = table.primaryKeyIndex {
                try primaryKeyKey(old[column], table: table).withUnsafeBytes { _ = try transaction.delete(pk, key: $0) }
            }
            for (column, index) in table.indexes {
                try deleteIndexEntry(old[column], column: column, objectKey: objectKey, in: index, table, transaction)
            }
            for column in table.refs.keys where table.collections[column] == nil {
                if case .int(let target) = old[column] {
                    try adjustRef(
                        table, column: column, target: UInt64(bitPattern: target), source: objectKey, by: -1, transaction)
                }
            }
        }
        try state.recordWriter.encode(values, layout: table.layout)
        try state.recordWriter.bytes.withUnsafeBytes { try table.store.replace(objectKey, record: $0, in: transaction) }
        if let column = table.primaryKeyColumn, let pk = table.primaryKeyIndex {
            var bigEndian = objectKey.bigEndian
            let claimed = try primaryKeyKey(values[column], table: table).withUnsafeBytes { k in
                try withUnsafeBytes(of: &bigEndian) { try transaction.put(pk, key: k, value: $0, mode: .insertOnly) }
            }
            if !claimed {
                throw TroveError(
                    .migrationRequired,
                    "\(table.name): two objects have the primary key \(table.schema.properties[column].name) = \(values[column]); make them unique in the migration block",
                    path: path)
            }
        }
        for (column, index) in table.indexes {
            try putIndexEntry(
                table.indexKey(values[column], column: column, in: index).bytes, objectKey: objectKey, in: index, transaction)
        }
        try indexTexts(values, objectKey: objectKey, table: table, state)
        for column in table.refs.keys where table.collections[column] == nil {
            if case .int(let target) = values[column] {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: objectKey, by: 1, transaction)
            }
        }
        generation &+= 1
    }

    /// Empties a type (every table it uses) during a migration; a type the
    /// model does not declare is removed from the catalog as well.
    @discardableResult
    func deleteType(_ name: String, _ state: WriteState) throws -> Bool {
        let transaction = state.transaction
        guard let schema = try Catalog.storedSchema(name, in: transaction) else { return false }
        for (tableName, multi) in TableInfo.tableNames(for: schema, integerKeysAreIndexed: integerKeysAreIndexed) {
            if let table = try transaction.existingTable(tableName, isMultiValue: multi) { try transaction.clear(table) }
        }
        if !configuration.objectTypes.contains(where: { ModelInfo.of($0).typeName == name }) {
            let meta = try transaction.openTable(Catalog.metaTable)!
            try Catalog.remove("schema:\(name)", in: meta, transaction)
        }
        storedAncestors = [:]
        generation &+= 1
        return true
    }

    /// Moves a stored type to a new name during a migration: its objects,
    /// indexes, collections and counters, and every link to it from other
    /// types. Object keys stay, so links keep pointing at the same objects.
    func renameType(from oldName: String, to newName: String, _ state: WriteState) throws {
        let transaction = state.transaction
        guard var schema = try Catalog.storedSchema(oldName, in: transaction) else {
            throw TroveError(.invalidModel, "renameType: \(path) has no type '\(oldName)' to rename", path: path)
        }
        if try Catalog.storedSchema(newName, in: transaction) != nil {
            throw TroveError(
                .invalidModel,
                "renameType: \(path) already has a type '\(newName)'; delete its data first (deleteData(forType: \"\(newName)\"))",
                path: path)
        }
        let oldTables = TableInfo.tableNames(for: schema, integerKeysAreIndexed: integerKeysAreIndexed)
        schema.name = newName
        for index in schema.properties.indices where schema.properties[index].objectType == oldName {
            schema.properties[index].objectType = newName
        }
        for (from, to) in zip(oldTables, TableInfo.tableNames(for: schema, integerKeysAreIndexed: integerKeysAreIndexed)) {
            try moveTable(from.name, to: to.name, isMultiValue: from.isMultiValue, transaction)
        }
        let meta = try transaction.openTable(Catalog.metaTable)!
        for counter in ["seq:", "auto:"] {
            guard let value = try Catalog.integer(UInt64.self, key: "\(counter)\(oldName)", in: meta, transaction) else {
                continue
            }
            try Catalog.put(value.littleEndian, key: "\(counter)\(newName)", in: meta, transaction)
            try Catalog.remove("\(counter)\(oldName)", in: meta, transaction)
        }
        try Catalog.remove("schema:\(oldName)", in: meta, transaction)
        try Catalog.storeSchema(schema, in: transaction)
        // Links and inverse links of other types name the type.
        for name in try Catalog.storedTypeNames(in: transaction) where name != newName {
            guard var other = try Catalog.storedSchema(name, in: transaction) else { continue }
            var changed = false
            for index in other.properties.indices where other.properties[index].objectType == oldName {
                other.properties[index].objectType = newName
                changed = true
            }
            // So do the subclasses of a renamed class.
            if let ancestors = other.ancestors, ancestors.contains(oldName) {
                other.ancestors = ancestors.map { $0 == oldName ? newName : $0 }
                changed = true
            }
            if changed { try Catalog.storeSchema(other, in: transaction) }
        }
        storedAncestors = [:]
        generation &+= 1
    }

    /// LMDB cannot rename a table: copies every entry under the new name,
    /// then empties the old table. Nothing happens when the old one does not exist.
    private func moveTable(_ from: String, to: String, isMultiValue: Bool, _ transaction: WriteTransaction) throws {
        guard let source = try transaction.existingTable(from, isMultiValue: isMultiValue) else { return }
        let target = try transaction.openTable(to, isMultiValue: isMultiValue)!
        try transaction.withCursor(on: source) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                try transaction.put(target, key: current.key, value: current.value, mode: isMultiValue ? .upsert : .append)
                entry = try cursor.next()
            }
        }
        try transaction.clear(source)
    }
}
