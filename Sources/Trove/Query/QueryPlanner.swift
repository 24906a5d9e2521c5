import Foundation
import TroveStorage

/// One sort criterion: a column and a direction.
struct SortKey {
    let column: Int
    let ascending: Bool
}

/// Finds the object keys a query selects, in order.
///
/// An equality (or `IN`) on the primary key or an indexed property, alone or
/// in a top-level `AND`, is answered from the index; everything else scans
/// the table, reading only the columns the predicate and the sort need.
/// Every candidate is checked against the whole predicate, so an index is an
/// accelerator, never a source of wrong answers.
enum QueryPlanner {
    static func keys(table: TableInfo, predicate: BoundPredicate?, sort: [SortKey], in transaction: Transaction) throws
        -> [UInt64]
    {
        var selected: [(key: UInt64, sortValues: [StoredValue])] = []
        func consider(_ key: UInt64, _ bytes: UnsafeRawBufferPointer) {
            let reader = RecordReader(bytes, layout: table.layout)
            if let predicate, !predicate.evaluate(reader) { return }
            selected.append((key, sort.map { reader.value(at: $0.column) }))
        }
        if let predicate, let candidates = try indexCandidates(predicate, table: table, transaction) {
            for key in candidates {
                try transaction.withValue(in: table.objects, key: key) { bytes in
                    if let bytes { consider(key, bytes) }
                }
            }
        } else {
            if case .constant(false) = predicate { return [] }
            try transaction.withCursor(on: table.objects) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    consider(OrderedKey.objectKey(from: current.key), current.value)
                    entry = try cursor.next()
                }
            }
        }
        if !sort.isEmpty {
            selected.sort { left, right in
                for (index, key) in sort.enumerated() {
                    let order =
                        ValueComparison.order(left.sortValues[index], right.sortValues[index])
                        ?? nullOrder(
                            left.sortValues[index], right.sortValues[index])
                    if order == .orderedSame { continue }
                    return (order == .orderedAscending) == key.ascending
                }
                return left.key < right.key
            }
        }
        return selected.map(\.key)
    }

    /// nil sorts before every value.
    private static func nullOrder(_ a: StoredValue, _ b: StoredValue) -> ComparisonResult {
        if a.isNull && !b.isNull { return .orderedAscending }
        if !a.isNull && b.isNull { return .orderedDescending }
        return .orderedSame
    }

    /// Object keys from an index for the most selective indexed equality in
    /// the predicate, ascending; nil when no index applies.
    private static func indexCandidates(_ predicate: BoundPredicate, table: TableInfo, _ transaction: Transaction) throws
        -> [UInt64]?
    {
        let parts: [BoundPredicate]
        if case .and(let conjuncts) = predicate { parts = conjuncts } else { parts = [predicate] }
        func usable(_ column: Int) -> Bool {
            guard column == table.primaryKeyColumn ? table.primaryKeyIndex != nil : table.indexes[column] != nil else {
                return false
            }
            // An index created after this snapshot began is invisible to it: scan instead.
            let index = column == table.primaryKeyColumn ? table.primaryKeyIndex! : table.indexes[column]!
            return transaction.canSee(index)
        }
        for part in parts {
            switch part {
            case .compare(let column, .equal, let value, let options) where options.isEmpty && usable(column):
                return try lookup(value, column: column, table: table, transaction)
            case .compareList(let column, .in, let values, let options) where options.isEmpty && usable(column):
                var keys = Set<UInt64>()
                for value in values { keys.formUnion(try lookup(value, column: column, table: table, transaction)) }
                return keys.sorted()
            default: continue
            }
        }
        return nil
    }

    private static func lookup(_ value: StoredValue, column: Int, table: TableInfo, _ transaction: Transaction) throws -> [UInt64]
    {
        let type = table.layout.types[column]
        let key = IndexKey.make(value, type: type).bytes
        if column == table.primaryKeyColumn, let pkTable = table.primaryKeyIndex {
            return try key.withUnsafeBytes { k in
                try transaction.withValue(in: pkTable, key: k) { $0.map { [OrderedKey.objectKey(from: $0)] } ?? [] }
            }
        }
        guard let index = table.indexes[column] else { return [] }
        return try key.withUnsafeBytes { k in
            try transaction.withCursor(on: index) { cursor in
                var keys: [UInt64] = []
                var entry = try cursor.seek(exactly: k)
                while let current = entry {
                    keys.append(OrderedKey.objectKey(from: current.value))
                    entry = try cursor.nextValueForKey()
                }
                return keys
            }
        }
    }
}
