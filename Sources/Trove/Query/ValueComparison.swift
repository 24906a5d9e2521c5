import Foundation

/// How two stored values compare in a query: numbers across types, strings
/// with optional case and diacritic folding, nil equal only to nil.
package enum ValueComparison {
    /// The smallest (or largest) of `values` as queries order them, nil
    /// skipped; nil when there is none. Values that cannot be ordered against
    /// the best so far (another kind) are passed over.
    package static func extreme<S: Sequence>(_ values: S, largest: Bool) -> StoredValue? where S.Element == StoredValue {
        let keep: ComparisonResult = largest ? .orderedDescending : .orderedAscending
        var best: StoredValue?
        for value in values where value != .null {
            if let current = best, order(value, current) != keep { continue }
            best = value
        }
        return best
    }

    /// The order a collection of values sorts in: nil before every value,
    /// values of different kinds (mixed values) by kind as realm-core orders
    /// them — Booleans, numbers, strings, data, dates, object ids, UUIDs,
    /// links — and NaN as equal to everything.
    package static func sortOrder(_ a: StoredValue, _ b: StoredValue) -> ComparisonResult {
        if let order = order(a, b) { return order }
        if a.isNull || b.isNull { return SortKey.nullOrder(a, b) }
        let (x, y) = (kindRank(a), kindRank(b))
        return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
    }

    private static func kindRank(_ value: StoredValue) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int, .float, .double, .decimal, .decimal128: return 2
        case .string: return 3
        case .data: return 4
        case .date: return 5
        case .objectId: return 6
        case .uuid: return 7
        default: return 8
        }
    }

    static func test(_ actual: StoredValue, _ op: ComparisonOperator, _ expected: StoredValue, _ options: StringOptions) -> Bool {
        switch op {
        case .equal: return order(actual, expected, options) == .orderedSame
        case .notEqual: return order(actual, expected, options) != .orderedSame
        case .less: return order(actual, expected, options) == .orderedAscending
        case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(order(actual, expected, options))
        case .greater: return order(actual, expected, options) == .orderedDescending
        case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(order(actual, expected, options))
        case .beginsWith, .endsWith, .contains, .like, .matches:
            return stringTest(actual, op, expected, options)
        case .in, .between, .text, .geoWithin: return false  // bound to lists, indexes and shapes, never tested here
        }
    }

    /// The order of two values; nil when they cannot be ordered (different
    /// kinds, or nil against a value).
    static func order(_ a: StoredValue, _ b: StoredValue, _ options: StringOptions = []) -> ComparisonResult? {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _), (_, .null): return nil
        case (.int(let x), .int(let y)): return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.string(let x), .string(let y)):
            // Code point (UTF-8 byte) order, the order of the index, without options.
            if options.isEmpty { return bytes(x, y) }
            let fx = fold(x, options), fy = fold(y, options)
            return fx < fy ? .orderedAscending : (fx == fy ? .orderedSame : .orderedDescending)
        case (.date(let x), .date(let y)): return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.bool(let x), .bool(let y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        // (Only mixed values meet here: a Boolean is not a number.)
        case (.bool, _), (_, .bool): return nil
        // Collections in mixed values are equal when their elements are, and have no order.
        case (.list(let x), .list(let y)):
            return x.count == y.count && zip(x, y).allSatisfy({ order($0, $1) == .orderedSame }) ? .orderedSame : nil
        case (.dictionary(let x), .dictionary(let y)):
            let equal =
                x.count == y.count && x.allSatisfy { key, value in y[key].map { order(value, $0) == .orderedSame } ?? false }
            return equal ? .orderedSame : nil
        case (.list, _), (_, .list), (.dictionary, _), (_, .dictionary): return nil
        case (.uuid(let x), .uuid(let y)): return bytes(x.uuidString, y.uuidString)
        case (.data(let x), .data(let y)):
            return x.lexicographicallyPrecedes(y) ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.decimal(let x), .decimal(let y)): return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.objectId(let x), .objectId(let y)): return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        case (.object(let xType, let xKey), .object(let yType, let yKey)):
            if xType != yType { return xType < yType ? .orderedAscending : .orderedDescending }
            return xKey < yKey ? .orderedAscending : (xKey == yKey ? .orderedSame : .orderedDescending)
        case (.decimal128(let x), _), (_, .decimal128(let x)):
            // Exactly, in decimal: the other side converted to a Decimal128.
            let flipped: Bool
            if case .decimal128 = a { flipped = false } else { flipped = true }
            guard let y = (flipped ? a : b).decimal128Value else { return nil }
            let (l, r) = flipped ? (y, x) : (x, y)
            if l.isNaN || r.isNaN { return l.isNaN && r.isNaN ? .orderedSame : nil }
            return l < r ? .orderedAscending : (l == r ? .orderedSame : .orderedDescending)
        default:
            guard let x = a.numeric, let y = b.numeric else { return nil }
            if x.isNaN || y.isNaN { return x.isNaN && y.isNaN ? .orderedSame : nil }
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        }
    }

    private static func bytes(_ x: String, _ y: String) -> ComparisonResult {
        var x = x, y = y
        return x.withUTF8 { a in
            y.withUTF8 { b in
                let common = Swift.min(a.count, b.count)
                if common > 0, let base = a.baseAddress, let other = b.baseAddress {
                    let order = memcmp(base, other, common)
                    if order != 0 { return order < 0 ? .orderedAscending : .orderedDescending }
                }
                return a.count == b.count ? .orderedSame : (a.count < b.count ? .orderedAscending : .orderedDescending)
            }
        }
    }

    /// Case and diacritic folding over all of Unicode.
    static func fold(_ text: String, _ options: StringOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return text.folding(options: folding, locale: nil)
    }

    private static func stringTest(
        _ actual: StoredValue, _ op: ComparisonOperator, _ expected: StoredValue, _ options: StringOptions
    )
        -> Bool
    {
        switch (actual, expected) {
        case (.string(let value), .string(let pattern)):
            return test(value, op, FoldedPattern(pattern, op, options), options)
        case (.data(let value), .data(let pattern)):
            switch op {
            case .beginsWith: return value.starts(with: pattern)
            case .endsWith: return value.count >= pattern.count && value.suffix(pattern.count).elementsEqual(pattern)
            case .contains: return pattern.isEmpty || value.range(of: pattern) != nil
            default: return false
            }
        default: return false
        }
    }

    /// A string constant folded for a comparison's options once, for every
    /// row of a scan.
    struct FoldedPattern {
        let pattern: String
        /// The whole constant folded (itself without options).
        let text: String
        /// For LIKE: each Character folded alone.
        let characters: [String]

        init(_ pattern: String, _ op: ComparisonOperator, _ options: StringOptions) {
            self.pattern = pattern
            text = options.isEmpty ? pattern : ValueComparison.fold(pattern, options)
            characters = op == .like && !options.isEmpty ? pattern.map { ValueComparison.fold(String($0), options) } : []
        }
    }

    /// `test(.string(value), op, .string(pattern), options)` for a string
    /// operator, `==` or `!=`, with the pattern folded beforehand.
    static func test(_ value: String, _ op: ComparisonOperator, _ pattern: FoldedPattern, _ options: StringOptions) -> Bool {
        let p = pattern.text
        var v: String { options.isEmpty ? value : fold(value, options) }
        switch op {
        // (Under options, == and != compare the folded strings, as ``order(_:_:_:)`` does.)
        case .equal: return options.isEmpty ? bytes(value, p) == .orderedSame : v == p
        case .notEqual: return options.isEmpty ? bytes(value, p) != .orderedSame : v != p
        case .beginsWith: return v.hasPrefix(p)
        case .endsWith: return v.hasSuffix(p)
        // Through NSString: Foundation's `String.contains` converts indices to
        // UTF-16 and traps ("String index is out of bounds") on some texts.
        case .contains: return p.isEmpty || NSString(string: v).range(of: p).location != NSNotFound
        case .like:
            // Character by character, each folded alone: `?` is one character
            // of the stored string even where folding lengthens it (ß is "ss").
            if options.isEmpty { return like(Array(value), Array(pattern.pattern), anyRun: "*", anyOne: "?") }
            return like(value.map { fold(String($0), options) }, pattern.characters, anyRun: "*", anyOne: "?")
        case .matches:
            // [d] folds accents in the text and the expression; [c] is the expression's own option.
            let diacritics: StringOptions = options.intersection(.diacriticInsensitive)
            let text = diacritics.isEmpty ? value : fold(value, diacritics)
            let expression = diacritics.isEmpty ? pattern.pattern : fold(pattern.pattern, diacritics)
            return regex(expression, options)?.matches(text) ?? false
        default: return false
        }
    }

    /// `*` matches any run, `?` one character; a `*` or `?` in the pattern is
    /// always a wildcard, even where the text holds the same character.
    static func like<C: Equatable>(_ text: [C], _ pattern: [C], anyRun: C, anyOne: C) -> Bool {
        var t = 0
        var p = 0
        var star = -1
        var mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == anyRun {
                star = p
                mark = t
                p += 1
            } else if p < pattern.count, pattern[p] == anyOne || pattern[p] == text[t] {
                t += 1
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == anyRun { p += 1 }
        return p == pattern.count
    }

    /// The expression of a MATCHES comparison; `[c]` makes it case-insensitive.
    static func regex(_ pattern: String, _ options: StringOptions) -> WholeMatchExpression? {
        try? WholeMatchExpression(pattern, ignoringCase: options.contains(.caseInsensitive))
    }
}
