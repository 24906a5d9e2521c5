import Foundation
import TroveStorage

extension SortKey {
    /// Whether an object sorts before another, given the values each has
    /// for `sort`: by each key in turn (nil before every value, so first
    /// ascending and last descending), then by object key. This is the order
    /// every sorted query returns, so a live result can place a changed
    /// object by binary search.
    static func precedes(
        _ left: [StoredValue], _ leftKey: UInt64, _ right: [StoredValue], _ rightKey: UInt64, by sort: [SortKey]
    ) -> Bool {
        for (index, key) in sort.enumerated() {
            let order = ValueComparison.order(left[index], right[index]) ?? nullOrder(left[index], right[index])
            if order == .orderedSame { continue }
            return (order == .orderedAscending) == key.ascending
        }
        return leftKey < rightKey
    }

    /// nil sorts before every value.
    static func nullOrder(_ a: StoredValue, _ b: StoredValue) -> ComparisonResult {
        if a.isNull && !b.isNull { return .orderedAscending }
        if !a.isNull && b.isNull { return .orderedDescending }
        return .orderedSame
    }
}
