import Foundation
import Trove

/// The model of the scale run: what a diary or chat app with a long history stores.
final class ScaleItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var tags: List<String>
    @Persisted var memo = ""
    @Persisted var date = Date(timeIntervalSince1970: 0)
}

/// `trove-bench --scale 10000,100000,1000000`: the operations that must
/// stay proportional to what they touch as a file grows to millions of
/// objects, at each size, with time and peak heap growth.
/// Prints one Markdown table; nothing is compared against other engines.
enum ScaleBenchmark {
    struct Line {
        var operation: String
        var size: Int
        var seconds: Double
        var heap: Int?
        var note = ""
    }

    static func run(sizes: [Int]) throws {
        // Each line is printed as soon as it is measured, so a long run (10M
        // objects) that is stopped still leaves what it measured.
        func output(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
        output("| operation | objects | time | peak heap growth | note |")
        output("|---|---:|---:|---:|---|")
        for size in sizes {
            FileHandle.standardError.write(Data("scale: \(size) objects\n".utf8))
            try measure(size) { line in
                let heap = line.heap.map { String(format: "%.1f MB", Double($0) / 1_048_576) } ?? "-"
                output("| \(line.operation) | \(line.size) | \(formatted(line.seconds)) | \(heap) | \(line.note) |")
            }
        }
    }

    private static func formatted(_ seconds: Double) -> String {
        seconds < 0.001
            ? String(format: "%.1f µs", seconds * 1e6)
            : seconds < 1 ? String(format: "%.2f ms", seconds * 1e3) : String(format: "%.2f s", seconds)
    }

    /// A deterministic memo of 50–300 characters mixing Korean and English words.
    private static func memo(_ seed: Int) -> String {
        let words = [
            "coffee", "서울", "walk", "산책을", "park", "공원에서", "friend", "친구와", "rain", "비가", "morning", "아침",
            "photo", "사진", "travel", "여행", "work", "회의", "dinner", "저녁",
        ]
        var state = UInt64(truncatingIfNeeded: seed) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let target = 50 + Int(state % 251)
        var text = ""
        var length = 0
        while length < target {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let word = words[Int((state >> 33) % UInt64(words.count))]
            if length > 0 {
                text += " "
                length += 1
            }
            text += word
            length += word.count
        }
        return text
    }

    private static func item(_ id: Int) -> ScaleItem {
        let item = ScaleItem()
        item.id = id
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var state = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
        var name = ""
        for _ in 0..<8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1
            name.append(letters[Int((state >> 35) % 26)])
        }
        item.name = name
        item.age = Int((state >> 20) % 100)
        item.score = Double((state >> 10) % 10_000) / 100
        item.tags.append(objectsIn: ["travel", "work", "urgent"].prefix(Int(state % 4)))
        item.memo = memo(id)
        item.date = Date(timeIntervalSince1970: 1_700_000_000 + Double(id))
        return item
    }

    /// An item's values, for SQLite.
    private static func row(_ id: Int) -> ScaleRow {
        let item = item(id)
        return ScaleRow(
            id: id, name: item.name, age: item.age, score: item.score, memo: item.memo,
            date: item.date.timeIntervalSince1970, tags: Array(item.tags))
    }

