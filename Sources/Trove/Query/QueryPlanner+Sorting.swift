import Foundation
import TroveStorage

/// Sorted results: from an index read in order, or by reading the matches'
/// sort values. With a limit (`first`, `prefix`, `LIMIT`), only the first
/// `limit` are kept while the matches are read (``BoundedHeap``), ties broken
/// as the full sort breaks them, so the answer is the full sort's prefix.
extension QueryPlanner {
    typealias SortedRow = (key: UInt64, values: [StoredValue])

    static func sortedKeys(
        table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], limit: Int?, in transaction: Transaction
    ) throws -> [UInt64] {
        // A limit as large as the table keeps everything: sort it all.
        let bounded = try limit.flatMap { $0 < (try table.store.count(in: transaction)) ? $0 : nil }
        if sort.count == 1, sort[0].derived == nil, table.layout.types[sort[0].column].isInteger {
            if let bounded,
                let first = try columnIntegerFirst(
                    table: table, predicate: predicate, by: sort[0], limit: bounded, in: transaction)
            {
                return first
            }
            let keys = try integerSorted(table: table, predicate: predicate, by: sort[0], limit: bounded, in: transaction)
            return limit.map { Array(keys.prefix($0)) } ?? keys
        }
        if let bounded,
            let first = try columnFirstSorted(table: table, predicate: predicate, sort: sort, limit: bounded, in: transaction)
        {
            return first
        }
        if let bounded,
            let first = try firstSorted(table: table, predicate: predicate, sort: sort, limit: bounded, in: transaction)
        {
            return first
        }
        if sort.count == 1, sort[0].derived == nil, [.float, .double, .date].contains(table.layout.types[sort[0].column]),
            let keys = try floatingPointSorted(table: table, predicate: predicate, by: sort[0], in: transaction)
        {
            return limit.map { Array(keys.prefix($0)) } ?? keys
        }
        if sort.count == 1, sort[0].derived == nil, table.layout.types[sort[0].column] == .string {
            let keys = try stringSorted(table: table, predicate: predicate, by: sort[0], in: transaction)
            return limit.map { Array(keys.prefix($0)) } ?? keys
        }
        var selected: [SortedRow] = []
        try forEachMatch(table: table, predicate: predicate, reading: sortColumns(sort), in: transaction) { key, reader in
            selected.append((key, sort.map { $0.value(reader, transaction) }))
        }
        let ascending = sort.map(\.ascending)
        if let keys = byFirstWord(selected, ascending: ascending) {
            return Array(keys.prefix(limit ?? .max))
        }
        selected.sort { precedes($0, $1, ascending) }
        return selected.prefix(limit ?? .max).map(\.key)
    }

    /// One row's first sort value as a word that orders as the value does
    /// (``orderedBits(_:)`` for numbers and dates, a string's first 8 UTF-8
    /// bytes big-endian, zero-padded: words that differ order as their
    /// strings do, equal ones may not be equal strings), and the row.
    private struct FirstWord {
        let word: Int64
        let isNull: Bool
        let row: Int32
    }

    /// `rows` sorted as ``precedes(_:_:_:)`` sorts them, deciding on the
    /// first sort value's word where the words differ and on the rows only
    /// where they tie: rows of values retained and released their arrays at
    /// every move and comparison. Nil when the first values are not all of
    /// one kind the words order (numbers, dates, Booleans, strings; no NaN).
    private static func byFirstWord(_ rows: [SortedRow], ascending: [Bool]) -> [UInt64]? {
        guard rows.count > 1, rows.count < Int(Int32.max) else { return nil }
        var words: [FirstWord] = []
        words.reserveCapacity(rows.count)
        var kind: Int?
        for (index, row) in rows.enumerated() {
            let word: Int64
            let rowKind: Int
            switch row.values[0] {
            case .null:
                words.append(FirstWord(word: 0, isNull: true, row: Int32(index)))
                continue
            case .int(let value): (word, rowKind) = (value, 0)
            case .double(let value):
                guard !value.isNaN else { return nil }
                (word, rowKind) = (orderedBits(value), 1)
            case .float(let value):
                guard !value.isNaN else { return nil }
                (word, rowKind) = (orderedBits(Double(value)), 1)
            case .date(let value): (word, rowKind) = (orderedBits(value.timeIntervalSinceReferenceDate), 2)
            case .bool(let value): (word, rowKind) = (value ? 1 : 0, 3)
            case .string(var value):
                var bytes: UInt64 = 0
                value.withUTF8 { utf8 in
                    for index in 0..<min(8, utf8.count) { bytes |= UInt64(utf8[index]) << (56 - 8 * UInt64(index)) }
                }
                // (Flipped to order as unsigned bytes do, in a signed word.)
                (word, rowKind) = (Int64(bitPattern: bytes ^ (1 << 63)), 4)
            default: return nil
            }
            // (Integers and floating-point numbers compare by value across kinds: not by these words.)
            if let kind, kind != rowKind { return nil }
            kind = rowKind
            words.append(FirstWord(word: word, isNull: false, row: Int32(index)))
        }
        let up = ascending[0]
        rows.withUnsafeBufferPointer { rows in
            words.sort { a, b in
                if a.isNull != b.isNull { return a.isNull == up }
                if !a.isNull, a.word != b.word { return (a.word < b.word) == up }
                return precedes(rows[Int(a.row)], rows[Int(b.row)], ascending)
            }
        }
        return words.map { rows[Int($0.row)].key }
    }

    /// The columns a sort reads, so that a cluster builds records of those
    /// alone; nil (every column) when a key is derived (it may read others).
    private static func sortColumns(_ sort: [SortKey]) -> [Int]? {
        sort.contains { $0.derived != nil } ? nil : sort.map(\.column)
    }

    /// Whether `a` sorts before `b`: by each sort key in turn (`ascending`
    /// says which way; nil first when ascending, last when descending), then
    /// by object key.
    fileprivate static func precedes(_ a: SortedRow, _ b: SortedRow, _ ascending: [Bool]) -> Bool {
        precedes(a.key, a.values, b, ascending)
    }

    private static func precedes(_ key: UInt64, _ values: [StoredValue], _ b: SortedRow, _ ascending: [Bool]) -> Bool {
        SortKey.precedes(values, key, b.values, b.key, ascending: ascending)
    }

    /// The first `limit` matches of the sort, keeping no more than `limit`
    /// rows. Nil when a sort value has no place in a total order (NaN, or
    /// values of different kinds under one key, which compare as equal to
    /// everything): a full sort's answer then depends on how it sorts, and
    /// only a full sort gives it.
    private static func firstSorted(
        table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], limit: Int, in transaction: Transaction
    ) throws -> [UInt64]? {
        let ascending = sort.map(\.ascending)
        var heap = BoundedHeap<SortedRow>(capacity: limit) { precedes($0, $1, ascending) }
        // The keys' parts outside the loop: copying a SortKey retains its closures.
        let columns = sort.map(\.column)
        let derived = sort.map(\.derived)
        let hasDerived = derived.contains { $0 != nil }
        var kinds = [SortValueKind?](repeating: nil, count: sort.count)
        var totallyOrdered = true
        var values: [StoredValue] = []
        values.reserveCapacity(sort.count)
        var last: SortedRow?
        var cutoff = FirstKeyCutoff(sort[0], type: table.layout.types[sort[0].column])
        try forEachMatch(table: table, predicate: predicate, reading: sortColumns(sort), in: transaction) { key, reader in
            guard totallyOrdered else { return }
            if cutoff?.isPassed(by: reader) == true { return }
            // One buffer for every row: only the rows the heap keeps copy it.
            values.removeAll(keepingCapacity: true)
            for index in columns.indices {
                let value: StoredValue
                if hasDerived, let derived = derived[index] {
                    value = derived(reader, transaction)
                } else {
                    value = reader.value(at: columns[index])
                }
                if let kind = SortValueKind(value) {
                    if kind == .unordered || (kinds[index] != nil && kinds[index] != kind) { totallyOrdered = false }
                    kinds[index] = kind
                }
                values.append(value)
            }
            // Most rows sort after the last one kept: tell without offering them.
            if let last, !precedes(key, values, last, ascending) { return }
            heap.insert((key, values))
            last = heap.last
            if let last { cutoff?.update(last.values[0]) }
        }
        return totallyOrdered ? heap.sorted().map(\.key) : nil
    }

    /// The common sort on one integer column, without building values: nil
    /// first when ascending (last when descending) in key order, values
    /// tied in object-key order. With a limit, the first `limit` only.
    private static func integerSorted(
        table: TableInfo, predicate: BoundPredicate?, by sort: SortKey, limit: Int?, in transaction: Transaction
    ) throws -> [UInt64] {
        let (column, ascending) = (sort.column, sort.ascending)
        var nulls: [UInt64] = []
        if let limit {
            var heap = BoundedHeap<(value: Int64, key: UInt64)>(capacity: limit) { a, b in
                a.value != b.value ? (a.value < b.value) == ascending : a.key < b.key
            }
            try forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) { key, reader in
                if let value = reader.int(at: column) { heap.insert((value, key)) } else { nulls.append(key) }
            }
            let rows = heap.sorted().map(\.key)
            // (In key order, as the full sort places them: a list's objects come in the list's order.)
            let firstNulls = Array(nulls.sorted().prefix(limit))
            return ascending ? firstNulls + rows : rows + firstNulls
        }
        var rows: [(value: Int64, key: UInt64)] = []
        try forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) { key, reader in
            if let value = reader.int(at: column) { rows.append((value, key)) } else { nulls.append(key) }
        }
        return ordered(&rows, nulls: nulls, ascending: ascending)
    }

    /// The keys of `rows` by value, ties by object key, with `nulls` (put in
    /// key order: a list's objects come in the list's order) first when
    /// ascending and last when descending.
    private static func ordered(_ rows: inout [(value: Int64, key: UInt64)], nulls: [UInt64], ascending: Bool) -> [UInt64] {
        let nulls = nulls.sorted()
        if ascending {
            rows.sort { $0.value != $1.value ? $0.value < $1.value : $0.key < $1.key }
            return nulls + rows.map(\.key)
        }
        rows.sort { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        return rows.map(\.key) + nulls
    }

    /// All matches sorted by one Float, Double or Date column, in the order
    /// of ``ValueComparison``, without building values: each number becomes
    /// an integer of the same order (rows of `StoredValue`s retained and
    /// released an array per comparison: five million doubles took 14 s).
    /// nil when a value is NaN, which has no place in a total order (the
    /// general sort then gives the answer it gives).
    private static func floatingPointSorted(
        table: TableInfo, predicate: BoundPredicate?, by sort: SortKey, in transaction: Transaction
    ) throws -> [UInt64]? {
        let column = sort.column
        var rows: [(value: Int64, key: UInt64)] = []
        var nulls: [UInt64] = []
        var unordered = false
        try forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) { key, reader in
            guard let number = reader.floatingPoint(at: column) else { return nulls.append(key) }
            if number.isNaN { unordered = true }
            rows.append((orderedBits(number), key))
        }
        return unordered ? nil : ordered(&rows, nulls: nulls, ascending: sort.ascending)
    }

    /// A signed integer that orders as `number` does among numbers (not
    /// NaN; -0 equals 0): the index keys' word (``OrderedKey/orderedBits(_:)``), signed.
    static func orderedBits(_ number: Double) -> Int64 {
        Int64(bitPattern: OrderedKey.orderedBits(number) ^ (1 << 63))
    }

    /// A string's place in ``stringSorted(table:predicate:by:in:)``: its
    /// UTF-8 in one shared buffer (a struct of plain values, so sorting moves
    /// no reference counts).
    private struct StringRow {
        let key: UInt64
        let start: Int
        let count: Int
    }

    /// All matches sorted by one string column, in code-point (UTF-8 byte)
    /// order as ``ValueComparison`` orders strings: every match's bytes are
    /// copied once into one buffer and compared there with `memcmp`, instead
    /// of sorting rows of `StoredValue`s, whose every comparison retained and
    /// released two strings (a million Korean memos: 3.7 s before, 0.39 s now).
    /// nil first when ascending (last when descending), ties by object key.
    private static func stringSorted(
        table: TableInfo, predicate: BoundPredicate?, by sort: SortKey, in transaction: Transaction
    ) throws -> [UInt64] {
        let (column, ascending) = (sort.column, sort.ascending)
        var text: [UInt8] = []
        var rows: [StringRow] = []
        var nulls: [UInt64] = []
        try forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) { key, reader in
            if column < reader.columns {
                guard let bytes = reader.heapBytes(at: column) else { return nulls.append(key) }
                rows.append(StringRow(key: key, start: text.count, count: bytes.count))
                text.append(contentsOf: bytes)
            } else if case .string(var value) = reader.value(at: column) {
                // A record older than the column: its default.
                value.withUTF8 {
                    rows.append(StringRow(key: key, start: text.count, count: $0.count))
                    text.append(contentsOf: $0)
                }
            } else {
                nulls.append(key)
            }
        }
        text.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress
            rows.sort { a, b in
                let common = Swift.min(a.count, b.count)
                var order: Int32 = 0
                if common > 0, let base { order = memcmp(base + a.start, base + b.start, common) }
                if order == 0 {
                    if a.count == b.count { return a.key < b.key }
                    return (a.count < b.count) == ascending
                }
                return (order < 0) == ascending
            }
        }
        nulls.sort()
        let keys = rows.map(\.key)
        return ascending ? nulls + keys : keys + nulls
    }

    /// Whether ``indexOrder(table:by:limit:in:)`` can serve a sort.
    static func canSortFromIndex(table: TableInfo, by sort: SortKey) -> Bool {
        let column = sort.column
        let type = table.layout.types[column]
        // Strings, data, UUIDs and ObjectIds sort by their bytes, as their index keys do.
        let ordered: Set<PropertyType> = [.double, .float, .date, .bool, .string, .data, .uuid, .objectId]
        guard sort.derived == nil, type.isInteger || ordered.contains(type), table.indexIsOrdered(column) else { return false }
        if column == table.primaryKeyColumn { return table.keyIsPrimaryKey || table.primaryKeyIndex != nil }
        return table.indexes[column] != nil
    }

    /// The objects in the order of an index on the sort column, without
    /// reading a record: nil first when ascending (last when descending), ties
    /// in object-key order. Values too long for an index key share a cut key;
    /// only those are read and ordered by their whole value. With a limit, the
    /// index is read from the end the sort starts at, and only as far as the
    /// first `limit` need. Nil when no index fits.
    static func indexOrder(table: TableInfo, by sort: SortKey, limit: Int?, in transaction: Transaction) throws
        -> [UInt64]?
    {
        guard canSortFromIndex(table: table, by: sort) else { return nil }
        let column = sort.column
        let wanted = limit ?? .max
        var keys: [UInt64] = []
        if column == table.primaryKeyColumn, table.keyIsPrimaryKey {
            // Object keys follow the integer primary key.
            return try table.store.keys(in: transaction, ascending: sort.ascending, limit: wanted)
        }
        // One group per index key: its object keys ascending (a descending
        // sort reads the index backwards, so each group is turned around).
        var group: [UInt64] = []
        func finishGroup(_ groupKey: [UInt8]) -> Bool {
            if !sort.ascending { group.reverse() }
            if groupKey.count >= OrderedKey.maximumLength, group.count > 1 {
                // Values that share a cut key: order them by their whole value, ties by object key.
                let values = group.map { key in
                    (key, BoundPredicate.withRecord(key, of: table, transaction) { $0.value(at: column) } ?? .null)
                }
                group = values.sorted { left, right in
                    let order = ValueComparison.order(left.1, right.1) ?? .orderedSame
                    if order == .orderedSame { return left.0 < right.0 }
                    return (order == .orderedAscending) == sort.ascending
                }.map(\.0)
            }
            keys.append(contentsOf: group)
            group.removeAll(keepingCapacity: true)
            return keys.count < wanted
        }
        let walked = try walkIndexGroups(
            table: table, by: sort, in: transaction,
            add: { key in
                group.append(key)
                return true
            }, finish: finishGroup)
        guard walked else { return nil }
        return limit.map { Array(keys.prefix($0)) } ?? keys
    }

    /// Reads the index on `sort`'s column in the sort's order (from its end
    /// when descending), one group of entries with one index key at a time:
    /// `add` takes each entry's object key, `finish` each group's index key
    /// once its entries are in; either returning false stops the walk. False
    /// when the column has no index this snapshot can read.
    private static func walkIndexGroups(
        table: TableInfo, by sort: SortKey, in transaction: Transaction, add: (UInt64) throws -> Bool,
        finish: ([UInt8]) throws -> Bool
    ) throws -> Bool {
        let column = sort.column
        let index = column == table.primaryKeyColumn ? table.primaryKeyIndex : table.indexes[column]
        guard let index, transaction.canSee(index) else { return false }
        try transaction.withCursor(on: index) { cursor in
            var groupKey: [UInt8]?
            var entry = try sort.ascending ? cursor.first() : cursor.last()
            while let current = entry {
                if groupKey.map({ !current.key.elementsEqual($0) }) ?? true {
                    if let finished = groupKey, !(try finish(finished)) { return }
                    groupKey = Array(current.key)
                }
                if current.value.count == 8, !(try add(OrderedKey.objectKey(from: current.value))) { return }
                entry = try sort.ascending ? cursor.next() : cursor.previous()
            }
            if let finished = groupKey { _ = try finish(finished) }
        }
        return true
    }
}

