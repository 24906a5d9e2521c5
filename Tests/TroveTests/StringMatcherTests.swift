import Foundation
import Testing

@testable import Trove

final class MemoNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var memo: String?
}

/// String comparisons on stored bytes (``StringMatcher``) against Foundation's
/// answers (``ValueComparison``, which folds and compares Swift Strings).
@Suite("String comparisons on stored bytes")
struct StringMatcherTests {
    /// Pieces of text that folding, normalization and grapheme rules treat
    /// specially, beside plain ASCII and Hangul.
    static let ascii = Array("abcxyzABCXYZ019 ,.-_'\"\n\t*?%")
    static let korean = ["서", "울", "커", "피", "가", "각", "한", "국", "힣", "갛", "뷁", "회", "의"]
    static let special = [
        "é", "É", "e\u{301}", "E\u{301}", "\u{301}", "ü", "Å", "\u{212B}", "A\u{30A}", "ñ", "ß", "ẞ", "SS", "ss", "İ", "ı",
        "i\u{307}",
        "\u{212A}", "K", "k", "ﬁ", "fi", "Σ", "σ", "ς", "\r", "\r\n", "\u{1100}\u{1161}", "\u{1100}", "\u{1161}", "\u{11A8}",
        "가\u{11A8}", "😀", "👍🏽", "👍", "🏽", "👨‍👩‍👧", "\u{200D}", "🇰🇷", "🇰", "🇷", "❤️", "❤", "\u{FE0F}", "Ⅻ", "ｃｏｆｆｅｅ", "\u{0}",
        "ǅ", "ǆ", "Ǆ", "\u{37E}", ";", "\u{1FEF}", "`", "\u{2126}", "Ω", "ω", "ᾳ", "ᾼ", "\u{ABFF}", "\u{A000}", "\u{D7A4}",
        "\u{D7FF}", "\u{D7B0}", "ힰ", "\u{E000}", "\u{10000}",
    ]

    static func randomPiece(_ mixed: Bool, using random: inout some RandomNumberGenerator) -> String {
        switch Int.random(in: 0..<(mixed ? 10 : 6), using: &random) {
        case 0..<3: return String(ascii.randomElement(using: &random)!)
        case 3..<5: return korean.randomElement(using: &random)!
        case 5: return String(UnicodeScalar(UInt32.random(in: 0xAC00...0xD7A3, using: &random))!)
        default: return special.randomElement(using: &random)!
        }
    }

    static func randomText(_ mixed: Bool, maxPieces: Int = 12, using random: inout some RandomNumberGenerator) -> String {
        (0..<Int.random(in: 0...maxPieces, using: &random)).map { _ in randomPiece(mixed, using: &random) }.joined()
    }

