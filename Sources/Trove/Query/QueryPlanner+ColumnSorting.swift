import Foundation
import TroveStorage

/// The first `limit` of a sort read from the cluster layout's columns: a
/// match is compared with the last row the heap keeps straight from its sort
/// columns, and only a row that enters the heap has its values built. Most
/// rows of a `first`/`prefix` sort are turned away by that comparison, so a
/// scan builds no record per object (the record path spent ~550
/// instructions a row building records of the sort columns).
extension QueryPlanner {
    /// nil when the columns cannot answer it (another layout, a derived or
    /// mixed sort key, a predicate an index answers or the cluster filter
    /// cannot run) or when a sort value has no place in a total order (NaN):
    /// the caller then sorts as before.
    static func columnFirstSorted(
        table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], limit: Int, in transaction: Transaction
    ) throws -> [UInt64]? {
        guard limit > 0, let filter = try columnFilter(table: table, predicate: predicate, sort: sort, in: transaction)
        else { return nil }
        let layout = table.layout
        let order = ColumnOrder(sort, layout: layout, limit: limit)
        var matches = [Bool](repeating: false, count: 1)
        let wanted = (0..<layout.columnCount).map { column in sort.contains { $0.column == column } }
        let scratch = RecordScratch()
        try table.store.forEachClusterView(in: transaction) { view in
            if matches.count < view.count { matches = [Bool](repeating: false, count: view.count) }
            return try matches.withUnsafeMutableBufferPointer { buffer in
                let matches = UnsafeMutableBufferPointer(rebasing: buffer[0..<view.count])
                try filter.evaluate(view, layout, into: matches)
                if try order.read(view) { return order.offer(view, UnsafeBufferPointer(matches)) }
                // The cluster predates a sort property: its objects' records hold the default.
                for slot in 0..<view.count where matches[slot] {
                    let record = RecordReader(try view.record(slot, only: wanted, into: scratch), layout: layout)
                    guard order.offer(view.key(slot), order.columns.map { record.value(at: $0) }) else { return false }
                }
                return true
            }
        }
        return order.keys()
    }

    /// The first `limit` of a sort on one integer column, from the column
    /// (``columnFirstSorted(table:predicate:sort:limit:in:)`` for the
    /// commonest sort, with a heap of plain pairs): nil first when ascending
    /// (last when descending) in key order, values tied in key order, as
    /// the full sort places them. Nil when the columns cannot answer it.
    static func columnIntegerFirst(
        table: TableInfo, predicate: BoundPredicate?, by sort: SortKey, limit: Int, in transaction: Transaction
    ) throws -> [UInt64]? {
        guard limit > 0, let filter = try columnFilter(table: table, predicate: predicate, sort: [sort], in: transaction)
        else { return nil }
        let (column, ascending) = (sort.column, sort.ascending)
        var heap = BoundedHeap<(value: Int64, key: UInt64)>(capacity: limit) { a, b in
            a.value != b.value ? (a.value < b.value) == ascending : a.key < b.key
        }
        var nulls: [UInt64] = []
        var matches = [Bool](repeating: false, count: 1)
        var complete = true
        try table.store.forEachClusterView(in: transaction) { view in
            // A cluster older than the column: the record path reads its default.
            guard let values = try view.column(column) else {
                complete = false
                return false
            }
            if matches.count < view.count { matches = [Bool](repeating: false, count: view.count) }
            return try matches.withUnsafeMutableBufferPointer { buffer in
                let matches = UnsafeMutableBufferPointer(rebasing: buffer[0..<view.count])
                try filter.evaluate(view, table.layout, into: matches)
                for slot in matches.indices where matches[slot] {
                    if let value = values.int(slot) {
                        heap.insert((value, view.key(slot)))
                    } else if nulls.count < limit {
                        nulls.append(view.key(slot))
                    }
                }
                return true
            }
        }
        guard complete else { return nil }
        let rows = heap.sorted().map(\.key)
        return Array((ascending ? nulls + rows : rows + nulls).prefix(limit))
    }

    /// The filter the cluster loops run for `predicate` (every object for
    /// none), when a sort on `sort` can read the cluster columns: nil in the
    /// record layout, for a derived, mixed or collection key, or a predicate
    /// an index answers or the loops cannot run.
    private static func columnFilter(
        table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], in transaction: Transaction
    ) throws -> ClusterFilter? {
        guard table.store.clusters != nil else { return nil }
        let layout = table.layout
        for key in sort {
            guard key.derived == nil, key.relevance == nil, layout.inRecord[key.column], layout.types[key.column] != .mixed
            else { return nil }
        }
        guard let predicate else { return .constant(true) }
        let resolved = try predicate.resolvingFullText(transaction)
        if case .constant(false) = resolved { return .constant(false) }
        guard try indexPlan(resolved, table: table, transaction) == nil else { return nil }
        return ClusterFilter(resolved, layout)
    }
}

