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
    private let cache = ResultsCache()
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
        var buffer: [Element] = []
        var bufferPosition = 0

        init(results: Results, keys: ResultKeys) {
            self.results = results
            self.keys = keys
        }

        /// The next element, or nil after the last.
        public mutating func next() -> Element? {
            if bufferPosition == buffer.count {
                guard position < keys.count else { return nil }
                // Materialize a batch, reading its records in one pass.
                let end = Swift.min(position + 64, keys.count)
                buffer = results.source.materializeBatch(results.database, ArraySlice(keys[position..<end]))
                position = end
                bufferPosition = 0
            }
            defer { bufferPosition += 1 }
            return buffer[bufferPosition]
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
            elements.append(contentsOf: source.materializeBatch(database, ArraySlice(keys[position..<end])))
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

    // MARK: Aggregates

    /// ``QueryPlanner/forEachClusterColumn(table:predicate:column:in:_:)``
    /// for this query; false when the records must be read instead.
    func forEachMatchingColumn(_ column: Int, _ visit: (ClusterColumn?, UnsafeBufferPointer<Bool>) -> Void) -> Bool {
        guard table.store.clusters != nil, !table.isRetired else { return false }
        do {
            guard let matches = try clusterMatches() else { return false }
            let agrees = try matches.forEachCluster(of: table, in: database.readTransaction()) { view, flags in
                visit(try view.column(column), flags)
            }
            precondition(agrees, "Trove: the clusters of \(table.name) changed within one snapshot; this is a bug in Trove")
            return true
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    /// The cluster layout's match flags for this query in the handle's
    /// current state, found once per generation; nil when the records must be read instead.
    func clusterMatches() throws -> ClusterMatches? {
        guard table.store.clusters != nil, !table.isRetired else { return nil }
        if cache.matchesGeneration == database.generation { return cache.matches }
        let matches = try ClusterMatches.find(table: table, predicate: predicate, in: database.readTransaction())
        cache.matches = matches
        cache.matchesGeneration = database.generation
        return matches
    }

    /// Calls `visit` with the record of every match, for an aggregate of
    /// `column`. Order does not matter to an aggregate: when a count or an
    /// iteration already found the matches and they are a small part of the
    /// table, their records are read by key; otherwise in one pass.
    func forEachMatchingRecord(aggregating column: Int, _ visit: (AggregatedValue) -> Void) {
        precondition(
            table.layout.inRecord[column],
            "Trove: \(table.name).\(table.schema.properties[column].name) is a collection; aggregate its elements through the collection"
        )
        if table.isRetired { return }
        let transaction = database.readTransaction()
        do {
            if case .objectKeys(let members) = predicate {
                // A list's objects (or an earlier step's): read by key, as listed, each
                // value in place in its cluster's column when it can be.
                var keys = try members(transaction)
                guard !keys.isEmpty else { return }
                if source.reachesSubclasses {
                    keys = try visitSubclassObjects(keys, column: column, transaction, visit)
                }
                let fallback = table.layout.fallbacks[column]
                try table.store.withLookupCursor(in: transaction, stepping: false, reading: [column]) { lookups in
                    guard lookups.readsColumnsInPlace else {
                        for key in keys {
                            if let bytes = try lookups.record(key) { visit(.record(RecordReader(bytes, layout: table.layout))) }
                        }
                        return
                    }
                    for key in keys {
                        guard let (stored, slot) = try lookups.slot(of: key, column: column) else { continue }
                        visit(.slot(stored, slot, fallback: fallback))
                    }
                }
                return
            }
            // (A scan of the cluster layout reads the one column; lookups would read them all.)
            if predicate != nil, table.store.clusters == nil, cache.generation == database.generation, let keys = cache.keys,
                try keys.count * 4 <= table.store.count(in: transaction)
            {
                try QueryPlanner.forEachRecord(of: keys.array, table: table, in: transaction) { _, reader in
                    visit(.record(reader))
                    return true
                }
                return
            }
            try QueryPlanner.forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) {
                _, reader in visit(.record(reader))
            }
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    /// Visits the value of `column`'s property of each key held by a
    /// subclass's table; returns the keys of this table's own objects.
    private func visitSubclassObjects(
        _ keys: [UInt64], column: Int, _ transaction: Transaction, _ visit: (AggregatedValue) -> Void
    ) throws -> [UInt64] {
        let below = try database.subclasses(of: table.name).map { try database.tableInfo(named: $0) }
        guard !below.isEmpty else { return keys }
        let name = table.schema.properties[column].name
        var own: [UInt64] = []
        for key in keys {
            if try table.store.contains(key, in: transaction) {
                own.append(key)
                continue
            }
            for subclass in below {
                guard
                    let value = try subclass.store.withRecord(
                        key, in: transaction,
                        { reader in
                            reader.map { $0.value(at: subclass.columnIndex[name]!) }
                        })
                else { continue }
                visit(.value(value))
                break
            }
        }
        return own
    }

    /// The smallest value of a property among the matches; nil when there are none.
    public func min<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Value? {
        extreme(source.column(for: keyPath), wantLargest: false).map { Value._troveFromStored($0) }
    }

    /// The largest value of a property among the matches; nil when there are none.
    ///
    /// ```swift
    /// let nextID = (db.objects(Person.self).max(of: \.id) ?? 0) + 1
    /// ```
    public func max<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Value? {
        extreme(source.column(for: keyPath), wantLargest: true).map { Value._troveFromStored($0) }
    }

    /// The largest value of a property named as a string (Realm's `max(ofProperty:)`).
    public func max<Value: _TroveStorable>(ofProperty name: String) -> Value? {
        guard let column = table.columnIndex[name] else { return nil }
        return extreme(column, wantLargest: true).map { Value._troveFromStored($0) }
    }

    /// The smallest value of a property named as a string.
    public func min<Value: _TroveStorable>(ofProperty name: String) -> Value? {
        guard let column = table.columnIndex[name] else { return nil }
        return extreme(column, wantLargest: false).map { Value._troveFromStored($0) }
    }

    /// The sum of a numeric property over the matches (0 when there are none).
    ///
    /// ```swift
    /// let spent = try db.objects(Expense.self).filter("month == %@", 5).sum(of: \.amount)
    /// ```
    public func sum<Value: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, Value>) -> Value {
        sum(column: source.column(for: keyPath))
    }

    /// The sum of an optional numeric property over the matches, nil skipped.
    ///
    /// ```swift
    /// let rated = db.objects(Movie.self).sum(of: \.rating)   // rating: Int?
    /// ```
    public func sum<Value: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, Value?>) -> Value {
        sum(column: source.column(for: keyPath))
    }

    /// The sum of a cluster's Int column over the matches, eight slots at a
    /// time with wrapping adds, when every value is below 2^53 in size (a
    /// cluster's at most 32,767 of them cannot overflow then); nil otherwise
    /// (the caller adds them one by one, trapping on overflow).
    private static func smallSum(_ stored: ClusterColumn, _ matches: UnsafeBufferPointer<Bool>) -> Int64? {
        let base = stored.bytes.baseAddress.unsafelyUnwrapped + stored.slotOffset(0)
        let flags = UnsafeRawPointer(matches.baseAddress.unsafelyUnwrapped)
        var sums = SIMD8<Int64>(repeating: 0)
        var magnitudes = SIMD8<Int64>(repeating: 0)
        var slot = 0
        while slot + 8 <= matches.count {
            let values = (base + 8 * slot).loadUnaligned(as: SIMD8<Int64>.self)
            let selected = SIMD8<Int64>(truncatingIfNeeded: (flags + slot).loadUnaligned(as: SIMD8<UInt8>.self))
            // (0 - flag is all ones for a match, zero otherwise.)
            sums &+= values & (SIMD8<Int64>(repeating: 0) &- selected)
            magnitudes |= values ^ (values &>> 63)
            slot += 8
        }
        var sum = sums.wrappedSum()
        var magnitude = magnitudes.max()
        while slot < matches.count {
            let value = Int64(littleEndian: (base + 8 * slot).loadUnaligned(as: Int64.self))
            if matches[slot] { sum &+= value }
            magnitude |= value ^ (value >> 63)
            slot += 1
        }
        return magnitude >> 53 == 0 ? sum : nil
    }

    private func sum<Value: _TroveStorable & AdditiveArithmetic>(column: Int) -> Value {
        switch table.layout.types[column] {
        case .int:
            // Added as stored, without a value per record; overflow traps as Int's + does.
            var total: Int64 = 0
            let fallback: Int64 = if case .int(let value) = table.layout.fallbacks[column] { value } else { 0 }
            let byColumn = forEachMatchingColumn(column) { stored, matches in
                guard let stored else {
                    total += fallback * Int64(matches.count { $0 })
                    return
                }
                if stored.type == .int, !stored.hasNulls, let partial = Self.smallSum(stored, matches) {
                    total += partial
                    return
                }
                for slot in matches.indices where matches[slot] { total += stored.int(slot) ?? 0 }
            }
            if !byColumn { forEachMatchingRecord(aggregating: column) { reader in total += reader.int(at: column) ?? 0 } }
            return Value._troveFromStored(.int(total))
        case .double:
            var total = 0.0
            let fallback: Double = if case .double(let value) = table.layout.fallbacks[column] { value } else { 0 }
            let byColumn = forEachMatchingColumn(column) { stored, matches in
                // (Added one by one, in the order a record scan adds them.)
                for slot in matches.indices where matches[slot] { total += stored.map { $0.double(slot) ?? 0 } ?? fallback }
            }
            if byColumn { return Value._troveFromStored(.double(total)) }
            forEachMatchingRecord(aggregating: column) { reader in
                if case .double(let value) = reader.value(at: column) { total += value }
            }
            return Value._troveFromStored(.double(total))
        default:
            var total = Value.zero
            forEachMatchingRecord(aggregating: column) { reader in
                let value = reader.value(at: column)
                if !value.isNull { total += Value._troveFromStored(value) }
            }
            return total
        }
    }

    /// The mean of a numeric property over the matches; nil when there are none.
    public func average<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Double? {
        let column = source.column(for: keyPath)
        var total = 0.0
        var count = 0
        forEachMatchingRecord(aggregating: column) { reader in
            guard let number = reader.value(at: column).numeric else { return }
            total += number
            count += 1
        }
        return count == 0 ? nil : total / Double(count)
    }

    private func extreme(_ column: Int, wantLargest: Bool) -> StoredValue? {
        var best: StoredValue?
        forEachMatchingRecord(aggregating: column) { reader in
            let value = reader.value(at: column)
            if value.isNull { return }
            guard let current = best else {
                best = value
                return
            }
            let order = ValueComparison.order(value, current)
            if order == (wantLargest ? .orderedDescending : .orderedAscending) { best = value }
        }
        return best
    }
}

/// A sort criterion by property name, for ``Results/sorted(by:)-([SortDescriptor])``.
public struct SortDescriptor: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The property to sort by, named as for ``Results/sorted(byKeyPath:ascending:)``:
    /// it may go through links and end in an aggregate, such as `tasks.@count`.
    public var keyPath: String
    /// True to sort from smallest to largest (the default), false for the reverse.
    public var ascending: Bool

    /// A sort by `keyPath`, ascending unless `ascending` is false.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// A sort by the property a model key path reads, through links too
    /// (`\Task.owner?.name` sorts by `owner.name`). A key path that reads no
    /// stored property traps.
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: \PhotoData.dateAdded, ascending: false)
    /// ```
    public init<Root: Object, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        guard let path = ModelInfo.of(Root.self).path(of: keyPath) else {
            preconditionFailure("Trove: \(keyPath) is not a persisted property of \(Root.self)")
        }
        self.init(keyPath: path, ascending: ascending)
    }

    /// An ascending sort by the property a string literal names.
    ///
    /// ```swift
    /// let byName: SortDescriptor = "name"
    /// ```
    public init(stringLiteral keyPath: String) {
        self.init(keyPath: keyPath)
    }

    /// The same sort in the other direction.
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: "date").reversed()
    /// ```
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    /// The key path and direction, as Realm describes a sort descriptor:
    /// `SortDescriptor(keyPath: name, direction: ascending)`.
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
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

