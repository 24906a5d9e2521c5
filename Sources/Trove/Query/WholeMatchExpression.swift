/// The regular expression of a `MATCHES` comparison, matched against the
/// whole string in time linear in its length: the expression compiles to an
/// automaton whose states are all followed at once (Thompson's construction),
/// so no text makes it backtrack — `(.*.*)*#` costs the same per character as
/// `.*#`. There is no step limit to hit, so no match is ever "given up".
///
/// It reads Characters, as Swift's `Regex` does: `.` is one Character, `é` in
/// the expression matches `é` however it is composed. Syntax: literals and
/// `\`-escapes of `\ . * + ? ( ) [ ] { } | ^ $ /`, `\t \n \r`, `.`, classes
/// `[abc] [a-z] [^…]`, `\d \D \w \W \s \S` (inside classes too), groups `(…)`
/// and `(?:…)`, `|`, `* + ?` and `{n} {n,} {n,m}` (with lazy `?`
/// forms, the same for a whole match), and `^ $`. Backreferences, lookaround
/// and inline options need backtracking and are refused with the position.
final class WholeMatchExpression: Sendable {
    /// The longest expression accepted, in Characters.
    static let maximumLength = 1_000
    /// The most automaton states an expression may compile to (counted
    /// repetitions copy their operand).
    static let maximumStates = 20_000

    struct PatternError: Error {
        var message: String
        var offset: Int
    }

    private enum Instruction: Sendable {
        case character(Character)
        case any
        case set(CharacterClass)
        case split(Int, Int)
        case jump(Int)
        case assertStart
        case assertEnd
        case match
    }

    private let program: [Instruction]
    private let ignoresCase: Bool

    init(_ pattern: String, ignoringCase: Bool) throws(PatternError) {
        let characters = Array(pattern)
        guard characters.count <= WholeMatchExpression.maximumLength else {
            throw PatternError(
                message:
                    "the expression is \(characters.count) characters long; MATCHES takes at most \(WholeMatchExpression.maximumLength)",
                offset: 0)
        }
        var parser = Parser(characters: characters, ignoresCase: ignoringCase)
        let tree = try parser.parseAlternation()
        if parser.index < characters.count {
            throw PatternError(message: "unbalanced ')'", offset: parser.index)
        }
        var compiler = Compiler()
        try compiler.emit(tree)
        compiler.program.append(.match)
        program = compiler.program
        ignoresCase = ignoringCase
    }

    /// Whether the expression matches all of `text`.
    func matches(_ text: String) -> Bool {
        var current = StateSet(capacity: program.count)
        var next = StateSet(capacity: program.count)
        var stack: [Int] = []
        let isEmpty = text.isEmpty
        addClosure(0, to: &current, atStart: true, atEnd: isEmpty, stack: &stack)
        var index = text.startIndex
        while index < text.endIndex {
            if current.isEmpty { return false }
            let character = text[index]
            index = text.index(after: index)
            let folded = ignoresCase ? CharacterClass.fold(character) : character
            next.removeAll()
            let atEnd = index == text.endIndex
            for position in current.members {
                let advances: Bool
                switch program[position] {
                case .character(let expected): advances = expected == folded
                case .any: advances = character != "\n" && character != "\r" && character != "\r\n"
                case .set(let set): advances = set.contains(character, ignoringCase: ignoresCase)
                default: advances = false
                }
                if advances { addClosure(position + 1, to: &next, atStart: false, atEnd: atEnd, stack: &stack) }
            }
            swap(&current, &next)
        }
        return current.members.contains { if case .match = program[$0] { true } else { false } }
    }

    /// Adds `start` and every state reachable from it without reading a
    /// Character; `^` and `$` pass only at the start and the end of the text.
    private func addClosure(_ start: Int, to set: inout StateSet, atStart: Bool, atEnd: Bool, stack: inout [Int]) {
        stack.append(start)
        while let position = stack.popLast() {
            guard set.insert(position) else { continue }
            switch program[position] {
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .jump(let target): stack.append(target)
            case .assertStart: if atStart { stack.append(position + 1) }
            case .assertEnd: if atEnd { stack.append(position + 1) }
            default: break
            }
        }
    }

    // MARK: Parsing

    private indirect enum Node {
        case empty
        case character(Character)
        case any
        case set(CharacterClass)
        case sequence([Node])
        case alternatives([Node])
        case repetition(Node, minimum: Int, maximum: Int?)
        case start
        case end
    }

    private struct Parser {
        let characters: [Character]
        let ignoresCase: Bool
        var index = 0

        init(characters: [Character], ignoresCase: Bool) {
            self.characters = characters
            self.ignoresCase = ignoresCase
        }

        var peek: Character? { index < characters.count ? characters[index] : nil }

        mutating func parseAlternation() throws(PatternError) -> Node {
            var branches = [try parseSequence()]
            while peek == "|" {
                index += 1
                branches.append(try parseSequence())
            }
            return branches.count == 1 ? branches[0] : .alternatives(branches)
        }