    /// A needle: often a piece of `text` (cut by scalars, so sometimes inside
    /// a Character), with letters' case changed at random; else random text.
    static func randomNeedle(from text: String, _ op: ComparisonOperator, using random: inout some RandomNumberGenerator)
        -> String
    {
        var needle: String
        let scalars = Array(text.unicodeScalars)
        if !scalars.isEmpty, Int.random(in: 0..<4, using: &random) != 0 {
            var start = Int.random(in: 0..<scalars.count, using: &random)
            var end = Int.random(in: start...scalars.count, using: &random)
            if op == .beginsWith || op == .equal || op == .notEqual || op == .like { start = 0 }
            if op == .endsWith || op == .equal || op == .notEqual || op == .like { end = scalars.count }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<end])
            needle = String(view)
        } else {
            needle = randomText(true, maxPieces: 3, using: &random)
        }
        needle = String(
            needle.map { character -> String in
                switch Int.random(in: 0..<3, using: &random) {
                case 0: return character.uppercased()
                case 1: return character.lowercased()
                default: return String(character)
                }
            }.joined())
        if op == .like {
            // Wildcards in place of some characters, and runs between them.
            needle = String(
                needle.map { character -> String in
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: return "?"
                    case 1: return "*"
                    case 2: return "*" + String(character)
                    default: return String(character)
                    }
                }.joined())
        }
        return needle
    }

    static let operators: [ComparisonOperator] = [.contains, .beginsWith, .endsWith, .like, .equal, .notEqual]
    static let optionSets: [StringOptions] = [
        [], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive],
    ]

    @Test(
        "CONTAINS, BEGINSWITH, ENDSWITH, LIKE, == and != on bytes answer as Foundation on random ASCII, Korean, accented and emoji text"
    )
    func agreesWithFoundation() {
        var random = SystemRandomNumberGenerator()
        var plainRows = 0
        var matched = 0
        for round in 0..<30_000 {
            let mixed = round % 3 == 0
            let text = Self.randomText(mixed, maxPieces: round % 4 == 0 ? 60 : 12, using: &random)
            let op = Self.operators[round % Self.operators.count]
            let options = Self.optionSets[(round / Self.operators.count) % Self.optionSets.count]
            if options.isEmpty && (op == .equal || op == .notEqual) { continue }  // bytes, compiled elsewhere
            let needle = Self.randomNeedle(from: mixed ? text : Self.randomText(false, using: &random) + text, op, using: &random)
            guard let matcher = StringMatcher(op, needle, options) else {
                Issue.record("no matcher for \(op)")
                continue
            }
            let expected = ValueComparison.test(.string(text), op, .string(needle), options)
            var bytes = Array(text.utf8)
            let answer = bytes.withUnsafeMutableBytes { matcher.matches(UnsafeRawBufferPointer($0)) }
            #expect(
                answer == expected,
                "\(Self.describe(text)) \(op.rawValue)\(options.isEmpty ? "" : "[\(options.rawValue)]") \(Self.describe(needle)): \(answer), Foundation says \(expected)"
            )
            if StringMatcher.isPlain(bytes) { plainRows += 1 }
            if expected { matched += 1 }
            bytes.removeAll()
        }
        // Both paths ran, and both answers came up often.
        #expect(plainRows > 10_000)
        #expect(matched > 3_000)
    }

    @Test("plain text is ASCII without CR and precomposed Hangul; lowering folds its case as Foundation does")
    func plainText() {
        for text in ["", "abc", "coffee 서울", "가힣", "한국어 ABC xyz 0123456789 !@#$%^&*()", "\n\t"] {
            #expect(StringMatcher.isPlain(Array(text.utf8)), "\(text)")
            let bytes = Array(text.utf8)
            var lowered = [UInt8](repeating: 0, count: bytes.count)
            let plain = bytes.withUnsafeBytes { source in
                lowered.withUnsafeMutableBytes {
                    StringMatcher.lowerIfPlain(source, into: $0.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 8)!)
                }
            }
            #expect(plain)
            #expect(String(decoding: lowered, as: UTF8.self) == ValueComparison.fold(text, .caseInsensitive))
        }
        for text in [
            "a\r\nb", "\r", "é", "e\u{301}", "\u{1100}\u{1161}", "\u{212A}", "😀", "가\u{11A8}", "\u{ABFF}", "\u{D7A4}", "Ä",
        ] {
            #expect(!StringMatcher.isPlain(Array(text.utf8)), "\(Self.describe(text))")
        }
        // Long and short text: one character that is not plain, anywhere, is seen.
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var pieces = (0..<Int.random(in: 0...50, using: &random)).map { _ in Self.randomPiece(false, using: &random) }
            pieces.removeAll { $0 == "\r" }
            let text = pieces.joined()
            let bytes = Array(text.utf8)
            var lowered = [UInt8](repeating: 0, count: bytes.count + 1)
            let plain = bytes.withUnsafeBytes { source in
                lowered.withUnsafeMutableBytes { StringMatcher.lowerIfPlain(source, into: $0.baseAddress!) }
            }
            #expect(plain, "\(Self.describe(text))")
            #expect(String(decoding: lowered.dropLast(), as: UTF8.self) == ValueComparison.fold(text, .caseInsensitive))
            let intruder = Self.special.filter { !StringMatcher.isPlain(Array($0.utf8)) }.randomElement(using: &random)!
            pieces.insert(intruder, at: Int.random(in: 0...pieces.count, using: &random))
            #expect(!StringMatcher.isPlain(Array(pieces.joined().utf8)), "\(Self.describe(pieces.joined()))")
            // Cut inside a syllable: not plain either.
            if let last = bytes.lastIndex(where: { $0 >= 0xE0 }) {
                #expect(!StringMatcher.isPlain(Array(bytes[...last])))
                #expect(!StringMatcher.isPlain(Array(bytes[...(last + 1)])))
            }
        }
        // Each character that is not plain, at the start, second, in the middle and at the end of long text.
        let long = String(repeating: "서울 coffee ", count: 5)
        for intruder in Self.special where !StringMatcher.isPlain(Array(intruder.utf8)) {
            for text in [intruder + long, "a" + intruder + long, "가" + intruder + long, long + intruder + long, long + intruder] {
                #expect(!StringMatcher.isPlain(Array(text.utf8)), "\(Self.describe(text))")
            }
        }
        // Every ASCII byte and every syllable folds (case and diacritics) to itself, ASCII letters lowered.
        let everything = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + (0xAC00...0xD7A3).map { String(UnicodeScalar($0)!) }
        for character in everything where character != "\r" {
            for options in Self.optionSets where !options.isEmpty {
                let folded = ValueComparison.fold(character, options)
                let expected = options.contains(.caseInsensitive) ? character.lowercased() : character
                #expect(Array(folded.utf8) == Array(expected.utf8), "\(Self.describe(character)) \(options.rawValue)")
            }
        }
    }

    @Test("the substring search finds needles at every offset of long text, first and last bytes repeated")
    func search() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 97...99, using: &random) }
            let needle = (0..<Int.random(in: 1...6, using: &random)).map { _ in UInt8.random(in: 97...99, using: &random) }
            let expected =
                text.count >= needle.count
                && (0...(text.count - needle.count)).contains { text[$0..<$0 + needle.count].elementsEqual(needle) }
            let found = text.withUnsafeBytes { haystack in needle.withUnsafeBytes { StringMatcher.contains(haystack, $0) } }
            #expect(found == expected, "\(text) \(needle)")
        }
    }

    @Test("queries over stored memos answer as Foundation: each string operator, [c], [d], [cd], nil and the orderings")
    func queriesAgree() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        var memos: [Int: String?] = [:]
        try db.write {
            for id in 0..<400 {
                let note = MemoNote()
                note.id = id
                note.memo = id % 17 == 0 ? nil : Self.randomText(id % 4 == 0, maxPieces: 20, using: &random)
                memos[id] = note.memo
                try db.add(note)
            }
        }
        let notes = db.objects(MemoNote.self)
        let names: [ComparisonOperator: String] = [
            .contains: "CONTAINS", .beginsWith: "BEGINSWITH", .endsWith: "ENDSWITH", .like: "LIKE", .equal: "==", .notEqual: "!=",
            .less: "<", .lessOrEqual: "<=", .greater: ">", .greaterOrEqual: ">=",
        ]
        for round in 0..<400 {
            let op = (Self.operators + [.less, .lessOrEqual, .greater, .greaterOrEqual]).randomElement(using: &random)!
            let options = [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) ? [] : Self.optionSets[round % 4]
            let source = memos[Int.random(in: 0..<400, using: &random)]!.flatMap { $0 } ?? "coffee"
            let needle = Self.randomNeedle(from: source, op, using: &random)
            let flags = (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "")
            let query = "memo \(names[op]!)\(flags.isEmpty ? "" : "[\(flags)]") %@"
            let expected = memos.keys.sorted().filter { id in
                ValueComparison.test(memos[id]!.map { .string($0) } ?? .null, op, .string(needle), options)
            }
            #expect(try notes.filter(query, needle).map(\.id) == expected, "\(query) \(Self.describe(needle))")
        }
    }

    @Test("a NUL in a needle or a row compares as Foundation does under [c] and [d] (found by the random test)")
    func nulCharacters() throws {
        let db = try makeDatabase()
        let rows = ["x", "ab\u{0}c", "plain", "서울\u{0}"]
        try db.write {
            for (id, text) in rows.enumerated() {
                let note = MemoNote()
                note.id = id
                note.memo = text
                try db.add(note)
            }
        }
        let notes = db.objects(MemoNote.self)
        for needle in ["x\u{0}", "bc", "\u{0}", "울\u{0}", "b\u{0}c"] {
            for (flags, options) in [("[d]", StringOptions.diacriticInsensitive), ("[c]", .caseInsensitive), ("", [])] {
                let expected = rows.indices.filter {
                    ValueComparison.test(.string(rows[$0]), .contains, .string(needle), options)
                }
                #expect(
                    try notes.filter("memo CONTAINS\(flags) %@", needle).map(\.id) == expected,
                    "\(Self.describe(needle)) \(flags)")
            }
        }
    }

    private static func describe(_ text: String) -> String {
        "\"\(text)\" (\(text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")))"
    }
}
