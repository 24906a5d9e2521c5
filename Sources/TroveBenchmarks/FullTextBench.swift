import CSQLite
import Foundation
import Trove

/// The memo of the full-text run.
final class FTSMemo: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: .fullText) var text = ""
}

/// The same memo without the index, to tell the index's share of time and size.
enum PlainMemo {
    final class FTSMemo: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var text = ""
    }
}

/// `trove-bench --fts [count]`: BENCHMARKS.md's FTS row. Generated Korean
/// and English memos (10–60 words), Trove's full-text index against SQLite
/// FTS5 with its unicode61 tokenizer (the system library): build time, index
/// size, 1,000 one- and two-term queries, the first 20 by relevance, and
/// recall on Korean words (the share of memos holding the word that each
/// finds). Exits with 1 when Trove misses a memo or disagrees with FTS5 on
/// English words, whatever the timing.
enum FullTextBenchmark {
    static let english = [
        "walk", "park", "coffee", "morning", "rain", "friend", "photo", "travel", "dinner", "work", "river", "bike",
        "dog", "cat", "book", "music", "movie", "beach", "mountain", "train", "bus", "city", "market", "bread", "tea",
        "garden", "flower", "snow", "summer", "winter", "spring", "autumn", "family", "school", "lunch", "breakfast",
        "night", "sunset", "window", "letter", "camera", "street", "bridge", "island", "festival", "concert", "museum",
        "library", "hospital", "office", "meeting", "project", "holiday", "birthday", "party", "gift", "song", "dance",
        "the", "a", "and", "with", "in", "at", "to", "of", "was", "today", "very", "good", "long", "quiet", "happy",
    ]
    static let korean = [
        "산책", "공원", "커피", "아침", "친구", "사진", "여행", "저녁", "회의", "강아지", "고양이", "자전거", "도서관",
        "바다", "하늘", "음악", "영화", "시장", "빵", "차", "정원", "꽃", "눈", "여름", "겨울", "봄", "가을", "가족",
        "학교", "점심", "밤", "노을", "창문", "편지", "카메라", "거리", "다리", "섬", "축제", "공연", "박물관", "병원",
        "사무실", "프로젝트", "휴가", "생일", "선물", "노래", "비", "산", "책", "오늘", "날씨", "기분", "시간", "마음",
    ]
    static let endings = ["", "", "을", "를", "이", "가", "은", "는", "에서", "하고", "도", "로", "에", "와", "했다", "하는"]

    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        /// Skewed towards the front of a list, as word use is.
        mutating func skewed(_ count: Int) -> Int {
            let u = Double(next(1_000_000)) / 1_000_000
            return min(count - 1, Int(Double(count) * u * u * u))
        }
        mutating func memo() -> String {
            (0..<(10 + next(51))).map { _ -> String in
                if next(2) == 0 { return FullTextBenchmark.english[skewed(FullTextBenchmark.english.count)] }
                let stem = FullTextBenchmark.korean[skewed(FullTextBenchmark.korean.count)]
                return stem + FullTextBenchmark.endings[next(FullTextBenchmark.endings.count)]
            }.joined(separator: " ")
        }
        mutating func term() -> (String, isKorean: Bool) {
            next(2) == 0
                ? (FullTextBenchmark.english[skewed(FullTextBenchmark.english.count)], false)
                : (FullTextBenchmark.korean[skewed(FullTextBenchmark.korean.count)], true)
        }
    }

    static func run(count: Int, queryCount: Int = 1000) throws -> Bool {
        var generator = Generator(state: 19)
        let memos = (0..<count).map { _ in generator.memo() }
        let queries: [[(String, isKorean: Bool)]] = (0..<queryCount).map { index in
            (0..<(index % 2 == 0 ? 1 : 2)).map { _ in generator.term() }
        }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("trove-bench-fts-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if ProcessInfo.processInfo.environment["FTS_KEEP"] == nil { try? FileManager.default.removeItem(at: directory) } }
        log("fts: \(count) memos, \(queryCount) queries")

        // Trove, without and with the index.
        let plainURL = directory.appendingPathComponent("plain.trove")
        let plain = try Database(configuration: Configuration(fileURL: plainURL, objectTypes: [PlainMemo.FTSMemo.self]))
        let plainBuild = try time {
            try plain.write {
                for (id, text) in memos.enumerated() {
                    let memo = PlainMemo.FTSMemo()
                    memo.id = id
                    memo.text = text
                    try plain.add(memo)
                }
            }
        }
        let plainSize = try fileSize(plainURL)
        let troveURL = directory.appendingPathComponent("fts.trove")
        let trove = try Database(configuration: Configuration(fileURL: troveURL, objectTypes: [FTSMemo.self]))
        let troveBuild = try time {
            try trove.write {
                for (id, text) in memos.enumerated() {
                    let memo = FTSMemo()
                    memo.id = id
                    memo.text = text
                    try trove.add(memo)
                }
            }
        }
        let troveSize = try fileSize(troveURL)

        // SQLite FTS5, unicode61, text stored in the FTS table (as Trove stores it in the object).
        let sqliteURL = directory.appendingPathComponent("fts.sqlite")
        var db: OpaquePointer?
        guard sqlite3_open(sqliteURL.path, &db) == SQLITE_OK, let db else { throw BenchmarkFailure(description: "open") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw BenchmarkFailure(description: "SQLite \(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw BenchmarkFailure(description: "SQLite \(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
            return statement
        }
        try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
        try exec("CREATE VIRTUAL TABLE memo USING fts5(text, tokenize = 'unicode61')")
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let sqliteBuild = try time {
            try exec("BEGIN")
            let insert = try prepare("INSERT INTO memo(rowid, text) VALUES (?, ?)")
            for (id, text) in memos.enumerated() {
                sqlite3_bind_int64(insert, 1, Int64(id))
                sqlite3_bind_text(insert, 2, text, -1, transient)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchmarkFailure(description: "insert") }
                sqlite3_reset(insert)
            }
            sqlite3_finalize(insert)
            try exec("COMMIT")
        }
        let ftsIndexBytes: Int = try {
            let statement = try prepare("SELECT coalesce(sum(length(block)), 0) FROM memo_data")
            defer { sqlite3_finalize(statement) }
            _ = sqlite3_step(statement)
            return Int(sqlite3_column_int64(statement, 0))
        }()

        // Growing a large index: one memo a write, each commit durable on both sides.
        let extra = (0..<200).map { _ in generator.memo() }
        let troveIncremental = try time {
            for (offset, text) in extra.enumerated() {
                try trove.write {
                    let memo = FTSMemo()
                    memo.id = count + offset
                    memo.text = text
                    try trove.add(memo)
                }
            }
        }
        try exec("PRAGMA synchronous=FULL")
        let sqliteIncremental = try time {
            let insert = try prepare("INSERT INTO memo(rowid, text) VALUES (?, ?)")
            defer { sqlite3_finalize(insert) }
            for (offset, text) in extra.enumerated() {
                try exec("BEGIN")
                sqlite3_bind_int64(insert, 1, Int64(count + offset))
                sqlite3_bind_text(insert, 2, text, -1, transient)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchmarkFailure(description: "insert") }
                sqlite3_reset(insert)
                try exec("COMMIT")
            }
        }

        // The queries, as each engine spells them.
        let texts = queries.map { $0.map(\.0).joined(separator: " ") }
        let results = trove.objects(FTSMemo.self)
        var troveCounts: [Int] = []
        let troveQueries = try time {
            for text in texts { troveCounts.append(try results.filter("text TEXT %@", text).count) }
        }
        let counting = try prepare("SELECT count(*) FROM memo WHERE memo MATCH ?")
        defer { sqlite3_finalize(counting) }
        var sqliteCounts: [Int] = []
        let sqliteQueries = try time {
            for text in texts {
                sqlite3_bind_text(counting, 1, text, -1, transient)
                _ = sqlite3_step(counting)
                sqliteCounts.append(Int(sqlite3_column_int64(counting, 0)))
                sqlite3_reset(counting)
            }
        }
        var troveTop: [[Int]] = []
        let troveRanked = try time {
            for text in texts { troveTop.append(try results.search(text, in: "text").prefix(20).map(\.id)) }
        }
        let top = try prepare("SELECT rowid FROM memo WHERE memo MATCH ? ORDER BY rank LIMIT 20")
        defer { sqlite3_finalize(top) }
        var sqliteTopCount = 0
        let sqliteRanked = try time {
            for text in texts {
                sqlite3_bind_text(top, 1, text, -1, transient)
                while sqlite3_step(top) == SQLITE_ROW { sqliteTopCount += 1 }
                sqlite3_reset(top)
            }
        }

        // Recall on one-word Korean queries: memos holding the word, found by each.
        var holding = 0
        var holdingByWord: [String: Int] = [:]
        let stored = memos + extra
        var troveFound = 0
        var sqliteFound = 0
        var englishDisagreements = 0
        for (index, query) in queries.enumerated() {
            if query.count == 1, query[0].isKorean {
                // Bytes suffice: the generated Hangul is precomposed, one scalar a syllable.
                let word = query[0].0
                if holdingByWord[word] == nil {
                    holdingByWord[word] = stored.lazy.filter { memo in memo.withCString { strstr($0, word) != nil } }.count
                }
                holding += holdingByWord[word]!
                troveFound += troveCounts[index]
                sqliteFound += sqliteCounts[index]
            }
            if query.allSatisfy({ !$0.isKorean }), troveCounts[index] != sqliteCounts[index] { englishDisagreements += 1 }
        }
        let troveRecall = Double(troveFound) / Double(max(holding, 1))
        let sqliteRecall = Double(sqliteFound) / Double(max(holding, 1))

        let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        let rate = { (seconds: Double) in String(format: "%.0f/s", Double(queryCount) / seconds) }
        print("| FTS (\(count) memos, \(queryCount) queries) | Trove | SQLite FTS5 (unicode61) | Trove ÷ FTS5 | bar |")
        print("|---|---:|---:|---:|---|")
        print(
            "| build: insert every memo in one write | \(String(format: "%.2f s", troveBuild)) (without the index \(String(format: "%.2f s", plainBuild))) | \(String(format: "%.2f s", sqliteBuild)) | \(String(format: "%.2f×", troveBuild / sqliteBuild)) time | ≤ 1.5× \(troveBuild / sqliteBuild <= 1.5 ? "met" : "NOT met") |"
        )
        print(
            "| then 200 more memos, one a write (synced commits) | \(String(format: "%.2f ms", troveIncremental * 5)) a write | \(String(format: "%.2f ms", sqliteIncremental * 5)) a write | \(String(format: "%.2f×", troveIncremental / sqliteIncremental)) time | reported |"
        )
        print(
            "| index size | \(megabytes(troveSize - plainSize)) (file \(megabytes(troveSize))) | \(megabytes(ftsIndexBytes)) | \(String(format: "%.2f×", Double(troveSize - plainSize) / Double(max(ftsIndexBytes, 1)))) | reported |"
        )
        print(
            "| one- and two-term queries, count of matches | \(rate(troveQueries)) | \(rate(sqliteQueries)) | \(String(format: "%.2f×", sqliteQueries / troveQueries)) queries/s | ≥ 1× \(sqliteQueries / troveQueries >= 1 ? "met" : "NOT met") |"
        )
        print(
            "| the same, first 20 by relevance (BM25) | \(rate(troveRanked)) | \(rate(sqliteRanked)) | \(String(format: "%.2f×", sqliteRanked / troveRanked)) queries/s | reported |"
        )
        print(
            "| recall on one-word Korean queries (\(holding) memos hold the words) | \(String(format: "%.1f%%", troveRecall * 100)) | \(String(format: "%.1f%%", sqliteRecall * 100)) | | Trove finds all \(troveRecall == 1 ? "met" : "NOT met") |"
        )
        print(
            "| English queries where the two disagree | \(englishDisagreements) of \(queries.filter { $0.allSatisfy { !$0.isKorean } }.count) | | | 0 |"
        )
        _ = troveTop
        return troveRecall == 1 && englishDisagreements == 0
    }

    private static func time(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private static func fileSize(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }

    private static func log(_ text: String) {
        FileHandle.standardError.write(Data("\(text)\n".utf8))
    }
}
