import Foundation
import TroveStorage

/// What the conditions of a top-level `AND` on one indexed column allow,
/// merged into one range of the index: `>`, `>=`, `<`, `<=`, `BETWEEN` and,
/// on a String, `BEGINSWITH` (a prefix of the index keys). `name >= 'm' AND
/// name < 'n'` reads the index from "m" to "n", not from "m" to the end.
struct IndexRange {
    typealias Bound = (value: StoredValue, inclusive: Bool)

    let column: Int
    private(set) var lower: Bound?
    private(set) var upper: Bound?
    /// `BEGINSWITH`: every index key in the range starts with this string's key.
    private(set) var prefix: String?
    /// True when no value can satisfy the conditions (a NaN bound, prefixes
    /// that exclude each other).
    private(set) var isEmpty = false
    /// The conditions merged, in the order written, for ``Results/explain()``.
    private(set) var conditions: [QueryPlanner.Access] = []

    /// The range one condition allows; nil when it is not a range an index
    /// can answer (options, another operator, a bound that does not encode
    /// like the column). `types` are the columns' types.
    init?(_ part: BoundPredicate, types: [PropertyType]) {
        switch part {
        case .compare(let column, let op, let value, let options)
        where options.isEmpty && [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op):
            guard IndexRange.matchesEncoding(value, types[column]) else { return nil }
            self.column = column
            let bound = (value: value, inclusive: op == .lessOrEqual || op == .greaterOrEqual)
            if op == .greater || op == .greaterOrEqual { narrow(lower: bound) } else { narrow(upper: bound) }
            conditions = [.range(column: column, op, value)]
        case .compare(let column, .beginsWith, .string(let prefix), let options)
        where options.isEmpty && types[column] == .string:
            self.column = column
            self.prefix = prefix
            conditions = [.prefix(column: column, prefix)]
        case .compareList(let column, .between, let values, let options) where options.isEmpty && values.count == 2:
            guard values.allSatisfy({ IndexRange.matchesEncoding($0, types[column]) }) else { return nil }
            self.column = column
            narrow(lower: (values[0], true))
            narrow(upper: (values[1], true))
            conditions = [.between(column: column, values[0], values[1])]
        default:
            return nil
        }
    }

    /// Adds the conditions of another range on the same column.
    mutating func merge(_ other: IndexRange) {
        if let bound = other.lower { narrow(lower: bound) }
        if let bound = other.upper { narrow(upper: bound) }
        if let other = other.prefix {
            if let current = prefix {
                // Index keys compare by bytes: one prefix must extend the other.
                if other.utf8.starts(with: current.utf8) {
                    prefix = other
                } else if !current.utf8.starts(with: other.utf8) {
                    isEmpty = true
                }
            } else {
                prefix = other
            }
        }
        isEmpty = isEmpty || other.isEmpty
        conditions += other.conditions
    }

    /// The larger lower bound wins; at equal values, the exclusive one.
    private mutating func narrow(lower bound: Bound) {
        if IndexRange.isNaN(bound.value) { isEmpty = true }
        guard let current = lower else {
            lower = bound
            return
        }
        switch ValueComparison.order(bound.value, current.value) {
        case .orderedDescending: lower = bound
        case .orderedSame: lower = (current.value, current.inclusive && bound.inclusive)
        default: break
        }
    }

    /// The smaller upper bound wins; at equal values, the exclusive one.
    private mutating func narrow(upper bound: Bound) {
        if IndexRange.isNaN(bound.value) { isEmpty = true }
        guard let current = upper else {
            upper = bound
            return
        }
        switch ValueComparison.order(bound.value, current.value) {
        case .orderedAscending: upper = bound
        case .orderedSame: upper = (current.value, current.inclusive && bound.inclusive)
        default: break
        }
    }

    /// Nothing compares with NaN, so a NaN bound admits no value.
    private static func isNaN(_ value: StoredValue) -> Bool {
        if case .double(let number) = value { return number.isNaN }
        return false
    }

    /// Whether a bound encodes like the column's index keys (so byte order is value order).
    static func matchesEncoding(_ value: StoredValue, _ type: PropertyType) -> Bool {
        switch (value, type) {
        case (.int, let type) where type.isInteger: return true
        case (.double, .double), (.date, .date), (.string, .string), (.data, .data), (.uuid, .uuid), (.bool, .bool),
            (.objectId, .objectId):
            return true
        default: return false
        }
    }
}
