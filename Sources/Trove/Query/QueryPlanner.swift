import Foundation
import TroveStorage

/// One sort criterion: a column and a direction.
struct SortKey: Sendable {
    let column: Int
    let ascending: Bool
    /// For a key path beyond the record (`owner.name`, `tasks.@count`): how
    /// to compute the value from the record and the snapshot.
    var derived: (@Sendable (RecordReader, Transaction) -> StoredValue)? = nil
    /// The key path as written, for ``Results/explain()`` (nil: the column's name).
    var label: String? = nil
    /// For a key path through links: whether a record's chain of links ends
    /// at nil before the property (`DISTINCT` leaves such objects out, as Realm does).
    var linkIsBroken: (@Sendable (RecordReader, Transaction) -> Bool)? = nil
    /// For a sort by relevance to a full-text query: the query, scored per
    /// snapshot by ``QueryPlanner/ranked(_:in:)`` (``derived`` is then a stand-in).
    var relevance: FullTextRelevance? = nil

    func name(in table: TableInfo) -> String { label ?? table.schema.properties[column].name }

    /// The value this key sorts (or deduplicates) a record by.
    func value(_ reader: RecordReader, _ transaction: Transaction) -> StoredValue {
        derived?(reader, transaction) ?? reader.value(at: column)
    }
}

/// Finds the objects a query selects.
///
/// An equality (or `IN`) on the primary key or an indexed property, alone or
/// in a top-level `AND`, is answered from the index; everything else scans
/// the table with the predicate compiled to a closure that reads only the
/// columns it needs. Candidates from an index are checked against the rest
/// of the predicate; when the index answers the whole predicate exactly
/// (one indexed equality, keys not cut), they are not read at all.
enum QueryPlanner {
    /// What an index can contribute to a predicate.
    struct IndexPlan {
        /// Candidate object keys, ascending (a list's keys: in list order, with repeats).
        var keys: [UInt64]
        /// True when the keys are exactly the answer (no record needs checking).
        var isExact: Bool
        /// What answered, for ``Results/explain()``.
        /// What answered, for ``Results/explain()``; described only when asked
        /// (formatting values would cost more than the lookup).
        var access: Access = .members
    }

    indirect enum Access {
        case members
        case equal(column: Int, StoredValue)
        case inList(column: Int, count: Int)
        case range(column: Int, ComparisonOperator, StoredValue)
        case between(column: Int, StoredValue, StoredValue)
        case prefix(column: Int, String)
        case fullText(column: Int)
        /// Ranges, BETWEENs and prefixes on one column, read as one range of its index.
        case bounded(column: Int, [Access])
        case all([Access])

        func describe(_ table: TableInfo) -> String {
            func on(_ column: Int, _ condition: String) -> String {
                let kind = column == table.primaryKeyColumn ? "primary key" : "index"
                return "\(kind) on \(table.schema.properties[column].name) \(condition)"
            }
            switch self {
            case .members: return "the objects of a collection or an earlier step"
            case .equal(let column, let value): return on(column, "== \(value)")
            case .inList(let column, let count): return on(column, "IN (\(count) values)")
            case .range(let column, _, _), .between(let column, _, _), .prefix(let column, _):
                return on(column, condition)
            case .bounded(let column, let parts):
                return on(column, parts.map(\.condition).joined(separator: " AND \(table.schema.properties[column].name) "))
            case .all(let parts): return parts.map { $0.describe(table) }.joined(separator: " and ")
            case .fullText(let column): return "full-text index on \(table.schema.properties[column].name)"
            }
        }

        /// A range condition without its column: `>= "m"`, `BETWEEN 1 AND 5`.
        private var condition: String {
            switch self {
            case .range(_, let op, let value): return "\(op.rawValue) \(value)"
            case .between(_, let low, let high): return "BETWEEN \(low) AND \(high)"
            case .prefix(_, let prefix): return "BEGINSWITH \(StoredValue.string(prefix))"
            default: return ""
            }
        }
    }

