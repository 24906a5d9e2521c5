import Foundation

// How each `#Predicate` expression node translates. Nodes not listed here
// (ternaries, string case conversion, division, casts, ...) are refused with
// `unsupportedPredicate`, unless they read no input and fold to a constant.

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        guard let path = translation.path(of: key) else {
            throw PredicateTranslation.unsupported(self, "the variable is not the input or a closure's element")
        }
        return .path(path)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        let countable = Root.Output.self as? any PredicateCountable.Type
        let isCount = countable?.isCount(keyPath) == true
        let isEmpty = countable?.isEmptyCheck(keyPath) == true
        switch try translation.term(root) {
        case .path(let path):
            if isCount { return .count(path, filter: nil) }
            if isEmpty {
                return .condition(PropertyPath(names: path.names + ["@count"]).comparison(.equal, .value(.int(0)), []))
            }
            guard let name = translation.propertyName(keyPath) else {
                throw PredicateTranslation.unsupported(
                    self, "\(keyPath) is not a stored property (computed properties, String.count and the like cannot be queried)"
                )
            }
            return .path(path.appending(name))
        case .filtered(let path, let variable, let predicate):
            let counted = QueryExpression.Subquery(
                collection: path.keyPath, variable: variable, predicate: predicate, op: .equal, count: .value(.int(0)),
                position: 0)
            if isCount { return .count(path, filter: (variable, predicate)) }
            if isEmpty { return .condition(.subquery(counted)) }
            throw PredicateTranslation.unsupported(self, "a filtered collection offers only count and isEmpty")
        default:
            throw PredicateTranslation.unsupported(self, "key paths start at the input or a closure's element")
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Equal: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .condition(try translation.compare(translation.term(lhs), .equal, translation.term(rhs), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NotEqual: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .condition(try translation.compare(translation.term(lhs), .notEqual, translation.term(rhs), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Comparison: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        let op: ComparisonOperator
        switch self.op {
        case .lessThan: op = .less
        case .lessThanOrEqual: op = .lessOrEqual
        case .greaterThan: op = .greater
        case .greaterThanOrEqual: op = .greaterOrEqual
        @unknown default: throw PredicateTranslation.unsupported(self, "an unknown comparison")
        }
        return .condition(try translation.compare(translation.term(lhs), op, translation.term(rhs), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conjunction: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .condition(.and([try translation.condition(lhs), try translation.condition(rhs)]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Disjunction: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .condition(.or([try translation.condition(lhs), try translation.condition(rhs)]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Negation: PredicateNode {
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .condition(.not(try translation.condition(wrapped)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.CollectionContainsCollection: PredicateNode {
    /// `name.contains("cat")` on a String.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        guard Base.Output.self == String.self || Base.Output.self == String?.self else {
            throw PredicateTranslation.unsupported(self, "contains(_:) with a sequence works on String properties")
        }
        return .condition(try translation.compare(translation.term(base), .contains, translation.term(other), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceStartsWith: PredicateNode {
    /// `name.starts(with: "A")` on a String.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        guard Base.Output.self == String.self else {
            throw PredicateTranslation.unsupported(self, "starts(with:) works on String properties")
        }
        return .condition(try translation.compare(translation.term(base), .beginsWith, translation.term(prefix), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContains: PredicateNode {
    /// `ids.contains($0.id)` (IN) or `$0.tags.contains("x")` (ANY ==).
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        switch (try translation.term(sequence), try translation.term(element)) {
        case (.path(let path), .constant(let character as Character)) where LHS.Output.self == String.self:
            return .condition(path.comparison(.contains, .value(.string(String(character))), []))
        case (.constant(let constant), .path(let path)):
            guard let values = try PredicateTranslation.storedList(constant, self) else {
                throw PredicateTranslation.unsupported(self, "the sequence is not a list of values")
            }
            if values.isEmpty { return .condition(.constant(false)) }
            let condition = path.comparison(.in, .list(values), [])
            return .condition(values.contains(.null) ? path.nilAware(.equal, .null, condition) : condition)
        case (.path(let path), .constant(let constant)) where LHS.Output.self is any PredicateCountable.Type:
            let value = try PredicateTranslation.stored(constant, self)
            return .condition(path.nilAware(.equal, value, path.comparison(.equal, .value(value), [])))
        default:
            throw PredicateTranslation.unsupported(
                self, "contains(_:) needs a list of values and a property, or a collection property and a value")
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContainsWhere: PredicateNode {
    /// `$0.songs.contains { $0.seconds > 300 }`: SUBQUERY(...).@count > 0.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        try translation.subquery(over: sequence, variable: variable.key, test: test, negated: false, op: .greater)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceAllSatisfy: PredicateNode {
    /// `$0.songs.allSatisfy { ... }`: no element fails the test.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        try translation.subquery(over: sequence, variable: variable.key, test: test, negated: true, op: .equal)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateTranslation {
    /// `SUBQUERY(collection, $vN, [NOT] test).@count op 0`, nil where an optional link on the way is nil.
    mutating func subquery<S: PredicateExpression, Test: PredicateExpression>(
        over sequence: S, variable: PredicateExpressions.VariableID, test: Test, negated: Bool, op: ComparisonOperator
    ) throws -> PredicateTerm {
        let collection = try path(sequence)
        let name = subqueryVariable(variable)
        let inner = try condition(test)
        let counted = QueryExpression.subquery(
            .init(
                collection: collection.keyPath, variable: name, predicate: negated ? .not(inner) : inner, op: op,
                count: .value(.int(0)), position: 0))
        return collection.optionalLinks.isEmpty ? .condition(counted) : .optionalCondition(counted, isNil: collection.isNil)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Filter: PredicateNode {
    /// `$0.songs.filter { ... }`, which a `count` or `isEmpty` must follow.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        let collection = try translation.path(sequence)
        guard collection.optionalLinks.isEmpty else {
            throw PredicateTranslation.unsupported(self, "filtering a collection behind an optional link")
        }
        let name = translation.subqueryVariable(variable.key)
        return .filtered(collection, variable: name, predicate: try translation.condition(filter))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.RangeExpressionContains: PredicateNode {
    /// `(1...5).contains($0.age)`: BETWEEN, or two comparisons for `..<` and partial ranges.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        guard case .constant(let constant) = try translation.term(range), let bounds = constant as? any RangeBounds,
            case .path(let path) = try translation.term(element)
        else {
            throw PredicateTranslation.unsupported(self, "contains(_:) on a range needs constant bounds and a property")
        }
        let (lower, upper, closed) = bounds.bounds
        var terms: [QueryExpression] = []
        if let lower, let upper, closed {
            let values = [try PredicateTranslation.stored(lower, self), try PredicateTranslation.stored(upper, self)]
            return .condition(path.comparison(.between, .list(values), []))
        }
        if let lower { terms.append(path.comparison(.greaterOrEqual, .value(try PredicateTranslation.stored(lower, self)), [])) }
        if let upper {
            terms.append(
                path.comparison(closed ? .lessOrEqual : .less, .value(try PredicateTranslation.stored(upper, self)), []))
        }
        return .condition(terms.count == 1 ? terms[0] : .and(terms))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.OptionalFlatMap: PredicateNode {
    /// `$0.owner?.name`: the path goes on through the link, which may be nil.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        var wrapped = try translation.path(self.wrapped)
        wrapped.optionalLinks.append(wrapped.names.count)
        translation.bind(variable.key, to: wrapped)
        switch try translation.term(transform) {
        case .condition(let condition): return .optionalCondition(condition, isNil: wrapped.isNil)
        case let term: return term
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilCoalesce: PredicateNode {
    /// `($0.age ?? 0) > 18`.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        guard case .path(let path) = try translation.term(lhs), case .constant(let fallback) = try translation.term(rhs) else {
            throw PredicateTranslation.unsupported(self, "?? needs a stored property on the left and a value on the right")
        }
        return .coalesced(path, fallback: try PredicateTranslation.stored(fallback, self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.ForcedUnwrap: PredicateNode {
    /// `$0.age!`: the property itself (an object where it is nil does not match).
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        .path(try translation.path(inner))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Arithmetic: PredicateNode {
    /// `$0.age + 1 > 18`: a property plus or minus a constant, moved across the comparison.
    func term(_ translation: inout PredicateTranslation) throws -> PredicateTerm {
        switch (try translation.term(lhs), try translation.term(rhs), op) {
        case (.path(let path), .constant(let delta), .add), (.constant(let delta), .path(let path), .add):
            return .offset(path, try PredicateTranslation.stored(delta, self))
        case (.path(let path), .constant(let delta), .subtract):
            switch try PredicateTranslation.stored(delta, self) {
            case .int(let value) where value != .min: return .offset(path, .int(-value))
            case let value:
                guard let number = value.numeric else { break }
                return .offset(path, .double(-number))
            }
        default: break
        }
        throw PredicateTranslation.unsupported(
            self, "arithmetic on a property is limited to adding or subtracting a constant")
    }
}

/// The bounds of the range types `#Predicate` can test membership in.
protocol RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { get }
}

extension ClosedRange: RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, true) }
}

extension Range: RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, false) }
}

extension PartialRangeFrom: RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, nil, true) }
}

extension PartialRangeThrough: RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, true) }
}

extension PartialRangeUpTo: RangeBounds {
    var bounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, false) }
}
