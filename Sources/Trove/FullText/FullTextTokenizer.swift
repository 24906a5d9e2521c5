import Foundation

/// Splits text into the terms a full-text index stores.
///
/// How terms are made:
/// - **Words.** A run of letters, digits and combining marks outside the
///   scripts below is one term, folded: case, diacritics and width are
///   ignored, so `Café`, `CAFE` and `ｃａｆｅ` are all `cafe`. A word longer
///   than ``maximumTermLength`` bytes is stored cut there (at a character
///   boundary); a search for such a word checks what the index finds
///   against the whole text (``FullTextQuery/needsRecheck``).
/// - **Hangul, Han and Kana.** These scripts attach particles and endings to
///   words without spaces (`산책을`, `산책하고`), so a run of them is stored as
///   its adjacent pairs of characters (bigrams), composed to NFC and
///   width-folded, and its last character marked as last (`을` + U+0001):
///   every character then begins exactly one term. A searched word of n ≥ 2
///   such characters matches where its n − 1 bigrams stand one after another
///   in one run — exactly where the word occurs inside the run, two-syllable
///   words included; a word of one character matches every term it begins.
/// - Everything else (spaces, punctuation, symbols, emoji) separates terms.
///   No word is dropped: there is no stopword list.
///
/// Positions count words and characters through the text: a word takes one,
/// a character of a Hangul, Han or Kana run takes one. A phrase is terms at
/// consecutive positions.
struct FullTextTokenizer {
    /// One stored term.
    struct Token: Equatable, Hashable {
        enum Kind: Equatable, Hashable {
            /// A folded word of letters and digits.
            case word
            /// Two adjacent characters of a Hangul, Han or Kana run, at the first one's position.
            case bigram
            /// The last character of such a run, followed by ``FullTextTokenizer/finalMark``.
            case final
        }

        let term: String
        let position: Int
        let kind: Kind
    }

    /// The longest term stored, in UTF-8 bytes: LMDB keys hold at most 511,
    /// and the index adds nine bytes to a term.
    static let maximumTermLength = 240
    /// Follows the last character of a Hangul, Han or Kana run in its term.
    static let finalMark: UInt8 = 0x01

    /// The terms of `text`, in order; words are cut at `maximumLength`
    /// bytes, as the index stores them unless told otherwise.
    static func tokens(in text: String, maximumLength: Int = maximumTermLength) -> [Token] {
        var tokens: [Token] = []
        var text = text
        text.withUTF8 { bytes in
            var scanner = TermScanner(bytes: bytes, maximumLength: maximumLength)
            scanner.scan { bytes, position, kind, _ in
                tokens.append(Token(term: String(decoding: bytes, as: UTF8.self), position: position, kind: kind))
            }
        }
        return tokens
    }

    /// Calls `body` with each term of `text` in order: its UTF-8 bytes (valid
    /// only during the call), its position, its kind, and the UTF-8 offsets of
    /// the character or word at that position (for a run that needed
    /// normalizing, the whole run).
    static func forEachTerm(
        in text: String, _ body: (UnsafeBufferPointer<UInt8>, Int, Token.Kind, Range<Int>) -> Void
    ) {
        var text = text
        text.withUTF8 { scan($0, body) }
    }

