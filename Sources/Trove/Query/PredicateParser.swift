import Foundation

/// Parses Realm / NSPredicate query strings:
///
/// ```
/// age >= 18 AND (name BEGINSWITH[c] 'a' OR city == %@)
/// date == %@        id = 42        tag IN {'a', 'b'}     score BETWEEN {1, 10}
/// ```
///
/// Every failure is a `TroveError.Kind.invalidQuery` with the 0-based
/// position and the token at fault; no input makes it crash.
struct PredicateParser {
    private let text: String
    private let tokens: [Token]
    private var index = 0
    private var nextArgument = 0
    private var highestPositional = -1

    /// A parsed predicate with its arguments still to fill in; cacheable per text.
    struct Template {
        let text: String
        let expression: QueryExpression
        let argumentCount: Int
        var suffixes: [QuerySuffix] = []
    }

    static func parse(_ text: String, arguments: [Any?]) throws -> QueryExpression {
        try parseTemplate(text).substituting(arguments)
    }

    static func parseTemplate(_ text: String) throws -> Template {
        var parser = try PredicateParser(text: text)
        let expression = try parser.parseOr()
        var suffixes: [QuerySuffix] = []
        while let suffix = try parser.parseSuffix() { suffixes.append(suffix) }
        if let extra = parser.peek {
            throw parser.error("unexpected \(extra.describe) after a complete predicate", at: extra)
        }
        return Template(
            text: text, expression: expression, argumentCount: Swift.max(parser.nextArgument, parser.highestPositional + 1),
            suffixes: suffixes)
    }

    private init(text: String) throws {
        self.text = text
        tokens = try Tokenizer.tokenize(text)
    }

    // MARK: Grammar

    /// Parentheses and NOTs nest at most this deep, so no input can exhaust the stack.
    static let maximumDepth = 200
    private var depth = 0