        mutating func parseSequence() throws(PatternError) -> Node {
            var items: [Node] = []
            while let character = peek, character != "|", character != ")" {
                let atom = try parseAtom()
                items.append(try parseQuantifiers(atom))
            }
            return items.isEmpty ? .empty : items.count == 1 ? items[0] : .sequence(items)
        }

        mutating func parseQuantifiers(_ atom: Node) throws(PatternError) -> Node {
            var node = atom
            while let character = peek {
                let start = index
                var bounds: (Int, Int?)
                switch character {
                case "*": bounds = (0, nil)
                case "+": bounds = (1, nil)
                case "?": bounds = (0, 1)
                case "{":
                    guard let counted = try parseCount() else { return node }
                    bounds = counted
                default: return node
                }
                if character != "{" { index += 1 }
                if case .start = node { throw PatternError(message: "nothing to repeat before it", offset: start) }
                if case .end = node { throw PatternError(message: "nothing to repeat before it", offset: start) }
                if peek == "?" {
                    index += 1  // lazy: the same set of whole matches
                } else if peek == "+" {
                    throw PatternError(
                        message: "possessive quantifiers need backtracking, which MATCHES does not do", offset: index)
                }
                node = .repetition(node, minimum: bounds.0, maximum: bounds.1)
            }
            return node
        }

        /// `{n}`, `{n,}` or `{n,m}`; nil (and nothing read) when `{` does not start one.
        mutating func parseCount() throws(PatternError) -> (Int, Int?)? {
            let start = index
            var position = index + 1
            func number() -> Int? {
                var digits = ""
                while position < characters.count, characters[position].wholeNumberValue != nil,
                    characters[position].isASCII
                {
                    digits.append(characters[position])
                    position += 1
                }
                return digits.isEmpty ? nil : Int(digits.prefix(6))
            }
            guard let low = number() else { return nil }
            var high: Int? = low
            if position < characters.count, characters[position] == "," {
                position += 1
                high = number()
            }
            guard position < characters.count, characters[position] == "}" else { return nil }
            index = position + 1
            if let high, high < low {
                throw PatternError(message: "{\(low),\(high)} has its bounds the wrong way round", offset: start)
            }
            if low > 1_000 || (high ?? 0) > 1_000 {
                throw PatternError(message: "a counted repetition may be at most 1000", offset: start)
            }
            return (low, high)
        }

        mutating func parseAtom() throws(PatternError) -> Node {
            let start = index
            let character = characters[index]
            index += 1
            switch character {
            case ".": return .any
            case "^": return .start
            case "$": return .end
            case "(":
                if peek == "?" {
                    if index + 1 < characters.count, characters[index + 1] == ":" {
                        index += 2
                    } else {
                        throw PatternError(
                            message:
                                "lookaround, named groups and inline options are not supported by MATCHES (use [c] for case)",
                            offset: start)
                    }
                }
                let inner = try parseAlternation()
                guard peek == ")" else { throw PatternError(message: "'(' is never closed", offset: start) }
                index += 1
                return inner
            case ")": throw PatternError(message: "unbalanced ')'", offset: start)
            case "[": return .set(try parseClass(start: start))
            case "*", "+", "?": throw PatternError(message: "'\(character)' has nothing to repeat", offset: start)
            case "{":
                index = start
                if try parseCount() != nil { throw PatternError(message: "a count has nothing to repeat", offset: start) }
                index = start + 1
                return literal("{")
            case "\\": return try parseEscape(start: start, inClass: false).node
            default: return literal(character)
            }
        }

        func literal(_ character: Character) -> Node {
            .character(ignoresCase ? CharacterClass.fold(character) : character)
        }

        /// An escape: a literal Character, or a class such as `\d`.
        mutating func parseEscape(start: Int, inClass: Bool) throws(PatternError) -> (node: Node, item: CharacterClass.Item) {
            guard let next = peek else { throw PatternError(message: "'\\' ends the expression", offset: start) }
            index += 1
            switch next {
            case "d", "D", "w", "W", "s", "S":
                let kind: CharacterClass.Builtin = next.lowercased() == "d" ? .digit : next.lowercased() == "w" ? .word : .space
                let item = CharacterClass.Item.builtin(kind, negated: next.isUppercase)
                return (.set(CharacterClass(items: [item], negated: false)), item)
            case "t": return (literal("\t"), .single("\t"))
            case "n": return (literal("\n"), .single("\n"))
            case "r": return (literal("\r"), .single("\r"))
            case "b", "B", "A", "Z", "z", "G":
                throw PatternError(message: "the assertion \\\(next) is not supported by MATCHES", offset: start)
            default:
                if next.isNumber {
                    throw PatternError(
                        message: "backreferences need backtracking, which MATCHES does not do", offset: start)
                }
                if next.isLetter {
                    throw PatternError(message: "\\\(next) is not an escape MATCHES knows", offset: start)
                }
                return (literal(next), .single(next))
            }
        }

