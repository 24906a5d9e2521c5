import Foundation
import Testing

@testable import Trove

/// MATCHES's expression engine beside Swift's own `Regex` (a backtracking
/// engine with the same whole-match answers where both accept the syntax).
@Suite struct WholeMatchExpressionTests {
    private func matches(_ pattern: String, _ text: String, ignoringCase: Bool = false) throws -> Bool {
        try WholeMatchExpression(pattern, ignoringCase: ignoringCase).matches(text)
    }

    @Test("an alternation matches the whole string through any branch, not only the first that matches a prefix")
    func alternationIsAnchoredAsAWhole() throws {
        #expect(try matches("a|ab", "ab"))
        #expect(try matches("(a|ab)(c|bcd)", "abcd"))
        #expect(try !matches("a|ab", "abc"))
        #expect(try matches("^x$|y", "y"))
        #expect(try matches("", ""))
        #expect(try !matches("", "a"))
    }

    @Test("Characters, classes, escapes, counts and case as Swift's Regex reads them")
    func syntax() throws {
        #expect(try matches("caf.", "café"))
        #expect(try matches("caf.", "cafe\u{301}"))  // one Character, however it is composed
        #expect(try matches("[a-c]+x?", "abcab"))
        #expect(try matches("[^0-9]{2,3}", "ab!"))
        #expect(try !matches("[^0-9]{2,3}", "a1"))
        #expect(try matches(#"\d+\.\d{2}"#, "12.50"))
        #expect(try matches(#"\w+\s\W"#, "서울 !"))
        #expect(try matches(#"a\*b\?c"#, "a*b?c"))
        #expect(try matches("[]a]+", "]a]"))
        #expect(try matches("[a-]+", "a-a"))
        #expect(try matches("x{2}y{1,}z{0,1}", "xxyyy"))
        #expect(try matches("a{,2}", "a{,2}"))  // not a count: literal braces, as ICU reads them
        #expect(try matches("ÉCOLE", "école", ignoringCase: true))
        #expect(try matches("[A-Z]+", "abc", ignoringCase: true))
        #expect(try !matches("[A-Z]+", "abc"))
        #expect(try matches("a.*?b", "axxb"))
    }

    @Test("expressions that need backtracking or are too large are refused, saying what and where")
    func refusals() {
        for (pattern, words, offset) in [
            (#"(a)\1"#, "backreferences", 3), ("(?=a)a", "lookaround", 0), ("a*+", "possessive", 2),
            (#"\bword"#, "\\b", 0), ("(a", "never closed", 0), ("a)", "unbalanced", 1), ("*a", "nothing to repeat", 0),
            ("[z-a]", "wrong way round", 1), ("a{1001}", "at most 1000", 1),
            (String(repeating: "a", count: 1_001), "at most 1000", 0), ("(a{1000}){1000}", "too large", 0),
        ] {
            do {
                _ = try WholeMatchExpression(pattern, ignoringCase: false)
                Issue.record("\(pattern) compiled")
            } catch {
                #expect(error.message.contains(words), "\(pattern): \(error.message)")
                #expect(error.offset == offset, "\(pattern): \(error.message) at \(error.offset)")
            }
        }
    }

    @Test("an expression that makes a backtracking engine explode is matched character by character")
    func noCatastrophicBacktracking() throws {
        let expression = try WholeMatchExpression("(.*.*)*#", ignoringCase: false)
        let row = String(repeating: "x", count: 39)
        #expect(!expression.matches(row + "y"))
        #expect(expression.matches(row + "#"))
        let nested = try WholeMatchExpression("(a+)+b", ignoringCase: false)
        #expect(!nested.matches(String(repeating: "a", count: 5_000)))
    }

    @Test("random expressions agree with Swift's Regex on random strings")
    func agreesWithSwiftRegex() throws {
        var generator = SplitMix64(seed: 20_261_201)
        let atoms = ["a", "b", ".", "[ab]", "[^a]", "(a|b)", "(ab|a)", "(?:b|)", "\\d", "1"]
        let quantifiers = ["", "", "*", "+", "?", "{1,2}", "{2}", "*?"]
        var compared = 0
        for _ in 0..<400 {
            var pattern = ""
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                pattern += atoms.randomElement(using: &generator)! + quantifiers.randomElement(using: &generator)!
            }
            if Int.random(in: 0..<5, using: &generator) == 0 { pattern = "(\(pattern))|b" }
            let ours = try WholeMatchExpression(pattern, ignoringCase: false)
            let theirs = try Regex(pattern)
            for _ in 0..<10 {
                let text = String(
                    (0..<Int.random(in: 0...6, using: &generator)).map { _ in "ab1".randomElement(using: &generator)! })
                #expect(ours.matches(text) == (text.wholeMatch(of: theirs) != nil), "\(pattern) on '\(text)'")
                compared += 1
            }
        }
        #expect(compared == 4_000)
    }
}
