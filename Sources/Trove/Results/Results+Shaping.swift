import TroveStorage

extension Results {
    /// The elements with repeats removed: the first of each distinct
    /// combination of the named properties is kept, in the current order.
    ///
    /// ```swift
    /// let oneTaskPerOwner = db.objects(Task.self)
    ///     .sorted(by: \.priority, ascending: false)
    ///     .distinct(by: ["owner.name"])
    /// ```
    ///
    /// Later filters and sorts apply to what is kept. Key paths may go through
    /// to-one links and end in a collection aggregate, as in ``sorted(byKeyPath:ascending:)``;
    /// an object whose link is nil has no value to keep, so it is left out (as in Realm).
    public func distinct(by keyPaths: [String]) -> Results {
        do {
            return try distinctResults(keyPaths)
        } catch {
            preconditionFailure(
                "Trove: cannot make \(table.name) distinct: \((error as? TroveError)?.message ?? "\(error)")")
        }
    }

    /// The elements with repeats of one property removed, keeping the first of each.
    ///
    /// ```swift
    /// let oneCity = db.objects(Person.self).distinct(by: \.city)
    /// ```
    public func distinct<Value: _TroveStorable>(by keyPath: KeyPath<Element, Value>) -> Results {
        guard source.columnForKeyPath(keyPath) != nil else { return distinct(by: [source.path(for: keyPath)]) }
        let column = source.column(for: keyPath)
        precondition(
            table.layout.inRecord[column],
            "Trove: cannot make \(table.name) distinct by the collection \(table.schema.properties[column].name)")
        return distinct(keys: [SortKey(column: column, ascending: true)])
    }

    /// The elements with repeats of a combination of properties removed,
    /// keeping the first of each (Realm's `distinct(by: [\.a, \.b])`).
    ///
    /// ```swift
    /// let oneVisitPerDay = db.objects(Visit.self).distinct(by: [\Visit.day, \Visit.place])
    /// ```
    public func distinct(by keyPaths: [PartialKeyPath<Element>]) -> Results {
        if keyPaths.contains(where: { source.columnForKeyPath($0) == nil }) {
            // Some read through a link: `\.owner?.name`.
            return distinct(by: keyPaths.map { source.path(for: $0) })
        }
        let keys = keyPaths.map { keyPath -> SortKey in
            let column = source.column(for: keyPath)
            precondition(
                table.layout.inRecord[column],
                "Trove: cannot make \(table.name) distinct by the collection \(table.schema.properties[column].name)")
            return SortKey(column: column, ascending: true)
        }
        return distinct(keys: keys)
    }

    /// The first `maxLength` elements, as results (the `LIMIT(n)` of a query
    /// string): unsorted results stop reading at the last one they keep, and
    /// sorted ones keep only the first `maxLength` while they read the
    /// matches instead of sorting them all. The elements are the first of the
    /// full sort, ties included.
    ///
    /// ```swift
    /// let newestTen = db.objects(Photo.self).sorted(by: \.date, ascending: false).prefix(10)
    /// ```
    ///
    /// Like `LIMIT`, the results are live: after a write they are the first
    /// `maxLength` again, and later filters and sorts apply to what they kept.
    public func prefix(_ maxLength: Int) -> Results {
        precondition(maxLength >= 0, "Trove: cannot take a prefix of negative length \(maxLength)")
        return reshaped("at most \(maxLength)", limit: maxLength) { keys, _ in keys }
    }

    /// How Trove answers these results, one step a line: the index it uses
    /// (and how many candidates it found) or the scan, then the sort and any
    /// `DISTINCT` or `LIMIT`. Runs the index lookup, not the rest.
    ///
    /// ```swift
    /// print(try db.objects(Person.self).filter("city == 'Oslo' AND age > 30").explain())
    /// // Person: index on city == "Oslo": 25 candidates, each checked against the rest of the predicate
    /// ```
    public func explain() -> String {
        query.explain(table, in: database).joined(separator: "\n")
    }

    // MARK: Suffixes

    func sortKeys(_ descriptors: [SortDescriptor]) throws -> [SortKey] {
        try descriptors.map { descriptor in
            var key = try SortKey.resolve(
                descriptor.keyPath, in: table, ascending: descriptor.ascending, tables: database.tableResolver)
            key.label = descriptor.keyPath
            return key
        }
    }

    /// Applies a query's `SORT`, `DISTINCT` and `LIMIT` in the order written.
    func applying(_ suffixes: [QuerySuffix]) throws -> Results {
        var results = self
        for suffix in suffixes {
            switch suffix {
            case .sort(let descriptors, let position):
                let keys = try located(position) { try results.sortKeys(descriptors) }
                results = results.with(predicate: results.predicate, sort: keys)
            case .distinct(let keyPaths, let position):
                results = try located(position) { try results.distinctResults(keyPaths) }
            case .limit(let count):
                results = results.reshaped("at most \(count)", limit: count) { keys, _ in keys }
            }
        }
        return results
    }

    private func located<T>(_ position: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as TroveError {
            error.kind = .invalidQuery
            error.position = position
            error.message += " (at position \(position))"
            throw error
        }
    }

    private func distinctResults(_ keyPaths: [String]) throws -> Results {
        var keys = try sortKeys(keyPaths.map { SortDescriptor(keyPath: $0) })
        for index in keys.indices { keys[index].label = keyPaths[index] }
        return distinct(keys: keys)
    }

    private func distinct(keys distinctKeys: [SortKey]) -> Results {
        let table = self.table
        let names = distinctKeys.map { $0.name(in: table) }.joined(separator: ", ")
        return reshaped("distinct by \(names)") { keys, transaction in
            var seen = Set<[StoredValue]>()
            return keys.filter { key in
                let values = BoundPredicate.withRecord(key, of: table, transaction) { reader -> [StoredValue]? in
                    if distinctKeys.contains(where: { $0.linkIsBroken?(reader, transaction) == true }) { return nil }
                    return distinctKeys.map { $0.value(reader, transaction) }
                }
                return values.flatMap { $0 }.map { seen.insert($0).inserted } ?? false
            }
        }
    }

    /// Results over the keys these results select, reshaped by `transform`
    /// (re-run whenever the results are), for `DISTINCT` and `LIMIT`.
    private func reshaped(
        _ step: String, limit: Int? = nil, _ transform: @escaping @Sendable ([UInt64], Transaction) -> [UInt64]
    ) -> Results {
        let (table, earlier) = (self.table, query)
        let keys: BoundPredicate = .objectKeys { transaction in
            let keys = try QueryPlanner.keys(
                table: table, predicate: earlier.predicate, sort: earlier.sort, limit: limit, in: transaction)
            return transform(keys, transaction)
        }
        return Results(
            database: database, source: source,
            query: ResultsQuery(predicate: keys, sort: []) { database in earlier.explain(table, in: database) + [step] })
    }
}
