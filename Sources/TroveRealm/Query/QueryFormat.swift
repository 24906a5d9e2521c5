import Trove

/// Writes a ``QueryNode`` tree as a Trove query string with `%@` arguments,
/// NSPredicate's syntax as Realm writes it:
///
/// ```
/// $0.age > 18 && $0.name.starts(with: "A")       →   ((age > %@) && (name BEGINSWITH %@))
/// $0.dogs.name == "Rex"                          →   (ANY dogs.name == %@)
/// ($0.dogs.age > 5).count > 1                    →   (SUBQUERY(dogs, $col1, ($col1.age > %@)).@count > %@)
/// ```
struct QueryFormat {
    private var text = ""
    private var arguments: [Any?] = []
    /// The SUBQUERYs being written, innermost last: each variable stands for
    /// the key path up to its collection.
    private var variables: [(prefix: [QueryStep], name: String)] = []
    private var subqueries = 0

    /// The query string and its arguments for a condition.
    static func predicate(_ node: QueryNode) -> (String, [Any?]) {
        var format = QueryFormat()
        format.condition(node)
        return (format.text, format.arguments)
    }

    private mutating func condition(_ node: QueryNode) {
        switch node {
        case .path(let path):
            // A Bool property as a condition, as Realm writes it.
            boolean(path, true)
        case .not(.path(let path)):
            boolean(path, false)
        case .not(.comparison(let lhs, let op, let rhs, let options)):
            // As Realm writes a negated comparison: inside its parentheses.
            comparison(lhs, op, rhs, options, prefix: "NOT ")
        case .not(let inner):
            text += "NOT "
            condition(inner)
        case .and(let lhs, let rhs): compound(lhs, "&&", rhs)
        case .or(let lhs, let rhs): compound(lhs, "||", rhs)
        case .constant(let holds): text += holds ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let lhs, let op, let rhs, let options):
            comparison(lhs, op, rhs, options)
        case .between(let lhs, let lower, let upper):
            text += "("
            operand(lhs, quantified: true)
            text += " BETWEEN {%@, %@})"
            arguments += [lower, upper]
        case .halfOpenRange(let lhs, let lower, let upper):
            let bounds = QueryNode.and(
                .comparison(lhs, .greaterOrEqual, .value(lower), []), .comparison(lhs, .less, .value(upper), []))
            // Decided here, where a SUBQUERY around it may already stand for the collection.
            if case .path(let path) = lhs, !QueryPath.openCollections(in: substituted(path.steps)).isEmpty {
                condition(.comparison(.subqueryCount(bounds), .greater, .value(0), []))
            } else {
                condition(bounds)
            }
        case .value, .values, .subqueryCount:
            queryMisuse("a where { } closure must return a condition, such as $0.age > 18")
        }
    }

    /// A Bool property as a condition, as Realm writes it: `isMember == true`, no parentheses.
    private mutating func boolean(_ path: QueryPath, _ value: Bool) {
        operand(.path(path), quantified: true)
        text += value ? " == true" : " == false"
    }

    private mutating func comparison(
        _ lhs: QueryNode, _ op: ComparisonOperator, _ rhs: QueryNode, _ options: StringOptions, prefix: String = ""
    ) {
        if case .path(let left) = lhs, case .path(let right) = rhs { checkColumns(left, right) }
        if case .subqueryCount = rhs { queryMisuse("a subquery's count goes on the left of the comparison") }
        if case .subqueryCount = lhs, case .path = rhs {
            queryMisuse("a subquery's count compares with a number, not a property")
        }
        text += "(" + prefix
        operand(lhs, quantified: true)
        text += " \(op.rawValue)\(options.modifier) "
        operand(rhs, quantified: false)
        text += ")"
    }

    private mutating func compound(_ lhs: QueryNode, _ op: String, _ rhs: QueryNode) {
        text += "("
        condition(lhs)
        text += " \(op) "
        condition(rhs)
        text += ")"
    }

    /// One side of a comparison; `quantified`: the left side, where a key path
    /// through a collection compares each element (`ANY`).
    private mutating func operand(_ node: QueryNode, quantified: Bool) {
        switch node {
        case .path(let path):
            let steps = substituted(path.steps)
            if quantified, !QueryPath.openCollections(in: steps).isEmpty { text += "ANY " }
            // A map key goes as an argument, as Realm writes it: `mapInt[%@]`.
            text += QueryPath.text(of: steps, keyArguments: &arguments)
        case .value(let value):
            text += "%@"
            arguments.append(value)
        case .values(let values):
            text += "%@"
            arguments.append(values)
        case .subqueryCount(let inner):
            subquery(inner)
        case .comparison, .between, .halfOpenRange, .and, .or, .not, .constant:
            queryMisuse("a condition cannot be compared; combine conditions with &&, || and !")
        }
    }

    /// `SUBQUERY(collection, $colN, condition).@count`: every key path of the
    /// condition goes through the same collection, which `$colN` replaces.
    private mutating func subquery(_ inner: QueryNode) {
        let paths = inner.paths.map { substituted($0.steps) }
        guard let first = paths.first, let end = first.firstIndex(where: \.isCollection) else {
            queryMisuse(
                "(...).count counts the elements of a collection a condition holds for, such as ($0.dogs.age > 5).count; this condition goes through no collection"
            )
        }
        let prefix = Array(first[...end])
        guard paths.allSatisfy({ $0.starts(with: prefix) }) else {
            queryMisuse(
                "the conditions of one (...).count must all be on the same collection, \(QueryPath.text(of: prefix)); found \(paths.map { QueryPath.text(of: $0) })"
            )
        }
        subqueries += 1
        let name = "$col\(subqueries)"
        text += "SUBQUERY(\(QueryPath.text(of: prefix)), \(name), "
        variables.append((prefix, name))
        condition(inner)
        variables.removeLast()
        text += ").@count"
    }

    /// The steps with the key path of each enclosing SUBQUERY's collection
    /// replaced by its variable (`dogs.age` is `$col1.age` inside `SUBQUERY(dogs, $col1, ...)`).
    private func substituted(_ steps: [QueryStep]) -> [QueryStep] {
        var steps = steps
        for variable in variables where steps.starts(with: variable.prefix) {
            steps = [.variable(variable.name)] + steps.dropFirst(variable.prefix.count)
        }
        return steps
    }

    /// Trove compares two properties of the same object (`age > minimumAge`,
    /// also `$col1.age > $col1.minimumAge` in a SUBQUERY): not across links or collections.
    private func checkColumns(_ lhs: QueryPath, _ rhs: QueryPath) {
        func owner(_ steps: [QueryStep]) -> String?? {
            switch steps.count {
            case 1: if case .property(_, .value) = steps[0] { return .some(nil) }
            case 2:
                if case .variable(let name) = steps[0], case .property(_, .value) = steps[1] { return .some(name) }
            default: break
            }
            return nil
        }
        let (left, right) = (substituted(lhs.steps), substituted(rhs.steps))
        guard let leftOwner = owner(left), let rightOwner = owner(right), leftOwner == rightOwner else {
            queryMisuse(
                "Trove compares two properties of the same object, such as $0.age > $0.minimumAge; \(QueryPath.text(of: left)) and \(QueryPath.text(of: right)) go through links or collections"
            )
        }
    }
}

extension StringOptions {
    /// `[c]`, `[d]`, `[cd]` or nothing.
    var modifier: String {
        if isEmpty { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}
