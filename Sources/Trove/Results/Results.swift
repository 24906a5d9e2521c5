import TroveStorage

/// The objects (or values) of one type that match a query, in order.
///
/// Results are lazy: nothing is read until you ask for a count, an element or
/// iterate. They are live: after a write on the handle, or ``Database/refresh()``,
/// the same `Results` shows the new state.
///
/// ```swift
/// let photos = db.objects(PhotoData.self)
///     .sorted(by: \.dateAdded, ascending: false)
/// let byDate = try photos.filter("date == %@", "2024-05-01")
/// print(photos.count, byDate.first?.memo ?? "-")
/// ```
public struct Results<Element>: RandomAccessCollection {
    package let database: Database
    let source: ResultsSource<Element>
    /// What the results select, apart from the handle: it runs again on
    /// another handle of the file (thread-safe references, freezing).
    let query: ResultsQuery
    var predicate: BoundPredicate? { query.predicate }
    var sort: [SortKey] { query.sort }
    /// The keys and cluster match flags read for the current generation (the aggregates read them too).
    let cache = ResultsCache()
    /// What tells these results from others (Realm prints a collection's address).
    var cacheIdentity: AnyObject { cache }

    init(database: Database, source: ResultsSource<Element>, query: ResultsQuery) {
        self.database = database
        self.source = source
        self.query = query
        cache.epoch = database.invalidationEpoch
    }

    /// Whether the handle invalidated what it had handed out since these
    /// results were made (TroveRealm's `realm.invalidate()`).
    package var isStale: Bool { cache.epoch != database.invalidationEpoch }

    init(database: Database, source: ResultsSource<Element>, predicate: BoundPredicate? = nil, sort: [SortKey] = []) {
        self.init(database: database, source: source, query: ResultsQuery(predicate: predicate, sort: sort))
    }

    /// These results with another predicate or sort, keeping what came before.
    func with(predicate: BoundPredicate?, sort: [SortKey]) -> Results {
        if source.reachesSubclasses, !sort.isEmpty, case .objectKeys(let members)? = predicate,
            let sorted = sortedAcrossSubclasses(members, by: sort)
        {
            return sorted
        }
        return Results(
            database: database, source: source,
            query: ResultsQuery(predicate: predicate, sort: sort, earlierSteps: query.earlierSteps))
    }

    var table: TableInfo { source.table }

    /// The members of a collection of links that holds subclass objects,
    /// sorted by keys resolved on each class's table (nil: no subclasses).
    private func sortedAcrossSubclasses(_ members: @escaping @Sendable (Transaction) throws -> [UInt64], by sort: [SortKey])
        -> Results?
    {
        guard let below = try? database.subclasses(of: table.name), !below.isEmpty else { return nil }
        let tables = [table] + below.compactMap { try? database.tableInfo(named: $0) }
        let names = sort.map { $0.name(in: table) }
        let keysByTable: [(TableInfo, [SortKey])]
        do {
            keysByTable = try tables.map { class_ in
                (
                    class_,
                    try zip(names, sort).map { name, key in
                        try SortKey.resolve(name, in: class_, ascending: key.ascending, tables: database.tableResolver)
                    }
                )
            }
        } catch {
            preconditionFailure("Trove: cannot sort \(table.name) by \(names): \(error)")
        }
        let ascending = sort.map(\.ascending)
        let sortedKeys: BoundPredicate = .objectKeys { transaction in
            var rows: [(key: UInt64, values: [StoredValue])] = []
            for key in try members(transaction) {
                for (class_, keys) in keysByTable {
                    if let values = BoundPredicate.withRecord(
                        key, of: class_, transaction,
                        { reader in
                            keys.map { $0.value(reader, transaction) }
                        })
                    {
                        rows.append((key, values))
                        break
                    }
                }
            }
            // A stable sort: equal values keep the collection's order.
            let order = rows.indices.sorted { a, b in
                for (index, up) in ascending.enumerated() {
                    let result = ValueComparison.order(rows[a].values[index], rows[b].values[index])
                    if result != .orderedSame { return up ? result == .orderedAscending : result == .orderedDescending }
                }
                return a < b
            }
            return order.map { rows[$0].key }
        }
        return Results(
            database: database, source: source,
            query: ResultsQuery(predicate: sortedKeys, sort: [], earlierSteps: query.earlierSteps))
    }