extension QueryPlanner {
    /// The first `limit` objects of a sort on several keys whose first key has
    /// an index (no filter): the index is read in order, one group of equal
    /// first values at a time, and only the groups the first `limit` reach
    /// are read and sorted by every key: a sort by last name then first name
    /// reads about `limit` objects, not the table. Nil when it does not apply:
    /// the first key may be NaN (doubles, floats, dates) or has no index; a
    /// group holds a value with no place in a total order (the full sort
    /// decides); or the groups grow past a 64th of the table (reading objects
    /// one by one then costs more than the scan, which keeps only `limit`).
    static func indexLedOrder(table: TableInfo, sort: [SortKey], limit: Int, in transaction: Transaction) throws
        -> [UInt64]?
    {
        let first = sort[0]
        let firstType = table.layout.types[first.column]
        guard sort.count > 1, limit > 0, firstType != .double, firstType != .float, firstType != .date,
            canSortFromIndex(table: table, by: first), !(first.column == table.primaryKeyColumn && table.keyIsPrimaryKey)
        else { return nil }
        let ascending = sort.map(\.ascending)
        // The table is counted only when the groups outgrow `limit * 16` (counting walks its clusters).
        var budget = limit * 16
        var counted = false
        var read = 0
        var keys: [UInt64] = []
        var group: [UInt64] = []
        var totallyOrdered = true
        func finishGroup() {
            defer { group.removeAll(keepingCapacity: true) }
            guard group.count > 1 else {
                keys.append(contentsOf: group)
                return
            }
            // Equal first values (or values sharing a cut key): ordered by every key, ties by object key.
            var rows: [SortedRow] = []
            rows.reserveCapacity(group.count)
            for key in group {
                let values = BoundPredicate.withRecord(key, of: table, transaction) { reader in
                    sort.map { $0.value(reader, transaction) }
                }
                guard let values else { continue }
                if values.contains(where: { SortValueKind($0) == .unordered }) { totallyOrdered = false }
                rows.append((key, values))
            }
            rows.sort { precedes($0, $1, ascending) }
            keys.append(contentsOf: rows.prefix(limit - keys.count).map(\.key))
        }
        let walked = try walkIndexGroups(
            table: table, by: first, in: transaction,
            add: { key in
                group.append(key)
                read += 1
                if read > budget, !counted {
                    budget = Swift.max(budget, try table.store.count(in: transaction) / 64)
                    counted = true
                }
                return read <= budget
            },
            finish: { _ in
                finishGroup()
                return totallyOrdered && keys.count < limit
            })
        return walked && totallyOrdered && read <= budget ? Array(keys.prefix(limit)) : nil
    }
}

