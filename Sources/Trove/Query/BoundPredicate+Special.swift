import Foundation

/// Comparisons that bind to nodes of their own: a property ordered against
/// nil, a path into a mixed value's nested collections, and `GEOWITHIN`.
extension BoundPredicate {
    /// A property ordered against nil, as realm-core orders: a string or data
    /// value is greater than nil (nil sorts first), so `> nil` is every value
    /// and `>= nil` everything; for other types any nil makes `<`/`>` false and
    /// `<=`/`>=` hold only for nil. (No fast path ever meets a nil bound.)
    static func orderedAgainstNil(_ column: Int, _ op: ComparisonOperator, isText: Bool) -> BoundPredicate {
        let isNil = BoundPredicate.compare(column: column, op: .equal, value: .null, options: [])
        switch (op, isText) {
        case (.greater, true): return .compare(column: column, op: .notEqual, value: .null, options: [])
        case (.greaterOrEqual, true): return .constant(true)
        case (.less, _), (.greater, false): return .constant(false)
        default: return isNil  // <= nil; >= nil of a number
        }
    }

    /// `anyCol[0]['k'] == 5`: a comparison of what the subscripts reach in a mixed value.
    static func bindMixedPath(
        _ column: Int, of table: TableInfo, subscripts: String, op: ComparisonOperator, rhs: QueryExpression.Operand,
        comparison: QueryExpression.Comparison
    ) throws -> BoundPredicate {
        let steps = QueryExpression.splitSubscripts(subscripts).compactMap(QueryExpression.SubscriptStep.init(encoded:))
        let values: [StoredValue]
        switch rhs {
        case .value(let value) where op != .in && op != .between && op != .geoWithin && op != .text:
            if value == .null, op.isOrdering {
                return op == .greaterOrEqual || op == .lessOrEqual
                    ? .mixedPath(column: column, steps: steps, .equal, [.null], []) : .constant(false)
            }
            values = [value]
        case .list(let list) where op == .in || (op == .between && list.count == 2):
            values = list
        default:
            throw TroveError(
                .invalidQuery,
                "a value inside a mixed property is compared with a value (or IN a list), not with \(op.rawValue) and this operand (at position \(comparison.position))",
                position: comparison.position)
        }
        return .mixedPath(column: column, steps: steps, op, values, comparison.options)
    }

    /// What a path of subscripts reaches in a mixed value: nothing where a
    /// step does not fit (an index past the end, a key of a list); a missing
    /// key of a dictionary reaches nil, as Realm's does.
    static func reached(_ value: StoredValue, _ steps: ArraySlice<QueryExpression.SubscriptStep>) -> [StoredValue] {
        guard let step = steps.first else { return [value] }
        let rest = steps.dropFirst()
        switch (step, value) {
        case (.index(let position), .list(let elements)):
            return elements.indices.contains(position) ? reached(elements[position], rest) : []
        case (.key(let key), .dictionary(let entries)): return reached(entries[key] ?? .null, rest)
        case (.any, .list(let elements)): return elements.flatMap { reached($0, rest) }
        case (.any, .dictionary(let entries)): return entries.values.flatMap { reached($0, rest) }
        default: return []
        }
    }

    /// `location GEOWITHIN %@` (or `IN`, as Realm's NSPredicate writes it):
    /// the link must reach an embedded type with a `type` string and a
    /// `coordinates` list of doubles, GeoJSON's point.
    static func bindGeoWithin(
        _ column: Int, of table: TableInfo, name: String, op: ComparisonOperator, shape: any GeoShape, position: Int,
        tables: TableResolver
    ) throws -> BoundPredicate {
        let property = table.schema.properties[column]
        guard op == .geoWithin || op == .in else {
            throw TroveError(
                .invalidQuery, "a geospatial shape is compared with GEOWITHIN, not \(op.rawValue) (at position \(position))",
                position: position)
        }
        guard property.type == .link, property.collection == nil, let targetName = property.objectType else {
            throw TroveError(
                .invalidQuery,
                "GEOWITHIN applies to a link to an embedded object holding a point; \(table.name).\(name) is \(property.typeDescription) (at position \(position))",
                position: position)
        }
        guard property.ownsTargets == true else {
            throw TroveError(
                .invalidQuery,
                "A GEOWITHIN query can only operate on a link to an embedded class but '\(targetName)' is at the top level",
                position: position)
        }
        let target = try tables(targetName)
        guard let typeColumn = target.columnIndex["type"], let coordinatesColumn = target.columnIndex["coordinates"],
            target.schema.properties[typeColumn].type == .string, target.schema.properties[typeColumn].collection == nil,
            target.schema.properties[coordinatesColumn].type == .double,
            target.schema.properties[coordinatesColumn].collection == .list
        else {
            throw TroveError(
                .invalidQuery, "Query '\(name) GEOWITHIN \(shape)' links to data in the wrong format for a geoWithin query",
                position: position)
        }
        let region = try shape._geoRegion.get()
        return try linked(column, to: targetName, tables: tables) { target in
            .geoWithin(
                typeColumn: typeColumn,
                coordinates: CollectionPath(column: coordinatesColumn, owner: target, target: nil, inverseRefs: nil),
                region: region)
        }
    }
}
