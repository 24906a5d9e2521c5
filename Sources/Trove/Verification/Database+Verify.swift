import TroveStorage

extension Database {
    /// Walks the whole file and checks every invariant Trove keeps: each
    /// type's tables exist, every record reads under its schema, integer
    /// primary keys match their object keys, every object is in each of its
    /// indexes (primary key included) under its current value, and every
    /// index entry points at a live object with that value; every full-text
    /// index holds exactly the terms, positions and lengths of the texts; every link and
    /// list element points at a stored object, the inverse-link tables agree
    /// with the links, and every list belongs to a stored object and has no gaps.
    /// Before any of that it reads every B-tree page the snapshot reaches and
    /// checks its structure, so a damaged page is reported, not followed.
    ///
    /// ```swift
    /// let report = try db.verify()
    /// if !report.isValid { print(report) }
    /// ```
    ///
    /// Reads one consistent snapshot; throws only when the file cannot be read at all.
    public func verify() throws -> VerificationReport {
        // The last commit, in a snapshot of its own: the check reads the
        // snapshot's meta page, which later commits overwrite.
        try PageCheck.run(in: environment) { pages, transaction in
            var report = VerificationReport()
            // Pages first: LMDB follows page headers and offsets without checking
            // them, so the records are read only once every page is known sound.
            report.pagesChecked = pages.pagesChecked
            guard pages.problems.isEmpty else {
                report.problems = pages.problems.map {
                    .init(kind: .damagedPage, typeName: $0.table, detail: "page \($0.page): \($0.detail)")
                }
                return report
            }
            // Every type's objects first, then the links between them: a link is
            // checked against the keys the walks found, so no record is read
            // that was not checked, whatever the bytes.
            var checked: [String: CheckedObjects] = [:]
            var types: [TableInfo] = []
            for name in try Catalog.storedTypeNames(in: transaction) {
                do {
                    guard let schema = try Catalog.storedSchema(name, in: transaction) else { continue }
                    if let (table, objects) = try verifyType(schema, transaction, &report) {
                        checked[name] = objects
                        types.append(table)
                    }
                } catch let error as TroveError where error.kind == .corruptFile {
                    report.problems.append(.init(kind: .damagedRecord, typeName: name, detail: error.message))
                }
            }
            for table in types where table.hasRelations {
                let name = table.name
                do {
                    try verifyLinks(table, checked, transaction) { kind, detail in
                        report.problems.append(.init(kind: kind, typeName: name, detail: detail))
                    }
                } catch let error as TroveError where error.kind == .corruptFile {
                    report.problems.append(.init(kind: .damagedList, typeName: name, detail: error.message))
                }
            }
            // (An encrypted file of an older format, read-only, still has a plain log: not read.)
            do {
                for entry in try ChangeLog.entries(in: transaction)
                where changeLogIsReadable(in: transaction) && entry.record == nil {
                    report.problems.append(
                        .init(
                            kind: .damagedRecord, typeName: ChangeLog.tableName,
                            detail: "the change record of commit \(entry.id) does not decode"))
                }
            } catch let error as TroveError where error.kind == .corruptFile {
                if changeLogIsReadable(in: transaction) {
                    report.problems.append(.init(kind: .damagedRecord, typeName: ChangeLog.tableName, detail: error.message))
                }
            }
            return report
        }
    }

    /// The keys a type's walk found, and its objects that do not read.
    struct CheckedObjects {
        var keys: Set<UInt64> = []
        var damaged = DamagedObjects()

        /// Whether an object with `key` is stored (damaged or not, or maybe, in a cluster whose keys do not read).
        func contains(_ key: UInt64) -> Bool { keys.contains(key) || damaged.covers(key) }
    }

