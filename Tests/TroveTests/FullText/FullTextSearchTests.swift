import Foundation
import Testing

@testable import Trove

final class SearchMemo: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: .fullText) var text = ""
    @Persisted var day = 0
    @Persisted(indexed: .fullText) var note: String?
}

final class SearchAlbum: Object {
    @Persisted var title = ""
    @Persisted(deleteRule: .cascade) var memos = List<SearchMemo>()
}

enum SearchDocV1 {
    final class SearchDoc: Object {
        @Persisted var body = ""
    }
}

enum SearchDocV2 {
    final class SearchDoc: Object {
        @Persisted(indexed: .fullText) var body = ""
    }
}

struct SearchEntry: Persistable {
    static var primaryKey: KeyPath<SearchEntry, Int> { \.id }
    static var fullTextIndexedProperties: [String] { ["body"] }
    var id: Int
    var body: String
}

enum SearchNoteV1 {
    final class SearchNote: Object {
        @Persisted(indexed: .fullText) var body = ""
    }
}

enum SearchNoteV2 {
    final class SearchNote: Object {
        @Persisted(indexed: .fullText) var text = ""
    }
}

/// A generated corpus of English and Korean memos, and plain-Swift answers
/// to searches of it that share no code with the index.
struct SearchCorpus {
    static let english = [
        "walk", "Walk", "WALKING", "walked", "park", "Park", "coffee", "Café", "cafe", "naïve", "rain", "rainy", "dog",
        "dogs", "the", "a", "morning", "evening", "photo", "photos", "Seoul", "river", "bike", "ＡＢＣ", "2024",
    ]
    static let stems = ["산책", "공원", "커피", "서울", "친구", "비", "아침", "사진", "여행", "저녁", "산", "책", "강아지", "자전거"]
    static let endings = ["", "을", "를", "에서", "하고", "이", "가", "은", "는", "도", "로", "했다"]
    static let others = [".", ",", "🎉", "!", "—", "👍🏽", "(", ")", "?"]

    var state: UInt64

    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }

    mutating func text(words: Int) -> String {
        var parts: [String] = []
        for _ in 0..<words {
            switch next(7) {
            case 0, 1, 2: parts.append(Self.english[next(Self.english.count)])
            case 3, 4: parts.append(Self.stems[next(Self.stems.count)] + Self.endings[next(Self.endings.count)])
            case 5: parts.append(Self.stems[next(Self.stems.count)] + Self.stems[next(Self.stems.count)])
            default: parts.append(Self.others[next(Self.others.count)])
            }
        }
        return parts.joined(separator: next(5) == 0 ? "" : " ")
    }

    mutating func memo() -> String {
        next(40) == 0 ? text(words: 1500 + next(500)) : text(words: 1 + next(30))
    }

    // MARK: Plain answers

    static func isHangulOrHan(_ scalar: Unicode.Scalar) -> Bool {
        (0xAC00...0xD7A3).contains(scalar.value) || (0x4E00...0x9FFF).contains(scalar.value)
    }

    static func fold(_ word: String) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// The text as units: each folded word of other letters and digits, and each Hangul character.
    static func units(_ text: String) -> [String] {
        var units: [String] = []
        var word = ""
        func flush() {
            if !word.isEmpty { units.append(fold(word)) }
            word = ""
        }
        for character in text {
            if character.unicodeScalars.contains(where: isHangulOrHan) {
                flush()
                units.append(String(character))
            } else if character.isLetter || character.isNumber {
                word.append(character)
            } else {
                flush()
            }
        }
        flush()
        return units
    }

    /// One searched thing, as the test composes it.
    enum Term {
        case word(String)
        case prefix(String)
        case korean(String)
        case phrase([String])

        var text: String {
            switch self {
            case .word(let word), .korean(let word): return word
            case .prefix(let prefix): return prefix + "*"
            case .phrase(let words): return "\"" + words.joined(separator: " ") + "\""
            }
        }

        func occurs(in text: String, units: [String]) -> Bool {
            switch self {
            case .word(let word): return units.contains(SearchCorpus.fold(word))
            case .prefix(let prefix):
                return units.contains { $0.hasPrefix(SearchCorpus.fold(prefix)) }
            case .korean(let word):
                // Inside a run of Hangul: the word holds no other character, so a substring is inside one run.
                return text.contains(word)
            case .phrase(let words):
                let wanted = words.map(SearchCorpus.fold)
                guard wanted.count <= units.count else { return false }
                return (0...(units.count - wanted.count)).contains { Array(units[$0..<($0 + wanted.count)]) == wanted }
            }
        }
    }

    static func matches(_ terms: [(Term, excluded: Bool)], _ text: String) -> Bool {
        guard !terms.isEmpty else { return false }
        let units = units(text)
        return terms.allSatisfy { term, excluded in term.occurs(in: text, units: units) != excluded }
    }

    mutating func query() -> [(Term, excluded: Bool)] {
        var terms: [(Term, Bool)] = []
        for index in 0..<(1 + next(3)) {
            let term: Term
            switch next(6) {
            case 0, 1: term = .word(Self.english[next(Self.english.count)])
            case 2: term = .prefix(["wal", "ca", "ph", "rain", "d", "seou", "mo"][next(7)])
            case 3, 4:
                let stem = Self.stems[next(Self.stems.count)]
                term = .korean(next(3) == 0 ? stem + Self.endings[1 + next(Self.endings.count - 1)] : stem)
            default:
                term = .phrase([Self.english[next(Self.english.count)], Self.english[next(Self.english.count)]])
            }
            terms.append((term, index > 0 && next(4) == 0))
        }
        return terms
    }
}

