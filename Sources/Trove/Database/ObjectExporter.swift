import TroveStorage

/// Reads the objects of one stored type as ``PortableValue``s, in object-key
/// order, all from the one snapshot the exporter was made in: the `trove`
/// tool's export. Memory stays flat however many objects there are: records
/// are read a batch at a time, each object handed on before the next batch.
///
/// ```swift
/// let exporter = try ObjectExporter(database: db, typeName: "Person")
/// try exporter.forEach { values in print(values) }   // by column of exporter.schema
/// ```
package final class ObjectExporter {
    /// The exported type's schema; values come by column, in its order.
    package let schema: ObjectSchema
    private let database: Database
    private let table: TableInfo
    private let transaction: Transaction
    /// How each type's columns are read, by type name (embedded types too).
    private var plans: [String: [Column]] = [:]
    /// Targets of links held in mixed values, by type name (nil: not in the file).
    private var mixedTargets: [String: PortableTarget?] = [:]
    /// The damaged objects of each type read so far, by type name.
    private var damage: [String: DamagedObjects] = [:]
    /// Called with each damaged object the export leaves out or does not
    /// follow a link to: its type, and the damage in words.
    package var skipped: (_ typeName: String, _ detail: String) -> Void = { _, _ in }

    private enum Column {
        case value
        case mixed
        case link(PortableTarget)
        case collection(CollectionKind, element: Element)
        /// Linking objects: computed from the links that point here, not stored.
        case computed
    }

    private enum Element {
        case value
        case mixed
        case link(PortableTarget)
    }

    /// Objects per batch: read while the map gate is held, handed on after.
    private static let batchSize = 256

    /// An exporter of the stored type `typeName` of `database`, reading its
    /// current snapshot. Throws `TroveError.Kind.invalidModel` when the file
    /// has no such type.
    package init(database: Database, typeName: String) throws {
        self.database = database
        table = try database.tableInfo(named: typeName)
        schema = table.schema
        transaction = database.readTransaction()
    }

    /// The number of objects the export holds.
    package var count: Int {
        get throws { try table.store.count(in: transaction) }
    }

    /// Calls `body` with the values of each object, by column of ``schema``
    /// (linking objects read as null), in object-key order.
    /// Damaged objects are left out and told to ``skipped``; a damaged
    /// cluster whose keys do not read ends the export with
    /// `TroveError.Kind.corruptFile`.
    package func forEach(_ body: ([PortableValue]) throws -> Void) throws {
        let plan = try self.plan(for: table)
        let damaged = try damage(of: table)
        if !damaged.isEmpty {
            // Object by object, past the damaged ones: a batch would read them.
            let keys = try table.store.keys(in: transaction, from: 0, through: nil)
            for key in keys where !damaged.covers(key) {
                guard let record = try database.recordValues(key, in: table, transaction) else { continue }
                try body(try values(key, record: record, table: table, plan: plan))
            }
            return
        }
        var batch: [(key: UInt64, record: [StoredValue])] = []
        batch.reserveCapacity(Self.batchSize)
        var start: UInt64 = 0
        while true {
            batch.removeAll(keepingCapacity: true)
            try table.store.scan(in: transaction, from: start) { reader in
                batch.append((reader.objectKey, reader.allValues()))
                return batch.count < Self.batchSize
            }
            for (key, record) in batch { try body(try values(key, record: record, table: table, plan: plan)) }
            guard let last = batch.last?.key, batch.count == Self.batchSize, last < .max else { return }
            start = last + 1
        }
    }

    /// The values of one object of the type, as ``forEach(_:)`` gives them.
    package func values(of object: DynamicObject) throws -> [PortableValue] {
        if let part = try damage(of: table).parts.first(where: { $0.keys?.contains(object._objectKey) ?? false }) {
            throw TroveError(
                .corruptFile, "\(table.name) object \(object._objectKey) is damaged: \(part.detail)", path: database.path)
        }
        guard let record = try database.recordValues(object._objectKey, in: table, transaction) else {
            throw TroveError(.invalidObject, "this \(table.name) object was deleted", path: database.path)
        }
        return try values(object._objectKey, record: record, table: table, plan: try plan(for: table))
    }

    // MARK: Reading

    /// The damaged objects of `table`, found once (and told to ``skipped``).
    private func damage(of table: TableInfo) throws -> DamagedObjects {
        if let known = damage[table.name] { return known }
        var found = DamagedObjects()
        try database.collectDamage(of: table, transaction, into: &found)
        if let unknown = found.parts.firstIndex(where: { $0.keys == nil }) {
            throw TroveError(
                .corruptFile, "\(table.name) \(found.descriptions[unknown]); which objects it held is unknown",
                path: database.path)
        }
        for description in found.descriptions { skipped(table.name, description) }
        damage[table.name] = found
        return found
    }

    private func plan(for table: TableInfo) throws -> [Column] {
        if let known = plans[table.name] { return known }
        let plan = try table.schema.properties.map { property -> Column in
            switch property.collection {
            case .linkingObjects: return .computed
            case .list, .set, .map:
                let element: Element =
                    property.type == .link
                    ? .link(try PortableTarget(of: property, in: database)) : property.type == .mixed ? .mixed : .value
                return .collection(property.collection!, element: element)
            case nil:
                if property.type == .link { return .link(try PortableTarget(of: property, in: database)) }
                return property.type == .mixed ? .mixed : .value
            }
        }
        plans[table.name] = plan
        return plan
    }

    private func values(_ objectKey: UInt64, record: [StoredValue], table: TableInfo, plan: [Column]) throws
        -> [PortableValue]
    {
        var values: [PortableValue] = []
        values.reserveCapacity(plan.count)
        for (column, kind) in plan.enumerated() {
            switch kind {
            case .value: values.append(.value(record[column]))
            case .mixed: values.append(try mixed(record[column]))
            case .computed: values.append(.null)
            case .link(let target): values.append(try link(record[column], to: target))
            case .collection(let collection, let element):
                var keys: [String] = []
                var elements: [StoredValue] = []
                try Database.forEachCollectionEntry(owner: objectKey, column: column, table: table, transaction) {
                    key, reader in
                    if collection == .map { keys.append(String(decoding: key, as: UTF8.self)) }
                    elements.append(reader.value(at: 0))
                }
                let converted = try elements.map { value -> PortableValue in
                    switch element {
                    case .value: .value(value)
                    case .mixed: try mixed(value)
                    case .link(let target): try link(value, to: target)
                    }
                }
                values.append(
                    collection == .map
                        ? .entries(zip(keys, converted).map { PortableEntry(key: $0, value: $1) }) : .elements(converted))
            }
        }
        return values
    }

    /// A stored link (an object key, or null) as its target's primary key,
    /// object key or, for an embedded object, values.
    private func link(_ stored: StoredValue, to target: PortableTarget) throws -> PortableValue {
        guard case .int(let raw) = stored else { return .null }
        let key = UInt64(bitPattern: raw)
        if case .embedded = target {
        } else if let holder = try database.linkTargetTable(key, declared: target.table, transaction),
            holder !== target.table, holder.name != target.table.name
        {
            // A subclass's object: named with its type, as a mixed value's link is.
            let subclass = PortableTarget(holder, owned: false)
            guard try !damage(of: holder).covers(key), case .value(let named) = try link(stored, to: subclass) else {
                return .null
            }
            return .link(typeName: holder.name, key: named)
        }
        switch target {
        case .objectKey: return .value(stored)
        case .integerKey(let table):
            return key == TableInfo.nilPrimaryKey && table.primaryKeyIsOptional
                ? .null : .value(.int(TableInfo.integer(forObjectKey: key)))
        case .primaryKey(let table, let column):
            if try damage(of: table).covers(key) { return .null }
            return try table.store.withRecord(key, in: transaction) { $0.map { .value($0.value(at: column)) } ?? .null }
        case .embedded(let table):
            if try damage(of: table).covers(key) { return .null }
            guard let record = try database.recordValues(key, in: table, transaction) else { return .null }
            return .object(try values(key, record: record, table: table, plan: try plan(for: table)).map(Optional.some))
        }
    }

    /// A mixed value; a link it holds as its target's type and key.
    private func mixed(_ stored: StoredValue) throws -> PortableValue {
        if stored.holdsNestedLink {
            throw TroveError(
                .invalidValue,
                "a list or dictionary in a mixed value holds a link to an object, which export cannot write yet; export the linked objects' keys instead",
                path: database.path)
        }
        guard case .object(let typeName, let key) = stored else { return .value(stored) }
        if mixedTargets[typeName] == nil {
            let table = try? database.tableInfo(named: typeName)
            mixedTargets[typeName] = .some(table.map { PortableTarget($0, owned: false) })
        }
        // A deleted target reads as nil.
        guard let target = mixedTargets[typeName]!, try !damage(of: target.table).covers(key),
            try target.table.store.contains(key, in: transaction),
            case .value(let named) = try link(.int(Int64(bitPattern: key)), to: target)
        else { return .null }
        return .link(typeName: typeName, key: named)
    }
}
