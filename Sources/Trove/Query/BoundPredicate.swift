import Foundation
import TroveStorage

/// A predicate checked against one type's schema: properties are columns,
/// values are converted to the column's type. Evaluates on a record in place.
/// `Sendable`, and tied to no handle: the same predicate runs on any handle
/// of the file (frozen results, thread-safe references).
indirect enum BoundPredicate: Sendable {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(column: Int, op: ComparisonOperator, value: StoredValue, options: StringOptions)
    case compareList(column: Int, op: ComparisonOperator, values: [StoredValue], options: StringOptions)
    case compareColumns(Int, ComparisonOperator, Int, options: StringOptions)
    /// The objects whose keys a closure lists (the members of a list, the
    /// sources of an inverse link). Only ever the first term of a top-level
    /// `AND`, where the planner answers it; on a record alone it holds.
    case objectKeys(@Sendable (Transaction) throws -> [UInt64])
    /// `owner.name == 'x'`: follow a to-one link, test the target's record (nil: false).
    case linked(column: Int, target: TableInfo, inner: BoundPredicate)
    /// `ANY tags == 'x'`, `ALL songs.seconds > 60`: test each element of a
    /// collection (or each object of an inverse link) and combine.
    case collection(CollectionPath, QueryExpression.Quantifier, inner: BoundPredicate)
    /// `messages.@count > 3`; with a filter, `SUBQUERY(messages, $m, $m.read == false).@count > 3`
    /// (the filter is bound to the elements, as in ``collection(_:_:inner:)``).
    case collectionCount(CollectionPath, where: BoundPredicate?, ComparisonOperator, StoredValue)
    /// `ANY prices.@allKeys BEGINSWITH 'eu'`: test a map's keys (`values`
    /// holds one value, or the list of `IN` / `BETWEEN`).
    case mapKeys(CollectionPath, QueryExpression.Quantifier, ComparisonOperator, [StoredValue], StringOptions)
    /// `prices['eur'] > 10`: the value under one key of a map (nil when absent).
    case mapEntry(CollectionPath, key: String, ComparisonOperator, StoredValue, StringOptions)
    /// `songs.@sum.seconds > 300` (also `@avg`, `@min`, `@max`).
    case collectionAggregate(CollectionPath, String, column: Int, ComparisonOperator, StoredValue)
    /// `value.@type == 'string'`, `value.@type IN {'int', 'double'}`: the kind of
    /// value a mixed property holds is one of `names` (or, when `matches` is
    /// false, none of them).
    case mixedType(column: Int, names: Set<String>, matches: Bool)
    /// The object itself, by its key (`%@ IN owners` tests each linking object).
    case objectKeyIs(UInt64)
    /// `anyCol[0]['k'] == 5`, `anyCol[*] > 1`: a value inside a mixed value's
    /// nested collections; with `*`, some element of each level holds.
    case mixedPath(column: Int, steps: [QueryExpression.SubscriptStep], ComparisonOperator, [StoredValue], StringOptions)
    /// `location GEOWITHIN %@`, on the object a link reaches: a GeoJSON point
    /// (`type` "Point", `coordinates` longitude then latitude) inside a region.
    case geoWithin(typeColumn: Int, coordinates: CollectionPath, region: GeoRegion)
    /// `memo TEXT 'walk -rain'`: the objects a full-text index finds
    /// (`objects` lists them all, for a query of exclusions alone).
    case fullText(column: Int, index: Table, objects: Table, query: FullTextQuery)
    /// A ``fullText(column:index:objects:query:)`` answered for one snapshot:
    /// the keys it found, ascending (see ``resolvingFullText(_:)``), and the
    /// query when each must be checked against its text (a searched word
    /// longer than the index stores one: ``FullTextQuery/needsRecheck``).
    case fullTextKeys(column: Int, keys: [UInt64], recheck: FullTextQuery?)

    /// Checks `expression` against `table` and resolves its property names.
    /// `tables` finds the type a link points at, for key paths through links.
    static func bind(_ expression: QueryExpression, to table: TableInfo, tables: TableResolver) throws -> BoundPredicate {
        switch expression {
        case .constant(let value): return .constant(value)
        case .and(let terms):
            return .and(flatten(try terms.map { try bind($0, to: table, tables: tables) }, and: true))
        case .or(let terms):
            return .or(flatten(try terms.map { try bind($0, to: table, tables: tables) }, and: false))
        case .not(let inner): return .not(try bind(inner, to: table, tables: tables))
        case .comparison(let comparison): return try bind(comparison, to: table, tables: tables)
        case .subquery(let subquery): return try bind(subquery, to: table, tables: tables)
        }
    }

    /// `SUBQUERY(collection, $x, predicate).@count op n`: the collection may
    /// be reached through to-one links; the predicate is bound to its elements.
    private static func bind(_ subquery: QueryExpression.Subquery, to table: TableInfo, tables: TableResolver) throws
        -> BoundPredicate
    {
        let position = subquery.position
        func fail(_ message: String) -> TroveError {
            TroveError(.invalidQuery, "SUBQUERY: \(message) (at position \(position))", position: position)
        }
        let path = subquery.collection.split(separator: ".", maxSplits: 1).map(String.init)
        let column = try column(path[0], position: position, in: table)
        let property = table.schema.properties[column]
        if path.count > 1 {
            guard property.type == .link, property.collection == nil, let targetName = property.objectType else {
                throw fail("\(table.name).\(property.name) is not a link, so '.\(path[1])' cannot follow it")
            }
            var rest = subquery
            rest.collection = path[1]
            return try linked(column, to: targetName, tables: tables) { try bind(rest, to: $0, tables: tables) }
        }
        guard property.collection != nil else {
            throw fail("\(table.name).\(property.name) is \(property.typeDescription), not a collection")
        }
        guard case .value(let value) = subquery.count, let number = value.numeric, let count = Int64(exactly: number) else {
            throw fail("@count compares with a whole number")
        }
        guard [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(subquery.op) else {
            throw fail("@count compares with ==, !=, <, <=, > or >=, not \(subquery.op.rawValue)")
        }
        let collection = try CollectionPath.resolve(column, of: table, tables: tables)
        // Objects: `$t.name` is the element's `name`. Values: `$t` is the element,
        // seen as the one property of the collection's element table.
        let elementTable = collection.target ?? table.elementTables[column]!
        let inner = try renamed(subquery.predicate, variable: subquery.variable) { rest, position in
            if let rest, collection.target != nil { return rest }
            if rest == nil, collection.target == nil { return property.name }
            throw TroveError(
                .invalidQuery,
                collection.target != nil
                    ? "SUBQUERY: compare a property of \(subquery.variable), such as '\(subquery.variable).name' (at position \(position))"
                    : "SUBQUERY: the elements of \(table.name).\(property.name) are \(property.type.swiftName) values; compare \(subquery.variable) itself (at position \(position))",
                position: position)
        }
        var counted = collection
        if let target = collection.target, collection.inverseRefs == nil {
            counted.subclassTests = try tables.hierarchy(target.name).dropFirst().map {
                ($0, try bind(inner, to: $0, tables: tables))
            }
        }
        return .collectionCount(counted, where: try bind(inner, to: elementTable, tables: tables), subquery.op, .int(count))
    }

    /// The subquery's predicate with key paths relative to its variable.
    private static func renamed(
        _ expression: QueryExpression, variable: String, _ rename: (String?, Int) throws -> String
    ) throws -> QueryExpression {
        func operand(_ operand: QueryExpression.Operand) throws -> QueryExpression.Operand {
            guard case .property(let name, let position) = operand else { return operand }
            if name == variable { return .property(try rename(nil, position), position: position) }
            guard name.hasPrefix(variable + ".") else {
                throw TroveError(
                    .invalidQuery,
                    "SUBQUERY: key paths inside start with \(variable), such as '\(variable).\(name)' (at position \(position))",
                    position: position)
            }
            return .property(try rename(String(name.dropFirst(variable.count + 1)), position), position: position)
        }
        switch expression {
        case .constant: return expression
        case .and(let terms): return .and(try terms.map { try renamed($0, variable: variable, rename) })
        case .or(let terms): return .or(try terms.map { try renamed($0, variable: variable, rename) })
        case .not(let inner): return .not(try renamed(inner, variable: variable, rename))
        case .comparison(var comparison):
            comparison.lhs = try operand(comparison.lhs)
            comparison.rhs = try operand(comparison.rhs)
            return .comparison(comparison)
        case .subquery(var nested):
            guard case .property(let collection, _) = try operand(.property(nested.collection, position: nested.position))
            else { preconditionFailure() }
            nested.collection = collection
            return .subquery(nested)
        }
    }

    /// Finds a stored type's table by name, and the types below it in its class hierarchy.
    struct TableResolver {
        let table: (String) throws -> TableInfo
        var subclasses: (String) throws -> [String] = { _ in [] }

        func callAsFunction(_ name: String) throws -> TableInfo { try table(name) }

        /// The tables a link declared to `name` may reach: its own, then its subclasses'.
        func hierarchy(_ name: String) throws -> [TableInfo] {
            [try table(name)] + (try subclasses(name).map(table))
        }
    }

    /// A test of the object a to-one link reaches: on each table of the
    /// target's class hierarchy (the key is in exactly one of them).
    static func linked(
        _ column: Int, to targetName: String, tables: TableResolver, _ inner: (TableInfo) throws -> BoundPredicate
    ) throws -> BoundPredicate {
        let targets = try tables.hierarchy(targetName)
        let each = try targets.map { BoundPredicate.linked(column: column, target: $0, inner: try inner($0)) }
        return each.count == 1 ? each[0] : .or(each)
    }

    /// `a AND b`, flat, so a leading ``objectKeys`` term stays at the top.
    static func conjunction(_ a: BoundPredicate, _ b: BoundPredicate) -> BoundPredicate {
        .and(flatten([a, b], and: true))
    }

    private static func flatten(_ terms: [BoundPredicate], and: Bool) -> [BoundPredicate] {
        var parts: [BoundPredicate] = []
        for part in terms {
            switch (part, and) {
            case (.and(let inner), true), (.or(let inner), false): parts.append(contentsOf: inner)
            default: parts.append(part)
            }
        }
        return parts
    }

    private static func column(_ name: String, position: Int, in table: TableInfo) throws -> Int {
        guard let column = table.columnIndex[name] else {
            var error = table.unknownProperty(name)
            error.kind = .invalidQuery
            error.message += " (at position \(position))"
            error.position = position
            throw error
        }
        return column
    }

    private static func bind(_ comparison: QueryExpression.Comparison, to table: TableInfo, tables: TableResolver) throws
        -> BoundPredicate
    {
        var lhs = comparison.lhs
        var rhs = comparison.rhs
        var op = comparison.op
        if case .property = rhs, !(lhsIsProperty(lhs)), op == .in, case .value = lhs {
            // `'rock' IN tags`: some element of the collection equals the value.
            swap(&lhs, &rhs)
            op = .equal
        } else if case .property = rhs, !(lhsIsProperty(lhs)) {
            guard let mirrored = op.mirrored else {
                throw TroveError(
                    .invalidQuery, "\(op.rawValue) needs the property on its left (at position \(comparison.position))",
                    position: comparison.position)
            }
            swap(&lhs, &rhs)
            op = mirrored
        }
        guard case .property(let name, let position) = lhs else {
            throw TroveError(
                .invalidQuery, "a comparison needs a property name on one side (at position \(comparison.position))",
                position: comparison.position)
        }
        // `prices['eur']` arrives as "prices\0eur": the key may hold dots.
        let (pathName, mapKey) = QueryExpression.splitMapKey(name)
        // (A plain name, the usual case, without splitting: a split costs ~2k instructions.)
        let path =
            pathName.utf8.contains(UInt8(ascii: "."))
            ? pathName.split(separator: ".", omittingEmptySubsequences: false).map(String.init) : [pathName]
        let column = try column(path[0], position: position, in: table)
        let property = table.schema.properties[column]
        if path.count == 2, path[1] == "@type" {
            return try bindMixedType(column, of: table, op: op, rhs: rhs, position: comparison.position)
        }
        if let mapKey, path.count == 1, property.type == .mixed, property.collection == nil {
            return try bindMixedPath(column, of: table, subscripts: mapKey, op: op, rhs: rhs, comparison: comparison)
        }
        if let mapKey, path.count == 1, mapKey.hasPrefix("\u{2}") {
            throw TroveError(
                .invalidQuery,
                "\(table.name).\(path[0]) takes one key in brackets; indexes, * and several subscripts go into a mixed property's nested collections (at position \(comparison.position))",
                position: comparison.position)
        }
        if let mapKey, path.count == 1 {
            return try bindMapEntry(column, of: table, key: mapKey, op: op, rhs: rhs, comparison: comparison, tables: tables)
        }
        if op == .text, path.count == 1 {
            return try bindText(column, of: table, rhs: rhs, position: comparison.position)
        }
        if case .shape(let shape) = rhs, path.count == 1 {
            return try bindGeoWithin(
                column, of: table, name: name, op: op, shape: shape, position: comparison.position, tables: tables)
        }
        if path.count > 1 || property.collection != nil {
            var rest = comparison
            rest.lhs = .property(
                QueryExpression.joinMapKey(path.dropFirst().joined(separator: "."), mapKey), position: position)
            rest.rhs = rhs
            rest.op = op
            return try bindThrough(column, of: table, rest: rest, restIsEmpty: path.count == 1, tables: tables)
        }
        switch rhs {
        case .property(let other, let otherPosition):
            let otherColumn = try self.column(other, position: otherPosition, in: table)
            guard table.schema.properties[otherColumn].isInRecord else {
                throw TroveError(
                    .invalidQuery,
                    "\(table.name).\(other) is a collection and cannot be compared as one value (at position \(otherPosition))",
                    position: otherPosition)
            }
            return .compareColumns(column, op, otherColumn, options: comparison.options)
        case .value(let value):
            if op == .geoWithin {
                throw TroveError(
                    .invalidQuery,
                    "GEOWITHIN needs a GeoBox, GeoPolygon or GeoCircle, not \(value) (at position \(comparison.position))",
                    position: comparison.position)
            }
            if op == .in || op == .between {
                throw TroveError(
                    .invalidQuery,
                    "\(op.rawValue) needs a list such as {1, 2} or an array argument (at position \(comparison.position))",
                    position: comparison.position)
            }
            let converted = try convert(value, for: property, op: op, position: comparison.position, table: table)
            if converted == .null, op.isOrdering {
                return orderedAgainstNil(column, op, isText: property.type == .string || property.type == .data)
            }
            if op == .matches {
                guard property.type == .string, case .string(let pattern) = converted else {
                    throw TroveError(
                        .invalidQuery, "MATCHES needs a valid regular expression (at position \(comparison.position))",
                        position: comparison.position)
                }
                do {
                    _ = try WholeMatchExpression(pattern, ignoringCase: comparison.options.contains(.caseInsensitive))
                } catch {
                    throw TroveError(
                        .invalidQuery,
                        "MATCHES needs a valid regular expression (at position \(comparison.position)): \(error.message), at character \(error.offset + 1) of the expression",
                        position: comparison.position)
                }
            }
            return .compare(column: column, op: op, value: converted, options: comparison.options)
        case .argument, .keyArgument, .elements:
            preconditionFailure("Trove: a query argument was not substituted; this is a bug in Trove")
        case .shape:
            throw TroveError(
                .invalidQuery,
                "a geospatial shape is compared with a link to an embedded point, not with \(table.name).\(name) (at position \(comparison.position))",
                position: comparison.position)
        case .list(let values):
            guard op == .in || op == .between else {
                throw TroveError(
                    .invalidQuery,
                    "a list can only follow IN or BETWEEN, not \(op.rawValue) (at position \(comparison.position))",
                    position: comparison.position)
            }
            if op == .between, values.count != 2 {
                throw TroveError(
                    .invalidQuery, "BETWEEN needs exactly two values, like {1, 10} (at position \(comparison.position))",
                    position: comparison.position)
            }
            let converted = try values.map {
                try convert($0, for: property, op: .equal, position: comparison.position, table: table)
            }
            return .compareList(column: column, op: op, values: converted, options: comparison.options)
        }
    }

    /// `memo TEXT '산책 공원'`: a search of the property's full-text index.
    private static func bindText(_ column: Int, of table: TableInfo, rhs: QueryExpression.Operand, position: Int) throws
        -> BoundPredicate
    {
        let property = table.schema.properties[column]
        guard property.type == .string, property.collection == nil else {
            throw TroveError(
                .invalidQuery,
                "TEXT searches a String property with a full-text index; \(table.name).\(property.name) is \(property.typeDescription) (at position \(position))",
                position: position)
        }
        guard let index = table.fullTextIndexes[column] else {
            throw TroveError(
                .invalidQuery,
                "\(table.name).\(property.name) has no full-text index for TEXT to search; declare it `@Persisted(indexed: .fullText) var \(property.name)` (at position \(position))",
                position: position)
        }
        guard case .value(.string(let text)) = rhs else {
            throw TroveError(
                .invalidQuery, "TEXT needs the words to search as a string, such as 'walk park' (at position \(position))",
                position: position)
        }
        return .fullText(column: column, index: index, objects: table.store.table, query: FullTextQuery(text))
    }

    /// `value.@type == 'string'`: the names a mixed value's kind may be compared with.
    static let mixedTypeNames: Set<String> = [
        "null", "int", "bool", "float", "double", "string", "binary", "data", "date", "timestamp", "objectid", "decimal",
        "decimal128", "uuid", "object", "link", "numeric", "list", "array", "dictionary", "collection",
    ]

    /// The names a stored mixed value answers `@type` to (Realm's, lowercased).
    static func typeNames(of value: StoredValue) -> Set<String> {
        switch value {
        case .null: return ["null"]
        case .int: return ["int", "numeric"]
        case .bool: return ["bool"]
        case .float: return ["float", "numeric"]
        case .double: return ["double", "numeric"]
        case .decimal, .decimal128: return ["decimal", "decimal128", "numeric"]
        case .string: return ["string"]
        case .data: return ["binary", "data"]
        case .date: return ["date", "timestamp"]
        case .uuid: return ["uuid"]
        case .objectId: return ["objectid"]
        case .object: return ["object", "link"]
        case .list: return ["list", "array", "collection"]
        case .dictionary: return ["dictionary", "collection"]
        }
    }

    private static func bindMixedType(
        _ column: Int, of table: TableInfo, op: ComparisonOperator, rhs: QueryExpression.Operand, position: Int
    ) throws -> BoundPredicate {
        let property = table.schema.properties[column]
        guard property.type == .mixed, property.isInRecord else {
            throw TroveError(
                .invalidQuery,
                "@type applies to a mixed property; \(table.name).\(property.name) is \(property.typeDescription) (at position \(position))",
                position: position)
        }
        func name(_ value: StoredValue) throws -> String {
            guard case .string(let given) = value, BoundPredicate.mixedTypeNames.contains(given.lowercased()) else {
                throw TroveError(
                    .invalidQuery,
                    "@type compares with a type name: \(BoundPredicate.mixedTypeNames.sorted().joined(separator: ", ")) (at position \(position))",
                    position: position)
            }
            return given.lowercased()
        }
        switch (op, rhs) {
        case (.equal, .value(let value)): return .mixedType(column: column, names: [try name(value)], matches: true)
        case (.notEqual, .value(let value)): return .mixedType(column: column, names: [try name(value)], matches: false)
        case (.in, .list(let values)): return .mixedType(column: column, names: Set(try values.map(name)), matches: true)
        default:
            throw TroveError(
                .invalidQuery, "@type is compared with ==, != or IN and a type name such as 'string' (at position \(position))",
                position: position)
        }
    }

    /// A comparison whose key path starts at a link or a collection: the
    /// rest of the path (in `rest.lhs`) is bound to the type or the elements it reaches.
    private static func bindThrough(
        _ column: Int, of table: TableInfo, rest: QueryExpression.Comparison, restIsEmpty: Bool, tables: TableResolver
    ) throws -> BoundPredicate {
        let property = table.schema.properties[column]
        let position = rest.position
        guard case .property(var restName, _) = rest.lhs else { preconditionFailure() }
        var restIsEmpty = restIsEmpty
        func fail(_ message: String) -> TroveError {
            TroveError(.invalidQuery, "\(table.name).\(property.name): \(message) (at position \(position))", position: position)
        }
        var path: CollectionPath?
        if property.collection != nil {
            path = try CollectionPath.resolve(column, of: table, tables: tables)
        } else if property.type != .link {
            throw fail("a \(property.typeDescription) has no properties; '.\(restName)' cannot follow it")
        }
        if restName == "@allKeys" || restName == "@allValues" {
            guard let path, property.collection == .map else { throw fail("\(restName) needs a Map") }
            if restName == "@allValues" {
                restName = ""
                restIsEmpty = true
            } else {
                let values: [StoredValue]
                switch rest.rhs {
                case .value(.string(let key)): values = [.string(key)]
                case .list(let list)
                where (rest.op == .in || rest.op == .between) && list.allSatisfy({ $0.typeName == "String" }):
                    values = list
                default: throw fail("map keys are strings; compare @allKeys with a string")
                }
                return .mapKeys(path, rest.quantifier, rest.op, values, rest.options)
            }
        }
        if restName == "@count" {
            guard let path else { throw fail("@count needs a collection (List, MutableSet, Map or LinkingObjects)") }
            guard case .value(let value) = rest.rhs, let number = value.numeric, let count = Int64(exactly: number) else {
                throw fail("@count compares with a whole number")
            }
            return .collectionCount(path, where: nil, rest.op, .int(count))
        }
        let aggregateParts = restName.split(separator: ".", maxSplits: 1).map(String.init)
        if let kind = aggregateParts.first, ["@sum", "@avg", "@min", "@max"].contains(kind) {
            // Over objects, a property of theirs (`songs.@sum.seconds`); over values, the values (`scores.@max`).
            let target = path?.target ?? path.flatMap { table.elementTables[$0.column] }
            let targetName = path?.target == nil ? property.name : aggregateParts.count == 2 ? aggregateParts[1] : ""
            guard let path, let target, aggregateParts.count == (path.target == nil ? 1 : 2),
                let targetColumn = target.columnIndex[targetName]
            else {
                throw fail(
                    path?.target == nil
                        ? "\(aggregateParts[0]) of values needs nothing after it, like '\(property.name).\(aggregateParts[0])'"
                        : "\(aggregateParts[0]) needs a property of the objects, like '\(property.name).\(aggregateParts[0]).age'"
                )
            }
            let targetProperty = target.schema.properties[targetColumn]
            guard case .value(let value) = rest.rhs else { throw fail("\(aggregateParts[0]) compares with a value") }
            let isNumber = ["@sum", "@avg"].contains(aggregateParts[0])
            if isNumber, !targetProperty.type.isNumeric {
                throw fail(
                    "\(aggregateParts[0]) needs a numeric property; \(target.name).\(targetProperty.name) is \(targetProperty.typeDescription)"
                )
            }
            let bound: StoredValue
            if isNumber {
                guard let number = value.numeric else { throw fail("\(aggregateParts[0]) compares with a number") }
                bound = .double(number)
            } else {
                bound = try convert(value, for: targetProperty, op: rest.op, position: position, table: target)
            }
            return .collectionAggregate(path, aggregateParts[0], column: targetColumn, rest.op, bound)
        }
        if restName.hasPrefix("@") { throw fail("\(restName) is not supported; use @count, @sum, @avg, @min or @max") }
        guard let path else {
            // A to-one link: the rest of the path is a property of the target.
            return try linked(column, to: property.objectType ?? "", tables: tables) { try bind(rest, to: $0, tables: tables) }
        }
        if let target = path.target, !restIsEmpty {
            var path = path
            if path.inverseRefs == nil {
                path.subclassTests = try tables.hierarchy(target.name).dropFirst().map {
                    ($0, try bind(rest, to: $0, tables: tables))
                }
            }
            return .collection(path, rest.quantifier, inner: try bind(rest, to: target, tables: tables))
        }
        guard restIsEmpty else {
            throw fail("its elements are \(property.type.swiftName) values; '.\(restName)' cannot follow them")
        }
        if path.inverseRefs != nil, let target = path.target {
            // `%@ IN owners`, `ANY owners == %@`, `ANY owners IN %@`: the linking objects themselves.
            let values: [StoredValue]
            switch (rest.op, rest.rhs) {
            case (.equal, .value(let value)), (.notEqual, .value(let value)): values = [value]
            case (.in, .list(let list)): values = list
            default:
                throw fail(
                    "compare the linking objects with ==, != or IN and objects (or a property of theirs, such as '\(property.name).name')"
                )
            }
            let names = Set(try tables.hierarchy(target.name).map(\.name))
            let keys = try values.compactMap { value -> BoundPredicate? in
                switch value {
                case .null: return nil  // a linking object is never nil
                case .object(let typeName, let key):
                    guard names.contains(typeName) else {
                        throw fail("its linking objects are \(target.name) objects, not \(typeName)")
                    }
                    return .objectKeyIs(key)
                default: throw fail("its linking objects are \(target.name) objects; compare them with an object")
                }
            }
            let same: BoundPredicate = keys.isEmpty ? .constant(false) : keys.count == 1 ? keys[0] : .or(keys)
            return .collection(path, rest.quantifier, inner: rest.op == .notEqual ? .not(same) : same)
        }
        // The elements themselves: bind to the collection seen as a type of one
        // property. For a collection of objects that property is the link (the
        // object key), tested on the element record, not on the object it points at.
        var element = rest
        element.lhs = .property(property.name, position: position)
        let elements = CollectionPath(column: path.column, owner: path.owner, target: nil, inverseRefs: nil)
        return .collection(
            elements, rest.quantifier, inner: try bind(element, to: table.elementTables[column]!, tables: tables))
    }

    /// `prices['eur'] op value`.
    private static func bindMapEntry(
        _ column: Int, of table: TableInfo, key: String, op: ComparisonOperator, rhs: QueryExpression.Operand,
        comparison: QueryExpression.Comparison, tables: TableResolver
    ) throws -> BoundPredicate {
        let property = table.schema.properties[column]
        let position = comparison.position
        guard property.collection == .map, let elements = table.elementTables[column] else {
            throw TroveError(
                .invalidQuery,
                "\(table.name).\(property.name) is not a Map, so ['\(key)'] cannot follow it (at position \(position))",
                position: position)
        }
        guard case .value(let value) = rhs else {
            throw TroveError(
                .invalidQuery, "\(property.name)['\(key)'] compares with one value (at position \(position))",
                position: position)
        }
        let converted = try convert(value, for: elements.schema.properties[0], op: op, position: position, table: elements)
        return .mapEntry(
            try CollectionPath.resolve(column, of: table, tables: tables), key: key, op, converted, comparison.options)
    }

    private static func lhsIsProperty(_ operand: QueryExpression.Operand) -> Bool {
        if case .property = operand { return true }
        return false
    }

    /// Converts a query value to the column's type, or explains why it cannot.
    private static func convert(
        _ value: StoredValue, for property: PropertySchema, op: ComparisonOperator, position: Int, table: TableInfo
    ) throws -> StoredValue {
        if case .null = value {
            // Ordered against nil as realm-core orders: `>`/`<` match nothing, `>=`/`<=` only nil.
            guard op == .equal || op == .notEqual || op.isOrdering else {
                throw TroveError(
                    .invalidQuery,
                    "nil can only be compared with ==, !=, <, <=, > or >= (\(table.name).\(property.name), at position \(position))",
                    position: position)
            }
            return .null
        }
        if op.isStringOperator {
            guard property.type == .string || property.type == .data || property.type == .mixed else {
                throw TroveError(
                    .invalidQuery,
                    "\(op.rawValue) works on String and Data properties, but \(table.name).\(property.name) is \(property.typeDescription) (at position \(position))",
                    position: position)
            }
            if case .string = value { return value }
            if case .data = value { return value }
        }
        let compatible: Bool
        switch (property.type, value) {
        case (.mixed, _): return value
        case (.link, .int):
            guard op == .equal || op == .notEqual else {
                throw TroveError(
                    .invalidQuery,
                    "a link can only be compared with == or != (\(table.name).\(property.name), at position \(position))",
                    position: position)
            }
            return value
        case (.link, .object(let typeName, let key)):
            guard op == .equal || op == .notEqual else {
                throw TroveError(
                    .invalidQuery,
                    "a link can only be compared with == or != (\(table.name).\(property.name), at position \(position))",
                    position: position)
            }
            let isKind = ModelInfo.knownType(named: typeName).map {
                ModelInfo.of($0).schema.isKind(of: property.objectType ?? "")
            }
            guard typeName == property.objectType || isKind == true else {
                throw TroveError(
                    .invalidQuery,
                    "\(table.name).\(property.name) links to \(property.objectType ?? "?") but is compared with a \(typeName) object (at position \(position))",
                    position: position)
            }
            return .int(Int64(bitPattern: key))
        case (.link, _): compatible = false
        case (let type, .int), (let type, .double), (let type, .float), (let type, .decimal), (let type, .decimal128):
            compatible = type.isNumeric || (type == .bool && value.numeric.map { $0 == 0 || $0 == 1 } == true)
        case (.string, .string), (.data, .data), (.date, .date), (.uuid, .uuid), (.bool, .bool): compatible = true
        case (.uuid, .string(let text)): compatible = UUID(uuidString: text) != nil
        case (.objectId, .objectId): compatible = true
        case (.objectId, .string(let text)): compatible = (try? ObjectId(string: text)) != nil
        default: compatible = false
        }
        guard compatible else {
            throw TroveError(
                .invalidQuery,
                "\(table.name).\(property.name) is \(property.typeDescription) but is compared with \(value.typeName) \(value) (at position \(position))",
                position: position)
        }
        if property.type == .bool, let number = value.numeric { return .bool(number != 0) }
        // Numbers take the column's kind, so index keys and record values compare alike.
        if property.type.isInteger, value.numeric != nil, case .int = value {
            return value
        } else if property.type.isInteger, let number = value.numeric, let exact = Int64(exactly: number) {
            return .int(exact)
        } else if property.type == .double || property.type == .float, let number = value.numeric {
            if case .decimal = value { return .double(number) }
            if case .int = value { return .double(number) }
            if case .float = value { return .double(number) }
        }
        if property.type == .uuid, case .string(let text) = value { return .uuid(UUID(uuidString: text)!) }
        if property.type == .objectId, case .string(let text) = value { return .objectId(try ObjectId(string: text)) }
        if property.type == .decimal128, let exact = value.decimal128Value { return .decimal128(exact) }
        return value
    }

    // MARK: Evaluation

    func evaluate(_ record: RecordReader) -> Bool {
        switch self {
        case .constant(let value): return value
        case .and(let parts): return parts.allSatisfy { $0.evaluate(record) }
        case .or(let parts): return parts.contains { $0.evaluate(record) }
        case .not(let inner): return !inner.evaluate(record)
        case .compare(let column, let op, let value, let options):
            return ValueComparison.test(record.value(at: column), op, value, options)
        case .compareList(let column, let op, let values, let options):
            let actual = record.value(at: column)
            if op == .between {
                return ValueComparison.test(actual, .greaterOrEqual, values[0], options)
                    && ValueComparison.test(actual, .lessOrEqual, values[1], options)
            }
            return values.contains { ValueComparison.test(actual, .equal, $0, options) }
        case .compareColumns(let left, let op, let right, let options):
            return ValueComparison.test(record.value(at: left), op, record.value(at: right), options)
        case .objectKeys: return true
        case .fullTextKeys(let column, let keys, let recheck):
            return BoundPredicate.contains(keys, record.objectKey)
                && (recheck.map { BoundPredicate.text(at: column, of: record, matches: $0) } ?? true)
        case .mixedType(let column, let names, let matches):
            return BoundPredicate.typeNames(of: record.value(at: column)).isDisjoint(with: names) != matches
        case .objectKeyIs(let key):
            return record.objectKey == key
        case .mixedPath(let column, let steps, let op, let values, let options):
            return BoundPredicate.reached(record.value(at: column), steps[...]).contains { actual in
                switch op {
                case .in: return values.contains { ValueComparison.test(actual, .equal, $0, options) }
                case .between:
                    return ValueComparison.test(actual, .greaterOrEqual, values[0], options)
                        && ValueComparison.test(actual, .lessOrEqual, values[1], options)
                default: return ValueComparison.test(actual, op, values[0], options)
                }
            }
        case .linked, .collection, .collectionCount, .collectionAggregate, .mapKeys, .mapEntry, .fullText, .geoWithin:
            preconditionFailure("Trove: a query through links or an index is compiled, never evaluated directly")
        }
    }

    /// The columns the predicate reads.
    var columns: Set<Int> {
        switch self {
        case .constant, .objectKeys, .objectKeyIs: return []
        case .linked(let column, _, _): return [column]
        case .collection(let path, _, _), .collectionCount(let path, _, _, _), .collectionAggregate(let path, _, _, _, _),
            .mapKeys(let path, _, _, _, _), .mapEntry(let path, _, _, _, _):
            return [path.column]
        case .geoWithin(let typeColumn, let coordinates, _): return [typeColumn, coordinates.column]
        case .and(let parts), .or(let parts): return parts.reduce(into: []) { $0.formUnion($1.columns) }
        case .not(let inner): return inner.columns
        case .compare(let column, _, _, _), .compareList(let column, _, _, _), .mixedType(let column, _, _),
            .mixedPath(let column, _, _, _, _),
            .fullText(let column, _, _, _), .fullTextKeys(let column, _, _):
            return [column]
        case .compareColumns(let left, _, let right, _): return [left, right]
        }
    }
}

/// Where a query through a collection finds the elements of one object: the
/// collection's own table, or the inverse-link table of a ``LinkingObjects``.
struct CollectionPath: Sendable {
    let column: Int
    let owner: TableInfo
    /// The type of the objects reached; nil for a collection of values.
    let target: TableInfo?
    /// For linking objects: the origin link's inverse-link table.
    let inverseRefs: Table?
    /// For a collection of links whose type has subclasses: the test of an
    /// element bound to each subclass's table (their objects share keys).
    var subclassTests: [(table: TableInfo, test: BoundPredicate)] = []

    enum Element {
        /// An element record of a list, set or map.
        case record(UnsafeRawBufferPointer)
        /// An object linking here.
        case object(UInt64)
    }

    /// Visits the elements of `owner`'s collection until `visit` returns false.
    func forEachElement(of ownerKey: UInt64, _ transaction: Transaction, _ visit: (Element) -> Bool) {
        let table = inverseRefs ?? self.owner.collections[column]
        guard let table, transaction.canSee(table) else { return }
        let prefix = withUnsafeBytes(of: ownerKey.bigEndian) { Array($0) }
        do {
            try transaction.withCursor(on: table) { cursor in
                var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                let isChunked =
                    inverseRefs == nil && self.owner.listsArePacked && self.owner.schema.properties[column].collection == .list
                while let current = entry, current.key.count >= 8,
                    UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self)) == ownerKey
                {
                    if isChunked {
                        let chunk = try Database.listChunk(
                            current, owner: ownerKey, column: column, table: self.owner, path: transaction.environment.path)
                        for index in 0..<chunk.count where !visit(.record(chunk.record(at: index))) { return }
                    } else {
                        let element: Element =
                            inverseRefs != nil
                            ? .object(UInt64(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                            : .record(self.owner.elementRecord(current.value, column: column))
                        if !visit(element) { return }
                    }
                    entry = try cursor.next()
                }
            }
        } catch {
            fatalError("Trove: cannot read \(owner.name).\(owner.schema.properties[column].name) during a query: \(error)")
        }
    }
}

extension BoundPredicate {
    /// Runs `body` on the record of one object; nil when it does not exist.
    static func withRecord<R>(_ key: UInt64, of table: TableInfo, _ transaction: Transaction, _ body: (RecordReader) -> R)
        -> R?
    {
        do {
            return try table.store.withRecord(key, in: transaction) { $0.map(body) }
        } catch {
            fatalError("Trove: cannot read a \(table.name) during a query: \(error)")
        }
    }
}