/// Stores one memo per text, with the text's position as its id.
private func store(_ texts: [String], in db: Database) throws {
    try db.write {
        for (id, text) in texts.enumerated() {
            let memo = SearchMemo()
            memo.id = id
            memo.text = text
            try db.add(memo)
        }
    }
}

@Suite("Full-text search")
struct FullTextSearchTests {
    private func ids(_ results: Results<SearchMemo>) -> [Int] { results.map(\.id).sorted() }

    @Test func koreanWordsAreFoundWithTheirParticlesAndEndings() throws {
        let db = try makeDatabase()
        try store(["오늘 공원에서 산책을 했다", "산책하고 커피", "책을 읽었다", "산에 갔다", "산책로가 좋다", "Coffee at the café"], in: db)
        let memos = db.objects(SearchMemo.self)
        #expect(ids(try memos.filter("text TEXT %@", "산책")) == [0, 1, 4])
        #expect(ids(try memos.filter("text TEXT %@", "산책 공원")) == [0])
        #expect(ids(try memos.filter("text TEXT %@", "산책 -공원")) == [1, 4])
        #expect(ids(try memos.filter("text TEXT %@", "책")) == [0, 1, 2, 4])
        #expect(ids(try memos.filter("text TEXT %@", "산책로")) == [4])
        #expect(ids(try memos.filter("text TEXT %@", "공원에서 산책을")) == [0])
        #expect(ids(try memos.filter("text TEXT 'CAFE'")) == [5])
        #expect(ids(try memos.filter("text TEXT 'coff*'")) == [5])
        #expect(ids(try memos.filter("text TEXT '\"at the café\"'")) == [5])
        #expect(ids(try memos.filter("text TEXT '\"the at\"'")) == [])
        #expect(ids(try memos.filter("text TEXT %@", "-산책")) == [2, 3, 5])
        #expect(ids(try memos.filter("text TEXT ''")) == [])
        #expect(ids(try memos.filter("text TEXT '!!! 🎉'")) == [])
        // Decomposed Hangul (as some keyboards and file systems store it), Japanese and half-width Kana.
        try db.write {
            for (id, text) in [(10, "공원 " + "산책로".decomposedStringWithCanonicalMapping), (11, "東京で散歩した"), (12, "ｶﾞｲﾄﾞ付き散歩")] {
                let memo = SearchMemo()
                memo.id = id
                memo.text = text
                try db.add(memo)
            }
        }
        #expect(ids(try memos.filter("text TEXT %@", "산책로")) == [4, 10])
        #expect(ids(try memos.filter("text TEXT %@", "散歩")) == [11, 12])
        #expect(ids(try memos.filter("text TEXT %@", "ガイド")) == [12])
        expectValid(db)
    }

