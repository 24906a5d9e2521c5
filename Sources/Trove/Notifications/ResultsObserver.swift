import TroveStorage

/// Keeps the keys of an observed ``Results`` and, after each commit, derives
/// what changed from the commit's ``ChangeRecord``: only the objects the
/// commits wrote are read (in the snapshot before and the one after), placed
/// by binary search, and the results' own cache takes the new keys, so the
/// cost of a delivery follows the size of the change, not of the results.
///
/// When the record cannot tell (no record, a schema change, a type with too
/// many changes, a query or an observed path that reads other types those
/// commits changed, a query whose keys come from a closure), the query runs
/// again and the two lists are compared in full, reading the objects in
/// both at their old and new state.
final class ResultsObserver<Element>: ChangeObserver {
    let results: Results<Element>
    /// Observed properties (through links, too); nil: every property in the record.
    let paths: [ObservedPath]?
    let block: (ResultsChange<Element>) -> Void
    var keys = ResultKeys()
    /// The snapshot `keys` were read in; nil when they were read inside a write.
    var basis: Int?
    var failed = false
    /// The types other than the results' own whose changes can change what
    /// the results hold, their order or what is observed; nil when the
    /// results cannot follow a change record at all.
    private lazy var dependencies: Set<String>? = Self.dependencies(of: results, paths: paths)
    /// The sort values of the keys that begin a chunk of `keys` (and of
    /// former ones), as they are in the snapshot `keys` were read in: a
    /// binary search decides among the chunks without reading objects, and
    /// reads only inside one chunk, so placing a changed object costs about
    /// the same at ten thousand results as at ten million. A commit's
    /// touched objects leave it; a full comparison empties it.
    private var fenceValues: [UInt64: [StoredValue]] = [:]

    init(results: Results<Element>, paths: [ObservedPath]?, block: @escaping (ResultsChange<Element>) -> Void) {
        self.results = results
        self.paths = paths
        self.block = block
    }

    func start(_ database: Database) {
        keys = results.keys
        basis = database.isInWriteTransaction ? nil : database.readTransaction().id
        if basis != nil { keepFences(database.readTransaction()) }
        block(.initial(results))
    }

    /// Reads the sort values of each chunk's first key up front (one read a
    /// chunk of up to 4,096 keys): the first deliveries then decide among
    /// the chunks without reading, as later ones would once their searches
    /// had passed those fences. Not for a derived sort key (it may read other objects).
    private func keepFences(_ transaction: Transaction) {
        let sort = results.sort
        guard keys.chunkCount > 1, !sort.isEmpty, sort.allSatisfy({ $0.derived == nil }),
            results.table.store.isVisible(in: transaction)
        else { return }
        let starts = keys.chunkStarts
        // A fence that cannot be read now is read when a search reaches it.
        try? withSortValues(transaction, table: results.table, sort: sort) { read in
            for start in starts {
                let key = keys[start]
                if let values = try read(key) { fenceValues[key] = values }
            }
        }
    }

    func update(in database: Database, notify: Bool) {
        guard !failed else { return }
        do {
            let current = database.readTransaction()
            let delivery = database.delivery
            let changes: ChangeSet
            if let previous = delivery?.previous, basis == previous.id, let record = delivery?.changes,
                let touched = touchedObjects(record)
            {
                changes = try incrementalChanges(touched, previous: previous, current: current, database)
            } else {
                changes = try fullChanges(previous: delivery?.previous, current: current, database)
            }
            basis = current.id
            results.adopt(keys)
            if notify, !changes.isEmpty {
                block(
                    .update(
                        results, deletions: changes.deletions, insertions: changes.insertions,
                        modifications: changes.modifications))
            }
        } catch {
            failed = true
            if notify { block(.error(error)) }
        }
    }

    // MARK: From the change record

    /// The objects of the results' type the record names; nil when the
    /// record does not say enough for these results.
    private func touchedObjects(_ record: ChangeRecord) -> Set<UInt64>? {
        guard !record.everything, let dependencies, !results.table.isRetired else { return nil }
        for name in dependencies where record.types[name] != nil { return nil }
        guard let own = record.types[results.table.name] else { return [] }
        return own.isOverflowed ? nil : own.touched
    }

