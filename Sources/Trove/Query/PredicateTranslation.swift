import Foundation

/// Turns a Foundation `#Predicate` into the query model the string syntax
/// compiles to, so both run on the same planner and indexes.
///
/// Each expression node of the predicate translates itself (the
/// ``PredicateNode`` conformances below); any subtree that does not read the
/// input is evaluated once, up front, as a constant. What has no exact
/// translation throws `TroveError.Kind.unsupportedPredicate`: a query
/// never quietly answers something other than what the closure says.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
struct PredicateTranslation {
    /// The stored property a model key path names, or nil.
    let propertyName: (AnyKeyPath) -> String?
    private var variables: [PredicateExpressions.VariableID: PropertyPath] = [:]
    private var subqueryVariables = 0

    init<Input>(_ predicate: Predicate<Input>, propertyName: @escaping (AnyKeyPath) -> String?) {
        self.propertyName = propertyName
        variables[predicate.variable.key] = PropertyPath(names: [])
    }

    static func expression<Input>(
        of predicate: Predicate<Input>, propertyName: @escaping (AnyKeyPath) -> String?
    ) throws -> QueryExpression {
        var translation = PredicateTranslation(predicate, propertyName: propertyName)
        return try translation.condition(predicate.expression)
    }

    // MARK: Terms

    mutating func term<E: PredicateExpression>(_ expression: E) throws -> PredicateTerm {
        // A subtree that reads no variable is a constant (captured values, `Date.now`, `1 + 2`).
        if let value = try? Optional(expression.evaluate(PredicateBindings())) { return .constant(value) }
        guard let node = expression as? any PredicateNode else {
            throw Self.unsupported(expression, "Trove has no translation for this expression")
        }
        return try node.term(&self)
    }

    mutating func condition<E: PredicateExpression>(_ expression: E) throws -> QueryExpression {
        switch try term(expression) {
        case .condition(let condition): return condition
        case .constant(let value as Bool): return .constant(value)
        case .path(let path): return try compare(.path(path), .equal, .constant(true), expression)
        case .optionalCondition(let condition, let isNil): return .and([.not(isNil), condition])
        default: throw Self.unsupported(expression, "it is not a condition")
        }
    }

    mutating func path<E: PredicateExpression>(_ expression: E) throws -> PropertyPath {
        guard case .path(let path) = try term(expression) else {
            throw Self.unsupported(expression, "Trove needs a stored property here")
        }
        return path
    }

    mutating func bind(_ variable: PredicateExpressions.VariableID, to path: PropertyPath) {
        variables[variable] = path
    }

    func path(of variable: PredicateExpressions.VariableID) -> PropertyPath? { variables[variable] }

    /// Names a closure's element variable for a SUBQUERY (`$v1`).
    mutating func subqueryVariable(_ variable: PredicateExpressions.VariableID) -> String {
        subqueryVariables += 1
        let name = "$v\(subqueryVariables)"
        variables[variable] = PropertyPath(names: [name])
        return name
    }

    // MARK: Comparisons

    /// `lhs op rhs` with Swift's meaning, including its nils.
    mutating func compare<E: PredicateExpression>(
        _ lhs: PredicateTerm, _ op: ComparisonOperator, _ rhs: PredicateTerm, _ node: E, options: StringOptions = []
    ) throws -> QueryExpression {
        switch (lhs, rhs) {
        case (.constant, .path), (.constant, .count), (.constant, .coalesced), (.constant, .offset):
            guard let mirrored = op.mirrored else { throw Self.unsupported(node, "the property must come first") }
            return try compare(rhs, mirrored, lhs, node, options: options)
        case (.path(let path), .constant(let constant)):
            let value = try Self.stored(constant, node)
            return path.nilAware(op, value, path.comparison(op, .value(value), options))
        case (.path(let left), .path(let right)):
            guard left.optionalLinks.isEmpty, right.optionalLinks.isEmpty else {
                throw Self.unsupported(node, "comparing two properties through optional links")
            }
            return .comparison(
                .init(
                    lhs: .property(left.keyPath, position: 0), op: op, rhs: .property(right.keyPath, position: 0),
                    options: options, position: 0))
        case (.count(let path, let filter), .constant(let constant)):
            let value = try Self.stored(constant, node)
            let condition: QueryExpression
            if let filter {
                condition = .subquery(
                    .init(
                        collection: path.keyPath, variable: filter.variable, predicate: filter.predicate, op: op,
                        count: .value(value), position: 0))
            } else {
                condition = PropertyPath(names: path.names + ["@count"]).comparison(op, .value(value), [])
            }
            return path.nilAware(op, value, condition)
        case (.coalesced(let path, let fallback), .constant(let constant)):
            // `(p ?? f) op v`: f op v where p is nil, p op v elsewhere.
            let value = try Self.stored(constant, node)
            let compared = path.comparison(op, .value(value), options)
            return ValueComparison.test(fallback, op, value, options)
                ? .or([path.isNil, compared]) : .and([.not(path.isNil), compared])
        case (.offset(let path, let delta), .constant(let constant)):
            // `p + d op v` is `p op v - d`.
            guard let moved = Self.subtract(try Self.stored(constant, node), delta) else {
                throw Self.unsupported(node, "the arithmetic overflows or mixes types")
            }
            return try compare(.path(path), op, .constant(moved), node, options: options)
        case (.condition(let left), .constant(let constant as Bool)) where op == .equal || op == .notEqual:
            return (op == .equal) == constant ? left : .not(left)
        case (.optionalCondition(let condition, let isNil), .constant(let constant)) where op == .equal || op == .notEqual:
            // `a?.b.contains(x) == true`: nil when a is nil, which equals only nil.
            let value = try Self.stored(constant, node)
            let equal: QueryExpression
            switch value {
            case .null: equal = isNil
            case .bool(let wanted): equal = .and([.not(isNil), wanted ? condition : .not(condition)])
            default: throw Self.unsupported(node, "a condition compares with true, false or nil")
            }
            return op == .equal ? equal : .not(equal)
        case (.condition(let left), .condition(let right)) where op == .equal || op == .notEqual:
            let same = QueryExpression.or([.and([left, right]), .and([.not(left), .not(right)])])
            return op == .equal ? same : .not(same)
        default:
            throw Self.unsupported(node, "Trove compares a stored property with a value, or two properties")
        }
    }