    @Test(
        "a word longer than the index stores is found only where it occurs whole, searched alone, in a phrase, as a prefix or excluded"
    )
    func wordsLongerThanAStoredTermMatchOnlyWhole() throws {
        let db = try makeDatabase()
        let long = String(repeating: "z", count: 600)
        let accented = String(repeating: "é", count: 200)  // 400 bytes, stored folded as 200 "e"s
        try store(
            [
                long + "a", long + "c", "before " + long + "c after", long + "cd", "short words",
                accented + "x", accented + "y",
            ], in: db)
        let memos = db.objects(SearchMemo.self)
        #expect(ids(try memos.filter("text TEXT %@", long + "c")) == [1, 2])
        #expect(ids(try memos.filter("text TEXT %@", long + "a")) == [0])
        #expect(ids(try memos.filter("text TEXT %@", long + "b")) == [])
        #expect(ids(try memos.filter("text TEXT %@", long + "c*")) == [1, 2, 3])
        #expect(ids(try memos.filter("text TEXT %@", "\"\(long)c after\"")) == [2])
        #expect(ids(try memos.filter("text TEXT %@", "-\(long)c")) == [0, 3, 4, 5, 6])
        #expect(ids(try memos.filter("text TEXT %@", "\(long)c -before")) == [1])
        #expect(ids(try memos.filter("text TEXT %@", accented.uppercased() + "Y")) == [6])
        #expect(try memos.filter("text TEXT %@ AND id > 1", long + "c").count == 1)
        #expect(ids(try memos.filter("NOT text TEXT %@", long + "c")) == [0, 3, 4, 5, 6])
        // Live results agree after a write that adds a near miss and a match.
        let live = try memos.filter("text TEXT %@", long + "c")
        try db.write {
            for (id, text) in [(20, long + "ca"), (21, "x " + long + "c")] {
                let memo = SearchMemo()
                memo.id = id
                memo.text = text
                try db.add(memo)
            }
        }
        #expect(ids(live) == [1, 2, 21])
        expectValid(db)
    }

