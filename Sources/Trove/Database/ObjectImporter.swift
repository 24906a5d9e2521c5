import TroveStorage

/// Adds objects of one stored type from ``PortableValue``s, inside a write:
/// the `trove` tool's import, the inverse of ``ObjectExporter``. Values,
/// links (by primary key), embedded objects and the elements of lists, sets
/// and maps are written through the same record, link and collection
/// operations as every other write.
///
/// Each object is checked in full before anything of it is written, so a bad
/// one (a value of the wrong type, nil where none may be, a link to an
/// object the file does not have) throws and leaves the write as it was.
///
/// A link to an object of the imported type that is not stored yet (a later
/// row of the same import) is kept, and made by ``resolvePendingLinks(removingUnresolved:)``,
/// which the importer's user calls before committing each write.
///
/// ```swift
/// let importer = try ObjectImporter(database: db, typeName: "Person")
/// try db.write {
///     try importer.add([.value(.int(1)), .value(.string("Ann")), .elements([.value(.int(2))])], update: .error, line: 1)
///     guard try importer.resolvePendingLinks(removingUnresolved: false).isEmpty else { return db.cancelWrite() }
/// }
/// ```
package final class ObjectImporter {
    /// The imported type's schema; values are given by column, in its order.
    package let schema: ObjectSchema
    private let database: Database
    private let table: TableInfo
    /// How each type's columns are written, by type name (embedded types too).
    private var plans: [String: [Column]] = [:]
    /// The imported type's plan (looked up for every object otherwise).
    private var ownPlan: [Column] = []
    private var mixedTargets: [String: PortableTarget] = [:]
    private var pending: [PendingLink] = []

    /// How one column is checked and written (a class: read for every value, never copied).
    private final class Column {
        let name: String
        let kind: Kind
        let type: PropertyType
        let isOptional: Bool
        /// The type of one value (of one element, for a collection), for messages.
        let valueDescription: String
        let isCollection: Bool

        init(name: String, kind: Kind, type: PropertyType, isOptional: Bool, valueDescription: String, isCollection: Bool) {
            self.name = name
            self.kind = kind
            self.type = type
            self.isOptional = isOptional
            self.valueDescription = valueDescription
            self.isCollection = isCollection
        }
    }

    private enum Kind {
        case value
        case mixed
        case link(PortableTarget)
        case collection(CollectionKind, element: ElementKind)
        /// Linking objects: computed from the links that point here; ignored.
        case computed
    }

    private enum ElementKind {
        case value
        case mixed
        case link(PortableTarget)
    }

    /// An object checked and ready to write: its record (links to objects
    /// made later held as nil) and what is written once it has its key.
    private struct Prepared {
        var record: [StoredValue]
        var embedded: [EmbeddedWrite] = []
        var collections: [CollectionWrite] = []
        var deferred: [DeferredLink] = []
    }

    // Structs, not tuples: arrays of tuples make their type metadata at run time, per array.

    private struct EmbeddedWrite {
        let column: Int
        let object: Prepared
    }

    private struct CollectionWrite {
        let column: Int
        let elements: [Element]
        /// A map's keys, one per element.
        let keys: [String]
    }

    /// A link to an object not stored yet: its primary key.
    private struct DeferredLink {
        let column: Int
        let key: StoredValue
    }

    private enum Element {
        case value(StoredValue)
        case embedded(Prepared)
        /// A link to an object of the imported type not stored yet: its primary key.
        case pending(StoredValue)
    }

    private struct PendingLink {
        enum Change {
            case link(StoredValue)
            case collection([Element], keys: [String])
        }
        let table: TableInfo
        let owner: UInt64
        let column: Int
        let change: Change
        let line: Int
        /// The imported object the link belongs to (itself, or the owner of the embedded object that holds it).
        let root: UInt64
    }

    /// An importer into the stored type `typeName` of `database`. Throws
    /// `TroveError.Kind.invalidModel` when the file has no such type, and
    /// `.invalidObject` for an embedded type (its objects come inside the
    /// objects that hold them).
    package init(database: Database, typeName: String) throws {
        self.database = database
        table = try database.tableInfo(named: typeName)
        schema = table.schema
        let owners = try database.incomingLinks(to: typeName).filter { $0.table.schema.properties[$0.column].ownsTargets == true }
        if let owner = owners.first {
            throw TroveError(
                .invalidObject,
                "\(typeName) is an embedded object type: its objects are imported inside the objects that hold them (\(owner.table.name).\(owner.table.schema.properties[owner.column].name))",
                path: database.path)
        }
        ownPlan = try plan(for: table)
    }

    /// Checks one object's values (by column of ``schema``; nil takes the
    /// property's default) and adds the object, inside a write. With
    /// `update: .modified` or `.all`, an object with the same primary key is
    /// replaced: every property takes the given value or its default.
    ///
    /// `line` says where the values came from; it is reported with a link
    /// that ``resolvePendingLinks(removingUnresolved:)`` cannot make.
    ///
    /// Throws `TroveError.Kind.invalidValue` for a value the property cannot
    /// hold or a link to a missing object, `.primaryKeyExists` for a stored
    /// primary key under `.error`; the write is then as it was before the call.
    /// Returns the object's key.
    @discardableResult
    package func add(_ values: [PortableValue?], update: UpdatePolicy, line: Int) throws -> UInt64 {
        let state = try database.requireWrite("ObjectImporter.add(_:update:line:)")
        let prepared = try prepare(values, table: table, path: table.name)
        let earlier = pending.count
        let key = try write(prepared, table: table, policy: update, state, line: line, root: nil)
        if update != .error, earlier > 0 {
            // The object replaced a stored one: links kept for the old one are void.
            pending = pending[..<earlier].filter { $0.root != key } + pending[earlier...]
        }
        return key
    }

    /// Checks one object's values as ``add(_:update:line:)`` does, without
    /// writing anything (a link to an object not stored yet passes).
    package func check(_ values: [PortableValue?]) throws {
        _ = try prepare(values, table: table, path: table.name)
    }

    /// Makes the links that ``add(_:update:line:)`` kept for objects not
    /// stored then; call it before committing each write. Returns the links
    /// whose object is still missing, with the line their object came from;
    /// with `removingUnresolved`, the objects holding them are deleted.
    package func resolvePendingLinks(removingUnresolved: Bool) throws -> [(line: Int, error: TroveError)] {
        let state = try database.requireWrite("ObjectImporter.resolvePendingLinks(removingUnresolved:)")
        let links = pending
        pending = []
        var failures: [(line: Int, error: TroveError)] = []
        for link in links {
            // An object replaced or removed since: its links went with it.
            guard database.contains(objectKey: link.owner, in: link.table) else { continue }
            let column = try plan(for: link.table)[link.column]
            let target: PortableTarget
            switch column.kind {
            case .link(let linked), .collection(_, element: .link(let linked)): target = linked
            default: continue
            }
            do {
                switch link.change {
                case .link(let key):
                    let objectKey = try resolvePending(key, target: target, column: column, table: link.table)
                    guard let record = try database.fetchRecord(link.owner, table: link.table) else { continue }
                    _ = try database.updateColumn(
                        link.column, to: .int(Int64(bitPattern: objectKey)), objectKey: link.owner, record: record,
                        table: link.table, state)
                case .collection(let elements, let keys):
                    let resolved = try elements.map { element -> Element in
                        guard case .pending(let key) = element else { return element }
                        let objectKey = try resolvePending(key, target: target, column: column, table: link.table)
                        return .value(.int(Int64(bitPattern: objectKey)))
                    }
                    try writeCollection(
                        resolved, keys: keys, column: link.column, owner: link.owner, table: link.table, state, line: link.line,
                        root: link.root)
                }
            } catch let error as TroveError where error.kind == .invalidValue {
                failures.append((link.line, error))
                if removingUnresolved { try database.deleteObjects([(table, link.root)], state) }
            }
        }
        return failures
    }

    /// Forgets the links kept for a write that was cancelled.
    package func discardPendingLinks() {
        pending = []
    }

    // MARK: Checking

    private func plan(for table: TableInfo) throws -> [Column] {
        if table === self.table, !ownPlan.isEmpty { return ownPlan }
        if let known = plans[table.name] { return known }
        let plan = try table.schema.properties.map { property -> Column in
            var element = property
            element.collection = nil
            let kind: Kind
            switch property.collection {
            case .linkingObjects: kind = .computed
            case .list, .set, .map:
                let elementKind: ElementKind =
                    property.type == .link
                    ? .link(try PortableTarget(of: property, in: database)) : property.type == .mixed ? .mixed : .value
                kind = .collection(property.collection!, element: elementKind)
            case nil:
                kind =
                    property.type == .link
                    ? .link(try PortableTarget(of: property, in: database)) : property.type == .mixed ? .mixed : .value
            }
            return Column(
                name: property.name, kind: kind, type: property.type, isOptional: property.isOptional,
                valueDescription: element.typeDescription, isCollection: property.collection != nil)
        }
        plans[table.name] = plan
        return plan
    }

    private func prepare(_ values: [PortableValue?], table: TableInfo, path: String) throws -> Prepared {
        let plan = try self.plan(for: table)
        guard values.count <= plan.count else {
            throw TroveError(
                .invalidValue, "\(values.count) values were given for \(path), which has \(plan.count) properties",
                path: database.path)
        }
        var prepared = Prepared(record: table.layout.fallbacks)
        for (column, given) in values.enumerated() {
            guard let given else { continue }
            let info = plan[column]
            switch info.kind {
            case .computed: continue
            case .value, .mixed, .link:
                let element: ElementKind
                switch info.kind {
                case .link(let target): element = .link(target)
                case .mixed: element = .mixed
                default: element = .value
                }
                switch try self.element(given, element, info, path) {
                case .value(let value): prepared.record[column] = value
                case .embedded(let object):
                    prepared.embedded.append(EmbeddedWrite(column: column, object: object))
                    prepared.record[column] = .null
                case .pending(let key):
                    prepared.deferred.append(DeferredLink(column: column, key: key))
                    prepared.record[column] = .null
                }
            case .collection(let collection, let element):
                var elements: [Element] = []
                var keys: [String] = []
                switch (collection, given) {
                case (_, .value(.null)): break
                case (.list, .elements(let items)), (.set, .elements(let items)):
                    elements = try items.map { try self.element($0, element, info, path) }
                case (.map, .entries(let entries)):
                    elements.reserveCapacity(entries.count)
                    for entry in entries {
                        guard entry.key.utf8.count <= Database.maximumMapKeyLength else {
                            throw TroveError(
                                .invalidValue,
                                "a key of \(path).\(info.name) is \(entry.key.utf8.count) bytes; map keys can be at most \(Database.maximumMapKeyLength)",
                                path: database.path)
                        }
                        keys.append(entry.key)
                        elements.append(try self.element(entry.value, element, info, path))
                    }
                default:
                    let element = info.valueDescription
                    throw shapeError(
                        given,
                        expected: collection == .map
                            ? "a map (Map<String, \(element)>)"
                            : "a list (\(collection == .set ? "MutableSet" : "List")<\(element)>)", info, path)
                }
                if !elements.isEmpty {
                    prepared.collections.append(CollectionWrite(column: column, elements: elements, keys: keys))
                }
            }
        }
        return prepared
    }

    /// One value of a property, or one element of a collection, checked.
    private func element(_ given: PortableValue, _ kind: ElementKind, _ info: Column, _ path: String) throws -> Element {
        switch (kind, given) {
        case (.value, .value(let value)): return .value(try checked(value, info, path))
        case (.mixed, .value(let value)):
            if case .object = value { break }  // a mixed link is given as .link
            return .value(value)
        case (.mixed, .link(let typeName, let key)):
            let target = try mixedTarget(typeName, info, path)
            guard let objectKey = try resolve(key, target: target, info, path) else {
                throw missingTarget(key, target: target, info, path)
            }
            return .value(.object(typeName: typeName, key: objectKey))
        case (.link, .value(.null)):
            guard info.isOptional else {
                throw TroveError(.invalidValue, "\(path).\(info.name) cannot hold nil", path: database.path)
            }
            return .value(.null)
        case (.link(let declared), .link(let typeName, let key)):
            // An object of a subclass of the declared type, named with its type.
            if case .embedded = declared { break }
            let target = try mixedTarget(typeName, info, path)
            guard target.table.schema.isKind(of: declared.table.name) else {
                throw TroveError(
                    .invalidValue,
                    "\(path).\(info.name) links to \(declared.table.name) objects, not to a \(typeName)", path: database.path)
            }
            guard let objectKey = try resolve(key, target: target, info, path) else {
                throw missingTarget(key, target: target, info, path)
            }
            return .value(.int(Int64(bitPattern: objectKey)))
        case (.link(.embedded(let target)), .object(let values)):
            return .embedded(try prepare(values, table: target, path: "\(path).\(info.name)"))
        case (.link(let target), .value(let key)):
            if case .embedded = target { break }
            if let objectKey = try resolve(key, target: target, info, path) { return .value(.int(Int64(bitPattern: objectKey))) }
            // A later object of this import may have the key.
            if target.table === table, target.table.primaryKeyColumn != nil { return .pending(key) }
            throw missingTarget(key, target: target, info, path)
        default: break
        }
        if case .link(.embedded) = kind {
            throw shapeError(given, expected: "an embedded \(info.valueDescription) (its values)", info, path)
        }
        throw shapeError(given, expected: info.valueDescription, info, path)
    }

    /// `value` as the property stores it (converted exactly, or refused).
    private func checked(_ value: StoredValue, _ info: Column, _ path: String) throws -> StoredValue {
        if value.isNull {
            guard info.isOptional else {
                throw TroveError(
                    .invalidValue,
                    info.isCollection
                        ? "\(path).\(info.name) cannot hold nil"
                        : "\(path).\(info.name) is \(info.valueDescription) and cannot be nil", path: database.path)
            }
            return .null
        }
        switch info.type {
        case .int8, .int16, .int32:
            // Narrow integers are refused out of range rather than cut.
            if let converted = value.converted(to: info.type) { return converted }
        default:
            if RecordWriter.fits(value, info.type) { return value }
            if let converted = value.converted(to: info.type), RecordWriter.fits(converted, info.type) { return converted }
        }
        throw TroveError(
            .invalidValue,
            "\(path).\(info.name) \(info.isCollection ? "holds" : "is") \(info.valueDescription), not \(value.typeName) (\(value))",
            path: database.path)
    }

    /// The object key a link's portable key names, or nil when there is no such object.
    private func resolve(_ key: StoredValue, target: PortableTarget, _ info: Column, _ path: String) throws -> UInt64? {
        switch target {
        case .integerKey(let table), .primaryKey(let table, _):
            let column = table.primaryKeyColumn!
            let keyInfo = try plan(for: table)[column]
            let checked: StoredValue
            do {
                checked = try self.checked(key, keyInfo, table.name)
            } catch {
                throw TroveError(
                    .invalidValue,
                    "\(path).\(info.name) links to \(table.name) objects by their primary key \(keyInfo.name), a \(keyInfo.valueDescription), not \(key.typeName) (\(key))",
                    path: database.path)
            }
            return try database.objectKey(forPrimaryKey: checked, in: table)
        case .objectKey(let table):
            guard case .int(let raw) = key else {
                throw TroveError(
                    .invalidValue,
                    "\(path).\(info.name) links to \(table.name) objects, which have no primary key, by their object key (an integer), not by \(key.typeName) (\(key))",
                    path: database.path)
            }
            let objectKey = UInt64(bitPattern: raw)
            return database.contains(objectKey: objectKey, in: table) ? objectKey : nil
        case .embedded: return nil
        }
    }

    private func resolvePending(_ key: StoredValue, target: PortableTarget, column: Column, table: TableInfo) throws -> UInt64 {
        guard let objectKey = try resolve(key, target: target, column, table.name) else {
            throw missingTarget(key, target: target, column, table.name)
        }
        return objectKey
    }

    private func mixedTarget(_ typeName: String, _ info: Column, _ path: String) throws -> PortableTarget {
        if let known = mixedTargets[typeName] { return known }
        let table: TableInfo
        do {
            table = try database.tableInfo(named: typeName)
        } catch let error as TroveError {
            throw TroveError(.invalidValue, "\(path).\(info.name) links to a \(typeName): \(error.message)", path: database.path)
        }
        let target = PortableTarget(table, owned: false)
        mixedTargets[typeName] = target
        return target
    }

    private func missingTarget(_ key: StoredValue, target: PortableTarget, _ info: Column, _ path: String) -> TroveError {
        let table = target.table
        let keyName =
            table.primaryKeyColumn.map { "primary key \(table.schema.properties[$0].name) = \(key)" } ?? "object key \(key)"
        return TroveError(
            .invalidValue,
            "\(path).\(info.name) links to a \(table.name) with \(keyName), which is not stored"
                + (table.name == self.table.name ? " nor imported" : " (import the \(table.name) objects first)"),
            path: database.path)
    }

    /// A value of the wrong kind: `expected` says what the property (or element) takes.
    private func shapeError(_ given: PortableValue, expected: String, _ info: Column, _ path: String) -> TroveError {
        let shape: String
        switch given {
        case .value(let value): shape = "\(value.typeName) (\(value))"
        case .object: shape = "an object's values"
        case .elements: shape = "a list of values"
        case .entries: shape = "a map of values"
        case .link(let typeName, _): shape = "a link to a \(typeName)"
        }
        return TroveError(.invalidValue, "\(path).\(info.name) needs \(expected), not \(shape)", path: database.path)
    }

    // MARK: Writing

    /// Stores a checked object, then its embedded objects, collections and
    /// kept links; returns its object key.
    private func write(
        _ prepared: Prepared, table: TableInfo, policy: UpdatePolicy, _ state: WriteState, line: Int, root: UInt64?
    ) throws -> UInt64 {
        let objectKey = try database.storeRecord(prepared.record, in: table, policy: policy, state).objectKey
        let root = root ?? objectKey
        let plan = try self.plan(for: table)
        for embedded in prepared.embedded {
            let (column, object) = (embedded.column, embedded.object)
            guard case .link(let target) = plan[column].kind else { continue }
            let key = try write(object, table: target.table, policy: .error, state, line: line, root: root)
            guard let record = try database.fetchRecord(objectKey, table: table) else { continue }
            _ = try database.updateColumn(
                column, to: .int(Int64(bitPattern: key)), objectKey: objectKey, record: record, table: table, state)
        }
        for collection in prepared.collections {
            let (column, elements, keys) = (collection.column, collection.elements, collection.keys)
            if elements.contains(where: { if case .pending = $0 { true } else { false } }) {
                pending.append(
                    PendingLink(
                        table: table, owner: objectKey, column: column, change: .collection(elements, keys: keys), line: line,
                        root: root))
                continue
            }
            try writeCollection(
                elements, keys: keys, column: column, owner: objectKey, table: table, state, line: line, root: root)
        }
        for deferred in prepared.deferred {
            let (column, key) = (deferred.column, deferred.key)
            pending.append(
                PendingLink(table: table, owner: objectKey, column: column, change: .link(key), line: line, root: root))
        }
        return objectKey
    }

    /// Writes the elements of one collection of a new (or just emptied) object.
    private func writeCollection(
        _ elements: [Element], keys: [String], column: Int, owner: UInt64, table: TableInfo, _ state: WriteState, line: Int,
        root: UInt64
    ) throws {
        guard case .collection(let collection, let elementKind) = try plan(for: table)[column].kind else { return }
        for (position, element) in elements.enumerated() {
            let value: StoredValue
            switch element {
            case .value(let stored): value = stored
            case .embedded(let object):
                guard case .link(let target) = elementKind else { continue }
                let key = try write(object, table: target.table, policy: .error, state, line: line, root: root)
                value = .int(Int64(bitPattern: key))
            case .pending: continue  // resolved before this is called
            }
            switch collection {
            case .list:
                try database.putElement(
                    value, replacing: nil, owner: owner, column: column, position: position, table: table, state)
            case .set: try database.setInsert(value, owner: owner, column: column, table: table, state)
            case .map: try database.mapSet(value, forKey: keys[position], owner: owner, column: column, table: table, state)
            case .linkingObjects: break
            }
        }
        database.generation &+= 1
    }
}