/// The kinds of sort values that order among themselves: two values of one
/// kind always compare, values of different kinds never do.
enum SortValueKind: Equatable {
    case int, double, float, string, date, bool, uuid, data, decimal, objectId, decimal128, object
    /// NaN: compares with nothing but NaN.
    case unordered

    /// Nil for nil, which sorts apart from every value.
    init?(_ value: StoredValue) {
        switch value {
        case .null: return nil
        case .int: self = .int
        case .double(let number): self = number.isNaN ? .unordered : .double
        case .float(let number): self = number.isNaN ? .unordered : .float
        case .string: self = .string
        case .date(let date): self = date.timeIntervalSinceReferenceDate.isNaN ? .unordered : .date
        case .bool: self = .bool
        case .uuid: self = .uuid
        case .data: self = .data
        case .decimal(let number): self = number.isNaN ? .unordered : .decimal
        case .objectId: self = .objectId
        case .decimal128(let number): self = number.isNaN ? .unordered : .decimal128
        case .object: self = .object
        // A collection held in a mixed value has no order with anything.
        case .list, .dictionary: self = .unordered
        }
    }
}

/// The first sort key's value in the last row a heap keeps, when that key is
/// a String or integer column: a row that sorts after it on that key alone
/// is turned away from the record's bytes, before any value is built (the
/// rest of its keys cannot bring it back).
///
/// Such columns hold values of one kind, never NaN, so turning rows away
/// hides nothing that would make the order ill-defined: rows whose first
/// values differ are ordered by them whatever their other values are.
private struct FirstKeyCutoff {
    let column: Int
    let ascending: Bool
    let isString: Bool
    /// nil until the heap is full; then the cutoff value (`.null` for nil).
    private var integer: Int64?
    private var bytes: [UInt8] = []
    private var isSet = false
    private var isNull = false