    /// The stored schema of the type these results hold.
    public var objectSchema: ObjectSchema { source.table.schema }

    /// The object keys selected, recomputed when the handle's state changed
    /// (or brought up to date by an observer of these results, from the changes).
    var keys: ResultKeys {
        if cache.generation == database.generation, let keys = cache.keys { return keys }
        if table.isRetired { return ResultKeys() }
        do {
            let transaction = database.readTransaction()
            if sort.isEmpty, cache.matchesGeneration == database.generation,
                let found = try cache.matches?.keys(of: table, in: transaction)
            {
                // A count (or an aggregate) ran the filter already: its flags give the keys.
                let keys = ResultKeys(found)
                cache.keys = keys
                cache.generation = database.generation
                return keys
            }
            let keys = ResultKeys(try QueryPlanner.keys(table: table, predicate: predicate, sort: sort, in: transaction))
            cache.keys = keys
            cache.generation = database.generation
            return keys
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    /// Takes keys an observer of these results derived for the handle's
    /// current state, so the next read does not run the query again.
    func adopt(_ keys: ResultKeys) {
        cache.keys = keys
        cache.generation = database.generation
    }

    /// Drops the cached keys, so that an observer holding the only other
    /// reference edits them in place instead of copying every chunk.
    func releaseKeys() {
        cache.keys = nil
    }

    // MARK: Collection

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }

    /// The number of matches; for a whole table without a filter, read from
    /// the table's statistics without touching any object.
    public var count: Int {
        if table.isRetired { return 0 }
        if cache.generation == database.generation, let keys = cache.keys { return keys.count }
        do {
            guard let predicate else { return try table.store.count(in: database.readTransaction()) }
            if let exact = try QueryPlanner.exactCount(table: table, predicate: predicate, in: database.readTransaction()) {
                return exact
            }
            // The cluster layout counts the filter's flags (kept for the aggregates and keys that may follow).
            if let matches = try clusterMatches() { return matches.count }
            // A scan: keep the keys it finds, the elements will likely be read next.
            return keys.count
        } catch {
            fatalError("Trove: cannot count \(table.name) in \(database.path): \(error)")
        }
    }

    /// The first element, found without listing every match when the results
    /// are unsorted (the scan stops at the first match) or sorted by an index.
    public var first: Element? {
        if cache.generation == database.generation, let keys = cache.keys { return keys.first.map(element) }
        if table.isRetired { return nil }
        do {
            let transaction = database.readTransaction()
            return try QueryPlanner.keys(table: table, predicate: predicate, sort: sort, limit: 1, in: transaction).first
                .map(element)
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    private func element(_ key: UInt64) -> Element { source.materialize(database, key) }

    /// The element at `position` in the results' current state. The first
    /// access after the handle's state changes runs the query and keeps the
    /// matching keys; later accesses reuse them. Traps when `position` is out
    /// of range.
    ///
    /// ```swift
    /// let photos = db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
    /// if photos.count > 2 { print(photos[2].memo) }   // the third newest
    /// ```
    public subscript(position: Int) -> Element {
        let keys = self.keys
        precondition(
            position >= 0 && position < keys.count,
            "Trove: index \(position) is out of range for Results<\(Element.self)> of \(keys.count) elements")
        return source.materialize(database, keys[position])
    }

    /// Iterates a snapshot of the matches taken when the loop starts, so
    /// changing or deleting objects inside the loop neither skips nor repeats any.
    public func makeIterator() -> Iterator {
        Iterator(results: self, keys: keys)
    }

    /// Iterates a snapshot of the matching keys, reading their elements 64 at
    /// a time.
    public struct Iterator: IteratorProtocol {
        let results: Results
        let keys: ResultKeys
        var position = 0
        /// The batch's elements, made at once; or, for objects that read in
        /// place, `placed`, whose objects are made one by one.
        var buffer: [Element] = []
        var placed: PlacedBatch?
        /// `placed` when it makes objects, unretained (`placed` holds it): an
        /// element is made without a retain and release of the batch.
        var placedObjects: Unmanaged<PlacedObjects>?
        var batchCount = 0
        var bufferPosition = 0

        init(results: Results, keys: ResultKeys) {
            self.results = results
            self.keys = keys
        }

        /// The next element, or nil after the last.
        public mutating func next() -> Element? {
            if bufferPosition == batchCount {
                guard position < keys.count else { return nil }
                // Read a batch's places or records in one pass.
                let end = Swift.min(position + 64, keys.count)
                let slice = keys.slice(position..<end)
                // (The last batch's elements go first: a loop that does not keep them frees them for the next.)
                buffer = []
                placed = results.source.placedBatch?(results.database, slice, placed)
                placedObjects = placed.flatMap {
                    $0.makesObjects ? Unmanaged.passUnretained(unsafeDowncast($0, to: PlacedObjects.self)) : nil
                }
                if placed == nil { buffer = results.source.materializeBatch(results.database, slice) }
                batchCount = end - position
                position = end
                bufferPosition = 0
            }
            defer { bufferPosition += 1 }
            // (A batch of objects is made only for a source of `Element` objects, one of values for `Element` values.)
            if let placedObjects {
                // Moved out as `Element` (a generic cast would copy it: a retain, and a release of the original).
                let object = placedObjects._withUnsafeGuaranteedRef { $0.placeObject(at: bufferPosition) }
                return object.assumingMemoryBound(to: Element.self).move()
            }
            if let placed { return value(at: bufferPosition, of: placed) }
            return buffer[bufferPosition]
        }

        /// The value at `position` of a batch of struct values, read from its
        /// place (or the usual way when it has none any more).
        private func value(at position: Int, of batch: PlacedBatch) -> Element {
            let batch = unsafeDowncast(batch, to: PlacedValues.self)
            return withUnsafeTemporaryAllocation(of: Element.self, capacity: 1) { slot in
                let target = slot.baseAddress.unsafelyUnwrapped
                do {
                    if try batch.initializeValue(at: position, UnsafeMutableRawPointer(target)) { return target.move() }
                } catch {
                    fatalError("Trove: cannot read a \(results.source.table.name) value: \(error)")
                }
                return results.source.materialize(results.database, batch.key(at: position))
            }
        }
    }

    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }

    /// The elements as an array (materialized now, 64 at a time as
    /// iteration reads them: one pass over their records per batch).
    ///
    /// ```swift
    /// let photos = db.objects(PhotoData.self).sorted(by: \.dateAdded).array()
    /// ```
    public func array() -> [Element] {
        let keys = self.keys
        var elements: [Element] = []
        elements.reserveCapacity(keys.count)
        var position = 0
        while position < keys.count {
            let end = Swift.min(position + 64, keys.count)
            elements.append(contentsOf: source.materializeBatch(database, keys.slice(position..<end)))
            position = end
        }
        return elements
    }

    // MARK: Filtering and sorting

    /// The elements matching a predicate in Realm / NSPredicate syntax.
    ///
    /// ```swift
    /// try results.filter("age >= %@ AND name BEGINSWITH[c] %@", 18, "a")
    /// try results.filter("id = \(id)")
    /// ```
    ///
    /// Throws `TroveError.Kind.invalidQuery` for a malformed predicate, an
    /// unknown property (with a suggestion) or an argument of the wrong type.
    public func filter(_ predicateFormat: String, _ arguments: Any?...) throws -> Results {
        try filter(predicateFormat, arguments: arguments)
    }

    /// ``filter(_:_:)`` with the arguments as an array.
    public func filter(_ predicateFormat: String, arguments: [Any?]) throws -> Results {
        let (expression, suffixes) = try database.parsedPredicate(predicateFormat, arguments: arguments)
        let filtered = try filtered(by: expression)
        return suffixes.isEmpty ? filtered : try filtered.applying(suffixes)
    }

    /// These results narrowed by a parsed or translated predicate.
    func filtered(by expression: QueryExpression) throws -> Results {
        requireObjects("filter")
        if source.reachesSubclasses, case .objectKeys(let members)? = predicate {
            let below = try database.subclasses(of: table.name)
            if !below.isEmpty { return try filtered(by: expression, members: members, subclasses: below) }
        }
        var bound = try BoundPredicate.bind(expression, to: table, tables: database.tableResolver)
        if let predicate { bound = .conjunction(predicate, bound) }
        return with(predicate: bound, sort: sort)
    }

    /// The members of a collection of links that hold subclass objects,
    /// narrowed by a predicate bound to each class's table (in collection order).
    private func filtered(
        by expression: QueryExpression, members: @escaping @Sendable (Transaction) throws -> [UInt64], subclasses: [String]
    ) throws -> Results {
        let tables = [table] + (try subclasses.map { try database.tableInfo(named: $0) })
        let tests = try tables.map { ($0, try BoundPredicate.bind(expression, to: $0, tables: database.tableResolver)) }
        return with(
            predicate: .objectKeys { transaction in
                let compiled = tests.map { table, test in (table, test.compile(table.layout, transaction)) }
                return try members(transaction).filter { key in
                    for (table, test) in compiled {
                        if let matched = BoundPredicate.withRecord(key, of: table, transaction, test) { return matched }
                    }
                    return false
                }
            }, sort: sort)
    }

    /// The elements sorted by a property, named as a string.
    ///
    /// The key path may go through links and end in an aggregate over a
    /// collection, which Realm refuses:
    ///
    /// ```swift
    /// db.objects(Person.self).sorted(byKeyPath: "tasks.@count", ascending: false)
    /// db.objects(Task.self).sorted(byKeyPath: "owner.name")
    /// db.objects(Team.self).sorted(byKeyPath: "members.@avg.age")
    /// ```
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results {
        if let values = reordered(byKeyPath: keyPath, ascending: ascending) { return values }
        do {
            let key = try SortKey.resolve(keyPath, in: table, ascending: ascending, tables: database.tableResolver)
            return with(predicate: predicate, sort: [key])
        } catch {
            preconditionFailure(
                "Trove: cannot sort \(table.name) by '\(keyPath)': \((error as? TroveError)?.message ?? "\(error)")")
        }
    }

    /// The elements sorted by a property.
    ///
    /// ```swift
    /// db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
    /// ```
    public func sorted<Value: _TroveStorable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results {
        requireObjects("sort by a key path")
        guard source.columnForKeyPath(keyPath) != nil else {
            // Through a link: `\.owner?.name`.
            return sorted(by: [SortDescriptor(keyPath: source.path(for: keyPath), ascending: ascending)])
        }
        let column = source.column(for: keyPath)
        precondition(
            table.layout.inRecord[column],
            "Trove: cannot sort by the collection \(table.schema.properties[column].name); sort by its count with sorted(byKeyPath: \"\(table.schema.properties[column].name).@count\")"
        )
        return with(predicate: predicate, sort: [SortKey(column: column, ascending: ascending)])
    }

    /// The elements sorted by several properties, most significant first.
    public func sorted(by descriptors: [SortDescriptor]) -> Results {
        if descriptors.count == 1, let values = reordered(byKeyPath: descriptors[0].keyPath, ascending: descriptors[0].ascending)
        {
            return values
        }
        requireObjects("sort by several properties")
        do {
            return with(predicate: predicate, sort: try sortKeys(descriptors))
        } catch {
            preconditionFailure("Trove: cannot sort \(table.name): \((error as? TroveError)?.message ?? "\(error)")")
        }
    }
}

extension Results: Equatable {
    /// Two results are equal when they are the same results: copies of one
    /// value, or its re-reads (`filter` and `sorted` make new ones). Results
    /// with equal elements are not equal; compare `Array(a) == Array(b)` for that.
    ///
    /// ```swift
    /// let photos = db.objects(Photo.self)
    /// let same = photos
    /// photos == same   // true
    /// ```
    public static func == (lhs: Results, rhs: Results) -> Bool { lhs.cache === rhs.cache }
}

final class ResultsCache {
    var generation: UInt64 = .max
    var epoch: UInt32 = 0
    var keys: ResultKeys?
    /// The cluster layout's match flags (nil: the query is not a column filter), for `matchesGeneration`.
    var matches: ClusterMatches?
    var matchesGeneration: UInt64 = .max
}

extension Results where Element: Object {
    /// These results with each object handed out as what `make` makes of it
    /// (TroveRealm's projections); a key path of the made type names the
    /// property `path` says it reads, for sorting and observing.
    package func mapped<Made>(_ make: @escaping (Element) -> Made, path: @escaping (AnyKeyPath) -> String?) -> Results<
        Made
    > {
        Results<Made>(database: database, source: source.mapped(make, path: path), query: query)
    }
}