    private static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int, Token.Kind, Range<Int>) -> Void
    ) {
        var scanner = TermScanner(bytes: bytes, maximumLength: maximumTermLength)
        scanner.scan(body)
    }

    typealias TermVisitor = (UnsafeBufferPointer<UInt8>, Int, Token.Kind, Range<Int>) -> Void

    /// The state of one pass over a text (a struct, not captured variables,
    /// so that the pass runs without boxes or access checks).
    private struct TermScanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        var word: [UInt8] = []
        var wordIsASCII = true
        var wordStart = 0
        /// A run of Hangul, Han or Kana: each scalar with where it starts in `bytes`.
        var run: [(scalar: Unicode.Scalar, offset: Int)] = []
        var runNeedsNormalizing = false
        var scratch: [UInt8] = []
        let maximumLength: Int

        init(bytes: UnsafeBufferPointer<UInt8>, maximumLength: Int) {
            self.bytes = bytes
            self.maximumLength = maximumLength
            word.reserveCapacity(32)
            scratch.reserveCapacity(16)
        }

        mutating func flushWord(end: Int, _ body: TermVisitor) {
            guard !word.isEmpty else { return }
            defer {
                word.removeAll(keepingCapacity: true)
                wordIsASCII = true
            }
            if wordIsASCII {
                let count = min(word.count, maximumLength)
                word.withUnsafeBufferPointer {
                    body(UnsafeBufferPointer(rebasing: $0[0..<count]), position, .word, wordStart..<end)
                }
            } else {
                var folded = Array(FullTextTokenizer.fold(String(decoding: word, as: UTF8.self)).utf8)
                guard !folded.isEmpty else { return }
                if folded.count > maximumLength {
                    var cut = maximumLength
                    while cut > 0, folded[cut] & 0xC0 == 0x80 { cut -= 1 }
                    folded.removeSubrange(cut...)
                }
                folded.withUnsafeBufferPointer { body($0, position, .word, wordStart..<end) }
            }
            position += 1
        }

        mutating func flushRun(end: Int, _ body: TermVisitor) {
            guard !run.isEmpty else { return }
            defer {
                run.removeAll(keepingCapacity: true)
                runNeedsNormalizing = false
            }
            if !runNeedsNormalizing {
                // Each character is one scalar, and a pair is two adjacent in the text: emit them in place.
                for index in run.indices {
                    let start = run[index].offset
                    let next = index + 1 < run.count ? run[index + 1].offset : end
                    if index + 1 < run.count {
                        let after = index + 2 < run.count ? run[index + 2].offset : end
                        body(UnsafeBufferPointer(rebasing: bytes[start..<after]), position + index, .bigram, start..<next)
                    } else {
                        scratch.removeAll(keepingCapacity: true)
                        scratch.append(contentsOf: bytes[start..<next])
                        scratch.append(FullTextTokenizer.finalMark)
                        scratch.withUnsafeBufferPointer { body($0, position + index, .final, start..<next) }
                    }
                }
                position += run.count
                return
            }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: run.map(\.scalar))
            let normalized = String(scalars).folding(options: [.widthInsensitive], locale: nil)
                .precomposedStringWithCanonicalMapping
            let whole = run[0].offset..<end
            let characters = normalized.map { Array(String($0).utf8) }
            for index in characters.indices {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: characters[index])
                if index + 1 < characters.count {
                    scratch.append(contentsOf: characters[index + 1])
                    scratch.withUnsafeBufferPointer { body($0, position + index, .bigram, whole) }
                } else {
                    scratch.append(FullTextTokenizer.finalMark)
                    scratch.withUnsafeBufferPointer { body($0, position + index, .final, whole) }
                }
            }
            position += characters.count
        }

        mutating func scan(_ body: TermVisitor) {
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte < 0x80 {
                    // ASCII: letters and digits build a word (lowercased here), anything else separates.
                    let isLetterOrDigit =
                        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                    if isLetterOrDigit {
                        if !run.isEmpty { flushRun(end: index, body) }
                        if word.isEmpty { wordStart = index }
                        word.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
                    } else {
                        flushWord(end: index, body)
                        flushRun(end: index, body)
                    }
                    index += 1
                    continue
                }
                let (scalar, length) = FullTextTokenizer.decode(bytes, at: index)
                if FullTextTokenizer.isCJK(scalar) {
                    flushWord(end: index, body)
                    if FullTextTokenizer.needsNormalizing(scalar) { runNeedsNormalizing = true }
                    run.append((scalar, index))
                } else if FullTextTokenizer.isWordPart(scalar) || (!word.isEmpty && FullTextTokenizer.isMark(scalar)) {
                    if !run.isEmpty { flushRun(end: index, body) }
                    if word.isEmpty { wordStart = index }
                    word.append(contentsOf: bytes[index..<index + length])
                    wordIsASCII = false
                } else {
                    flushWord(end: index, body)
                    flushRun(end: index, body)
                }
                index += length
            }
            flushWord(end: count, body)
            flushRun(end: count, body)
        }
    }

    /// The scalar whose UTF-8 encoding starts at `index` (well-formed: a Swift string's bytes).
    @inline(__always)
    fileprivate static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (Unicode.Scalar, Int) {
        let lead = UInt32(bytes[index])
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var value = lead & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
    }

    /// Whether `word` occurs in `tokens` (the terms of one text), as the
    /// index finds it: a word equal to a stored word; a Hangul, Han or Kana
    /// word inside a run (see the type's description). A word that mixes
    /// scripts or holds several words matches when all its parts match one
    /// after another.
    static func contains(_ word: String, in tokens: [Token]) -> Bool {
        FullTextQuery("\"\(word.replacingOccurrences(of: "\"", with: " "))\"").matches(tokens)
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

    /// Scalars that NFC or width folding change: conjoining and compatibility
    /// jamo, half-width forms, combining kana marks, compatibility ideographs.
    fileprivate static func needsNormalizing(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xAC00...0xD7A3, 0x4E00...0x9FFF, 0x3400...0x4DBF: return false
        case 0x1100...0x11FF, 0x3130...0x318F, 0xA960...0xA97F, 0xD7B0...0xD7FF: return true
        case 0xFF66...0xFF9F, 0xFFA0...0xFFDC, 0x3099...0x309C, 0xF900...0xFAFF, 0x2F800...0x2FA1F: return true
        default: return false
        }
    }

    fileprivate static func isWordPart(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return properties.isAlphabetic || properties.numericType != nil
    }

    fileprivate static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