/// A bounded heap of the first rows of a sort, offered a cluster's sort
/// columns at a time: a slot is compared with the last row kept straight
/// from the columns (integers and strings from their bytes, other types
/// value by value), and only a slot that enters has its values built.
private final class ColumnOrder {
    enum Kind {
        case integer, string
        /// Double or Date: a Double's bits in 8 bytes.
        case real
        /// Any other type; `checksNaN`: its values may be NaN (no total order).
        case other(checksNaN: Bool)
    }

    let columns: [Int]
    private let ascending: [Bool]
    private let kinds: [Kind]
    private let checksNaN: Bool
    private var heap: BoundedHeap<QueryPlanner.SortedRow>
    /// A NaN was met: the order is not total, and the caller sorts in full.
    private var unordered = false
    /// The cluster's sort columns.
    private var current: [ClusterColumn] = []
    /// The last row kept, key by key, once the heap is full: nil, an
    /// integer, a string's UTF-8, or (other types) the value.
    private var last: LastRow?

    typealias LastRow = (
        key: UInt64, isNull: [Bool], integers: [Int64], reals: [Double], bytes: [[UInt8]], values: [StoredValue]
    )

    init(_ sort: [SortKey], layout: RecordLayout, limit: Int) {
        columns = sort.map(\.column)
        let ascending = sort.map(\.ascending)
        self.ascending = ascending
        kinds = sort.map { key in
            let type = layout.types[key.column]
            if type.isInteger { return .integer }
            if type == .string { return .string }
            if type == .double || type == .date { return .real }
            return .other(checksNaN: [.float, .decimal, .decimal128].contains(type))
        }
        checksNaN = kinds.contains {
            switch $0 {
            case .real, .other(checksNaN: true): return true
            default: return false
            }
        }
        heap = BoundedHeap(capacity: limit) { a, b in
            SortKey.precedes(a.values, a.key, b.values, b.key, ascending: ascending)
        }
    }

    /// The keys kept, in order; nil when the order is not total.
    func keys() -> [UInt64]? { unordered ? nil : heap.sorted().map(\.key) }

    /// Takes the view's sort columns; false when the cluster lacks one.
    func read(_ view: ClusterView) throws -> Bool {
        current.removeAll(keepingCapacity: true)
        for column in columns {
            guard let stored = try view.column(column) else { return false }
            current.append(stored)
        }
        return true
    }

    /// Offers the matching slots of the view whose columns ``read(_:)`` took;
    /// false once a NaN is met.
    func offer(_ view: ClusterView, _ matches: UnsafeBufferPointer<Bool>) -> Bool {
        let current = current
        // The last row's parts in locals, taken again only when it changes
        // (reading them from `self` retained each array per slot).
        var last = self.last
        for slot in matches.indices where matches[slot] {
            if checksNaN, !isOrdered(slot, current) {
                unordered = true
                return false
            }
            let key = view.key(slot)
            if let row = last, !precedes(slot, key, current, row) { continue }
            insert(key, current.map { $0.value(slot) ?? .null })
            last = self.last
        }
        return true
    }

