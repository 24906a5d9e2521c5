import Trove

/// A typed query (``Query``) as a tree, before it becomes a query string.
/// ``QueryFormat`` writes it out; `Query`'s operators build it.
indirect enum QueryNode {
    /// A key path from the object the query starts at (`$0.dogs.age`).
    case path(QueryPath)
    /// A value, passed as a `%@` argument.
    case value(Any?)
    /// Several values, passed as one array argument (`IN %@`).
    case values([Any?])
    case comparison(QueryNode, ComparisonOperator, QueryNode, StringOptions)
    /// `path BETWEEN {lower, upper}`.
    case between(QueryNode, lower: Any?, upper: Any?)
    /// `path >= lower && path < upper`; through a collection, for one element
    /// (a SUBQUERY), as `BETWEEN` is one test per element.
    case halfOpenRange(QueryNode, lower: Any?, upper: Any?)
    case and(QueryNode, QueryNode)
    case or(QueryNode, QueryNode)
    case not(QueryNode)
    /// A condition that holds for every object, or for none
    /// (`TRUEPREDICATE`, `FALSEPREDICATE`): a comparison with an unmanaged object.
    case constant(Bool)
    /// How many elements of one collection a condition holds for:
    /// `($0.dogs.age > 5).count` is `SUBQUERY(dogs, $col1, $col1.age > 5).@count`.
    case subqueryCount(QueryNode)

    /// Every key path in the tree, nested subqueries included.
    var paths: [QueryPath] {
        switch self {
        case .path(let path): return [path]
        case .value, .values, .constant: return []
        case .comparison(let lhs, _, let rhs, _), .and(let lhs, let rhs), .or(let lhs, let rhs):
            return lhs.paths + rhs.paths
        case .between(let inner, _, _), .halfOpenRange(let inner, _, _), .not(let inner), .subqueryCount(let inner):
            return inner.paths
        }
    }
}

/// One step of a key path: a property, or what the query string puts
/// between properties (`@count`, `@allKeys`, `['key']`).
enum QueryStep: Equatable {
    /// A stored property, and whether it holds many values (a list, set,
    /// linking objects or map) or one.
    case property(String, QueryPropertyKind)
    /// The variable of a SUBQUERY (`$col1`), standing for the key path up to
    /// the collection it goes through.
    case variable(String)
    /// `@count`, `@min`, `@max`, `@sum` or `@avg` of the collection before it.
    case aggregate(String)
    /// `@allKeys` of a map.
    case mapKeys
    /// `@allValues` of a map.
    case mapValues
    /// `map['key']`: the value under one key.
    case mapKey(String)
    /// `anyCol[0]`, `anyCol['key']`, `anyCol[*]`: into a mixed value's nested collections.
    case mixedIndex(Int)
    case mixedKey(String)
    case mixedAny

    /// A step that holds many values, compared one by one (`ANY`).
    var isCollection: Bool {
        if case .property(_, let kind) = self { return kind != .value }
        return false
    }
}

/// What a stored property holds, as a key path in a query sees it.
enum QueryPropertyKind: Equatable {
    /// One value or one link.
    case value
    /// A `List`, `MutableSet` or `LinkingObjects`.
    case collection
    /// A `Map`.
    case map
}

/// A key path in a typed query, as steps.
struct QueryPath {
    var steps: [QueryStep] = []

    /// The path with a property after it.
    func appending(_ name: String, _ kind: QueryPropertyKind) -> QueryPath {
        switch steps.last {
        case .mapKey, .mixedIndex, .mixedKey, .mixedAny:
            queryMisuse("a subscript ends a key path: '.\(name)' cannot follow \(QueryPath.text(of: steps))")
        case .aggregate(let aggregate):
            queryMisuse("'.\(name)' cannot follow \(aggregate) in \(QueryPath.text(of: steps))")
        default:
            return QueryPath(steps: steps + [.property(name, kind)])
        }
    }