/// How a ``Results`` turns object keys into elements and key paths into
/// columns: objects for ``Object`` classes, values for ``Persistable`` structs.
struct ResultsSource<Element> {
    let table: TableInfo
    let materialize: (Database, UInt64) -> Element
    let materializeBatch: (Database, ArraySlice<UInt64>) -> [Element]
    let columnForKeyPath: (AnyKeyPath) -> Int?
    /// The class of the objects a source of objects makes (`Element` or,
    /// for a class hierarchy, a subclass): what another handle needs to
    /// bind the same source (see ``ThreadSafeReference``). nil for values.
    var objectType: Object.Type? = nil
    /// Whether the keys may be of subclasses' objects (a collection of links
    /// declared with a class that has subclasses), each in its own table.
    var reachesSubclasses = false
    /// The property path a key path reads through links (`\.owner?.name` is
    /// `owner.name`); nil where key paths name only the element's own properties.
    var pathForKeyPath: ((AnyKeyPath) -> String?)? = nil
    /// For results of a collection's values: the collection and the order.
    var valueOrigin: ValueOrigin? = nil

    /// The property or the path through links a key path names.
    func path(for keyPath: AnyKeyPath) -> String {
        if let path = pathForKeyPath?(keyPath) { return path }
        return table.schema.properties[column(for: keyPath)].name
    }

