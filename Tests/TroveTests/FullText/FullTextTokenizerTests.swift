import Foundation
import Testing

@testable import Trove

/// The tokenizer against plain Swift answers: a Korean word is found exactly
/// where it stands inside a run of Hangul, an English word exactly where a
/// folded word equals it.
@Suite struct FullTextTokenizerTests {
    private let stems = ["산책", "공원", "커피", "서울", "친구", "비", "아침", "사진", "여행", "회의", "저녁", "산"]
    private let endings = ["", "을", "를", "에서", "하고", "이", "가", "은", "는", "도"]
    private let english = ["Coffee", "café", "WALK", "park", "Seoul", "rain", "naïve", "ＡＢＣ", "photo"]

    private func corpus(_ count: Int, seed: UInt64) -> [String] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        return (0..<count).map { _ in
            (0..<(3 + next(12))).map { _ -> String in
                switch next(4) {
                case 0: return english[next(english.count)]
                case 1: return stems[next(stems.count)] + endings[next(endings.count)]
                case 2: return stems[next(stems.count)] + stems[next(stems.count)]  // a compound without a space
                default: return [".", ",", " 🎉", "!", "—"][next(5)]
                }
            }.joined(separator: next(3) == 0 ? "" : " ")
        }
    }

    /// The runs of Hangul in `text`, and its words of other letters, folded.
    private func plainAnswer(_ word: String, in text: String) -> Bool {
        if word.unicodeScalars.allSatisfy(FullTextTokenizer.isCJK) {
            var runs: [String] = []
            var run = ""
            for scalar in text.unicodeScalars {
                if FullTextTokenizer.isCJK(scalar) {
                    run.unicodeScalars.append(scalar)
                } else if !run.isEmpty {
                    runs.append(run)
                    run = ""
                }
            }
            runs.append(run)
            return runs.contains { $0.contains(word) }
        }
        let words = text.split { !($0.isLetter || $0.isNumber) || $0.unicodeScalars.contains(where: FullTextTokenizer.isCJK) }
        return words.contains { FullTextTokenizer.fold(String($0)) == FullTextTokenizer.fold(word) }
    }

    @Test func everyWordIsFoundExactlyWhereItStands() {
        let texts = corpus(400, seed: 7)
        let words = stems + ["산책로", "공원에서", "책", "원"] + english + ["coffee", "CAFE", "abc", "naive", "seoul"]
        for text in texts {
            let tokens = FullTextTokenizer.tokens(in: text)
            for word in words {
                #expect(
                    FullTextTokenizer.contains(word, in: tokens) == plainAnswer(word, in: text), "\(word) in \(text)")
            }
        }
    }

    @Test func koreanWordsAreFoundWithTheirParticlesAndEndings() {
        let tokens = FullTextTokenizer.tokens(in: "오늘 산책을 했다. 공원에서 산책하고 커피!")
        for word in ["산책", "공원", "커피", "산", "했다"] { #expect(FullTextTokenizer.contains(word, in: tokens), "\(word)") }
        for word in ["산책로", "서울", "책을했"] { #expect(!FullTextTokenizer.contains(word, in: tokens), "\(word)") }
    }

    @Test func wordsFoldCaseDiacriticsAndWidth() {
        let tokens = FullTextTokenizer.tokens(in: "Un CAFÉ naïve à Ｓｅｏｕｌ, e\u{301}te\u{301}")
        #expect(tokens.filter { $0.kind == .word }.map(\.term) == ["un", "cafe", "naive", "a", "seoul", "ete"])
        #expect(FullTextTokenizer.contains("café", in: tokens))
        #expect(FullTextTokenizer.contains("Cafe", in: tokens))
        #expect(!FullTextTokenizer.contains("caf", in: tokens))  // a word, not a prefix
    }

    @Test func hangulIsComposedAndRunsKeepPositions() {
        // Decomposed jamo (as some keyboards and file systems store them) compose first.
        let decomposed = "산책".decomposedStringWithCanonicalMapping
        #expect(decomposed.unicodeScalars.count == 6)  // ㅅ ㅏ ㄴ ㅊ ㅐ ㄱ
        let tokens = FullTextTokenizer.tokens(in: "go " + decomposed + "을 now")
        #expect(tokens.map(\.term) == ["go", "산책", "책을", "을\u{1}", "now"])
        #expect(tokens.map(\.position) == [0, 1, 2, 3, 4])
        #expect(tokens.map(\.kind) == [.word, .bigram, .bigram, .final, .word])
        #expect(FullTextTokenizer.contains("산책", in: tokens))
        #expect(FullTextTokenizer.tokens(in: "🎉 … ¿?").isEmpty)
        #expect(!FullTextTokenizer.contains("", in: tokens))
    }
}
