import TroveStorage

extension Database {
    /// Walks the whole file and checks every invariant Trove keeps: each
    /// type's tables exist, every record reads under its schema, integer
    /// primary keys match their object keys, every object is in each of its
    /// indexes (primary key included) under its current value, and every
    /// index entry points at a live object with that value.
    ///
    /// ```swift
    /// let report = try db.verify()
    /// if !report.isValid { print(report) }
    /// ```
    ///
    /// Reads one consistent snapshot; throws only when the file cannot be read at all.
    public func verify() throws -> VerificationReport {
        var report = VerificationReport()
        let transaction = readTransaction()
        for name in try Catalog.storedTypeNames(in: transaction) {
            guard let schema = try Catalog.storedSchema(name, in: transaction) else { continue }
            try verifyType(schema, transaction, &report)
        }
        return report
    }

    private func verifyType(_ schema: ObjectSchema, _ transaction: Transaction, _ report: inout VerificationReport) throws {
        let name = schema.name
        func problem(_ kind: VerificationReport.Problem.Kind, _ detail: String) {
            report.problems.append(.init(kind: kind, typeName: name, detail: detail))
        }
        guard let table = try openTables(for: schema, in: transaction) else {
            problem(.missingTable, "the objects table or an index table of \(name) is missing")
            return
        }
        let layout = table.layout
        // The index entries every object should have: (index, key bytes ++ object key).
        var expected: [Int: Set<[UInt8]>] = [:]
        let pkColumn = table.primaryKeyColumn
        try transaction.withCursor(on: table.objects) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                entry = try cursor.next()
                report.objectsChecked += 1
                guard current.key.count == 8 else {
                    problem(.damagedRecord, "an object key is \(current.key.count) bytes, not 8")
                    continue
                }
                let objectKey = OrderedKey.objectKey(from: current.key)
                if let damage = RecordReader.problem(in: current.value, layout: layout) {
                    problem(.damagedRecord, "object \(objectKey) \(damage)")
                    continue
                }
                let reader = RecordReader(current.value, layout: layout)
                if table.keyIsPrimaryKey, let pkColumn {
                    let value = reader.int(at: pkColumn)
                    if value.map(TableInfo.objectKey(forInteger:)) != objectKey {
                        problem(
                            .primaryKeyMismatch,
                            "object \(TableInfo.integer(forObjectKey: objectKey)) holds \(schema.properties[pkColumn].name) = \(value.map(String.init) ?? "nil")"
                        )
                    }
                }
                var columns = Array(table.indexes.keys)
                if let pkColumn, table.primaryKeyIndex != nil { columns.append(pkColumn) }
                for column in columns {
                    var key = IndexKey.make(reader.value(at: column), type: layout.types[column]).bytes
                    OrderedKey.appendBigEndian(objectKey, to: &key)
                    expected[column, default: []].insert(key)
                }
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
                    if remaining.remove(pair) == nil {
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
    }
}