    init?(_ sort: SortKey, type: PropertyType) {
        guard sort.derived == nil, type == .string || type.isInteger else { return nil }
        (column, ascending, isString) = (sort.column, sort.ascending, type == .string)
    }

    mutating func update(_ value: StoredValue) {
        isSet = true
        isNull = false
        switch value {
        case .int(let number): integer = number
        case .string(let text): bytes = Array(text.utf8)
        default: isNull = true
        }
    }

    /// Whether the record sorts after the cutoff on this key.
    func isPassed(by reader: RecordReader) -> Bool {
        guard isSet, column < reader.columns else { return false }
        // nil sorts first when ascending, last when descending.
        if reader.isNull(column) { return !isNull && !ascending }
        if isNull { return ascending }
        let order: Int
        if isString {
            guard let value = reader.heapBytes(at: column) else { return false }
            order = bytes.withUnsafeBytes { cutoff in
                let common = Swift.min(value.count, cutoff.count)
                let prefix = common == 0 ? 0 : memcmp(value.baseAddress!, cutoff.baseAddress!, common)
                return prefix != 0 ? Int(prefix) : value.count - cutoff.count
            }
        } else {
            guard let value = reader.int(at: column), let integer else { return false }
            order = value < integer ? -1 : (value == integer ? 0 : 1)
        }
        return ascending ? order > 0 : order < 0
    }
}
