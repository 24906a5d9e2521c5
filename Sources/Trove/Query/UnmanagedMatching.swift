import Foundation

/// A query string tested against objects that are not stored (the elements
/// of an unmanaged list, set or map), by reading their properties: the same
/// comparisons as a query of stored objects, through links and collections.
/// Values (the elements of a collection of values) are tested as `self`.
///
/// ```swift
/// let index = try UnmanagedMatching(Dog.self, "age > %@ AND name BEGINSWITH 'R'", [3]).firstIndex(in: dogs)
/// ```
package struct UnmanagedMatching {
    private let expression: QueryExpression
    private let text: String

    /// The query, parsed with its arguments. Throws `.invalidQuery` for bad
    /// syntax, and for what only a stored query can do: SUBQUERY, map keys
    /// and subscripts, full-text search, geospatial shapes.
    package init(_: Any.Type, _ text: String, _ arguments: [Any?]) throws {
        let template = try PredicateParser.parseTemplate(text)
        guard template.suffixes.isEmpty else {
            throw TroveError(.invalidQuery, "SORT, DISTINCT and LIMIT need stored objects: \(text)")
        }
        expression = try template.substituting(arguments)
        self.text = text
        try check(expression)
    }

    private func check(_ expression: QueryExpression) throws {
        switch expression {
        case .constant: return
        case .and(let parts), .or(let parts): try parts.forEach(check)
        case .not(let inner): try check(inner)
        case .subquery:
            throw TroveError(.invalidQuery, "SUBQUERY needs stored objects (add the collection's owner first): \(text)")
        case .comparison(let comparison):
            for operand in [comparison.lhs, comparison.rhs] {
                if case .property(let name, _) = operand, QueryExpression.splitMapKey(name).key != nil {
                    throw TroveError(.invalidQuery, "a subscript needs stored objects (add the owner first): \(text)")
                }
                if case .shape = operand {
                    throw TroveError(.invalidQuery, "GEOWITHIN needs stored objects (add the owner first): \(text)")
                }
            }
            if comparison.op == .text || comparison.op == .geoWithin {
                throw TroveError(.invalidQuery, "\(comparison.op.rawValue) needs stored objects (add the owner first): \(text)")
            }
        }
    }

    /// The position of the first object (or value) the query matches, or nil.
    package func firstIndex(in elements: [Any]) -> Int? { elements.firstIndex(where: matches) }

    /// Whether `element` matches: an object by its properties, a value as `self`.
    package func matches(_ element: Any) -> Bool { Self.holds(expression, for: element) }

    private static func holds(_ expression: QueryExpression, for object: Any) -> Bool {
        switch expression {
        case .constant(let value): return value
        case .and(let parts): return parts.allSatisfy { holds($0, for: object) }
        case .or(let parts): return parts.contains { holds($0, for: object) }
        case .not(let inner): return !holds(inner, for: object)
        case .subquery: return false  // refused by check(_:)
        case .comparison(let comparison): return holds(comparison, for: object)
        }
    }

    private static func holds(_ comparison: QueryExpression.Comparison, for object: Any) -> Bool {
        var (lhs, rhs, op) = (comparison.lhs, comparison.rhs, comparison.op)
        if case .property = rhs, case .value = lhs {
            // `'rock' IN tags` is `ANY tags == 'rock'`; `5 < age` is `age > 5`.
            if op == .in {
                op = .equal
            } else if let mirrored = op.mirrored {
                op = mirrored
            } else {
                return false
            }
            swap(&lhs, &rhs)
        }
        guard case .property(let path, _) = lhs else { return false }
        let (values, isCollection) = Self.values(at: path, of: object)
        func test(_ actual: StoredValue) -> Bool {
            switch (op, rhs) {
            case (.in, .list(let list)):
                return list.contains { ValueComparison.test(actual, .equal, $0, comparison.options) }
            case (.between, .list(let list)) where list.count == 2:
                return ValueComparison.test(actual, .greaterOrEqual, list[0], comparison.options)
                    && ValueComparison.test(actual, .lessOrEqual, list[1], comparison.options)
            case (_, .value(let expected)): return ValueComparison.test(actual, op, expected, comparison.options)
            case (_, .property(let other, _)):
                guard let expected = Self.values(at: other, of: object).values.first else { return false }
                return ValueComparison.test(actual, op, expected, comparison.options)
            default: return false
            }
        }
        guard isCollection else { return values.first.map(test) ?? false }
        switch comparison.quantifier {
        case .any: return values.contains(where: test)
        case .all: return values.allSatisfy(test)
        case .none: return !values.contains(where: test)
        }
    }

    /// The values a key path reads from an object: one, or each element when
    /// it goes through a collection (`dogs.name`; `@count` counts it). An
    /// object reads as a link to it; `self` is the object or value itself.
    private static func values(at path: String, of object: Any) -> (values: [StoredValue], isCollection: Bool) {
        var current: [Any?] = [object]
        var isCollection = false
        for name in path.split(separator: ".").map(String.init) where name != "self" {
            if name == "@count" {
                return ([.int(Int64(current.count))], false)
            }
            var next: [Any?] = []
            for case let item as Object in current.compactMap({ $0 }) {
                let value = item.value(forKey: name)
                if let collection = value as? any Sequence, !(value is String), !(value is Data) {
                    isCollection = true
                    next += collection.map { $0 as Any? }
                } else {
                    next.append(value)
                }
            }
            current = next
        }
        return (current.map(Self.stored), isCollection)
    }

    private static func stored(_ value: Any?) -> StoredValue {
        guard let value else { return .null }
        if let object = value as? Object {
            if object._database != nil, let table = object._table { return .object(typeName: table.name, key: object._objectKey) }
            return .object(typeName: object.storedTypeName, key: UInt64(UInt(bitPattern: ObjectIdentifier(object).hashValue)))
        }
        return StoredValue(any: value) ?? .null
    }
}
