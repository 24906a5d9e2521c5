import TroveStorage

extension SortKey {
    /// The sort key for a property name or a key path through links:
    /// `name`, `owner.name`, `tasks.@count`, `members.@sum.age` (also `@avg`, `@min`, `@max`).
    static func resolve(
        _ keyPath: String, in table: TableInfo, ascending: Bool, tables: BoundPredicate.TableResolver
    ) throws -> SortKey {
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let column = table.columnIndex[parts[0]] else { throw table.unknownProperty(parts[0]) }
        let property = table.schema.properties[column]
        if parts.count == 1 {
            guard property.isInRecord else {
                throw TroveError(.invalidQuery, "\(property.name) is a collection; sort by '\(property.name).@count' instead")
            }
            return SortKey(column: column, ascending: ascending)
        }
        let rest = parts.dropFirst()
        if property.isInRecord {
            guard property.type == .link else {
                throw TroveError(
                    .invalidQuery,
                    "\(table.name).\(property.name) is not a link; '.\(rest.joined(separator: "."))' cannot follow it")
            }
            // The target's class and its subclasses (a class hierarchy shares its keys).
            let targets = try tables.hierarchy(property.objectType ?? "").map { target in
                (target, try resolve(rest.joined(separator: "."), in: target, ascending: ascending, tables: tables))
            }
            var key = SortKey(column: column, ascending: ascending) { reader, transaction in
                guard case .int(let key) = reader.value(at: column) else { return .null }
                for (target, inner) in targets {
                    if let value = BoundPredicate.withRecord(
                        UInt64(bitPattern: key), of: target, transaction,
                        {
                            inner.derived?($0, transaction) ?? $0.value(at: inner.column)
                        })
                    {
                        return value
                    }
                }
                return .null
            }
            key.linkIsBroken = { reader, transaction in
                guard case .int(let key) = reader.value(at: column) else { return true }
                for (target, inner) in targets {
                    if let broken = BoundPredicate.withRecord(
                        UInt64(bitPattern: key), of: target, transaction,
                        {
                            inner.linkIsBroken?($0, transaction) ?? false
                        })
                    {
                        return broken
                    }
                }
                return true
            }
            return key
        }
        let path = try CollectionPath.resolve(column, of: table, tables: tables)
        let aggregate = rest.first!
        if aggregate == "@count", rest.count == 1 {
            return SortKey(column: column, ascending: ascending) { reader, transaction in
                var count = 0
                path.forEachElement(of: reader.objectKey, transaction) { _ in
                    count += 1
                    return true
                }
                return .int(Int64(count))
            }
        }
        guard ["@sum", "@avg", "@min", "@max"].contains(aggregate), rest.count == 2, let target = path.target,
            let targetColumn = target.columnIndex[rest.last!]
        else {
            throw TroveError(
                .invalidQuery,
                "sort through \(table.name).\(property.name) with @count, or @sum/@avg/@min/@max of a property of its objects")
        }
        return SortKey(column: column, ascending: ascending) { reader, transaction in
            path.aggregate(aggregate, of: targetColumn, for: reader.objectKey, transaction)
        }
    }
}

extension CollectionPath {
    /// The path of a collection or linking-objects column.
    static func resolve(_ column: Int, of table: TableInfo, tables: BoundPredicate.TableResolver) throws -> CollectionPath {
        let property = table.schema.properties[column]
        if property.collection == .linkingObjects {
            let origin = try tables(property.objectType ?? "")
            guard let originColumn = origin.columnIndex[property.originProperty ?? ""], let refs = origin.refs[originColumn]
            else {
                throw TroveError(
                    .invalidQuery, "\(table.name).\(property.name): its origin property is not a link of \(origin.name)")
            }
            return CollectionPath(column: column, owner: table, target: origin, inverseRefs: refs)
        }
        return CollectionPath(
            column: column, owner: table, target: property.isLink ? try tables(property.objectType ?? "") : nil, inverseRefs: nil)
    }

    /// `@sum`, `@avg`, `@min` or `@max` of one property over the objects an
    /// owner's collection reaches, or of the values of a collection of values
    /// (nulls skipped; sum of none is 0, the others nil).
    func aggregate(_ kind: String, of targetColumn: Int, for ownerKey: UInt64, _ transaction: Transaction) -> StoredValue {
        var values: [StoredValue] = []
        if let target {
            forEachObject(of: ownerKey, transaction) { key in
                if let value = BoundPredicate.withRecord(key, of: target, transaction, { $0.value(at: targetColumn) }),
                    !value.isNull
                {
                    values.append(value)
                }
            }
        } else if let layout = owner.elementLayouts[column] {
            forEachElement(of: ownerKey, transaction) { element in
                if case .record(let bytes) = element {
                    let value = RecordReader(bytes, layout: layout).value(at: 0)
                    if !value.isNull { values.append(value) }
                }
                return true
            }
        }
        switch kind {
        case "@sum": return .double(values.compactMap(\.numeric).reduce(0, +))
        case "@avg":
            let numbers = values.compactMap(\.numeric)
            return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        case "@min": return values.min { ValueComparison.order($0, $1) == .orderedAscending } ?? .null
        default: return values.max { ValueComparison.order($0, $1) == .orderedAscending } ?? .null
        }
    }

    /// Visits the objects a collection of objects (or inverse link) reaches.
    func forEachObject(of ownerKey: UInt64, _ transaction: Transaction, _ visit: (UInt64) -> Void) {
        let layout = owner.elementLayouts[column]
        forEachElement(of: ownerKey, transaction) { element in
            switch element {
            case .object(let key): visit(key)
            case .record(let bytes):
                if let layout, case .int(let key) = RecordReader(bytes, layout: layout).value(at: 0) {
                    visit(UInt64(bitPattern: key))
                }
            }
            return true
        }
    }
}
