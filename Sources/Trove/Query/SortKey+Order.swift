import Foundation
import TroveStorage

extension SortKey {
    /// Whether an object sorts before another, given the values each has
    /// for `sort`: by each key in turn (nil before every value, so first
    /// ascending and last descending), then by object key. This is the order
    /// every sorted query returns, so a live result can place a changed
    /// object by binary search.
    /// `ascending` holds each sort key's direction.
    static func precedes(
        _ left: [StoredValue], _ leftKey: UInt64, _ right: [StoredValue], _ rightKey: UInt64, ascending: [Bool]
    ) -> Bool {
        for index in ascending.indices {
            let order = ValueComparison.order(left[index], right[index]) ?? nullOrder(left[index], right[index])
            if order == .orderedSame { continue }
            return (order == .orderedAscending) == ascending[index]
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