    /// Calls `visit` for every matching object, in object-key order, with a
    /// reader over its record (valid only during the call).
    /// Stops after `limit` matches, when given.
    /// `reading` names the columns `visit` reads when not all (none: keys
    /// only): in the cluster layout a scan then builds records of those alone.
    static func forEachMatch(
        table: TableInfo, predicate: BoundPredicate?, limit: Int? = nil, reading: [Int]? = nil, in transaction: Transaction,
        _ visit: (UInt64, RecordReader) throws -> Void
    ) throws {
        var remaining = limit ?? .max
        guard remaining > 0 else { return }
        let predicate = try predicate?.resolvingFullText(transaction)
        let matches = predicate.map { $0.compile(table.layout, transaction) }
        if let predicate, let plan = try indexPlan(predicate, table: table, transaction) {
            try forEachRecord(of: plan.keys, table: table, in: transaction) { key, reader in
                guard plan.isExact || matches!(reader) else { return true }
                try visit(key, reader)
                remaining -= 1
                return remaining > 0
            }
            return
        }
        if case .constant(false) = predicate { return }
        if table.store.clusters != nil, let filter = predicate.map({ ClusterFilter($0, table.layout) }) ?? .constant(true) {
            return try forEachClusterMatch(table, filter, &remaining, reading, transaction, visit)
        }
        try table.store.withRecordCursor(in: transaction) { records in
            while let reader = try records.next() {
                guard matches?(reader) ?? true else { continue }
                try visit(reader.objectKey, reader)
                remaining -= 1
                if remaining == 0 { return }
            }
        }
    }

