import Foundation

/// Splits text into the terms a full-text index stores, and says whether a
/// searched word occurs in them (the groundwork of issue 19's `TEXT` operator).
///
/// How terms are made:
/// - **Words.** A run of letters, digits and combining marks outside the
///   scripts below is one term, folded: case, diacritics and width are
///   ignored, so `Café`, `CAFE` and `ｃａｆｅ` are all `cafe`.
/// - **Hangul, Han and Kana.** These scripts attach particles and endings to
///   words without spaces (`산책을`, `산책하고`), so a run of them is stored as
///   its characters (unigrams) and its adjacent pairs (bigrams), composed to
///   NFC and width-folded. A searched word of one such character matches a
///   unigram; a word of n ≥ 2 characters matches where its n − 1 bigrams
///   stand one after another in one run — exactly where the word occurs
///   inside the run, two-syllable words included.
/// - Everything else (spaces, punctuation, symbols, emoji) separates terms.
///
/// Positions count terms and characters through the text, so a phrase can
/// later require adjacent positions.
struct FullTextTokenizer {
    /// One stored term.
    struct Token: Equatable, Hashable {
        enum Kind: Equatable, Hashable {
            /// A folded word of letters and digits.
            case word
            /// One character of a Hangul, Han or Kana run.
            case unigram
            /// Two adjacent characters of such a run, at the first one's position.
            case bigram
        }

        let term: String
        let position: Int
        let kind: Kind
    }

    /// The terms of `text`, in order.
    static func tokens(in text: String) -> [Token] {
        var tokens: [Token] = []
        var position = 0
        var run = String.UnicodeScalarView()
        var runIsCJK = false

        func flush() {
            guard !run.isEmpty else { return }
            if runIsCJK {
                let characters = Array(
                    String(run).folding(options: [.widthInsensitive], locale: nil)
                        .precomposedStringWithCanonicalMapping)
                for (index, character) in characters.enumerated() {
                    tokens.append(Token(term: String(character), position: position + index, kind: .unigram))
                    if index + 1 < characters.count {
                        tokens.append(
                            Token(
                                term: String(character) + String(characters[index + 1]), position: position + index,
                                kind: .bigram))
                    }
                }
                position += characters.count
            } else {
                let folded = fold(String(run))
                if !folded.isEmpty {
                    tokens.append(Token(term: folded, position: position, kind: .word))
                    position += 1
                }
            }
            run = String.UnicodeScalarView()
        }

        for scalar in text.unicodeScalars {
            if isCJK(scalar) {
                if !runIsCJK { flush() }
                runIsCJK = true
                run.append(scalar)
            } else if isWordPart(scalar) || (!run.isEmpty && !runIsCJK && isMark(scalar)) {
                if runIsCJK { flush() }
                runIsCJK = false
                run.append(scalar)
            } else {
                flush()
            }
        }
        flush()
        return tokens
    }

    /// Whether the searched `word` occurs in `tokens` (the terms of one text):
    /// a word equal to a stored word; a Hangul, Han or Kana word inside a run
    /// (see the type's description). A word that mixes scripts or holds
    /// several words matches when all its parts match one after another.
    static func contains(_ word: String, in tokens: [Token]) -> Bool {
        let parts = Self.tokens(in: word)
        guard !parts.isEmpty else { return false }
        let wanted = searchSequence(parts)
        let positions = Dictionary(grouping: tokens, by: { "\($0.kind)|\($0.term)" }).mapValues { Set($0.map(\.position)) }
        // Every start where the first part stands, checked for the rest at their offsets.
        guard let first = wanted.first, let starts = positions["\(first.kind)|\(first.term)"] else { return false }
        return starts.contains { start in
            wanted.allSatisfy { part in positions["\(part.kind)|\(part.term)"]?.contains(start + part.position) == true }
        }
    }

    /// What a searched word must find, with positions relative to its first
    /// part: a run of two or more characters by its bigrams alone.
    private static func searchSequence(_ parts: [Token]) -> [Token] {
        let origin = parts[0].position
        var sequence: [Token] = []
        for part in parts {
            if part.kind == .unigram {
                // A character with a bigram starting at it, or after it in the same run, is covered by bigrams.
                let coveredByBigram = parts.contains {
                    $0.kind == .bigram && ($0.position == part.position || $0.position + 1 == part.position)
                }
                if coveredByBigram { continue }
            }
            sequence.append(Token(term: part.term, position: part.position - origin, kind: part.kind))
        }
        return sequence
    }

    /// Case, diacritics and width folded.
    static func fold(_ word: String) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Hangul syllables and jamo, Han ideographs, Hiragana and Katakana (full and half width).
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xAC00...0xD7A3, 0x1100...0x11FF, 0x3130...0x318F, 0xA960...0xA97F, 0xD7B0...0xD7FF: return true
        case 0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0xFFA0...0xFFDC: return true
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2FA1F: return true
        default: return false
        }
    }

    private static func isWordPart(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return properties.isAlphabetic || properties.numericType != nil
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