    /// The path with `step` after it; `step` needs a collection (or map) last.
    func appendingToCollection(_ step: QueryStep, _ what: String) -> QueryPath {
        guard steps.last?.isCollection == true else {
            queryMisuse("\(what) needs a collection, and \(QueryPath.text(of: steps)) is not one")
        }
        return QueryPath(steps: steps + [step])
    }

    /// `@min`, `@max`, `@sum` or `@avg` over the last collection on the path:
    /// `scores.@avg` for values, `dogs.@avg.age` for a property of objects.
    func aggregating(_ aggregate: String, _ what: String) -> QueryPath {
        guard let index = QueryPath.openCollections(in: steps).last else {
            queryMisuse(
                "\(what) needs a collection on the key path, as in $0.scores.\(what) or $0.dogs.age.\(what); \(QueryPath.text(of: steps)) has none"
            )
        }
        var steps = steps
        // `$0.map.values.avg` is the map's `@avg`: the values are the map's elements.
        if index + 1 < steps.count, steps[index + 1] == .mapValues { steps.remove(at: index + 1) }
        steps.insert(.aggregate(aggregate), at: index + 1)
        return QueryPath(steps: steps)
    }

    /// The positions of the collections whose elements the path still
    /// compares one by one: not counted or aggregated, not subscripted.
    static func openCollections(in steps: [QueryStep]) -> [Int] {
        var open: [Int] = []
        for (index, step) in steps.enumerated() {
            switch step {
            case .property(_, let kind) where kind != .value: open.append(index)
            case .aggregate, .mapKey: _ = open.popLast()
            default: break
            }
        }
        return open
    }

    /// The key path as a query string writes it: `dogs.@avg.age`, `prices['eur']`.
    static func text(of steps: [QueryStep]) -> String {
        var unused: [Any?]? = nil
        return text(of: steps, keyArguments: &unused)
    }

    /// ``text(of:)``, with map keys written `[%@]` and appended to `keyArguments`.
    static func text(of steps: [QueryStep], keyArguments: inout [Any?]) -> String {
        var arguments: [Any?]? = keyArguments
        defer { keyArguments = arguments ?? [] }
        return text(of: steps, keyArguments: &arguments)
    }

    /// Map keys inline (`['eur']`) without `keyArguments`, else as `[%@]` arguments.
    private static func text(of steps: [QueryStep], keyArguments: inout [Any?]?) -> String {
        var text = ""
        for (index, step) in steps.enumerated() {
            let part: String
            switch step {
            case .property(let name, _), .variable(let name): part = name
            case .aggregate(let aggregate): part = aggregate
            case .mapKeys: part = "@allKeys"
            case .mapValues:
                // A property after the values is the values' property (`map.name`).
                guard index == steps.count - 1 else { continue }
                part = "@allValues"
            case .mixedIndex(let position):
                // As Realm writes them: the index or key an argument, `*` as `[%K]` with "#any".
                if keyArguments != nil {
                    text += "[%@]"
                    keyArguments?.append(position)
                } else {
                    text += "[\(position)]"
                }
                continue
            case .mixedAny:
                if keyArguments != nil {
                    text += "[%K]"
                    keyArguments?.append("#any")
                } else {
                    text += "[*]"
                }
                continue
            case .mapKey(let key), .mixedKey(let key):
                if keyArguments != nil {
                    text += "[%@]"
                    keyArguments?.append(key)
                    continue
                }
                // Trove reads the key as written between the brackets, up to the first `]`.
                if key.contains("]") { queryMisuse("a subscript key in a query cannot contain ']' (\(key))") }
                text += "['\(key)']"
                continue
            }
            text += text.isEmpty ? part : "." + part
        }
        return text.isEmpty ? "self" : text
    }
}

/// Stops on a typed query Trove cannot run, as Realm raises for one it cannot build.
func queryMisuse(_ message: String) -> Never {
    fatalError("TroveRealm: where { }: \(message)")
}
