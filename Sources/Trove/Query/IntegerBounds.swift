/// A conjunction of integer comparisons against constants (`score >= 10 AND
/// score < 20`, `age == 30`), as one closed interval per column.
///
/// Scans spend their time on these; testing a record against the intervals
/// reads each column once and calls no closure per comparison.
struct IntegerBounds {
    private(set) var columns: [Int] = []
    private(set) var lows: [Int64] = []
    private(set) var highs: [Int64] = []

    /// The bounds `parts` (a conjunction) amount to; nil when any part is not
    /// an integer comparison this can hold (`!=`, options, other types).
    init?(_ parts: [BoundPredicate], _ layout: RecordLayout) {
        for part in parts {
            switch part {
            case .compare(let column, let op, .int(let constant), let options) where options.isEmpty:
                guard layout.types[column].isInteger, let (low, high) = Self.interval(op, constant) else { return nil }
                narrow(column, low, high)
            case .compareList(let column, .between, let values, let options) where options.isEmpty && values.count == 2:
                guard layout.types[column].isInteger, case .int(let low) = values[0], case .int(let high) = values[1] else {
                    return nil
                }
                narrow(column, low, high)
            default:
                return nil
            }
        }
        if columns.isEmpty { return nil }
    }

    /// The values `actual <op> constant` admits; nil for operators that are not one interval.
    static func interval(_ op: ComparisonOperator, _ constant: Int64) -> (Int64, Int64)? {
        switch op {
        case .equal: return (constant, constant)
        case .less: return constant == .min ? (1, 0) : (.min, constant - 1)
        case .lessOrEqual: return (.min, constant)
        case .greater: return constant == .max ? (1, 0) : (constant + 1, .max)
        case .greaterOrEqual: return (constant, .max)
        default: return nil
        }
    }

    private mutating func narrow(_ column: Int, _ low: Int64, _ high: Int64) {
        if let index = columns.firstIndex(of: column) {
            lows[index] = max(lows[index], low)
            highs[index] = min(highs[index], high)
        } else {
            columns.append(column)
            lows.append(low)
            highs.append(high)
        }
    }

    /// The test as a closure over a record; a missing value (nil) is in no interval.
    func test() -> (RecordReader) -> Bool {
        if columns.count == 1 {
            let (column, low, high) = (columns[0], lows[0], highs[0])
            return { reader in
                guard let value = reader.int(at: column) else { return false }
                return value >= low && value <= high
            }
        }
        return { reader in
            for index in columns.indices {
                guard let value = reader.int(at: columns[index]), value >= lows[index], value <= highs[index] else {
                    return false
                }
            }
            return true
        }
    }
}