    /// Offers one object's sort values; false once a NaN is met.
    func offer(_ key: UInt64, _ values: [StoredValue]) -> Bool {
        guard values.allSatisfy({ SortValueKind($0) != .unordered }) else {
            unordered = true
            return false
        }
        if let last, !SortKey.precedes(values, key, last.values, last.key, ascending: ascending) { return true }
        insert(key, values)
        return true
    }

    private func insert(_ key: UInt64, _ values: [StoredValue]) {
        heap.insert((key, values))
        guard let row = heap.last else { return }
        var isNull: [Bool] = []
        var integers: [Int64] = []
        var reals: [Double] = []
        var bytes: [[UInt8]] = []
        for value in row.values {
            isNull.append(value.isNull)
            if case .int(let number) = value { integers.append(number) } else { integers.append(0) }
            switch value {
            case .double(let number): reals.append(number)
            case .date(let date): reals.append(date.timeIntervalSinceReferenceDate)
            default: reals.append(0)
            }
            if case .string(let text) = value { bytes.append(Array(text.utf8)) } else { bytes.append([]) }
        }
        last = (row.key, isNull, integers, reals, bytes, row.values)
    }

    private func isOrdered(_ slot: Int, _ current: [ClusterColumn]) -> Bool {
        for index in kinds.indices {
            switch kinds[index] {
            case .real:
                if !current[index].isNull(slot), Self.real(slot, in: current[index]).isNaN { return false }
            case .other(checksNaN: true):
                if let value = current[index].value(slot), SortValueKind(value) == .unordered { return false }
            default: continue
            }
        }
        return true
    }

    /// Whether the slot's object sorts before the last row kept.
    private func precedes(_ slot: Int, _ key: UInt64, _ current: [ClusterColumn], _ last: LastRow) -> Bool {
        for index in kinds.indices {
            let column = current[index]
            let order: ComparisonResult
            if case .other = kinds[index] {
                let value = column.value(slot) ?? .null
                order = ValueComparison.order(value, last.values[index]) ?? SortKey.nullOrder(value, last.values[index])
            } else if column.isNull(slot) || last.isNull[index] {
                // nil sorts before every value.
                order = !column.isNull(slot) ? .orderedDescending : last.isNull[index] ? .orderedSame : .orderedAscending
            } else {
                switch kinds[index] {
                case .integer: order = Self.order(column.int(slot).unsafelyUnwrapped, last.integers[index])
                case .real: order = Self.order(Self.real(slot, in: column), last.reals[index])
                default: order = last.bytes[index].withUnsafeBytes { Self.compare(column.variableBytes(slot), $0) }
                }
            }
            if order == .orderedSame { continue }
            return (order == .orderedAscending) == ascending[index]
        }
        return key < last.key
    }

    @inline(__always)
    private static func order<T: Comparable>(_ value: T, _ other: T) -> ComparisonResult {
        value < other ? .orderedAscending : (value == other ? .orderedSame : .orderedDescending)
    }

    /// A Double or Date column's value (not nil).
    @inline(__always)
    private static func real(_ slot: Int, in column: ClusterColumn) -> Double {
        Double(
            bitPattern: UInt64(
                littleEndian: column.bytes.loadUnaligned(fromByteOffset: column.slotOffset(slot, width: 8), as: UInt64.self)))
    }

    /// Byte order (code-point order for UTF-8, as ``ValueComparison`` orders strings).
    private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> ComparisonResult {
        let common = Swift.min(a.count, b.count)
        let prefix = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        if prefix != 0 { return prefix < 0 ? .orderedAscending : .orderedDescending }
        return a.count == b.count ? .orderedSame : (a.count < b.count ? .orderedAscending : .orderedDescending)
    }
}