    @Test func textConditionsCombineWithOtherConditions() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 0..<20 {
                let memo = SearchMemo()
                memo.id = id
                memo.day = id % 5
                memo.text = id % 2 == 0 ? "morning walk in the park" : "rainy evening at home"
                memo.note = id % 3 == 0 ? "산책 메모" : nil
                try db.add(memo)
            }
        }
        let memos = db.objects(SearchMemo.self)
        #expect(ids(try memos.filter("text TEXT 'walk' AND day == 0")) == [0, 10])
        #expect(ids(try memos.filter("day == 1 AND text TEXT 'rainy'")) == [1, 11])
        #expect(ids(try memos.filter("text TEXT 'walk' OR day == 1")) == [0, 1, 2, 4, 6, 8, 10, 11, 12, 14, 16, 18])
        #expect(ids(try memos.filter("NOT text TEXT 'walk' AND day < 2")) == [1, 5, 11, 15])
        #expect(ids(try memos.filter("text TEXT 'walk' AND note TEXT '산책'")) == [0, 6, 12, 18])
        #expect(try memos.filter("text TEXT 'walk' AND note TEXT '산책'").count == 4)
        #expect(try memos.filter("text TEXT 'walk'").explain().contains("full-text index on text"))
        // No stopwords: the commonest words are searchable.
        #expect(ids(try memos.filter("text TEXT 'in the'")) == Array(stride(from: 0, to: 20, by: 2)))
        #expect(ids(try memos.filter("text TEXT '\"at home\"'")) == Array(stride(from: 1, to: 20, by: 2)))
    }

    @Test func everyQueryMatchesThePlainAnswerAcrossWritesAndDeletes() throws {
        let db = try makeDatabase()
        var corpus = SearchCorpus(state: 2024)
        var texts: [Int: String] = [:]
        try db.write {
            for id in 0..<600 {
                let memo = SearchMemo()
                memo.id = id
                memo.text = corpus.memo()
                texts[id] = memo.text
                try db.add(memo)
            }
        }
        func check(_ round: String) throws {
            let memos = db.objects(SearchMemo.self)
            var answered = 0
            defer { #expect(answered >= 20, "\(round): too few queries found anything to tell") }
            for _ in 0..<60 {
                let query = corpus.query()
                let text = query.map { ($0.excluded ? "-" : "") + $0.0.text }.joined(separator: " ")
                let expected = texts.filter { SearchCorpus.matches(query, $0.value) }.keys.sorted()
                if !expected.isEmpty { answered += 1 }
                let found = ids(try memos.filter("text TEXT %@", text))
                #expect(found == expected, "\(round): \(text)")
                // The ranked search finds the same objects.
                #expect(ids(try memos.search(text, in: "text")) == expected, "\(round), ranked: \(text)")
            }
        }
        try check("stored in one write")
        // Rewrites, deletes and new objects, one write at a time and many in one.
        try db.write {
            for memo in try db.objects(SearchMemo.self).filter("id < 150") {
                memo.text = corpus.memo()
                texts[memo.id] = memo.text
            }
        }
        for id in stride(from: 150, to: 200, by: 3) {
            try db.write {
                let memo = db.object(ofType: SearchMemo.self, forPrimaryKey: id)!
                memo.text = corpus.memo()
                texts[id] = memo.text
            }
        }
        try db.write {
            try db.delete(db.objects(SearchMemo.self).filter("id >= 500"))
            for id in 500..<500 + 20 { texts[id] = nil }
            for id in 600..<700 {
                let memo = SearchMemo()
                memo.id = id
                memo.text = corpus.memo()
                texts[id] = memo.text
                try db.add(memo)
            }
            // An upsert replaces the text.
            let replaced = SearchMemo()
            replaced.id = 3
            replaced.text = "upserted walk"
            texts[3] = replaced.text
            try db.add(replaced, update: .modified)
        }
        for id in 500..<600 { texts[id] = nil }
        try check("after rewrites and deletes")
        expectValid(db)
    }

    @Test func aSearchInsideTheWriteSeesTheWritesChanges() throws {
        let db = try makeDatabase()
        try store(["first walk"], in: db)
        try db.write {
            let memo = SearchMemo()
            memo.id = 1
            memo.text = "second walk"
            try db.add(memo)
            #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'walk'")) == [0, 1])
            memo.text = "second run"
            #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'walk'")) == [0])
            #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'run'")) == [1])
        }
        #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'run'")) == [1])
        // A cancelled write leaves the index as it was.
        try db.beginWrite()
        db.objects(SearchMemo.self).first!.text = "gone"
        #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'gone'")) == [0])
        db.cancelWrite()
        #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'gone'")) == [])
        #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT 'first'")) == [0])
        expectValid(db)
    }

    @Test func deletesCascadesAndDeleteAllLeaveNoTrace() throws {
        let db = try makeDatabase()
        try db.write {
            let album = SearchAlbum()
            album.title = "trip"
            for id in 0..<5 {
                let memo = SearchMemo()
                memo.id = id
                memo.text = "여행 사진 \(id)"
                album.memos.append(memo)
            }
            try db.add(album)
        }
        #expect(try db.objects(SearchMemo.self).filter("text TEXT '여행'").count == 5)
        try db.write { try db.delete(db.objects(SearchAlbum.self)) }
        #expect(try db.objects(SearchMemo.self).filter("text TEXT '여행'").count == 0)
        expectValid(db)
        try store(["여행 again"], in: db)
        #expect(try db.objects(SearchMemo.self).filter("text TEXT '여행'").count == 1)
        try db.write { try db.deleteAll() }
        #expect(try db.objects(SearchMemo.self).filter("text TEXT '여행'").count == 0)
        try store(["새 여행"], in: db)
        #expect(ids(try db.objects(SearchMemo.self).filter("text TEXT '여행'")) == [0])
        expectValid(db)
    }

    @Test func searchRanksByBM25() throws {
        let db = try makeDatabase()
        var corpus = SearchCorpus(state: 99)
        let texts = (0..<300).map { _ in corpus.memo() }
        try store(texts, in: db)
        // The plain BM25 of each text for a query of words.
        let units = texts.map(SearchCorpus.units)
        let documents = Double(units.filter { !$0.isEmpty }.count)
        let average = Double(units.map(\.count).reduce(0, +)) / documents
        for query in [["walk"], ["walk", "park"], ["the"], ["coffee", "rain"]] {
            let frequencies = query.map { word in units.filter { $0.contains(word) }.count }
            func score(_ index: Int) -> Double {
                zip(query, frequencies).reduce(0) { total, pair in
                    let tf = Double(units[index].filter { $0 == pair.0 }.count)
                    let idf = log(1 + (documents - Double(pair.1) + 0.5) / (Double(pair.1) + 0.5))
                    let length = Double(units[index].count)
                    return total + idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
                }
            }
            let ranked = try db.objects(SearchMemo.self).search(query.joined(separator: " "), in: \.text).map(\.id)
            #expect(Set(ranked) == Set(texts.indices.filter { index in query.allSatisfy { units[index].contains($0) } }))
            for (a, b) in zip(ranked, ranked.dropFirst()) {
                #expect(score(a) >= score(b) - 1e-9, "\(query): \(a) (\(score(a))) before \(b) (\(score(b)))")
            }
        }
        // More occurrences, then shorter texts, rank first.
        let small = try makeDatabase("small")
        try store(["walk", "walk walk walk", "a long walk in the park with the dog", "park"], in: small)
        #expect(try small.objects(SearchMemo.self).search("walk", in: "text").map(\.id) == [1, 0, 2])
        #expect(small.objects(SearchMemo.self).sorted(byRelevanceTo: "park", in: "text").map(\.id) == [3, 2, 0, 1])
    }

    @Test func snippetsMarkTheFoundWords() throws {
        let db = try makeDatabase()
        try store(["오늘은 공원에서 산책을 했다. 날씨가 좋았다", "A long walk in the park today, then coffee at home"], in: db)
        let korean = try db.objects(SearchMemo.self).search("산책 공원", in: "text")
        #expect(korean.snippet(for: korean[0])?.marked() == "오늘은 [공원]에서 [산책]을 했다. 날씨가 좋았다")
        let english = try db.objects(SearchMemo.self).search("park", in: "text")
        #expect(english.snippet(for: english[0], length: 4)?.marked() == "…the [park] today, then…")
        #expect(TextSnippet(of: "Café CAFE cafe", matching: "cafe").highlights.count == 3)
        #expect(TextSnippet(of: "no match here", matching: "zebra", length: 2).marked() == "no match…")
        #expect(db.objects(SearchMemo.self).snippet(for: english[0]) == nil)
        // The README's example.
        #expect(
            TextSnippet(of: "한강 공원에서 산책을 했다. Walk by the river", matching: "산책 -비").marked()
                == "한강 공원에서 [산책]을 했다. Walk by the river")
    }

    @Test func badSearchesSayWhatIsWrong() throws {
        let db = try makeDatabase()
        try store(["walk"], in: db)
        let memos = db.objects(SearchMemo.self)
        let unindexed = expectTroveError(.invalidQuery) { try memos.filter("day TEXT 'walk'") }
        #expect(unindexed?.message.contains("full-text index") == true)
        let notText = expectTroveError(.invalidQuery) { try memos.filter("text TEXT 3") }
        #expect(notText?.message.contains("TEXT needs the words") == true)
        let album = expectTroveError(.invalidQuery) { try db.objects(SearchAlbum.self).filter("title TEXT 'x'") }
        #expect(album?.message.contains("@Persisted(indexed: .fullText) var title") == true)
        #expect(ids(try memos.filter("text text 'walk'")) == [0])
    }

    @Test func liveResultsFollowTheIndex() throws {
        let db = try makeDatabase()
        try store(["walk one"], in: db)
        let results = try db.objects(SearchMemo.self).filter("text TEXT 'walk'")
        var changes: [String] = []
        let token = results.observe { change in
            switch change {
            case .initial(let initial): changes.append("initial \(initial.count)")
            case .update(let now, let deletions, let insertions, _):
                changes.append("\(now.count): -\(deletions) +\(insertions)")
            case .error(let error): changes.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        try db.write {
            for (id, text) in [(1, "walk two"), (2, "no")] {
                let memo = SearchMemo()
                memo.id = id
                memo.text = text
                try db.add(memo)
            }
        }
        try db.write { db.objects(SearchMemo.self).first!.text = "run" }
        #expect(changes == ["initial 1", "2: -[] +[1]", "1: -[0] +[]"])
    }

    @Test func rankedLiveResultsReorderWhenABetterMatchArrives() throws {
        let db = try makeDatabase()
        try store(["a walk", "a long walk in the park with the dog"], in: db)
        let ranked = try db.objects(SearchMemo.self).search("walk", in: "text")
        var seen: [[Int]] = []
        var insertions: [[Int]] = []
        let token = ranked.observe { change in
            switch change {
            case .initial(let results): seen.append(results.map(\.id))
            case .update(let results, _, let inserted, _):
                seen.append(results.map(\.id))
                insertions.append(inserted)
            case .error: break
            }
        }
        defer { token.invalidate() }
        try db.write {
            let memo = SearchMemo()
            memo.id = 5
            memo.text = "walk walk walk"
            try db.add(memo)
        }
        #expect(seen == [[0, 1], [5, 0, 1]])
        #expect(insertions == [[0]])
    }

    @Test func persistableStructsAreSearchedToo() throws {
        let db = try makeDatabase()
        try db.write {
            try db.add(SearchEntry(id: 1, body: "공원에서 산책을 했다"))
            try db.add(SearchEntry(id: 2, body: "coffee"))
        }
        #expect(try db.values(SearchEntry.self).search("산책", in: \.body).map(\.id) == [1])
        #expect(try db.values(SearchEntry.self).filter("body TEXT 'COFFEE'").map(\.id) == [2])
        expectValid(db)
    }

    @Test func addingAndRemovingTheIndexBuildsAndDropsIt() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("docs.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV1.SearchDoc.self]))
            try db.write {
                for text in ["산책 공원", "walk in the park", "공원 커피"] {
                    let doc = SearchDocV1.SearchDoc()
                    doc.body = text
                    try db.add(doc)
                }
            }
            expectTroveError(.invalidQuery) { try db.objects(SearchDocV1.SearchDoc.self).filter("body TEXT '공원'") }
        }
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV2.SearchDoc.self]))
            #expect(try db.objects(SearchDocV2.SearchDoc.self).filter("body TEXT '공원'").map(\.body) == ["산책 공원", "공원 커피"])
            #expect(try db.objects(SearchDocV2.SearchDoc.self).filter("body TEXT 'park'").count == 1)
            expectValid(db)
        }
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV1.SearchDoc.self]))
            expectTroveError(.invalidQuery) { try db.objects(SearchDocV1.SearchDoc.self).filter("body TEXT '공원'") }
            expectValid(db)
        }
        // Added again: built again from the objects as they are now.
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV2.SearchDoc.self]))
        #expect(try db.objects(SearchDocV2.SearchDoc.self).filter("body TEXT '커피'").count == 1)
        expectValid(db)
    }
}