    // MARK: Values

    static func stored<E>(_ value: Any, _ node: E) throws -> StoredValue {
        if let stored = StoredValue(any: value) { return stored }
        throw unsupported(node, "Trove cannot store a \(type(of: value)) to compare with")
    }

    static func storedList<E>(_ value: Any, _ node: E) throws -> [StoredValue]? {
        guard let sequence = value as? any Sequence, !(value is String) else { return nil }
        func elements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
        return try elements(sequence).map { try stored($0, node) }
    }

    private static func subtract(_ value: StoredValue, _ delta: StoredValue) -> StoredValue? {
        switch (value, delta) {
        case (.int(let a), .int(let b)):
            let (result, overflow) = a.subtractingReportingOverflow(b)
            return overflow ? nil : .int(result)
        case (.null, _), (_, .null): return nil
        default:
            guard let a = value.numeric, let b = delta.numeric else { return nil }
            return .double(a - b)
        }
    }

    static func unsupported<E>(_ node: E, _ reason: String) -> TroveError {
        var text = String(describing: node)
        if text.count > 300 { text = String(text.prefix(300)) + "…" }
        return TroveError(.unsupportedPredicate, "#Predicate: Trove cannot run \(text): \(reason)")
    }
}

/// What a predicate node stands for during translation.
enum PredicateTerm {
    /// A stored property reached from the input or a collection element.
    case path(PropertyPath)
    /// A value that does not depend on the input.
    case constant(Any)
    case condition(QueryExpression)
    /// A condition behind an optional chain (`a?.tags.contains(x)`): nil where `isNil` holds.
    case optionalCondition(QueryExpression, isNil: QueryExpression)
    /// `collection.filter { ... }`, before its `count` or `isEmpty`.
    case filtered(PropertyPath, variable: String, predicate: QueryExpression)
    /// `collection.count`, or the count of a `filter`.
    case count(PropertyPath, filter: (variable: String, predicate: QueryExpression)?)
    /// `property ?? fallback`.
    case coalesced(PropertyPath, fallback: StoredValue)
    /// `property + delta` (a subtraction has `-delta`).
    case offset(PropertyPath, StoredValue)
}

/// A key path from the input (or from a SUBQUERY variable such as `$v1`).
struct PropertyPath {
    var names: [String]
    /// Where an optional link Swift unwraps with `?.` ends, as a count of
    /// names: through a nil one, Swift sees nil where Trove's link test is false.
    var optionalLinks: [Int] = []

    var keyPath: String { names.joined(separator: ".") }

    func appending(_ name: String) -> PropertyPath {
        PropertyPath(names: names + [name], optionalLinks: optionalLinks)
    }

    func comparison(_ op: ComparisonOperator, _ rhs: QueryExpression.Operand, _ options: StringOptions) -> QueryExpression {
        .comparison(.init(lhs: .property(keyPath, position: 0), op: op, rhs: rhs, options: options, position: 0))
    }

    /// Swift's `a?.b?.c == nil`: a link on the way is nil, or the property is.
    var isNil: QueryExpression {
        let links = optionalLinks.map { PropertyPath(names: Array(names.prefix($0))).comparison(.equal, .value(.null), []) }
        return links.isEmpty ? comparison(.equal, .value(.null), []) : .or(links + [comparison(.equal, .value(.null), [])])
    }

    /// `condition` plus the objects whose optional links are nil when Swift's
    /// comparison holds for nil there (`== nil`, `!= value`).
    func nilAware(_ op: ComparisonOperator, _ value: StoredValue, _ condition: QueryExpression) -> QueryExpression {
        guard !optionalLinks.isEmpty else { return condition }
        let nilHolds = (op == .equal && value.isNull) || (op == .notEqual && !value.isNull)
        guard nilHolds else { return condition }
        let links = optionalLinks.map { PropertyPath(names: Array(names.prefix($0))).comparison(.equal, .value(.null), []) }
        return .or(links + [condition])
    }
}

/// A `#Predicate` expression node Trove can translate.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
protocol PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm
}

/// `count` and `isEmpty` of the collection types a predicate can reach.
protocol PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool
}

extension List: PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \List<Element>.count }
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool { keyPath == \List<Element>.isEmpty }
}

extension MutableSet: PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \MutableSet<Element>.count }
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool { keyPath == \MutableSet<Element>.isEmpty }
}

extension Map: PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \Map<Key, Value>.count }
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool { keyPath == \Map<Key, Value>.isEmpty }
}

extension LinkingObjects: PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \LinkingObjects<Element>.count }
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool { keyPath == \LinkingObjects<Element>.isEmpty }
}

extension Array: PredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \[Element].count }
    static func isEmptyCheck(_ keyPath: AnyKeyPath) -> Bool { keyPath == \[Element].isEmpty }
}