    func column(for keyPath: AnyKeyPath) -> Int {
        guard let column = columnForKeyPath(keyPath) else {
            preconditionFailure("Trove: \(keyPath) is not a persisted property of \(table.name)")
        }
        return column
    }

    /// This source's objects, each handed out as what `make` makes of it;
    /// key paths of the made type name the properties `path` says they read.
    func mapped<Made>(_ make: @escaping (Element) -> Made, path: @escaping (AnyKeyPath) -> String?) -> ResultsSource<Made> {
        let materialize = self.materialize
        let materializeBatch = self.materializeBatch
        let table = self.table
        return ResultsSource<Made>(
            table: table,
            materialize: { make(materialize($0, $1)) },
            materializeBatch: { materializeBatch($0, $1).map(make) },
            columnForKeyPath: { keyPath in
                path(keyPath).flatMap { name in table.schema.properties.firstIndex { $0.name == name } }
            },
            reachesSubclasses: reachesSubclasses, pathForKeyPath: path)
    }

    static func object(_ binding: ObjectBinding) -> ResultsSource where Element: Object {
        ResultsSource(
            table: binding.table,
            materialize: { database, key in database.materialize(Element.self, objectKey: key, binding: binding) },
            materializeBatch: { database, keys in
                // A loop rather than `map`: this closure is not specialized, and
                // `map` walked the slice through its generic witnesses.
                var objects: [Element] = []
                objects.reserveCapacity(keys.count)
                for key in keys { objects.append(database.materialize(Element.self, objectKey: key, binding: binding)) }
                database.loadRecords(into: objects, table: binding.table)
                return objects
            },
            columnForKeyPath: { binding.column(forKeyPath: $0) }, objectType: Element.self,
            pathForKeyPath: { binding.path(forKeyPath: $0) })
    }

    static func value(_ binding: ValueBinding, _: Element.Type) -> ResultsSource where Element: Persistable {
        ResultsSource(
            table: binding.table,
            materialize: { database, key in
                do {
                    return try database.loadValue(Element.self, objectKey: key, binding: binding)
                } catch {
                    fatalError("Trove: cannot read a \(binding.table.name) value: \(error)")
                }
            },
            materializeBatch: { database, keys in
                do {
                    return try database.loadValues(Element.self, keys: keys, binding: binding)
                } catch {
                    fatalError("Trove: cannot read a \(binding.table.name) value: \(error)")
                }
            },
            columnForKeyPath: { keyPath in
                guard let path = keyPath as? PartialKeyPath<Element>,
                    let name = ValueModel.propertyName(of: path, in: Element.self)
                else { return nil }
                return binding.table.columnIndex[name]
            })
    }
}
