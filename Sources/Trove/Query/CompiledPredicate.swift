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
        case .compare(let column, .matches, .string(let pattern), let options):
            // Compile the expression once for the whole scan.
            guard let regex = ValueComparison.regex(pattern, options) else { return { _ in false } }
            return { reader in
                if case .string(let text) = reader.value(at: column) { return regex.matchesWhole(text) }
                return false
            }
        case .compare(let column, let op, let value, let options):
            if options.isEmpty, let fast = BoundPredicate.fastComparison(column, op, value, layout) { return fast }
            return { ValueComparison.test($0.value(at: column), op, value, options) }
        case .objectKeys:
            return { _ in true }
        case .compareList, .compareColumns:
            return { self.evaluate($0) }
        }
    }

    private static func fastComparison(_ column: Int, _ op: ComparisonOperator, _ value: StoredValue, _ layout: RecordLayout)
        -> ((RecordReader) -> Bool)?
    {
        let type = layout.types[column]
        // nil equals nothing but nil: only != holds for a missing value.
        let whenNull = op == .notEqual
        switch (value, type.isInteger) {
        case (.int(let constant), true):
            guard let test = comparison(op, constant) else { return nil }
            return { reader in reader.int(at: column).map(test) ?? whenNull }
        case (.double(let constant), false) where type == .double:
            guard let test = comparison(op, constant) else { return nil }
            return { reader in
                if case .double(let actual) = reader.value(at: column) { return test(actual) }
                return whenNull
            }
        default:
            return nil
        }
    }

    /// `actual <op> constant` as a closure, for the ordering operators.
    private static func comparison<T: Comparable>(_ op: ComparisonOperator, _ constant: T) -> ((T) -> Bool)? {
        switch op {
        case .equal: return { $0 == constant }
        case .notEqual: return { $0 != constant }
        case .less: return { $0 < constant }
        case .lessOrEqual: return { $0 <= constant }
        case .greater: return { $0 > constant }
        case .greaterOrEqual: return { $0 >= constant }
        default: return nil
        }
    }
}