    private static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private static func measure(_ size: Int, _ emit: (Line) -> Void) throws {
        let directory = makeScratchDirectory("scale-\(size)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Configuration(fileURL: directory.appendingPathComponent("scale.trove"), objectTypes: [ScaleItem.self])
        configuration.durability = .none
        let db = try Database(configuration: configuration)

        var seconds = 0.0
        let growth = try memoryGrowth {
            seconds = try time {
                for start in stride(from: 0, to: size, by: 10_000) {
                    try db.write {
                        for id in start..<min(start + 10_000, size) { try db.add(item(id)) }
                    }
                }
            }
        }
        emit(
            Line(
                operation: "insert in batches of 10,000", size: size, seconds: seconds, heap: growth?.heap,
                note: "\(Int(Double(size) / seconds)) objects/s"))

        // One commit (an insert and a change) with and without an observer of `age < 50`.
        var nextID = size
        var bumped: [Int] = []
        func commit() throws {
            try db.write {
                try db.add(item(nextID))
                db.object(ofType: ScaleItem.self, forPrimaryKey: nextID / 2)!.age += 1
            }
            bumped.append(nextID / 2)
            nextID += 1
        }
        var plain: [Double] = []
        for _ in 0..<21 { plain.append(try time { try commit() }) }
        emit(Line(operation: "commit (1 insert, 1 change), no observer", size: size, seconds: median(plain), heap: nil))

        for sorted in [false, true] {
            var results = try db.objects(ScaleItem.self).filter("age < 50")
            if sorted { results = results.sorted(by: \.score) }
            var delivered = 0
            var count = 0
            var token: NotificationToken?
            let starting = time {
                token = results.observe { change in
                    if case .update(let results, _, _, _) = change {
                        delivered += 1
                        count = results.count
                    }
                }
            }
            if sorted {
                // The query runs in full (every match's sort value read and sorted) before the first delivery.
                emit(Line(operation: "start observing `age < 50` sorted by score", size: size, seconds: starting, heap: nil))
            }
            var observed: [Double] = []
            for _ in 0..<21 { observed.append(try time { try commit() }) }
            token?.invalidate()
            guard delivered > 0, count > 0 else { throw BenchmarkFailure(description: "the observer heard nothing") }
            emit(
                Line(
                    operation: "commit + delivery to `age < 50`\(sorted ? " sorted by score" : "")", size: size,
                    seconds: median(observed), heap: nil))
        }

        // Sections by age (100 of them), as a diary groups entries by day.
        do {
            let sections = db.objects(ScaleItem.self).sectioned(by: \.age)
            var delivered = 0
            var count = 0
            let token = sections.observe { change in
                if case .update(let sections, _, _, _, _, _) = change {
                    delivered += 1
                    count = sections.count
                }
            }
            var observed: [Double] = []
            for _ in 0..<21 { observed.append(try time { try commit() }) }
            token.invalidate()
            guard delivered > 0, count > 0 else { throw BenchmarkFailure(description: "the sections' observer heard nothing") }
            emit(
                Line(operation: "commit + delivery to sections by age", size: size, seconds: median(observed), heap: nil))
        }

        // Another handle, as another process would: it reads the change log.
        do {
            let other = try Database(configuration: configuration)
            let otherResults = try other.objects(ScaleItem.self).filter("age < 50")
            var heard = 0
            let otherToken = otherResults.observe { change in if case .update = change { heard += 1 } }
            var refreshes: [Double] = []
            for _ in 0..<21 {
                try commit()
                refreshes.append(time { other.refresh() })
            }
            otherToken.invalidate()
            emit(
                Line(
                    operation: "another handle's refresh + delivery", size: size, seconds: median(refreshes), heap: nil,
                    note: "\(heard) deliveries"))
        }

        // Queries that should read only what they return.
        var matches = 0
        seconds = try time { matches = try db.objects(ScaleItem.self).filter("name >= 'm' AND name < 'n'").count }
        emit(
            Line(
                operation: "indexed range count (name in [m, n))", size: size, seconds: seconds, heap: nil,
                note: "\(matches) matches"))
        var firstTen: [Int] = []
        let sortGrowth = memoryGrowth {
            seconds = time { firstTen = db.objects(ScaleItem.self).sorted(by: \.score).prefix(10).map(\.id) }
        }
        emit(
            Line(
                operation: "sorted by score, first 10", size: size, seconds: seconds, heap: sortGrowth?.heap,
                note: "\(firstTen.count) objects"))
        seconds = try time { matches = try db.objects(ScaleItem.self).filter("memo CONTAINS[c] 'COFFEE 서울'").count }
        emit(
            Line(
                operation: "memo CONTAINS[c] 'COFFEE 서울'", size: size, seconds: seconds, heap: nil,
                note: String(format: "%.2f µs/object, %d matches", seconds * 1e6 / Double(size), matches)))

        // Scattered writes (the same objects, in the same batches, in SQLite
        // beside it): a random tenth updated, then a random half deleted,
        // and what the files do.
        var generator = SeededGenerator(seed: UInt64(size))
        let shuffled = (0..<size).shuffled(using: &generator)
        let changed = shuffled.prefix(size / 10)
        let doomed = shuffled.prefix(size / 2)
        let sqlite = try SQLiteEngine(directory: directory, durability: .relaxed)
        for start in stride(from: 0, to: size, by: 10_000) {
            try sqlite.insertScaleItems((start..<min(start + 10_000, size)).map(row))
        }
        try sqlite.updateScaleItems(bumped[...], batch: bumped.count)  // as the commits above did
        seconds = try time {
            for start in stride(from: 0, to: changed.count, by: 10_000) {
                try db.write {
                    for id in changed[start..<min(start + 10_000, changed.count)] {
                        db.object(ofType: ScaleItem.self, forPrimaryKey: id)!.age += 1
                    }
                }
            }
        }
        let sqliteUpdate = try time { try sqlite.updateScaleItems(changed, batch: 10_000) }
        emit(
            Line(
                operation: "update a random tenth's age (batches of 10,000)", size: size, seconds: seconds, heap: nil,
                note: String(format: "SQLite %.2f s: %.2f× SQLite", sqliteUpdate, sqliteUpdate / seconds)))
        let retold = shuffled.suffix(size / 10)
        seconds = try time {
            for start in stride(from: retold.startIndex, to: retold.endIndex, by: 10_000) {
                try db.write {
                    for id in retold[start..<min(start + 10_000, retold.endIndex)] {
                        let item = db.object(ofType: ScaleItem.self, forPrimaryKey: id)!
                        item.memo = String(item.memo.reversed())
                    }
                }
            }
        }
        let sqliteMemo = try time { try sqlite.reverseScaleMemos(retold, batch: 10_000) }
        emit(
            Line(
                operation: "update a random tenth's memo (batches of 10,000)", size: size, seconds: seconds, heap: nil,
                note: String(format: "SQLite %.2f s: %.2f× SQLite", sqliteMemo, sqliteMemo / seconds)))
        let before = db.usedFileSize
        seconds = try time {
            for start in stride(from: 0, to: doomed.count, by: 10_000) {
                try db.write {
                    for id in doomed[start..<min(start + 10_000, doomed.count)] {
                        if let object = db.object(ofType: ScaleItem.self, forPrimaryKey: id) { try db.delete(object) }
                    }
                }
            }
        }
        let after = db.usedFileSize
        let sqliteBefore = try sqlite.checkpointedSize()
        let sqliteDelete = try time { try sqlite.deleteScaleItems(doomed, batch: 10_000) }
        let sqliteAfter = try sqlite.checkpointedSize()
        let (left, ages) = try sqlite.countScaleItems()
        let results = try db.objects(ScaleItem.self).filter("id < %@", size)
        guard left == results.count, ages == results.sum(of: \.age) else {
            throw BenchmarkFailure(description: "Trove and SQLite disagree after the scattered writes")
        }
        func megabytes(_ bytes: Int) -> Int { bytes / 1_048_576 }
        emit(
            Line(
                operation: "delete a random half (batches of 10,000)", size: size, seconds: seconds, heap: nil,
                note: String(
                    format: "file %d MB -> %d MB (%.2f×); SQLite %.2f s (%.2f× SQLite), file %d MB -> %d MB",
                    megabytes(before), megabytes(after), Double(after) / Double(before), sqliteDelete,
                    sqliteDelete / seconds, megabytes(sqliteBefore), megabytes(sqliteAfter))))
        let copy = directory.appendingPathComponent("compacted.trove")
        seconds = try time { try db.writeCopy(to: copy) }
        let compacted = (try FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int) ?? 0
        emit(
            Line(
                operation: "compacted copy", size: size, seconds: seconds, heap: nil,
                note: "\(compacted / 1_048_576) MB (\(Int(Double(compacted) / Double(max(after, 1)) * 100))% of the file)"))

        // One transaction for everything: its memory must not follow its size.
        var single = configuration
        single.fileURL = directory.appendingPathComponent("single.trove")
        let one = try Database(configuration: single)
        let oneGrowth = try memoryGrowth {
            seconds = try time { try one.write { for id in 0..<size { try one.add(item(id)) } } }
        }
        emit(
            Line(
                operation: "insert all in one transaction", size: size, seconds: seconds, heap: oneGrowth?.heap,
                note: "\(Int(Double(size) / seconds)) objects/s"))
    }
}