    private mutating func parseOr() throws -> QueryExpression {
        var terms = [try parseAnd()]
        while let token = peek, token.isKeyword("OR") || token.kind == .symbol("||") {
            index += 1
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> QueryExpression {
        var terms = [try parseNot()]
        while let token = peek, token.isKeyword("AND") || token.kind == .symbol("&&") {
            index += 1
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func enter(_ token: Token) throws {
        depth += 1
        if depth > PredicateParser.maximumDepth {
            throw error("the predicate nests deeper than \(PredicateParser.maximumDepth) levels", at: token)
        }
    }

    private mutating func parseNot() throws -> QueryExpression {
        if let token = peek, token.isKeyword("NOT") || token.kind == .symbol("!") {
            index += 1
            try enter(token)
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> QueryExpression {
        guard let token = peek else { throw endError("a comparison") }
        if token.kind == .symbol("(") {
            index += 1
            try enter(token)
            defer { depth -= 1 }
            let inner = try parseOr()
            guard let close = peek, close.kind == .symbol(")") else {
                throw peek.map {
                    error("expected ')' to close the '(' at position \(token.position), found \($0.describe)", at: $0)
                }
                    ?? endError("')' to close the '(' at position \(token.position)")
            }
            index += 1
            return inner
        }
        if token.isKeyword("TRUEPREDICATE") {
            index += 1
            return .constant(true)
        }
        if token.isKeyword("FALSEPREDICATE") {
            index += 1
            return .constant(false)
        }
        if token.isKeyword("SUBQUERY"), index + 1 < tokens.count, tokens[index + 1].kind == .symbol("(") {
            return try parseSubquery()
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws -> QueryExpression {
        let start = peek!.position
        var quantifier = QueryExpression.Quantifier.any
        for (word, meaning) in [("ANY", QueryExpression.Quantifier.any), ("SOME", .any), ("ALL", .all), ("NONE", .none)]
        where peek?.isKeyword(word) == true && index + 1 < tokens.count {
            if case .identifier = tokens[index + 1].kind {
                quantifier = meaning
                index += 1
                break
            }
        }
        let lhs = try parseOperand()
        guard let opToken = peek else { throw endError("an operator such as ==, <, BEGINSWITH or IN") }
        guard let op = opToken.comparisonOperator else {
            throw error("expected an operator such as ==, <, BEGINSWITH, MATCHES or IN, found \(opToken.describe)", at: opToken)
        }
        index += 1
        var options: StringOptions = []
        if let modifier = peek, case .modifier(let flags) = modifier.kind {
            index += 1
            for flag in flags.lowercased() {
                switch flag {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                default: throw error("unknown modifier [\(flags)]; use [c], [d] or [cd]", at: modifier)
                }
            }
        }
        let rhs = try parseOperand()
        return .comparison(.init(lhs: lhs, op: op, rhs: rhs, options: options, position: start, quantifier: quantifier))
    }

    /// `SUBQUERY(tasks, $t, $t.done == false AND $t.priority > 2).@count > 0`
    private mutating func parseSubquery() throws -> QueryExpression {
        let start = tokens[index]
        index += 2
        try enter(start)
        defer { depth -= 1 }
        guard let collection = peek, case .identifier(let collectionName) = collection.kind else {
            throw peek.map { error("expected the collection SUBQUERY filters, found \($0.describe)", at: $0) }
                ?? endError("the collection SUBQUERY filters")
        }
        index += 1
        try expect(",", after: "the collection in SUBQUERY")
        guard let variable = peek, case .identifier(let variableName) = variable.kind, variableName.hasPrefix("$"),
            !variableName.contains(".")
        else {
            throw peek.map { error("expected a variable such as $t in SUBQUERY, found \($0.describe)", at: $0) }
                ?? endError("a variable such as $t")
        }
        index += 1
        try expect(",", after: "the variable in SUBQUERY")
        let predicate = try parseOr()
        try expect(")", after: "the predicate in SUBQUERY")
        guard let count = peek, count.isKeyword(".@COUNT") else {
            throw peek.map { error("expected .@count after SUBQUERY(...), found \($0.describe)", at: $0) }
                ?? endError(".@count after SUBQUERY(...)")
        }
        index += 1
        guard let opToken = peek, let op = opToken.comparisonOperator else {
            throw peek.map { error("expected a comparison such as > after SUBQUERY(...).@count, found \($0.describe)", at: $0) }
                ?? endError("a comparison such as > after SUBQUERY(...).@count")
        }
        index += 1
        let rhs = try parseOperand()
        return .subquery(
            .init(
                collection: collectionName, variable: variableName, predicate: predicate, op: op, count: rhs,
                position: start.position))
    }

    /// `SORT(...)`, `DISTINCT(...)` or `LIMIT(n)` after the predicate; nil when none follows.
    private mutating func parseSuffix() throws -> QuerySuffix? {
        guard let word = peek, index + 1 < tokens.count, tokens[index + 1].kind == .symbol("("),
            ["SORT", "DISTINCT", "LIMIT"].contains(where: word.isKeyword)
        else { return nil }
        index += 2
        if word.isKeyword("LIMIT") {
            guard let number = peek, case .number(let literal) = number.kind, let limit = Int(literal), limit >= 0 else {
                throw peek.map { error("LIMIT needs a whole number of at least 0, found \($0.describe)", at: $0) }
                    ?? endError("a number in LIMIT(...)")
            }
            index += 1
            try expect(")", after: "the number in LIMIT")
            return .limit(limit)
        }
        var descriptors: [SortDescriptor] = []
        while true {
            guard let path = peek, case .identifier(let name) = path.kind else {
                throw peek.map { error("expected a property name in \(word.describe), found \($0.describe)", at: $0) }
                    ?? endError("a property name in \(word.describe)")
            }
            index += 1
            var ascending = true
            if word.isKeyword("SORT"), let direction = peek,
                ["ASC", "ASCENDING", "DESC", "DESCENDING"].contains(where: direction.isKeyword)
            {
                ascending = direction.isKeyword("ASC") || direction.isKeyword("ASCENDING")
                index += 1
            }
            descriptors.append(SortDescriptor(keyPath: name, ascending: ascending))
            guard let separator = peek else { throw endError("',' or ')' in \(word.describe)") }
            index += 1
            if separator.kind == .symbol(")") { break }
            guard separator.kind == .symbol(",") else {
                throw error("expected ',' or ')' in \(word.describe), found \(separator.describe)", at: separator)
            }
        }
        return word.isKeyword("SORT")
            ? .sort(descriptors, position: word.position) : .distinct(descriptors.map(\.keyPath), position: word.position)
    }

    /// One subscript, encoded for ``QueryExpression/joinSubscripts(_:)``: a
    /// quoted key, an index, `*` (every element), or `%@` / `%K` (an argument).
    private mutating func subscriptStep(_ inside: String, at token: Token) throws -> String {
        let text = inside.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, let quote = text.first, quote == "'" || quote == "\"", text.last == quote {
            return QueryExpression.SubscriptStep.key(String(text.dropFirst().dropLast())).encoded
        }
        if let position = Int(text), position >= 0 { return QueryExpression.SubscriptStep.index(position).encoded }
        if text == "*" { return QueryExpression.SubscriptStep.any.encoded }
        if text == "%@" || text.uppercased() == "%K" {
            defer { nextArgument += 1 }
            let mark = text == "%@" ? QueryExpression.keyArgumentMark : QueryExpression.keyNameArgumentMark
            return mark + String(nextArgument)
        }
        throw error("a subscript is a quoted key, an index, * or an argument (%@, %K), not [\(inside)]", at: token)
    }

    private mutating func expect(_ symbol: String, after what: String) throws {
        guard let token = peek else { throw endError("'\(symbol)' after \(what)") }
        guard token.kind == .symbol(symbol) else {
            throw error("expected '\(symbol)' after \(what), found \(token.describe)", at: token)
        }
        index += 1
    }

    private mutating func parseOperand() throws -> QueryExpression.Operand {
        guard let token = peek else { throw endError("a property name or a value") }
        index += 1
        switch token.kind {
        case .identifier(let name):
            switch name.uppercased() {
            case "AND", "OR", "NOT":
                throw error("expected a property name or a value, found the keyword \(token.describe)", at: token)
            case "NIL", "NULL": return .value(.null)
            case "TRUE", "YES": return .value(.bool(true))
            case "FALSE", "NO": return .value(.bool(false))
            case let typed where (typed == "OID" || typed == "UUID") && peek?.kind == .symbol("("):
                return .value(try typedLiteral(typed == "OID", after: token))
            default:
                // Subscripts: `prices['eur']`, `prices[%@]` (the key an argument),
                // and into a mixed value's nested collections `anyCol[0]['k'][*]`.
                // The tokenizer reads each pair of brackets as a modifier.
                var steps: [String] = []
                while let next = peek, case .modifier(let inside) = next.kind {
                    index += 1
                    steps.append(try subscriptStep(inside, at: next))
                }
                if steps.isEmpty { return .property(name, position: token.position) }
                return .property(
                    QueryExpression.joinMapKey(name, QueryExpression.joinSubscripts(steps)), position: token.position)
            }
        case .string(let value): return .value(.string(value))
        case .number(let literal):
            if let int = Int64(literal) { return .value(.int(int)) }
            if let double = Double(literal) { return .value(.double(double)) }
            throw error("\(literal) is not a number", at: token)
        case .argument:
            defer { nextArgument += 1 }
            return .argument(nextArgument, position: token.position)
        case .keyArgument:
            defer { nextArgument += 1 }
            return .keyArgument(nextArgument, position: token.position)
        case .positional(let number):
            highestPositional = Swift.max(highestPositional, number)
            return .argument(number, position: token.position)
        case .symbol("{"):
            var elements: [QueryExpression.Operand] = []
            if let close = peek, close.kind == .symbol("}") {
                index += 1
                return .list([])
            }
            while true {
                if let nested = peek, nested.kind == .symbol("{") {
                    throw error("lists cannot hold lists", at: nested)
                }
                let element = try parseOperand()
                switch element {
                case .value, .argument: elements.append(element)
                default: throw error("a list may only hold values and %@ arguments", at: tokens[index - 1])
                }
                guard let separator = peek else { throw endError("',' or '}'") }
                index += 1
                if separator.kind == .symbol("}") { break }
                guard separator.kind == .symbol(",") else {
                    throw error("expected ',' or '}' in a list, found \(separator.describe)", at: separator)
                }
            }
            let values = elements.compactMap { element -> StoredValue? in
                if case .value(let value) = element { return value }
                return nil
            }
            return values.count == elements.count ? .list(values) : .elements(elements)
        default:
            throw error("expected a property name or a value, found \(token.describe)", at: token)
        }
    }

    /// Realm's typed literals, `oid(507f1f77bcf86cd799439011)` and
    /// `uuid(137decc8-b300-4954-a233-f89909f4fd89)`: the raw text between the
    /// parentheses, whatever tokens it made.
    private mutating func typedLiteral(_ isObjectId: Bool, after name: Token) throws -> StoredValue {
        let characters = Array(text)
        let open = tokens[index].position
        guard let close = characters[(open + 1)...].firstIndex(of: ")") else {
            throw error("expected ')' to end the \(isObjectId ? "oid" : "uuid") literal", at: tokens[index])
        }
        while let next = peek, next.position <= close { index += 1 }
        let raw = joined(characters[(open + 1)..<close]).trimmingCharacters(in: .whitespaces)
        if isObjectId {
            guard let value = try? ObjectId(string: raw) else {
                throw error("oid(\(raw)) is not an ObjectId: it needs 24 hexadecimal digits", at: name)
            }
            return .objectId(value)
        }
        guard let value = UUID(uuidString: raw) else { throw error("uuid(\(raw)) is not a UUID", at: name) }
        return .uuid(value)
    }

    // MARK: Helpers

    private var peek: Token? { index < tokens.count ? tokens[index] : nil }

    private func error(_ message: String, at token: Token) -> TroveError {
        TroveError(.invalidQuery, "\(message) at position \(token.position) in \"\(text)\"", position: token.position)
    }

    private func endError(_ expected: String) -> TroveError {
        TroveError(.invalidQuery, "expected \(expected) at the end of \"\(text)\"", position: text.count)
    }

}

struct Token {
    enum Kind: Equatable {
        case identifier(String)
        case string(String)
        case number(String)
        case symbol(String)
        case modifier(String)
        case argument
        case keyArgument
        case positional(Int)
    }

    let kind: Kind
    let position: Int

    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = kind { return name.uppercased() == word }
        return false
    }

    var comparisonOperator: ComparisonOperator? {
        switch kind {
        case .symbol("=="), .symbol("="): return .equal
        case .symbol("!="), .symbol("<>"): return .notEqual
        case .symbol("<"): return .less
        case .symbol("<="), .symbol("=<"): return .lessOrEqual
        case .symbol(">"): return .greater
        case .symbol(">="), .symbol("=>"): return .greaterOrEqual
        case .identifier(let word):
            switch word.uppercased() {
            case "BEGINSWITH": return .beginsWith
            case "ENDSWITH": return .endsWith
            case "CONTAINS": return .contains
            case "LIKE": return .like
            case "MATCHES": return .matches
            case "IN": return .in
            case "BETWEEN": return .between
            case "TEXT": return .text
            case "GEOWITHIN": return .geoWithin
            default: return nil
            }
        default: return nil
        }
    }

    var describe: String {
        switch kind {
        case .identifier(let name): return "'\(name)'"
        case .string(let value): return "the string '\(value)'"
        case .number(let value): return "the number \(value)"
        case .symbol(let symbol): return "'\(symbol)'"
        case .modifier(let flags): return "'[\(flags)]'"
        case .argument: return "'%@'"
        case .keyArgument: return "'%K'"
        case .positional(let number): return "'$\(number)'"
        }
    }
}

enum Tokenizer {
    static func tokenize(_ text: String) throws -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var i = 0
        func fail(_ message: String, _ position: Int) -> TroveError {
            TroveError(.invalidQuery, "\(message) at position \(position) in \"\(text)\"", position: position)
        }
        while i < characters.count {
            let c = characters[i]
            let start = i
            if c.isWhitespace {
                i += 1
                continue
            }
            let next: Character? = i + 1 < characters.count ? characters[i + 1] : nil
            // `$t` names a SUBQUERY variable; `.@count` follows `SUBQUERY(...)`.
            if c.isLetter || c == "_" || c == "@" || (c == "$" && next?.isLetter == true) || (c == "." && next == "@") {
                i += 1
                while i < characters.count, characters[i].isLetter || characters[i].isNumber || "_.@$".contains(characters[i]) {
                    i += 1
                }
                tokens.append(Token(kind: .identifier(joined(characters[start..<i])), position: start))
                continue
            }
            if c.isNumber || ((c == "-" || c == "+" || c == ".") && i + 1 < characters.count && characters[i + 1].isNumber) {
                i += 1
                while i < characters.count,
                    characters[i].isNumber || characters[i] == "." || characters[i] == "e" || characters[i] == "E"
                        || ((characters[i] == "-" || characters[i] == "+")
                            && (characters[i - 1] == "e" || characters[i - 1] == "E"))
                {
                    i += 1
                }
                tokens.append(Token(kind: .number(joined(characters[start..<i])), position: start))
                continue
            }
            if c == "'" || c == "\"" {
                var value = ""
                i += 1
                var closed = false
                while i < characters.count {
                    let d = characters[i]
                    if d == "\\", i + 1 < characters.count {
                        let escaped = characters[i + 1]
                        switch escaped {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        default: value.append(escaped)
                        }
                        i += 2
                        continue
                    }
                    if d == c {
                        closed = true
                        i += 1
                        break
                    }
                    value.append(d)
                    i += 1
                }
                guard closed else { throw fail("unterminated string starting with \(c)", start) }
                tokens.append(Token(kind: .string(value), position: start))
                continue
            }
            if c == "%" {
                guard i + 1 < characters.count else { throw fail("'%' must be followed by @ or K", start) }
                switch characters[i + 1] {
                case "@": tokens.append(Token(kind: .argument, position: start))
                case "K": tokens.append(Token(kind: .keyArgument, position: start))
                default:
                    // NSPredicate's printf-style number placeholders (%d, %i, %ld, %lld, %u, %f, %lf, %g)
                    // stand for a value argument, as %@ does.
                    var end = i + 1
                    while end < characters.count, characters[end] == "l" || characters[end] == "q" { end += 1 }
                    guard end < characters.count, "diufgeDUIFGE".contains(characters[end]) else {
                        throw fail(
                            "'%\(characters[i + 1])' is not a placeholder; use %@ for a value or %K for a property name",
                            start)
                    }
                    tokens.append(Token(kind: .argument, position: start))
                    i = end + 1
                    continue
                }
                i += 2
                continue
            }
            if c == "$" {
                i += 1
                while i < characters.count, characters[i].isNumber { i += 1 }
                guard let number = Int(joined(characters[(start + 1)..<i])) else {
                    throw fail("'$' must be followed by an argument number, like $0", start)
                }
                tokens.append(Token(kind: .positional(number), position: start))
                continue
            }
            if c == "[" {
                // A string-operator modifier such as [c], [d], [cd].
                guard let close = characters[i...].firstIndex(of: "]") else { throw fail("unclosed '['", start) }
                tokens.append(Token(kind: .modifier(joined(characters[(i + 1)..<close])), position: start))
                i = close + 1
                continue
            }
            let two = i + 1 < characters.count ? joined(characters[i...(i + 1)]) : ""
            if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                tokens.append(Token(kind: .symbol(two), position: start))
                i += 2
                continue
            }
            if "=<>!(){},".contains(c) {
                tokens.append(Token(kind: .symbol(String(c)), position: start))
                i += 1
                continue
            }
            throw fail("unexpected character '\(c)'", start)
        }
        return tokens
    }
}

extension PredicateParser.Template {
    /// The expression with every `%@`, `$n` and `%K` replaced by its argument.
    func substituting(_ arguments: [Any?]) throws -> QueryExpression {
        if argumentCount != arguments.count {
            throw TroveError(
                .invalidQuery,
                "the query \"\(text)\" uses \(argumentCount) argument(s) but \(arguments.count) were given",
                position: text.count)
        }
        return argumentCount == 0 ? expression : try substitute(expression, arguments)
    }

    private func substitute(_ expression: QueryExpression, _ arguments: [Any?]) throws -> QueryExpression {
        switch expression {
        case .constant: return expression
        case .and(let terms): return .and(try terms.map { try substitute($0, arguments) })
        case .or(let terms): return .or(try terms.map { try substitute($0, arguments) })
        case .not(let inner): return .not(try substitute(inner, arguments))
        case .comparison(var comparison):
            comparison.lhs = try operand(comparison.lhs, arguments)
            comparison.rhs = try operand(comparison.rhs, arguments)
            return .comparison(comparison)
        case .subquery(var subquery):
            subquery.predicate = try substitute(subquery.predicate, arguments)
            subquery.count = try operand(subquery.count, arguments)
            return .subquery(subquery)
        }
    }

    private func operand(_ operand: QueryExpression.Operand, _ arguments: [Any?]) throws -> QueryExpression.Operand {
        switch operand {
        case .argument(let index, let position):
            return try value(of: arguments[index], position: position)
        case .keyArgument(let index, let position):
            guard let name = arguments[index] as? String else {
                throw failure("%K needs a property name (a String) as its argument", position)
            }
            return .property(name, position: position)
        case .property(let name, let position):
            // Subscripts given as arguments (`prices[%@]`, `anyCol[%@][%K]`).
            let (path, key) = QueryExpression.splitMapKey(name)
            guard let key, key.contains("\u{1}") else { return operand }
            let steps = try QueryExpression.splitSubscripts(key).map { step -> String in
                for (mark, isName) in [(QueryExpression.keyArgumentMark, false), (QueryExpression.keyNameArgumentMark, true)]
                where step.hasPrefix(mark) {
                    guard let index = Int(step.dropFirst(mark.count)) else { break }
                    switch arguments[index] {
                    case let text as String:
                        if isName, text == "#any" || text == "*" { return QueryExpression.SubscriptStep.any.encoded }
                        return QueryExpression.SubscriptStep.key(text).encoded
                    case let position as Int where !isName && position >= 0:
                        return QueryExpression.SubscriptStep.index(position).encoded
                    default:
                        throw failure(
                            isName
                                ? "a subscript [%K] needs a key (a String; \"#any\" for every element) as its argument"
                                : "a subscript [%@] needs a string key or a non-negative index as its argument",
                            position)
                    }
                }
                return step
            }
            return .property(QueryExpression.joinMapKey(path, QueryExpression.joinSubscripts(steps)), position: position)
        case .elements(let elements):
            return .list(
                try elements.map { element in
                    guard case .value(let value) = try self.operand(element, arguments) else {
                        throw failure("a list element must be a single value, not a list", 0)
                    }
                    return value
                })
        default:
            return operand
        }
    }

    private func failure(_ message: String, _ position: Int) -> TroveError {
        TroveError(.invalidQuery, "\(message) at position \(position) in \"\(text)\"", position: position)
    }

    private func value(of argument: Any?, position: Int) throws -> QueryExpression.Operand {
        // The common plain values first: a cast to an existential (`any GeoShape`) looks the
        // conformance up in the runtime's tables, ~7k instructions for a String argument.
        if let argument, let plain = StoredValue(plain: argument) { return .value(plain) }
        if let shape = argument as? any GeoShape { return .shape(shape) }
        if let stored = try storedValue(of: argument, position: position) { return .value(stored) }
        if let list = argument as? [Any?] {
            return .list(
                try list.map { element in
                    guard let stored = try storedValue(of: element, position: position) else {
                        throw failure("the argument list holds a \(type(of: element!)), which Trove cannot compare", position)
                    }
                    return stored
                })
        }
        if let collection = argument as? any Collection {
            return try value(of: Array(collection.map { $0 as Any? }), position: position)
        }
        throw failure("the argument is a \(type(of: argument!)), which Trove cannot compare", position)
    }

    /// An argument as a query value. An object is a link to it, naming its
    /// type, so that it compares with a link and with a mixed value holding one.
    /// An object not stored yet is linked from nowhere, as Realm finds: it
    /// stands for a key no object has, so `==` matches nothing and `!=` every link.
    private func storedValue(of argument: Any?, position: Int) throws -> StoredValue? {
        if let argument, let plain = StoredValue(plain: argument) { return plain }
        guard let object = argument as? Object else { return StoredValue(any: argument) }
        guard object._database != nil, let table = object._table else {
            return .object(typeName: object.storedTypeName, key: Self.unstoredObjectKey)
        }
        return .object(typeName: table.name, key: object._objectKey)
    }

    /// The key an argument object not stored yet stands for: one no object has.
    static let unstoredObjectKey = UInt64.max
}

/// The characters as a String, appended one by one: String's initializer
/// from a sequence of Characters is generic, and looked up its type
/// metadata by name on every call (~30k instructions a token).
private func joined(_ characters: ArraySlice<Character>) -> String {
    var text = ""
    for character in characters { text.append(character) }
    return text
}