@Suite("Full-text index checks")
struct FullTextVerifyTests {
    @Test func encryptedFilesAndCompactedCopiesKeepTheIndex() throws {
        let directory = makeTemporaryDirectory()
        var configuration = Configuration(fileURL: directory.appendingPathComponent("sealed.trove"))
        configuration.encryptionKey = Data((0..<64).map { UInt8($0) })
        let db = try Database(configuration: configuration)
        try store(["비밀 일기: 공원에서 산책", "secret walk", "nothing"], in: db)
        #expect(try db.objects(SearchMemo.self).filter("text TEXT '산책'").map(\.id) == [0])
        expectValid(db)
        let copyURL = directory.appendingPathComponent("copy.trove")
        try db.writeCopy(to: copyURL, encryptionKey: nil)
        let copy = try Database(configuration: Configuration(fileURL: copyURL))
        #expect(try copy.objects(SearchMemo.self).search("walk", in: \.text).map(\.id) == [1])
        expectValid(copy)
    }

    @Test func aMigrationRenamesAndRewritesAnIndexedProperty() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("notes.trove")
        do {
            let db = try Database(
                configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [SearchNoteV1.SearchNote.self]))
            try db.write {
                for body in ["산책 공원", "rainy walk", "커피 한 잔"] {
                    let note = SearchNoteV1.SearchNote()
                    note.body = body
                    try db.add(note)
                }
            }
        }
        let db = try Database(
            configuration: Configuration(fileURL: url, schemaVersion: 2, objectTypes: [SearchNoteV2.SearchNote.self]) {
                migration, _ in
                migration.renameProperty(onType: "SearchNote", from: "body", to: "text")
                migration.enumerateObjects(ofType: "SearchNote") { _, new in
                    if let new, let text = new["text"] as? String, text.hasPrefix("커피") { new["text"] = "녹차 한 잔" }
                }
            })
        let notes = db.objects(SearchNoteV2.SearchNote.self)
        #expect(try notes.filter("text TEXT '산책'").map(\.text) == ["산책 공원"])
        #expect(try notes.filter("text TEXT 'walk'").count == 1)
        #expect(try notes.filter("text TEXT '커피'").count == 0)
        #expect(try notes.filter("text TEXT '녹차'").count == 1)
        expectValid(db)
    }

    @Test func aFileWithAFullTextIndexTellsOlderTrovesToStayAway() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("format.trove")
        // (A file with a type in clusters is format 3 or more from the start, which older Troves refuse as well.)
        let clustered = Configuration(fileURL: url).storesNewTypesInClusters
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV1.SearchDoc.self]))
            #expect(db.fileFormatVersion == (clustered ? db.clustersFormat : 1))
        }
        // A Trove that does not know full-text indexes reads up to format 1: it refuses this file.
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SearchDocV2.SearchDoc.self]))
        #expect(db.fileFormatVersion == (clustered ? db.clustersFormat : 2))
    }

    @Test func verifyNoticesAnIndexOutOfStepWithTheTexts() throws {
        let db = try makeDatabase()
        try store(["산책 공원", "walk in the park", "비 오는 날"], in: db)
        expectValid(db)
        // Rewrite one record behind the index's back, through the storage layer.
        let table = try db.tableInfo(named: "SearchMemo")
        let objectKey = try #require(try db.objectKey(forPrimaryKey: .int(1), in: table))
        let transaction = try WriteTransaction(environment: db.environment)
        var values = try #require(try db.recordValues(objectKey, in: table, transaction))
        values[1] = .string("run in the rain")
        var writer = RecordWriter()
        try writer.encode(values, layout: table.layout)
        try writer.bytes.withUnsafeBytes {
            try table.store.replace(objectKey, record: $0, in: transaction)
        }
        try transaction.commit()
        let report = try db.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.detail.contains("full-text index of text does not hold the terms of object") })
    }
}