        mutating func parseClass(start: Int) throws(PatternError) -> CharacterClass {
            var negated = false
            if peek == "^" {
                negated = true
                index += 1
            }
            var items: [CharacterClass.Item] = []
            var first = true
            while true {
                guard let character = peek else { throw PatternError(message: "'[' is never closed", offset: start) }
                if character == "]", !first {
                    index += 1
                    break
                }
                first = false
                let itemStart = index
                index += 1
                var item: CharacterClass.Item
                if character == "\\" {
                    item = try parseEscape(start: itemStart, inClass: true).item
                } else if character == "[" {
                    throw PatternError(message: "nested classes are not supported by MATCHES", offset: itemStart)
                } else {
                    item = .single(character)
                }
                // A range a-z (a '-' first or last is itself).
                if case .single(let low) = item, peek == "-", index + 1 < characters.count, characters[index + 1] != "]" {
                    index += 1
                    let highStart = index
                    var high = characters[index]
                    index += 1
                    if high == "\\" {
                        guard case .single(let escaped) = try parseEscape(start: highStart, inClass: true).item else {
                            throw PatternError(message: "a range cannot end in a class", offset: highStart)
                        }
                        high = escaped
                    }
                    guard low <= high else {
                        throw PatternError(message: "the range \(low)-\(high) is the wrong way round", offset: itemStart)
                    }
                    item = .range(low, high)
                }
                items.append(item)
            }
            return CharacterClass(items: items, negated: negated)
        }
    }

    // MARK: Compiling

    private struct Compiler {
        var program: [Instruction] = []

        mutating func emit(_ node: Node) throws(PatternError) {
            guard program.count < WholeMatchExpression.maximumStates else {
                throw PatternError(
                    message:
                        "the expression is too large (over \(WholeMatchExpression.maximumStates) states); shorten its counted repetitions",
                    offset: 0)
            }
            switch node {
            case .empty: break
            case .character(let character): program.append(.character(character))
            case .any: program.append(.any)
            case .set(let set): program.append(.set(set))
            case .start: program.append(.assertStart)
            case .end: program.append(.assertEnd)
            case .sequence(let items): for item in items { try emit(item) }
            case .alternatives(let branches):
                var jumps: [Int] = []
                for (offset, branch) in branches.enumerated() {
                    if offset < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let inner, let minimum, let maximum):
                for _ in 0..<minimum { try emit(inner) }
                if let maximum {
                    // Each optional copy may be skipped to the end.
                    var splits: [Int] = []
                    for _ in minimum..<maximum {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, 0))
                        try emit(inner)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    program.append(.split(loop + 1, 0))
                    try emit(inner)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}

/// A bracketed class or a `\d`-style class.
struct CharacterClass: Sendable {
    enum Builtin: Sendable { case digit, word, space }

    enum Item: Sendable {
        case single(Character)
        case range(Character, Character)
        case builtin(Builtin, negated: Bool)
    }

    var items: [Item]
    var negated: Bool

    func contains(_ character: Character, ignoringCase: Bool) -> Bool {
        var found = includes(character)
        if !found, ignoringCase {
            let lower = Character(character.lowercased())
            let upper = character.uppercased()
            found = includes(lower) || (upper.count == 1 && includes(Character(upper)))
        }
        return found != negated
    }

    private func includes(_ character: Character) -> Bool {
        items.contains { item in
            switch item {
            case .single(let single): single == character
            case .range(let low, let high): low <= character && character <= high
            case .builtin(let builtin, let negated): CharacterClass.test(builtin, character) != negated
            }
        }
    }

    static func test(_ builtin: Builtin, _ character: Character) -> Bool {
        switch builtin {
        case .digit: character.unicodeScalars.first?.properties.numericType == .decimal
        case .word:
            character.isLetter || character.isNumber || character == "_"
                || character.unicodeScalars.first?.properties.isAlphabetic == true
        case .space: character.isWhitespace
        }
    }

    /// The Character compared when case is ignored.
    static func fold(_ character: Character) -> Character {
        let lower = character.lowercased()
        return lower.count == 1 ? Character(lower) : character
    }
}

/// A set of automaton states with constant-time insert and clear (a sparse set).
private struct StateSet {
    private var dense: [Int]
    private var sparse: [Int]
    private(set) var count = 0

    init(capacity: Int) {
        dense = Array(repeating: 0, count: capacity)
        sparse = Array(repeating: 0, count: capacity)
    }

    var isEmpty: Bool { count == 0 }
    var members: ArraySlice<Int> { dense[0..<count] }

    /// Adds `state`; false when it was there.
    mutating func insert(_ state: Int) -> Bool {
        let slot = sparse[state]
        if slot < count, dense[slot] == state { return false }
        sparse[state] = count
        dense[count] = state
        count += 1
        return true
    }

    mutating func removeAll() { count = 0 }
}