    /// The keys of the objects `filter` matches, in order, read from the
    /// clusters' key columns (the first `limit` when given).
    private static func clusterKeys(_ table: TableInfo, _ filter: ClusterFilter, limit: Int?, _ transaction: Transaction)
        throws -> [UInt64]
    {
        var keys: [UInt64] = []
        let limit = limit ?? .max
        guard limit > 0 else { return [] }
        var matches = [Bool](repeating: false, count: 1)
        try table.store.forEachClusterView(in: transaction) { view in
            if matches.count < view.count { matches = [Bool](repeating: false, count: view.count) }
            try matches.withUnsafeMutableBufferPointer { buffer in
                try filter.evaluate(view, table.layout, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<view.count]))
            }
            for slot in 0..<view.count where matches[slot] {
                keys.append(view.key(slot))
                if keys.count == limit { return false }
            }
            return true
        }
        return keys
    }

    /// ``forEachMatch(table:predicate:limit:reading:in:_:)`` over the cluster
    /// layout: the filter runs over each cluster's columns, and a record is
    /// built only for a match (of the columns `reading` names, when given).
    private static func forEachClusterMatch(
        _ table: TableInfo, _ filter: ClusterFilter, _ remaining: inout Int, _ reading: [Int]?, _ transaction: Transaction,
        _ visit: (UInt64, RecordReader) throws -> Void
    ) throws {
        let layout = table.layout
        let wanted = reading.map { columns in (0..<layout.columnCount).map { columns.contains($0) } }
        let scratch = RecordScratch()
        let emptyRecord = scratch.buffer(2)
        emptyRecord.initializeMemory(as: UInt8.self, repeating: 0)
        // Keys only: one reader of no columns, given each match's key.
        var keyReader = RecordReader(UnsafeRawBufferPointer(emptyRecord), layout: layout)
        var matches = [Bool](repeating: false, count: 1)
        try table.store.forEachClusterView(in: transaction) { view in
            if matches.count < view.count { matches = [Bool](repeating: false, count: view.count) }
            try matches.withUnsafeMutableBufferPointer { buffer in
                try filter.evaluate(view, layout, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<view.count]))
            }
            if reading?.isEmpty == true {
                for slot in 0..<view.count where matches[slot] {
                    keyReader.objectKey = view.key(slot)
                    try visit(keyReader.objectKey, keyReader)
                    remaining -= 1
                    if remaining == 0 { return false }
                }
                return true
            }
            for slot in 0..<view.count where matches[slot] {
                let key = view.key(slot)
                let record = try wanted.map { try view.record(slot, only: $0, into: scratch) } ?? view.record(slot, into: scratch)
                var reader = RecordReader(record, layout: layout)
                reader.objectKey = key
                try visit(key, reader)
                remaining -= 1
                if remaining == 0 { return false }
            }
            return true
        }
    }

    /// Calls `visit` with the record of each of `keys` that exists, in the
    /// order given, until it returns false.
    static func forEachRecord(
        of keys: [UInt64], table: TableInfo, in transaction: Transaction,
        _ visit: (UInt64, RecordReader) throws -> Bool
    ) throws {
        guard !keys.isEmpty else { return }
        try table.store.withLookupCursor(in: transaction, stepping: false) { lookups in
            for key in keys {
                guard let bytes = try lookups.record(key) else { continue }
                var reader = RecordReader(bytes, layout: table.layout)
                reader.objectKey = key
                if try !visit(key, reader) { return }
            }
        }
    }

    /// The object keys a query selects, in order; the first `limit` of them
    /// when given (an unsorted query then stops scanning there, a sorted one
    /// keeps only the first `limit` while it reads the matches).
    static func keys(
        table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], limit: Int? = nil, in transaction: Transaction
    ) throws -> [UInt64] {
        let predicate = try predicate?.resolvingFullText(transaction)
        if sort.count == 1, let relevance = sort[0].relevance, let predicate,
            let plan = try indexPlan(predicate, table: table, transaction), plan.isExact
        {
            // A search: its matches ordered by score, no record read.
            return try relevance.order(plan.keys, limit: limit, in: transaction)
        }
        let sort = try sort.contains { $0.relevance != nil } ? ranked(sort, in: transaction) : sort
        if sort.isEmpty {
            let plan = try predicate.flatMap { try indexPlan($0, table: table, transaction) }
            if let plan, plan.isExact {
                return limit.map { Array(plan.keys.prefix($0)) } ?? plan.keys
            }
            if table.store.clusters != nil, plan == nil, let predicate, let filter = ClusterFilter(predicate, table.layout) {
                return try clusterKeys(table, filter, limit: limit, transaction)
            }
            if predicate == nil {
                // Every object: the keys alone, no record read.
                guard table.store.isVisible(in: transaction) else { return [] }
                if let limit { return try table.store.keys(in: transaction, ascending: true, limit: limit) }
                return try table.store.keys(in: transaction, from: 0, through: nil)
            }
            var keys: [UInt64] = []
            try forEachMatch(table: table, predicate: predicate, limit: limit, reading: [], in: transaction) { key, _ in
                keys.append(key)
            }
            return keys
        }
        if let limit, limit <= 0 { return [] }
        if predicate == nil, sort.count == 1, sort[0].derived == nil,
            let ordered = try indexOrder(table: table, by: sort[0], limit: limit, in: transaction)
        {
            return ordered
        }
        if predicate == nil, let limit, sort.count > 1,
            let ordered = try indexLedOrder(table: table, sort: sort, limit: limit, in: transaction)
        {
            return ordered
        }
        return try sortedKeys(table: table, predicate: predicate, sort: sort, limit: limit, in: transaction)
    }

    /// The number of matches when the index alone answers it exactly; nil otherwise.
    static func exactCount(table: TableInfo, predicate: BoundPredicate, in transaction: Transaction) throws -> Int? {
        // One equality on an indexed property: the index counts the value's entries, none is listed.
        if case .compare(let column, .equal, let value, let options) = predicate, options.isEmpty,
            column != table.primaryKeyColumn, let index = table.indexes[column], transaction.canSee(index)
        {
            let (key, exact) = table.indexKey(value, column: column, in: index)
            if exact {
                return try key.withUnsafeBytes { key in
                    try transaction.withCursor(on: index) { cursor in
                        try cursor.seek(exactly: key) == nil ? 0 : cursor.valueCount()
                    }
                }
            }
        }
        if let count = try rangeCount(predicate, table: table, transaction) { return count }
        guard let plan = try indexPlan(predicate, table: table, transaction, ordered: false), plan.isExact else { return nil }
        return plan.keys.count
    }

    /// The number of objects in a range of one indexed column (every part of
    /// the predicate a bound of it: `name >= 'm' AND name < 'n'`, BETWEEN,
    /// BEGINSWITH), counted from the index a key at a time (each key's
    /// values at once) without listing them; nil when the predicate is not
    /// such a range or the index alone cannot decide it.
    private static func rangeCount(_ predicate: BoundPredicate, table: TableInfo, _ transaction: Transaction) throws -> Int? {
        let parts: [BoundPredicate]
        if case .and(let conjuncts) = predicate { parts = conjuncts } else { parts = [predicate] }
        var chosen: IndexRange?
        for part in parts {
            guard let range = IndexRange(part, types: table.layout.types), chosen == nil || chosen?.column == range.column
            else { return nil }
            if chosen == nil { chosen = range } else { chosen?.merge(range) }
        }
        guard let chosen, chosen.column != table.primaryKeyColumn, table.indexIsOrdered(chosen.column),
            let index = table.indexes[chosen.column], transaction.canSee(index)
        else { return nil }
        let found = try range(chosen, table: table, index: index, ordered: false, counting: true, transaction)
        return found.exact ? found.count : nil
    }

    /// Object keys from an index for an indexed equality, `IN` or range in
    /// the predicate; nil when no index applies. With `ordered` false, the keys
    /// of a range may come in index order (enough to count them).
    static func indexPlan(_ predicate: BoundPredicate, table: TableInfo, _ transaction: Transaction, ordered: Bool = true)
        throws -> IndexPlan?
    {
        let predicate = try predicate.resolvingFullText(transaction)
        let parts: [BoundPredicate]
        if case .and(let conjuncts) = predicate { parts = conjuncts } else { parts = [predicate] }
        func index(_ column: Int) -> Table? {
            // An integer primary key is the object key itself: the objects are their own index
            // (`lookup` and `range` read them through the store; the table only says "indexed").
            if column == table.primaryKeyColumn, table.keyIsPrimaryKey {
                return table.store.isVisible(in: transaction) ? table.store.table : nil
            }
            let index = column == table.primaryKeyColumn ? table.primaryKeyIndex : table.indexes[column]
            // An index created after this snapshot began is invisible to it: scan instead.
            guard let index, transaction.canSee(index) else { return nil }
            return index
        }
        for part in parts {
            if case .objectKeys(let listKeys) = part {
                // In the order given, repeats included: the results of a list are the list.
                return IndexPlan(
                    keys: try listKeys(transaction), isExact: parts.count == 1,
                    access: .members)
            }
        }
        // Every indexed equality and IN answers from its index; together they
        // intersect, so the most selective one bounds the candidates.
        // The most common query, one indexed equality, without the bookkeeping below.
        if parts.count == 1, case .compare(let column, .equal, let value, let options) = parts[0], options.isEmpty,
            let index = index(column)
        {
            let (keys, exact) = try lookup(value, column: column, table: table, index: index, transaction)
            return IndexPlan(keys: keys, isExact: exact, access: .equal(column: column, value))
        }
        var equalities: [IndexPlan] = []
        for part in parts {
            switch part {
            case .compare(let column, .equal, let value, let options) where options.isEmpty:
                guard let index = index(column) else { continue }
                let (keys, exact) = try lookup(value, column: column, table: table, index: index, transaction)
                equalities.append(IndexPlan(keys: keys, isExact: exact, access: .equal(column: column, value)))
            case .fullTextKeys(let column, let keys, let recheck):
                equalities.append(IndexPlan(keys: keys, isExact: recheck == nil, access: .fullText(column: column)))
            case .compareList(let column, .in, let values, let options) where options.isEmpty:
                guard let index = index(column) else { continue }
                var keys = Set<UInt64>()
                var exact = true
                for value in values {
                    let found = try lookup(value, column: column, table: table, index: index, transaction)
                    keys.formUnion(found.keys)
                    exact = exact && found.exact
                }
                equalities.append(
                    IndexPlan(keys: keys.sorted(), isExact: exact, access: .inList(column: column, count: values.count)))
            default: continue
            }
            if equalities.last?.keys.isEmpty == true { break }
        }
        if equalities.count == 1 {
            var only = equalities[0]
            only.isExact = only.isExact && parts.count == 1
            return only
        }
        if let first = equalities.first {
            var keys = first.keys.sorted()
            for other in equalities.dropFirst() { keys = intersection(keys, other.keys.sorted()) }
            return IndexPlan(
                keys: keys, isExact: equalities.allSatisfy(\.isExact) && equalities.count == parts.count,
                access: .all(equalities.map(\.access)))
        }
        // Without one: the range conditions on the first indexed column that has
        // any, merged (both bounds of `name >= 'm' AND name < 'n'`, BETWEEN, BEGINSWITH).
        var chosen: IndexRange?
        for part in parts {
            guard let range = IndexRange(part, types: table.layout.types), table.indexIsOrdered(range.column),
                index(range.column) != nil
            else { continue }
            if chosen == nil {
                chosen = range
            } else if chosen?.column == range.column {
                chosen?.merge(range)
            }
        }
        guard let chosen, let index = index(chosen.column) else { return nil }
        let found = try range(chosen, table: table, index: index, ordered: ordered, transaction)
        return IndexPlan(
            keys: found.keys, isExact: found.exact && chosen.conditions.count == parts.count,
            access: .bounded(column: chosen.column, chosen.conditions))
    }

    /// The keys in both ascending lists.
    private static func intersection(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var result: [UInt64] = []
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            if a[i] < b[j] {
                i += 1
            } else if a[i] > b[j] {
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    /// Object keys whose indexed value lies in `range`, ascending unless
    /// `ordered` is false (a count needs no order). `counting`: no key is
    /// listed, only counted, a key's values at once, stepping from key to
    /// key without reading a value.
    private static func range(
        _ range: IndexRange, table: TableInfo, index: Table, ordered: Bool, counting: Bool = false,
        _ transaction: Transaction
    ) throws -> (keys: [UInt64], exact: Bool, count: Int) {
        if range.isEmpty { return ([], true, 0) }
        let column = range.column
        // An integer primary key: the objects table is ordered by it.
        if column == table.primaryKeyColumn, table.keyIsPrimaryKey {
            func key(_ value: StoredValue) -> UInt64 {
                if case .int(let integer) = value { return TableInfo.objectKey(forInteger: integer) }
                return 0
            }
            let (lower, upper) = (range.lower, range.upper)
            let low = lower.map { $0.inclusive ? key($0.value) : key($0.value) &+ 1 }
            let high = upper.map { $0.inclusive ? key($0.value) : key($0.value) &- 1 }
            if let low, let high, low > high { return ([], true, 0) }
            if let lower, !lower.inclusive, key(lower.value) == .max { return ([], true, 0) }
            if let upper, !upper.inclusive, key(upper.value) == 0 { return ([], true, 0) }
            // Nil (an optional key's smallest object key) is in no range.
            let start = Swift.max(low ?? 0, table.primaryKeyIsOptional ? TableInfo.nilPrimaryKey + 1 : 0)
            let keys = try table.store.keys(in: transaction, from: start, through: high)
            return (keys, true, keys.count)
        }
        let type = table.layout.types[column]
        var (lower, upper) = (range.lower, range.upper)
        if type == .double || type == .float {
            // NaN sorts beyond the infinities in the index but matches no range.
            lower = lower ?? (.double(-.infinity), true)
            upper = upper ?? (.double(.infinity), true)
        }
        // A bound decides alone only when its key holds it whole, shorter than
        // a cut key: a key as long as a cut one may be shared with longer values.
        func boundKey(_ value: StoredValue) -> (bytes: [UInt8], exact: Bool) {
            let (bytes, exact) = IndexKey.make(value, type: type)
            return (bytes, exact && bytes.count < OrderedKey.maximumLength)
        }
        let low = lower.map { (boundKey($0.value), $0.inclusive) }
        let high = upper.map { (boundKey($0.value), $0.inclusive) }
        // A cut index entry still starts with the prefix when its value does.
        let prefix = range.prefix.map { IndexKey.make(.string($0), type: .string) }
        let exact = (low?.0.exact ?? true) && (high?.0.exact ?? true) && (prefix?.exact ?? true)
        var keys: [UInt64] = []
        var count = 0
        // Without a lower bound, start after the nil entries (tag 0): nil is outside every range.
        var start = low?.0.bytes ?? [OrderedKey.valueTag]
        if let prefix, start.lexicographicallyPrecedes(prefix.bytes) { start = prefix.bytes }
        /// Whether an index key is past the range (true), before it (false) or in it (nil).
        func outside(_ key: UnsafeRawBufferPointer) -> Bool? {
            if let prefix, !key.starts(with: prefix.bytes) { return true }
            if let (bound, inclusive) = low, bound.exact, !inclusive, key.elementsEqual(bound.bytes) { return false }
            if let (bound, inclusive) = high {
                let order = compareBytes(key, bound.bytes)
                // A cut bound keeps the keys equal to it: the records decide.
                if order > 0 || (order == 0 && !inclusive && bound.exact) { return true }
            }
            return nil
        }
        try start.withUnsafeBytes { startBytes in
            try transaction.withCursor(on: index) { cursor in
                if counting {
                    var key = try cursor.seek(atLeast: startBytes)?.key
                    while let current = key {
                        switch outside(current) {
                        case true?: return
                        case false?: break
                        case nil: count += try cursor.valueCount()
                        }
                        key = try cursor.nextKeyOnly()
                    }
                    return
                }
                var entry = try cursor.seek(atLeast: startBytes)
                while let current = entry {
                    switch outside(current.key) {
                    case true?: return
                    case false?: entry = try cursor.next()
                    case nil:
                        entry = try cursor.next()
                        guard current.value.count == 8 else { continue }
                        keys.append(OrderedKey.objectKey(from: current.value))
                    }
                }
            }
        }
        if ordered { keys.sort() }
        return (keys, exact, count)
    }

    private static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        let common = Swift.min(a.count, b.count)
        let order = common == 0 ? 0 : b.withUnsafeBytes { memcmp(a.baseAddress!, $0.baseAddress!, common) }
        if order != 0 { return order < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    private static func lookup(_ value: StoredValue, column: Int, table: TableInfo, index: Table, _ transaction: Transaction)
        throws -> (keys: [UInt64], exact: Bool)
    {
        if column == table.primaryKeyColumn, table.keyIsPrimaryKey {
            guard let objectKey = table.objectKey(forPrimaryKey: value) else { return ([], true) }
            let found = try table.store.contains(objectKey, in: transaction)
            return (found ? [objectKey] : [], true)
        }
        let (key, exact) = table.indexKey(value, column: column, in: index)
        if column == table.primaryKeyColumn {
            let keys = try key.withUnsafeBytes { k in
                try transaction.withValue(in: index, key: k) { $0.map { [OrderedKey.objectKey(from: $0)] } ?? [] }
            }
            return (keys, exact)
        }
        let keys = try key.withUnsafeBytes { k in
            try transaction.withCursor(on: index) { cursor in
                var keys: [UInt64] = []
                var entry = try cursor.seek(exactly: k)
                if entry != nil { keys.reserveCapacity(try cursor.valueCount()) }
                while let current = entry {
                    keys.append(OrderedKey.objectKey(from: current.value))
                    entry = try cursor.nextValueForKey()
                }
                return keys
            }
        }
        return (keys, exact)
    }
}