    /// Checks one type's objects, indexes and full-text indexes; returns
    /// its tables and what its walk found, or nil when a table is missing.
    private func verifyType(_ schema: ObjectSchema, _ transaction: Transaction, _ report: inout VerificationReport) throws
        -> (TableInfo, CheckedObjects)?
    {
        let name = schema.name
        func problem(_ kind: VerificationReport.Problem.Kind, _ detail: String) {
            report.problems.append(.init(kind: kind, typeName: name, detail: detail))
        }
        guard let table = try Database.openTables(for: schema, in: transaction) else {
            problem(.missingTable, "the objects table or an index table of \(name) is missing")
            return nil
        }
        let layout = table.layout
        var checked = CheckedObjects()
        // The index entries every object should have: (index, key bytes ++ object key).
        var expected: [Int: Set<[UInt8]>] = [:]
        let pkColumn = table.primaryKeyColumn
        try table.store.forEachStoredEntry(
            in: transaction,
            damaged: { part in
                problem(.damagedRecord, part.detail)
                checked.damaged.add(part)
            }
        ) { current in
            report.objectsChecked += 1
            guard current.key.count == 8 else {
                problem(.damagedRecord, "an object key is \(current.key.count) bytes, not 8")
                return
            }
            let objectKey = OrderedKey.objectKey(from: current.key)
            checked.keys.insert(objectKey)
            if let damage = RecordReader.problem(in: current.value, layout: layout) {
                problem(.damagedRecord, "object \(objectKey) \(damage)")
                checked.damaged.add(.init(start: objectKey, limit: objectKey &+ 1, keys: [objectKey], detail: damage))
                return
            }
            let reader = RecordReader(current.value, layout: layout)
            if table.keyIsPrimaryKey, let pkColumn {
                let value = reader.int(at: pkColumn)
                if table.objectKey(forPrimaryKey: value.map { .int($0) } ?? .null) != objectKey {
                    problem(
                        .primaryKeyMismatch,
                        "object \(TableInfo.integer(forObjectKey: objectKey)) holds \(schema.properties[pkColumn].name) = \(value.map(String.init) ?? "nil")"
                    )
                }
            }
            var columns = Array(table.indexes.keys)
            if let pkColumn, table.primaryKeyIndex != nil { columns.append(pkColumn) }
            for column in columns {
                let index = column == pkColumn ? table.primaryKeyIndex! : table.indexes[column]!
                var key = table.indexKey(reader.value(at: column), column: column, in: index).bytes
                OrderedKey.appendBigEndian(objectKey, to: &key)
                expected[column, default: []].insert(key)
            }
        }
        var indexTables = table.indexes
        if let pkColumn, let pk = table.primaryKeyIndex { indexTables[pkColumn] = pk }
        for (column, index) in indexTables {
            var remaining = expected[column] ?? []
            let property = schema.properties[column].name
            try transaction.withCursor(on: index) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entry = try cursor.next()
                    report.indexEntriesChecked += 1
                    guard current.value.count == 8 else {
                        problem(
                            .danglingIndexEntry,
                            "the \(property) index has an entry of \(current.value.count) bytes, not an object key")
                        continue
                    }
                    var pair = Array(current.key)
                    pair.append(contentsOf: current.value)
                    // A damaged object is reported once, not again by each of its index entries.
                    if remaining.remove(pair) == nil, !checked.damaged.covers(OrderedKey.objectKey(from: current.value)) {
                        let target = current.value.count == 8 ? String(OrderedKey.objectKey(from: current.value)) : "?"
                        problem(
                            .danglingIndexEntry, "the \(property) index has an entry for object \(target) that no object matches")
                    }
                }
            }
            for missing in remaining {
                let objectKey = missing.suffix(8).withUnsafeBytes { OrderedKey.objectKey(from: $0) }
                problem(.missingIndexEntry, "object \(objectKey) is missing from the \(property) index")
            }
        }
        if !table.fullTextIndexes.isEmpty {
            report.indexEntriesChecked += try verifyFullText(table, checked.damaged, transaction, problem)
        }
        return (table, checked)
    }

    /// Checks the links and lists of one type against the objects they point
    /// at and against their inverse-link tables.
    private func verifyLinks(
        _ table: TableInfo, _ checked: [String: CheckedObjects], _ transaction: Transaction,
        _ problem: (VerificationReport.Problem.Kind, String) -> Void
    ) throws {
        func exists(_ key: UInt64, in target: TableInfo) -> Bool {
            // A type whose walk failed was reported already: its keys are unknown, not missing.
            checked[target.name]?.contains(key) ?? true
        }
        let damaged = checked[table.name]?.damaged ?? DamagedObjects()
        for column in Set(table.refs.keys).union(table.collections.keys).sorted() {
            let property = table.schema.properties[column]
            // (target, source) -> how often the source links to the target.
            var expected: [[UInt64]: Int] = [:]
            if let collection = table.collections[column] {
                let isList = property.collection == .list
                var previous: (owner: UInt64, position: Int)?
                try transaction.withCursor(on: collection) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        entry = try cursor.next()
                        guard current.key.count == 12 || (!isList && current.key.count >= 8) else {
                            problem(.damagedList, "\(property.name) has a key of \(current.key.count) bytes")
                            continue
                        }
                        let owner = UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self))
                        // A list's entry holds a chunk of elements (one element in an older file).
                        var records = [table.elementRecord(current.value, column: column)]
                        if isList {
                            let position = Int(UInt32(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
                            let expectedPosition = previous?.owner == owner ? previous!.position : 0
                            if position != expectedPosition {
                                problem(
                                    .damagedList,
                                    "\(property.name) of object \(owner) has element \(position) where \(expectedPosition) belongs"
                                )
                            }
                            if table.listsArePacked {
                                guard let chunk = ListChunk(current.value) else {
                                    problem(
                                        .damagedList,
                                        "the chunk at element \(position) of \(property.name) of object \(owner) \(ListChunk.problem(in: current.value) ?? "")"
                                    )
                                    previous = nil
                                    continue
                                }
                                records = (0..<chunk.count).map { chunk.record(at: $0) }
                            }
                            previous = (owner, position + records.count)
                        }
                        if previous?.owner != owner || isList, !exists(owner, in: table) {
                            problem(.damagedList, "\(property.name) has elements for object \(owner), which does not exist")
                        }
                        if !isList { previous = (owner, 0) }
                        // Each element is a one-column record: its structure is checked before anything decodes it.
                        guard let layout = table.elementLayouts[column] else { continue }
                        for record in records {
                            if let damage = RecordReader.problem(in: record, layout: layout) {
                                problem(.damagedList, "an element of \(property.name) of object \(owner) \(damage)")
                                continue
                            }
                            if property.isLink, case .int(let target) = RecordReader(record, layout: layout).value(at: 0) {
                                expected[[UInt64(bitPattern: target), owner], default: 0] += 1
                            }
                        }
                    }
                }
            } else {
                try table.store.forEachStoredEntry(in: transaction) { current in  // damage is reported by the object check
                    guard current.key.count == 8, RecordReader.problem(in: current.value, layout: table.layout) == nil else {
                        return
                    }
                    if case .int(let target) = RecordReader(current.value, layout: table.layout).value(at: column) {
                        expected[[UInt64(bitPattern: target), OrderedKey.objectKey(from: current.key)], default: 0] += 1
                    }
                }
            }
            guard let refs = table.refs[column], let targetName = property.objectType else { continue }
            guard let targetSchema = try Catalog.storedSchema(targetName, in: transaction),
                let target = try Database.openTables(for: targetSchema, in: transaction)
            else {
                problem(.danglingLink, "\(property.name) links to \(targetName), which is not in the file")
                continue
            }
            // The target's subclasses hold objects of the link's hierarchy too.
            var hierarchy = [target]
            for name in try Catalog.storedTypeNames(in: transaction) {
                guard let schema = try Catalog.storedSchema(name, in: transaction), schema.isKind(of: targetName),
                    name != targetName, let subclass = try Database.openTables(for: schema, in: transaction)
                else { continue }
                hierarchy.append(subclass)
            }
            for pair in expected.keys where !hierarchy.contains(where: { exists(pair[0], in: $0) }) {
                problem(
                    .danglingLink,
                    "\(property.name) of object \(pair[1]) points at \(targetName) \(pair[0]), which does not exist")
            }
            try transaction.withCursor(on: refs) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entry = try cursor.next()
                    guard current.key.count == 16, current.value.count == 4 else {
                        problem(.inverseLinkMismatch, "the inverse links of \(property.name) hold a malformed entry")
                        continue
                    }
                    let pair = [
                        UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self)),
                        UInt64(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                    ]
                    let count = Int(UInt32(littleEndian: current.value.loadUnaligned(as: UInt32.self)))
                    if expected.removeValue(forKey: pair) != count, !damaged.covers(pair[1]) {
                        problem(
                            .inverseLinkMismatch,
                            "the inverse links of \(property.name) say object \(pair[1]) links to \(pair[0]) \(count) time(s), the links disagree"
                        )
                    }
                }
            }
            for pair in expected.keys {
                problem(
                    .inverseLinkMismatch,
                    "object \(pair[1]) links to \(pair[0]) through \(property.name), but the inverse links miss it")
            }
        }
    }
}