    private func incrementalChanges(
        _ touched: Set<UInt64>, previous: Transaction, current: Transaction, _ database: Database
    ) throws -> ChangeSet {
        guard !touched.isEmpty else { return ChangeSet() }
        let table = results.table
        let sort = results.sort
        // Where each touched object was (in the snapshot the keys came from).
        var before: [UInt64: Int] = [:]
        for key in touched {
            if let position = try position(of: key, in: keys, previous, table: table, sort: sort) { before[key] = position }
        }
        // Every other object sorts by the values it had.
        for key in touched { fenceValues[key] = nil }
        // Edited in place: with the results' cache let go, nothing else shares the chunks.
        results.releaseKeys()
        for position in before.values.sorted(by: >) { keys.remove(at: position) }
        // Which touched objects match now, placed among the untouched ones.
        var now: [(key: UInt64, values: [StoredValue])] = []
        if table.store.isVisible(in: current) {
            let matches = results.predicate.map { $0.compile(table.layout, current) }
            for key in touched.sorted() {
                guard let values = try sortValues(key, current, table: table, sort: sort, matches: matches) else { continue }
                let position = try withSortValues(current, table: table, sort: sort) { read in
                    try keys.partitioningIndex(
                        fence: { other in try precedes(other, key, values, sort: sort, read, fence: true) },
                        before: { other in try precedes(other, key, values, sort: sort, read) })
                }
                keys.insert(key, at: position)
                now.append((key, values))
            }
        }
        var after: [UInt64: Int] = [:]
        for (key, values) in now {
            after[key] = try position(of: key, in: keys, current, table: table, sort: sort, known: values)
        }

        // Objects in both that kept their place among the untouched ones may
        // stay; of those, the longest run in the same order does.
        let oldTouched = before.values.sorted()
        let newTouched = after.values.sorted()
        func untouchedBefore(_ position: Int, _ touchedPositions: [Int]) -> Int {
            position - touchedPositions.partitioningIndex { $0 < position }
        }
        var candidates: [(new: Int, old: Int, key: UInt64)] = []
        for (key, newPosition) in after {
            guard let oldPosition = before[key],
                untouchedBefore(oldPosition, oldTouched) == untouchedBefore(newPosition, newTouched)
            else { continue }
            candidates.append((newPosition, oldPosition, key))
        }
        candidates.sort { $0.new < $1.new }
        let staying = Set(ChangeSet.longestIncreasing(candidates.map(\.old)).map { candidates[$0].key })
        var changes = ChangeSet()
        changes.deletions = before.compactMap { staying.contains($0.key) ? nil : $0.value }.sorted()
        changes.insertions = after.compactMap { staying.contains($0.key) ? nil : $0.value }.sorted()
        for key in staying where try fingerprint(key, previous, database) != fingerprint(key, current, database) {
            changes.modifications.append(after[key]!)
        }
        changes.modifications.sort()
        return changes
    }

    /// The values `key`'s object sorts by, when it exists and matches; nil otherwise.
    private func sortValues(
        _ key: UInt64, _ transaction: Transaction, table: TableInfo, sort: [SortKey],
        matches: ((RecordReader) -> Bool)?
    ) throws -> [StoredValue]? {
        try table.store.withRecord(key, in: transaction) { reader in
            guard let reader, matches?(reader) ?? true else { return nil }
            return sort.map { $0.value(reader, transaction) }
        }
    }

    /// Where `key` sits in `list` (sorted as the results sort in
    /// `transaction`); nil when it is not there. `known`: the values it
    /// sorts by in `transaction`, when the caller has read them.
    private func position(
        of key: UInt64, in list: ResultKeys, _ transaction: Transaction, table: TableInfo, sort: [SortKey],
        known: [StoredValue]? = nil
    ) throws -> Int? {
        guard !list.isEmpty else { return nil }
        if sort.isEmpty {
            let position = list.partitioningIndex { $0 < key }
            return position < list.count && list[position] == key ? position : nil
        }
        guard table.store.isVisible(in: transaction),
            let values = try known ?? sortValues(key, transaction, table: table, sort: sort, matches: nil)
        else { return nil }
        // The fences (their values kept) find the chunk; the key is looked for in it, no object read.
        return try withSortValues(transaction, table: table, sort: sort) { read in
            try list.position(of: key) { other in try precedes(other, key, values, sort: sort, read, fence: true) }
        }
    }

    /// Runs `body` with a reader of objects' sort values in `transaction`
    /// (nil for an object not stored): one lookup cursor for a whole binary
    /// search, building records of the sort columns alone (every column
    /// when a key is derived: it may read others).
    private func withSortValues<R>(
        _ transaction: Transaction, table: TableInfo, sort: [SortKey],
        _ body: ((UInt64) throws -> [StoredValue]?) throws -> R
    ) throws -> R {
        let columns = sort.contains { $0.derived != nil } ? nil : sort.map(\.column)
        return try table.store.withLookupCursor(in: transaction, reading: columns) { lookups in
            try body { key in
                guard let bytes = try lookups.record(key) else { return nil }
                var reader = RecordReader(bytes, layout: table.layout)
                reader.objectKey = key
                return sort.map { $0.value(reader, transaction) }
            }
        }
    }

