/// What a `TEXT` condition searches for, parsed from its text:
/// `산책 공원` (both), `walk -rain` (not rain), `walk*` (a prefix),
/// `"morning walk"` (adjacent words). See ``FullTextTokenizer`` for how a
/// searched word meets the stored terms.
struct FullTextQuery: Sendable, Hashable {
    /// One term of a searched word, at its offset from the word's first term.
    struct Part: Sendable, Hashable {
        let term: [UInt8]
        let offset: Int
        /// Matches every stored term that starts with `term`: a word (`walk*`),
        /// or every term a Hangul, Han or Kana character begins.
        let isPrefix: Bool
    }

    /// One searched word or phrase: its terms must stand at their offsets.
    struct Element: Sendable, Hashable {
        let parts: [Part]
        /// `-word`: an object holding it does not match.
        let isExcluded: Bool
    }

    /// The query as written.
    let text: String
    let elements: [Element]
    /// Whether a searched word is longer than the index stores a word
    /// (``FullTextTokenizer/maximumTermLength``): the index then finds every
    /// text with a word that starts alike, and each must be checked whole
    /// (``matchesWhole(_:)``). Such words are left out of exclusions
    /// answered by the index.
    let needsRecheck: Bool

    var included: [Element] { elements.filter { !$0.isExcluded } }
    var excluded: [Element] { elements.filter(\.isExcluded) }

    init(_ text: String) {
        self.init(text, maximumLength: FullTextTokenizer.maximumTermLength)
    }

    private init(_ text: String, maximumLength: Int) {
        self.text = text
        let characters = Array(text)
        var elements: [Element] = []
        var index = 0
        while index < characters.count {
            if characters[index].isWhitespace {
                index += 1
                continue
            }
            var excluded = false
            if characters[index] == "-", index + 1 < characters.count, !characters[index + 1].isWhitespace {
                excluded = true
                index += 1
            }
            var body: String
            if characters[index] == "\"" {
                var end = index + 1
                while end < characters.count, characters[end] != "\"" { end += 1 }
                body = String(characters[(index + 1)..<end])
                index = end + 1
            } else {
                var end = index
                while end < characters.count, !characters[end].isWhitespace, characters[end] != "\"" { end += 1 }
                body = String(characters[index..<end])
                index = end
            }
            var isPrefix = false
            while body.hasSuffix("*") {
                body.removeLast()
                isPrefix = true
            }
            let parts = FullTextQuery.parts(of: body, prefix: isPrefix, maximumLength: maximumLength)
            if !parts.isEmpty { elements.append(Element(parts: parts, isExcluded: excluded)) }
        }
        self.elements = elements
        self.needsRecheck =
            maximumLength == FullTextTokenizer.maximumTermLength
            && FullTextTokenizer.tokens(in: text, maximumLength: .max).contains {
                $0.kind == .word && $0.term.utf8.count > maximumLength
            }
    }

    /// The elements whose words the index stores whole: those it can answer alone.
    var exactlyIndexed: [Element] {
        guard needsRecheck else { return elements }
        return elements.filter { element in
            !element.parts.contains { $0.term.count >= FullTextTokenizer.maximumTermLength - 3 }
        }
    }

    /// Whether `text` matches, its words compared whole however long.
    func matchesWhole(_ text: String) -> Bool {
        FullTextQuery(self.text, maximumLength: .max).matches(FullTextTokenizer.tokens(in: text, maximumLength: .max))
    }

    /// The terms a searched word must find, offsets from its first: a run of
    /// two or more Hangul, Han or Kana characters by its bigrams alone, a run
    /// of one character by every term that character begins.
    private static func parts(of word: String, prefix: Bool, maximumLength: Int) -> [Part] {
        let tokens = FullTextTokenizer.tokens(in: word, maximumLength: maximumLength)
        var kept: [(term: [UInt8], position: Int, isPrefix: Bool)] = []
        for token in tokens {
            var term = Array(token.term.utf8)
            if token.kind == .final {
                // The end of a longer run is covered by its last bigram.
                if tokens.contains(where: { $0.kind == .bigram && $0.position + 1 == token.position }) { continue }
                term.removeLast()
                kept.append((term, token.position, true))
            } else {
                kept.append((term, token.position, false))
            }
        }
        guard let origin = kept.first?.position else { return [] }
        let lastWord = prefix && tokens.last?.kind == .word ? kept.count - 1 : -1
        return kept.enumerated().map { index, part in
            Part(term: part.term, offset: part.position - origin, isPrefix: part.isPrefix || index == lastWord)
        }
    }

    // MARK: Matching one text

    /// Whether a text whose terms are `tokens` matches: every included word
    /// or phrase occurs and no excluded one does. A query of exclusions alone
    /// matches every text without them; a query with no terms matches nothing.
    func matches(_ tokens: [FullTextTokenizer.Token]) -> Bool {
        guard !elements.isEmpty else { return false }
        let positions = FullTextQuery.positions(of: tokens)
        for element in elements where (FullTextQuery.starts(of: element, in: positions).isEmpty) != element.isExcluded {
            return false
        }
        return true
    }

    /// Each stored term of a text with its positions, ascending.
    static func positions(of tokens: [FullTextTokenizer.Token]) -> [[UInt8]: [Int]] {
        var positions: [[UInt8]: [Int]] = [:]
        for token in tokens { positions[Array(token.term.utf8), default: []].append(token.position) }
        return positions
    }

    /// The positions where `element` starts in a text whose terms stand at `positions`.
    static func starts(of element: Element, in positions: [[UInt8]: [Int]]) -> [Int] {
        func found(_ part: Part) -> Set<Int> {
            guard part.isPrefix else { return Set(positions[part.term] ?? []) }
            var all = Set<Int>()
            // A prefix is whole characters, so only terms of the same script start with it.
            for (term, at) in positions where term.starts(with: part.term) { all.formUnion(at) }
            return all
        }
        let sets = element.parts.map(found)
        return sets[0].filter { start in
            zip(element.parts, sets).allSatisfy { part, set in set.contains(start + part.offset) }
        }.sorted()
    }
}
