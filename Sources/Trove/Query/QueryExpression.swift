/// A predicate as the parser produces it: property names, not yet checked
/// against a type. The string syntax, and later `#Predicate`, compile to it.
indirect enum QueryExpression: Sendable {
    case constant(Bool)
    case and([QueryExpression])
    case or([QueryExpression])
    case not(QueryExpression)
    case comparison(Comparison)
    /// `SUBQUERY(tasks, $t, $t.done == false).@count > 0`.
    case subquery(Subquery)

    /// How many elements of a collection match an inner predicate, compared
    /// with a number. Inside, key paths start with the variable (`$t.done`),
    /// or are the variable alone for a collection of values (`$t BEGINSWITH 'a'`).
    struct Subquery: Sendable {
        var collection: String
        var variable: String
        var predicate: QueryExpression
        var op: ComparisonOperator
        var count: Operand
        var position: Int
    }

    struct Comparison: Sendable {
        var lhs: Operand
        var op: ComparisonOperator
        var rhs: Operand
        var options: StringOptions
        /// Where the comparison starts in the query text, for errors.
        var position: Int
        /// `ANY`, `ALL` or `NONE` before a key path through a collection.
        var quantifier: Quantifier = .any
    }

    /// How a comparison through a collection (`ANY tags == 'x'`) combines its elements.
    enum Quantifier: Sendable {
        /// Some element matches (also what no keyword means).
        case any
        case all
        case none
    }

    enum Operand: Sendable {
        case property(String, position: Int)
        case value(StoredValue)
        case list([StoredValue])
        /// `%@` or `$n`: the argument at `index`, filled in by ``substituting(_:in:)``.
        case argument(Int, position: Int)
        /// `%K`: a property name given as the argument at `index`.
        case keyArgument(Int, position: Int)
        /// `{1, %@}`: a list with arguments still to fill in.
        case elements([Operand])
        /// A ``GeoBox``, ``GeoPolygon`` or ``GeoCircle`` given as an argument.
        case shape(any GeoShape)
    }
}

extension QueryExpression {
    /// A key path ending in a map subscript (`prices['eur']`) keeps the key
    /// after a NUL, so dots in the key do not split the path.
    static func splitMapKey(_ name: String) -> (path: String, key: String?) {
        guard let separator = name.utf8.firstIndex(of: 0) else { return (name, nil) }
        return (String(name[..<separator]), String(name[name.utf8.index(after: separator)...]))
    }

    /// Starts a `[%@]` subscript until its argument is filled in.
    static let keyArgumentMark = "\u{1}%@"
    /// Starts a `[%K]` subscript until its argument is filled in.
    static let keyNameArgumentMark = "\u{1}%K"

    /// One subscript of a key path: a key, an index (into a list in a mixed
    /// value), or `*`, every element.
    enum SubscriptStep: Equatable, Sendable {
        case key(String)
        case index(Int)
        case any

        /// How a step sits in the text after a property name: a single key
        /// as itself (a map's key); otherwise marked, with a kind letter.
        var encoded: String {
            switch self {
            case .key(let key): return "\u{2}k" + key
            case .index(let position): return "\u{2}i" + String(position)
            case .any: return "\u{2}*"
            }
        }

        init?(encoded: String) {
            guard encoded.hasPrefix("\u{2}") else {
                self = .key(encoded)
                return
            }
            let body = encoded.dropFirst()
            switch body.first {
            case "k": self = .key(String(body.dropFirst()))
            case "i":
                guard let position = Int(body.dropFirst()) else { return nil }
                self = .index(position)
            case "*": self = .any
            default: return nil
            }
        }
    }

    /// The subscripts after a property, as the text after its NUL: a lone
    /// key as itself (what a map subscript has always been), else each step
    /// encoded, separated by NULs.
    static func joinSubscripts(_ steps: [String]) -> String {
        if steps.count == 1, case .key(let key)? = SubscriptStep(encoded: steps[0]), steps[0].hasPrefix("\u{2}k") {
            return key
        }
        return steps.joined(separator: "\u{0}")
    }

    /// The steps of ``joinSubscripts(_:)``'s text (a plain key is one step).
    static func splitSubscripts(_ text: String) -> [String] {
        guard text.hasPrefix("\u{2}") || text.hasPrefix("\u{1}") else { return [text] }
        return text.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
    }

    static func joinMapKey(_ path: String, _ key: String?) -> String {
        key.map { path + "\u{0}" + $0 } ?? path
    }
}

/// `SORT(age DESC, name ASC)`, `DISTINCT(city)` or `LIMIT(10)` after a
/// predicate; applied in the order written, each to what the previous left.
enum QuerySuffix: Sendable {
    case sort([SortDescriptor], position: Int)
    case distinct([String], position: Int)
    case limit(Int)
}

package enum ComparisonOperator: String, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    /// A regular expression that must match the whole string (NSPredicate's MATCHES).
    case matches = "MATCHES"
    case `in` = "IN"
    case between = "BETWEEN"
    /// Full-text search of a property with a full-text index.
    case text = "TEXT"
    /// Inside a geospatial shape (``GeoBox``, ``GeoPolygon``, ``GeoCircle``).
    case geoWithin = "GEOWITHIN"

    /// `<`, `<=`, `>` or `>=`.
    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }

    /// The operator with its operands swapped (`5 < age` is `age > 5`).
    var mirrored: ComparisonOperator? {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return nil
        }
    }

    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: return true
        default: return false
        }
    }
}

/// `[c]`, `[d]`, `[cd]` after an operator.
struct StringOptions: OptionSet, Sendable {
    let rawValue: UInt8
    static let caseInsensitive = StringOptions(rawValue: 1)
    static let diacriticInsensitive = StringOptions(rawValue: 2)
}