    /// Whether the object `other` sorts before `key`, whose values are `values`
    /// (`read` gives `other`'s). `fence`: `other` begins a chunk of the keys,
    /// and its values are kept (sorts by stored values only: a derived key
    /// may read other objects).
    private func precedes(
        _ other: UInt64, _ key: UInt64, _ values: [StoredValue], sort: [SortKey],
        _ read: (UInt64) throws -> [StoredValue]?, fence: Bool = false
    ) throws -> Bool {
        guard !sort.isEmpty else { return other < key }
        let otherValues: [StoredValue]
        if fence, let kept = fenceValues[other] {
            otherValues = kept
        } else {
            let found = try read(other)
            otherValues = found ?? sort.map { _ in .null }
            if fence, let found, sort.allSatisfy({ $0.derived == nil }) {
                // Fences change as chunks split and empty: drop the ones no longer used now and then.
                if fenceValues.count > 2 * keys.chunkCount + 64 { fenceValues.removeAll(keepingCapacity: true) }
                fenceValues[other] = found
            }
        }
        return SortKey.precedes(otherValues, other, values, key, ascending: sort.map(\.ascending))
    }

    // MARK: In full

    /// Runs the query again and compares the two lists; an object in both
    /// is modified when its observed values differ between `previous` (when
    /// the handle kept it) and `current`.
    private func fullChanges(previous: Transaction?, current: Transaction, _ database: Database) throws -> ChangeSet {
        database.fullComparisons += 1
        fenceValues.removeAll()
        let old = keys.array
        keys = results.keys
        let new = keys.array
        if let origin = results.source.valueOrigin {
            // Values are keyed by position: a position is modified when its value changed.
            guard let previous else { return ChangeSet.between(old, new) { _ in false } }
            let (before, after) = (try origin.storedValues(previous), try origin.storedValues(current))
            return ChangeSet.between(old, new) { key in
                let position = Int(key)
                return position < before.count && position < after.count && before[position] != after[position]
            }
        }
        return try ChangeSet.between(old, new) { key in
            guard let previous else { return false }
            return try fingerprint(key, previous, database) != fingerprint(key, current, database)
        }
    }

    /// A fingerprint of what is observed of `key`'s object in `transaction`; nil when it does not exist.
    private func fingerprint(_ key: UInt64, _ transaction: Transaction, _ database: Database) throws -> Int? {
        let table = results.table
        guard table.store.isVisible(in: transaction) else { return nil }
        return try table.store.withRecord(key, in: transaction) { reader -> Int? in
            guard let reader else { return nil }
            var hasher = Hasher()
            if let paths {
                for path in paths {
                    if path.isPlain {
                        hasher.combine(reader.value(at: path.column))
                    } else {
                        try database.hashPath(path.steps[...], key: key, record: reader, into: &hasher, transaction)
                    }
                }
            } else {
                hasher.combine(bytes: reader.bytes)
            }
            return hasher.finalize()
        }
    }

    // MARK: What the results read

    private static func dependencies(of results: Results<Element>, paths: [ObservedPath]?) -> Set<String>? {
        var types = Set<String>()
        if let predicate = results.predicate {
            guard predicate.collectLinkedTypes(into: &types) else { return nil }
        }
        // A sort through links, or by mixed values (of different types, which
        // do not order among each other), is not followed by binary search.
        for key in results.sort where key.derived != nil || results.table.layout.types[key.column] == .mixed {
            return nil
        }
        types.formUnion(ObservedPath.reachedTypes(paths ?? [], excluding: nil))
        types.remove(results.table.name)
        return types
    }
}

extension BoundPredicate {
    /// Adds the types besides the queried one that the predicate reads
    /// (through links, lists of links, inverse links); false when its
    /// answer comes from a closure that may read anything.
    fileprivate func collectLinkedTypes(into types: inout Set<String>) -> Bool {
        switch self {
        case .constant, .compare, .compareList, .compareColumns, .mixedType, .mixedPath, .objectKeyIs, .fullText,
            .fullTextKeys, .geoWithin:
            return true
        case .objectKeys: return false
        case .and(let parts), .or(let parts):
            for part in parts where !part.collectLinkedTypes(into: &types) { return false }
            return true
        case .not(let inner): return inner.collectLinkedTypes(into: &types)
        case .linked(_, let target, let inner):
            types.insert(target.name)
            return inner.collectLinkedTypes(into: &types)
        case .collection(let path, _, let inner):
            if let target = path.target { types.insert(target.name) }
            return inner.collectLinkedTypes(into: &types)
        case .collectionCount(let path, let inner, _, _):
            if let target = path.target { types.insert(target.name) }
            return inner?.collectLinkedTypes(into: &types) ?? true
        case .mapKeys(let path, _, _, _, _), .mapEntry(let path, _, _, _, _), .collectionAggregate(let path, _, _, _, _):
            if let target = path.target { types.insert(target.name) }
            return true
        }
    }
}
