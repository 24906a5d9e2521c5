/// Turns a bound predicate into one closure per node, with fast paths for
/// the comparisons scans spend their time on (numbers and strings against a
/// constant), so a scan does not rebuild a ``StoredValue`` per record.
extension BoundPredicate {
    func compile(_ layout: RecordLayout) -> (RecordReader) -> Bool {
        switch self {
        case .constant(let value):
            return { _ in value }
        case .and(let parts):
            let compiled = parts.map { $0.compile(layout) }
            if compiled.count == 2 {
                let (first, second) = (compiled[0], compiled[1])
                return { first($0) && second($0) }
            }
            return { reader in compiled.allSatisfy { $0(reader) } }
        case .or(let parts):
            let compiled = parts.map { $0.compile(layout) }
            return { reader in compiled.contains { $0(reader) } }
        case .not(let inner):
            let compiled = inner.compile(layout)
            return { !compiled($0) }
        case .compare(let column, let op, let value, let options):
            if options.isEmpty, let fast = BoundPredicate.fastComparison(column, op, value, layout) { return fast }
            return { ValueComparison.test($0.value(at: column), op, value, options) }
        case .compareList, .compareColumns:
            return { self.evaluate($0) }
        }
    }

    private static func fastComparison(_ column: Int, _ op: ComparisonOperator, _ value: StoredValue, _ layout: RecordLayout)
        -> ((RecordReader) -> Bool)?
    {
        let type = layout.types[column]
        switch (value, type.isInteger) {
        case (.int(let constant), true):
            let test: (Int64) -> Bool
            switch op {
            case .equal: test = { $0 == constant }
            case .notEqual: test = { $0 != constant }
            case .less: test = { $0 < constant }
            case .lessOrEqual: test = { $0 <= constant }
            case .greater: test = { $0 > constant }
            case .greaterOrEqual: test = { $0 >= constant }
            default: return nil
            }
            // nil equals nothing but nil: only != holds for a missing value.
            let whenNull = op == .notEqual
            return { reader in reader.int(at: column).map(test) ?? whenNull }
        case (.double(let constant), false) where type == .double:
            let test: (Double) -> Bool
            switch op {
            case .equal: test = { $0 == constant }
            case .notEqual: test = { $0 != constant }
            case .less: test = { $0 < constant }
            case .lessOrEqual: test = { $0 <= constant }
            case .greater: test = { $0 > constant }
            case .greaterOrEqual: test = { $0 >= constant }
            default: return nil
            }
            let whenNull = op == .notEqual
            return { reader in
                if case .double(let actual) = reader.value(at: column) { return test(actual) }
                return whenNull
            }
        default:
            return nil
        }
    }
}
