import TroveStorage

/// Links between objects: the inverse-link tables that answer "who points
/// at this object", link writes that keep them in step, and deletes that
/// follow delete rules and leave no link pointing at a deleted object.
///
/// A link property `Task.owner` keeps a table `ref:Task.owner` whose keys are
/// `target key ‖ source key` (both big-endian, so one target's sources are
/// adjacent) and whose value is how many times the source links to the target
/// (a list may hold one object several times).
extension Database {
    // MARK: Inverse-link table

    private static func refKey(target: UInt64, source: UInt64) -> [UInt8] {
        var key = [UInt8](filledWith: 0, count: 16)
        key.withUnsafeMutableBytes {
            $0.storeBytes(of: target.bigEndian, toByteOffset: 0, as: UInt64.self)
            $0.storeBytes(of: source.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return key
    }

    /// Adds `delta` to the number of times `source` links to `target` through
    /// `table`'s `column`. An embedded object no longer linked is deleted.
    ///
    /// `removingAll`: every link from `source` to `target` through the
    /// column is gone (a deleted object taken out of a list): the count is
    /// not read, its entry deleted.
    func adjustRef(
        _ table: TableInfo, column: Int, target: UInt64, source: UInt64, by delta: Int, _ transaction: WriteTransaction,
        removingAll: Bool = false
    ) throws {
        let refs = table.refs[column]!
        let key = Database.refKey(target: target, source: source)
        var orphaned = false
        try key.withUnsafeBytes { k in
            if removingAll {
                orphaned = try transaction.delete(refs, key: k)
                return
            }
            let current =
                try transaction.withValue(in: refs, key: k) { value in
                    value.map { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
                } ?? 0
            let next = current + delta
            if next <= 0 {
                try transaction.delete(refs, key: k)
                orphaned = current > 0
            } else {
                var count = UInt32(next).littleEndian
                try withUnsafeBytes(of: &count) { _ = try transaction.put(refs, key: k, value: $0) }
            }
        }
        let property = table.schema.properties[column]
        if orphaned, property.ownsTargets == true, let state = writeState,
            !state.keptEmbedded.contains(EmbeddedPlace(typeName: property.objectType ?? "", key: target))
        {
            // An embedded object has one owner: unlinked, it goes.
            try deleteObjects([(try tableInfo(named: property.objectType ?? ""), target)], state)
        }
    }

    /// The objects linking to `target` through one link property, ascending
    /// (static: it reads only `transaction`, so a query may call it from any handle).
    static func sources(of target: UInt64, in refs: Table, _ transaction: Transaction) throws -> [UInt64] {
        guard transaction.canSee(refs) else { return [] }
        let start = Database.refKey(target: target, source: 0)
        return try transaction.withCursor(on: refs) { cursor in
            var found: [UInt64] = []
            var entry = try start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.count == 16,
                UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self)) == target
            {
                found.append(UInt64(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                entry = try cursor.next()
            }
            return found
        }
    }

    // MARK: Reading and writing links

    /// The live object a link points at: of the link's class, or of the
    /// subclass it was stored as.
    func linkedObject<T: Object>(_ type: T.Type, objectKey: UInt64) -> T {
        let declared = objectBindingOrTrap(for: type)
        return materialize(type, objectKey: objectKey, binding: targetBinding(objectKey, declared: declared))
    }

    /// The binding of the class an object linked as `declared` is stored as:
    /// `declared`, or a subclass's (a dynamic one for dynamic objects).
    func targetBinding(_ objectKey: UInt64, declared: ObjectBinding) -> ObjectBinding {
        let table: TableInfo?
        do {
            table = try linkTargetTable(objectKey, declared: declared.table, readTransaction())
        } catch {
            fatalError("Trove: cannot read the \(declared.table.name) object with key \(objectKey) in \(path): \(error)")
        }
        guard let table, table !== declared.table, table.name != declared.table.name else { return declared }
        if declared.info.type == DynamicObject.self { return dynamicBinding(for: table) }
        guard let subclass = modelClass(storedAs: table.name) else {
            fatalError(
                "Trove: a \(declared.table.name) link in \(path) holds a \(table.name), a class this program does not have; add the \(table.name) class to the program"
            )
        }
        return objectBindingOrTrap(for: subclass)
    }

    /// The object key a link to `target` stores, adding the target when it
    /// is unmanaged. The target is of the property's type or a subclass.
    func linkKey(for target: Object, property: PropertySchema, of table: TableInfo, update: UpdatePolicy = .error) throws
        -> UInt64
    {
        let typeName = target.storedTypeName
        let declared = property.objectType ?? "?"
        if typeName != declared, !ModelInfo.of(type(of: target)).schema.isKind(of: declared) {
            throw TroveError(
                .invalidValue, "\(table.name).\(property.name) links to \(declared) objects, not to a \(typeName)", path: path)
        }
        if target._database == nil {
            try add(target, update: target is EmbeddedObject ? .error : update, owned: true)
        } else if target._database !== self {
            throw TroveError(
                .invalidObject, "this \(typeName) belongs to another Database handle; link to an object of this handle",
                path: path)
        } else if target.isInvalidated {
            throw TroveError(.invalidObject, "this \(typeName) was deleted; it cannot be linked to", path: path)
        } else if target is EmbeddedObject, try hasOwner(target._objectKey, typeName: typeName) {
            throw TroveError(
                .invalidObject,
                "this \(typeName) is an embedded object that already belongs to another object; assign a new \(typeName) instead",
                path: path)
        }
        if typeName != declared, let stored = target._table, !stored.schema.isKind(of: declared) {
            throw TroveError(
                .invalidValue,
                "\(table.name).\(property.name) links to \(declared) objects; \(typeName) is a subclass of \(declared), but this file stored \(typeName) before Trove kept a class's objects together with its subclasses', so they cannot be linked as \(declared) (copy them into a new type to do so)",
                path: path)
        }
        return target._objectKey
    }

    // MARK: Class hierarchies

    /// Tables by name and their subclasses, for binding queries and sorts.
    var tableResolver: BoundPredicate.TableResolver {
        BoundPredicate.TableResolver(
            table: { [unowned self] in try tableInfo(named: $0) }, subclasses: { [unowned self] in try subclasses(of: $0) })
    }

    /// The stored types that descend from `typeName`.
    func subclasses(of typeName: String) throws -> [String] {
        let transaction = readTransaction()
        // (A struct, not an array: every read of a link asks, and must not allocate.)
        let stamp = SubclassStamp(
            transaction: transaction.id, generation: generation, pendingTables: writeState?.pendingTables.count ?? 0)
        if subclassNames.stamp != stamp {
            var byType: [String: [String]] = [:]
            var names = Set(try Catalog.storedTypeNames(in: transaction))
            names.formUnion(writeState?.pendingTables.keys ?? [:].keys)
            for name in names.sorted() {
                for ancestor in try ancestors(of: name) { byType[ancestor, default: []].append(name) }
            }
            subclassNames = (stamp, byType)
        }
        return subclassNames.byType[typeName] ?? []
    }

    /// The stored ancestors of a stored type (which never change once it is stored).
    func ancestors(of name: String) throws -> [String] {
        if let known = storedAncestors[name] { return known }
        let schema = try writeState?.pendingTables[name]?.schema ?? Catalog.storedSchema(name, in: readTransaction())
        let found = schema?.ancestors ?? []
        if schema != nil { storedAncestors[name] = found }
        return found
    }

    /// The stored type of the object a link declared to `typeName` holds
    /// with `key`: `typeName`, or the subclass it was stored as (for tools
    /// that read links by key). nil when no type of the hierarchy holds it.
    package func linkedTypeName(_ key: UInt64, declaredAs typeName: String) throws -> String? {
        try linkTargetTable(key, declared: tableInfo(named: typeName), readTransaction())?.name
    }

    /// The table holding the object `key` of a link declared to `declared`'s
    /// type: that type's, or a subclass's (a class hierarchy shares its
    /// keys); nil when no table of the hierarchy holds it.
    func linkTargetTable(_ key: UInt64, declared: TableInfo, _ transaction: Transaction) throws -> TableInfo? {
        let below = try subclasses(of: declared.name)
        if below.isEmpty { return declared }
        if try declared.store.contains(key, in: transaction) { return declared }
        for name in below {
            let table = try tableInfo(named: name)
            if try table.store.contains(key, in: transaction) { return table }
        }
        return nil
    }

    /// Whether any link points at an object.
    func hasOwner(_ key: UInt64, typeName: String) throws -> Bool {
        for (source, column) in try incomingLinks(to: typeName) {
            if let refs = source.refs[column], try !Database.sources(of: key, in: refs, readTransaction()).isEmpty { return true }
        }
        return false
    }

    /// Sets a link property of a managed object (the setter of `@Persisted var owner: Person?`).
    func writeLink(_ column: Int, to target: Object?, of object: Object, table: TableInfo) {
        let property = table.schema.properties[column]
        guard let state = writeState else {
            fatalError(
                "Trove: cannot set \(table.name).\(property.name) on a managed object outside a write transaction; wrap the change in `try db.write { ... }`"
            )
        }
        if state.deferredError != nil { return }
        do {
            let value: StoredValue =
                try target.map { .int(Int64(bitPattern: try linkKey(for: $0, property: property, of: table))) } ?? .null
            writeColumn(column, value, of: object, table: table)
        } catch {
            state.deferredError = error
        }
    }

    /// Checks that a link value given as an object key (dynamic writes, the CLI) points at a stored object.
    func checkLinkTarget(_ value: StoredValue, property: PropertySchema, of table: TableInfo) throws {
        guard case .int(let raw) = value else {
            if value.isNull { return }
            throw TroveError(
                .invalidValue, "\(table.name).\(property.name) stores an object key, not \(value.typeName)", path: path)
        }
        let target = try tableInfo(named: property.objectType ?? "")
        let holder = try linkTargetTable(UInt64(bitPattern: raw), declared: target, readTransaction())
        if try holder.map({ try !$0.store.contains(UInt64(bitPattern: raw), in: readTransaction()) }) ?? true {
            throw TroveError(
                .invalidValue, "\(table.name).\(property.name) = \(raw): there is no \(target.name) with that object key",
                path: path)
        }
    }

    /// The table of a stored type by name, in the current transaction.
    func tableInfo(named name: String) throws -> TableInfo {
        if let pending = writeState?.pendingTables[name] { return pending }
        return try dynamicTable(name)
    }

    /// The link properties (of any stored type) that point at objects of
    /// `typeName`: declared to it, or to a class it descends from.
    func incomingLinks(to typeName: String) throws -> [(table: TableInfo, column: Int)] {
        if let state = writeState {
            if let last = state.lastIncomingLinks, last.type == typeName { return last.links }
            if let known = state.incomingLinks[typeName] { return known }
        }
        // Which types link here is found once per handle while the stored schemas
        // stay as they were (a deleting write looked them all up: 47k instructions
        // of a 91k single-object delete, four types). They are known unchanged
        // after the commit they were confirmed at, and in a write that follows it
        // and has not changed the catalog (its id is one more: nothing committed
        // between); else they are compared byte for byte, not decoded.
        let transaction = readTransaction()
        let catalogChanged = writeState?.recorder.changedCatalog ?? false
        // (A write reads the commit before it; a snapshot, the commit it is.)
        let state = writeState == nil ? transaction.id : transaction.id - 1
        // The handle's last answer, where the schemas are known unchanged since (a run of
        // single-object deletes, one a write, asks for one type: no name hashed).
        if !catalogChanged, let last = lastIncomingLinks, last.confirmedAt == state, last.type == typeName {
            writeState?.lastIncomingLinks = (typeName, last.links)
            return last.links
        }
        if let known = incomingLinkCache, catalogChanged || known.confirmedAt != state,
            try !Catalog.storedSchemas(in: transaction, match: known.schemas)
        {
            incomingLinkCache = nil
        }
        if incomingLinkCache == nil { incomingLinkCache = (try Catalog.storedSchemaBytes(in: transaction), [:], nil) }
        incomingLinkCache!.confirmedAt = catalogChanged ? nil : state
        let sources: [String]
        if let known = incomingLinkCache!.byType[typeName] {
            sources = known
        } else {
            sources = try typesLinking(to: typeName, in: transaction)
            incomingLinkCache!.byType[typeName] = sources
        }
        // (Most types are linked to by none: their answer needs no set of kinds, nor a place in the write's cache.)
        if sources.isEmpty {
            writeState?.lastIncomingLinks = (typeName, [])
            lastIncomingLinks = catalogChanged ? nil : (typeName, [], state)
            return []
        }
        let kinds = try linkKinds(of: typeName)
        var found: [(TableInfo, Int)] = []
        for name in sources {
            let table = try tableInfo(named: name)
            for (column, property) in table.schema.properties.enumerated()
            where property.isLink && kinds.contains(property.objectType ?? "") {
                found.append((table, column))
            }
        }
        writeState?.incomingLinks[typeName] = found
        writeState?.lastIncomingLinks = (typeName, found)
        lastIncomingLinks = catalogChanged ? nil : (typeName, found, state)
        return found
    }

    /// The object types a link to `typeName` objects may declare: it and the classes it descends from.
    private func linkKinds(of typeName: String) throws -> Set<String> {
        Set([typeName] + (try ancestors(of: typeName)))
    }

    /// The stored types with a link property to objects of `typeName` (or
    /// of a class it descends from), by their stored schemas.
    private func typesLinking(to typeName: String, in transaction: Transaction) throws -> [String] {
        let kinds = try linkKinds(of: typeName)
        return try Catalog.storedTypeNames(in: transaction).filter { name in
            try Catalog.storedSchema(name, in: transaction)?.properties.contains {
                $0.isLink && kinds.contains($0.objectType ?? "")
            } == true
        }
    }

    /// The objects one link column of an object points at (with repeats, for lists).
    func linkTargets(of objectKey: UInt64, column: Int, in table: TableInfo, _ transaction: Transaction) throws -> [UInt64] {
        if table.collections[column] != nil {
            return try listValues(owner: objectKey, column: column, table: table, transaction).compactMap { value in
                if case .int(let key) = value { return UInt64(bitPattern: key) }
                return nil
            }
        }
        let value = try table.store.withRecord(objectKey, in: transaction) { $0?.value(at: column) }
        if case .int(let key) = value { return [UInt64(bitPattern: key)] }
        return []
    }

    // MARK: Deleting with delete rules

    /// Deletes objects, what their `.cascade` links reach, and every link to
    /// any of them. Checks `.deny` rules first: a denied delete changes nothing.
    func deleteObjects(_ roots: [(table: TableInfo, key: UInt64)], _ state: WriteState) throws {
        let transaction = state.transaction
        var order: [(table: TableInfo, key: UInt64)] = []
        var seen = Set<String>()
        var pending = roots
        while let (table, key) = pending.popLast() {
            guard seen.insert("\(table.name)#\(key)").inserted,
                try table.store.contains(key, in: transaction)
            else { continue }
            order.append((table, key))
            for (column, property) in table.schema.properties.enumerated() where property.isLink {
                guard let rule = property.deleteRule, rule != .nullify else { continue }
                let targets = try linkTargets(of: key, column: column, in: table, transaction)
                if targets.isEmpty { continue }
                if rule == .deny {
                    throw TroveError(
                        .deleteDenied,
                        "cannot delete \(try describe(key, in: table)): its \(property.name) (deleteRule: .deny) still links to \(targets.count) \(property.objectType ?? "") object(s): \(try targets.prefix(5).map { try describe($0, in: tableInfo(named: property.objectType ?? "")) }.joined(separator: ", ")); remove them from \(property.name) first",
                        path: path)
                }
                let targetTable = try tableInfo(named: property.objectType ?? "")
                for target in targets {
                    pending.append((try linkTargetTable(target, declared: targetTable, transaction) ?? targetTable, target))
                }
            }
        }
        for (table, key) in order {
            try detachOutgoing(key, in: table, state)
            try detachIncoming(key, in: table, state)
            try deleteRecord(key, in: table, state)
        }
    }

    /// "a Person (id = 3)": how a delete error names an object.
    private func describe(_ key: UInt64, in table: TableInfo) throws -> String {
        guard let column = table.primaryKeyColumn,
            let values = try recordValues(key, in: table, readTransaction())
        else { return "a \(table.name) (object key \(key))" }
        return "a \(table.name) (\(table.schema.properties[column].name) = \(values[column]))"
    }

    /// Drops what an object links to: its inverse-link entries and its lists.
    func detachOutgoing(_ key: UInt64, in table: TableInfo, _ state: WriteState) throws {
        guard table.hasRelations else { return }
        for column in table.collections.keys {
            try collectionRemoveAll(owner: key, column: column, table: table, state)
        }
        for column in table.refs.keys where table.collections[column] == nil {
            for target in try linkTargets(of: key, column: column, in: table, state.transaction) {
                try adjustRef(table, column: column, target: target, source: key, by: -1, state.transaction)
            }
        }
    }

    /// Removes every link to an object: to-one links become nil, lists lose it.
    private func detachIncoming(_ key: UInt64, in table: TableInfo, _ state: WriteState) throws {
        for (source, column) in try incomingLinks(to: table.name) {
            guard let refs = source.refs[column] else { continue }
            let isCollection = source.collections[column] != nil
            let sources = try Database.sources(of: key, in: refs, state.transaction)
            if isCollection, source.schema.properties[column].collection == .list {
                try listRemoveOccurrences(of: key, owners: sources, column: column, table: source, state)
            } else {
                try detach(key, from: sources, column: column, table: source, isCollection: isCollection, state)
            }
            if isCollection {
                // Every source let go of it: its entries, side by side, go in one walk.
                _ = try Database.refKey(target: key, source: 0).withUnsafeBytes { start in
                    try state.transaction.deleteRun(refs, from: start) { entry in
                        entry.count == 16 && UInt64(bigEndian: entry.loadUnaligned(as: UInt64.self)) == key
                    }
                }
            }
        }
    }

    /// Takes `key` out of the sets, maps or to-one links of `sources` (a list's go in one pass).
    private func detach(
        _ key: UInt64, from sources: [UInt64], column: Int, table: TableInfo, isCollection: Bool, _ state: WriteState
    ) throws {
        for sourceKey in sources {
            if isCollection {
                try collectionRemoveOccurrences(
                    of: key, owner: sourceKey, column: column, table: table, state, droppingRef: false)
            } else if let record = try fetchRecord(sourceKey, table: table) {
                _ = try updateColumn(column, to: .null, objectKey: sourceKey, record: record, table: table, state)
            }
        }
    }
}
