import Foundation
import Testing

@testable import Trove

final class Reading: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var level = 0
    @Persisted(indexed: true) var value: Double?
    @Persisted(indexed: true) var label = ""
    @Persisted(indexed: true) var taken = Date(timeIntervalSince1970: 0)
}

final class Caption: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var text: String?
    @Persisted var textCopy: String?
    @Persisted(indexed: true) var tag: UUID?
    @Persisted var tagCopy: UUID?
}

final class Gauge: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var wide = 0
    @Persisted var narrow: Int8 = 0
    @Persisted var maybe: Int?
}

@Suite("Range queries and MATCHES")
struct RangeQueryTests {
    private func readings(_ name: String = #function) throws -> (
        Database, [(id: Int, level: Int, value: Double?, label: String, taken: Date)]
    ) {
        let db = try makeDatabase(name)
        var random = SystemRandomNumberGenerator()
        var rows: [(id: Int, level: Int, value: Double?, label: String, taken: Date)] = []
        try db.write {
            for id in -20...200 {
                let reading = Reading()
                reading.id = id
                reading.level = Int.random(in: -50...50, using: &random)
                reading.value = Bool.random(using: &random) ? nil : Double.random(in: -10...10, using: &random)
                reading.label = String(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in "abcé".randomElement(using: &random)! })
                reading.taken = Date(timeIntervalSince1970: Double(Int.random(in: 0...1000, using: &random)))
                try db.add(reading)
                rows.append((id, reading.level, reading.value, reading.label, reading.taken))
            }
        }
        return (db, rows)
    }

    @Test("ranges on indexed Int, Double, String, Date and the integer primary key agree with a plain filter")
    func rangesAgree() throws {
        let (db, rows) = try readings()
        let all = db.objects(Reading.self)
        func ids(_ query: String, _ arguments: Any?...) throws -> [Int] {
            try all.filter(query, arguments: arguments).map(\.id)
        }
        func expected(_ keep: ((id: Int, level: Int, value: Double?, label: String, taken: Date)) -> Bool) -> [Int] {
            rows.filter(keep).map(\.id)
        }
        for bound in [-51, -50, -3, 0, 7, 50, 51] {
            #expect(try ids("level > %@", bound) == expected { $0.level > bound })
            #expect(try ids("level >= %@", bound) == expected { $0.level >= bound })
            #expect(try ids("level < %@", bound) == expected { $0.level < bound })
            #expect(try ids("level <= %@", bound) == expected { $0.level <= bound })
            #expect(try ids("level BETWEEN {%@, 20}", bound) == expected { $0.level >= bound && $0.level <= 20 })
            #expect(try ids("id > %@", bound) == expected { $0.id > bound })
            #expect(try ids("id <= %@", bound) == expected { $0.id <= bound })
            #expect(try ids("level > %@ AND id < 100", bound) == expected { $0.level > bound && $0.id < 100 })
        }
        for bound in [-10.5, -1.0, 0.0, 3.25, 11.0] {
            #expect(try ids("value > %@", bound) == expected { ($0.value ?? -.infinity) > bound && $0.value != nil })
            #expect(try ids("value <= %@", bound) == expected { $0.value.map { $0 <= bound } ?? false })
        }
        for bound in ["", "a", "b", "bé", "é", "zz"] {
            #expect(try ids("label >= %@", bound) == expected { $0.label.utf8.lexicographicallyPrecedes(bound.utf8) == false })
            #expect(try ids("label < %@", bound) == expected { $0.label.utf8.lexicographicallyPrecedes(bound.utf8) })
            #expect(
                try all.filter("label > %@ AND label <= 'c'", bound).count
                    == expected {
                        bound.utf8.lexicographicallyPrecedes($0.label.utf8) && !"c".utf8.lexicographicallyPrecedes($0.label.utf8)
                    }
                    .count)
        }
        let middle = Date(timeIntervalSince1970: 500)
        #expect(try ids("taken > %@", middle) == expected { $0.taken > middle })
        #expect(
            try ids("taken BETWEEN %@", [Date(timeIntervalSince1970: 100), middle])
                == expected {
                    $0.taken >= Date(timeIntervalSince1970: 100) && $0.taken <= middle
                })
        #expect(try all.filter("level > 10").count == rows.filter { $0.level > 10 }.count)
        // A bound of another kind than the column (a fraction on an Int) scans, with the right answer.
        #expect(try ids("level > %@", 2.5) == expected { $0.level > 2 })
    }

    @Test("both bounds of a range on an index are read: explain counts only the values between them, and the answers agree")
    func rangesUseBothBounds() throws {
        let (db, rows) = try readings()
        let all = db.objects(Reading.self)
        typealias Row = (id: Int, level: Int, value: Double?, label: String, taken: Date)
        /// Checks the answer against a brute-force filter and the candidates explain() counts.
        func check(
            _ query: String, _ arguments: [Any?], candidates: (Row) -> Bool, keep: (Row) -> Bool, exact: Bool = true,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let results = try all.filter(query, arguments: arguments)
            #expect(results.map(\.id) == rows.filter(keep).map(\.id), "\(query) \(arguments)", sourceLocation: sourceLocation)
            // Counted on its own (from the index a value at a time, when the range alone decides).
            #expect(
                try all.filter(query, arguments: arguments).count == rows.filter(keep).count, "\(query) \(arguments): count",
                sourceLocation: sourceLocation)
            let plan = results.explain()
            let count = rows.filter(candidates).count
            let expected = "\(count) candidate\(count == 1 ? "" : "s"), " + (exact ? "no record read" : "each checked")
            #expect(
                plan.contains(expected), "\(query) \(arguments): \(plan), expected \(expected)", sourceLocation: sourceLocation)
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            let (a, b) = (Int.random(in: -55...55, using: &random), Int.random(in: -55...55, using: &random))
            for (low, high) in [(">", "<"), (">=", "<="), (">", "<="), (">=", "<")] {
                func inRange(_ x: Int) -> Bool {
                    (low == ">" ? x > a : x >= a) && (high == "<" ? x < b : x <= b)
                }
                try check(
                    "level \(low) %@ AND level \(high) %@", [a, b], candidates: { inRange($0.level) }, keep: { inRange($0.level) }
                )
                // The primary key (the objects table itself), with the bounds written the other way round.
                try check("id \(high) %@ AND id \(low) %@", [b, a], candidates: { inRange($0.id) }, keep: { inRange($0.id) })
                // Another condition is checked on the range's candidates only.
                try check(
                    "level \(low) %@ AND label != 'a' AND level \(high) %@", [a, b], candidates: { inRange($0.level) },
                    keep: { inRange($0.level) && $0.label != "a" }, exact: false)
            }
            try check(
                "level BETWEEN {%@, %@} AND level < %@", [a, b, a + 10],
                candidates: { $0.level >= a && $0.level <= Swift.min(b, a + 9) },
                keep: { $0.level >= a && $0.level <= Swift.min(b, a + 9) })
            let (x, y) = (Double(a) / 5, Double(b) / 5)
            try check(
                "value >= %@ AND value < %@", [x, y], candidates: { $0.value.map { $0 >= x && $0 < y } ?? false },
                keep: { $0.value.map { $0 >= x && $0 < y } ?? false })
            let (from, to) = (Date(timeIntervalSince1970: Double(a + 55) * 9), Date(timeIntervalSince1970: Double(b + 55) * 9))
            try check(
                "taken > %@ AND taken <= %@", [from, to], candidates: { $0.taken > from && $0.taken <= to },
                keep: { $0.taken > from && $0.taken <= to })
        }
        let labels = ["", "a", "ab", "b", "bé", "c", "é", "éa", "z"]
        for low in labels {
            for high in labels {
                func between(_ label: String) -> Bool {
                    !label.utf8.lexicographicallyPrecedes(low.utf8) && label.utf8.lexicographicallyPrecedes(high.utf8)
                }
                try check(
                    "label >= %@ AND label < %@", [low, high], candidates: { between($0.label) }, keep: { between($0.label) })
                // BEGINSWITH is a range of the index too; with a bound, both narrow it.
                let prefixed = { (row: Row) in
                    row.label.utf8.starts(with: low.utf8) && row.label.utf8.lexicographicallyPrecedes(high.utf8)
                }
                try check("label BEGINSWITH %@ AND label < %@", [low, high], candidates: prefixed, keep: prefixed)
            }
        }
        #expect(try all.filter("label BEGINSWITH 'a' AND label BEGINSWITH 'b'").explain().contains("0 candidates"))
        #expect(try all.filter("level > 10 AND level < 5").explain().contains("index on level > 10 AND level < 5: 0 candidates"))
        #expect(try all.filter("value > %@ AND value < 5", Double.nan).isEmpty)
        // Ranges on two indexed columns: the first one written is read, the other checked.
        let twoColumns = try all.filter("level >= 0 AND value < 0 AND level <= 20")
        #expect(twoColumns.explain().contains("index on level >= 0 AND level <= 20: "))
        #expect(
            twoColumns.map(\.id)
                == rows.filter { (0...20).contains($0.level) && ($0.value ?? 0) < 0 && $0.value != nil }.map(\.id))
    }

    @Test("a sort on an indexed number or date reads the index in order, with nil and ties placed as a sort places them")
    func sortFromIndex() throws {
        let (db, rows) = try readings()
        let all = db.objects(Reading.self)
        func expected<V: Comparable>(_ value: (Int) -> V?, ascending: Bool) -> [Int] {
            let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
            return rows.map(\.id).sorted { a, b in
                switch (value(a), value(b)) {
                case (nil, nil): return a < b
                case (nil, _): return ascending
                case (_, nil): return !ascending
                case (let x?, let y?): return x == y ? a < b : (x < y) == ascending
                }
            }.filter { byID[$0] != nil }
        }
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        for ascending in [true, false] {
            let byValue = all.sorted(by: \.value, ascending: ascending)
            #expect(byValue.explain().contains("index on value read in order"))
            #expect(byValue.map(\.id) == expected({ byID[$0]!.value }, ascending: ascending))
            #expect(
                all.sorted(by: \.level, ascending: ascending).map(\.id) == expected({ byID[$0]!.level }, ascending: ascending))
            #expect(
                all.sorted(by: \.taken, ascending: ascending).map(\.id) == expected({ byID[$0]!.taken }, ascending: ascending))
            #expect(all.sorted(by: \.id, ascending: ascending).map(\.id) == expected({ $0 }, ascending: ascending))
            // With a filter, the records decide and sort as before.
            #expect(
                try all.filter("level > 0").sorted(by: \.value, ascending: ascending).map(\.id)
                    == expected({ byID[$0]!.value }, ascending: ascending).filter { byID[$0]!.level > 0 })
        }
    }

    @Test("a sort on an indexed string or UUID reads the index in order, long values that share a cut key included")
    func stringSortFromIndex() throws {
        let db = try makeDatabase()
        let long = String(repeating: "x", count: 600)
        let texts: [String?] = [
            "b", "a", nil, "é", "B", long + "b", long + "a", long + "a", "", "ä", "a", long, nil, "한글", "z",
        ]
        var random = SystemRandomNumberGenerator()
        try db.write {
            for (id, text) in texts.enumerated() {
                let caption = Caption()
                caption.id = id
                caption.text = text
                caption.textCopy = text
                caption.tag =
                    id % 4 == 0
                    ? nil : UUID(uuid: (UInt8.random(in: 0...255, using: &random), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                caption.tagCopy = caption.tag
                try db.add(caption)
            }
        }
        let all = db.objects(Caption.self)
        // Counts of ranges whose bounds or values are longer than an index key holds: the records decide.
        for (low, high) in [(long, long + "b"), ("a", long + "a"), (long + "a", "z"), ("", "한")] {
            let counted = try all.filter("text >= %@ AND text < %@", low, high).count
            let listed = try all.filter("textCopy >= %@ AND textCopy < %@", low, high).map(\.id)
            #expect(counted == listed.count, "[\(low.prefix(3)), \(high.suffix(2)))")
        }
        for ascending in [true, false] {
            let fromIndex = all.sorted(by: \.text, ascending: ascending)
            #expect(fromIndex.explain().contains("index on text read in order"))
            #expect(fromIndex.map(\.id) == all.sorted(by: \.textCopy, ascending: ascending).map(\.id))
            #expect(
                all.sorted(by: \.tag, ascending: ascending).map(\.id) == all.sorted(by: \.tagCopy, ascending: ascending).map(\.id)
            )
        }
        #expect(all.sorted(by: \.text).map(\.text).prefix(3).map { $0 ?? "nil" } == ["nil", "nil", ""])
    }

    @Test("MATCHES takes a whole-string regular expression; [c] ignores case; a bad pattern is an invalidQuery")
    func matches() throws {
        let db = try makeDatabase()
        try db.write {
            for (id, name) in ["Ann", "anna", "Bob", "Annabel"].enumerated() {
                let person = Person()
                person.id = id
                person.name = name
                try db.add(person)
            }
        }
        let all = db.objects(Person.self)
        #expect(try all.filter("name MATCHES 'Ann.*'").map(\.name) == ["Ann", "Annabel"])
        #expect(try all.filter("name MATCHES[c] 'ann'").map(\.name) == ["Ann"])
        #expect(try all.filter("name MATCHES 'nn'").isEmpty)
        expectTroveError(.invalidQuery) { try all.filter("name MATCHES '('") }
        expectTroveError(.invalidQuery) { try all.filter("age MATCHES '1'") }
        #expect(try all.filter("name MATCHES 'Ann|Annabel'").map(\.name) == ["Ann", "Annabel"])  // any branch, whole string
        let backreference = expectTroveError(.invalidQuery) { try all.filter("name MATCHES %@", #"(a)\1"#) }
        #expect(backreference?.message.contains("backreferences need backtracking") == true)
        expectTroveError(.invalidQuery) { try all.filter("name MATCHES %@", String(repeating: "a", count: 1_001)) }
    }

    @Test("MATCHES with an expression that backtracks exponentially answers every row, and correctly")
    func matchesNeverGivesUp() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 0..<20 {
                let person = Person()
                person.id = id
                person.name = String(repeating: "x", count: 39) + (id % 4 == 0 ? "#" : "y")
                try db.add(person)
            }
        }
        let found = try db.objects(Person.self).filter("name MATCHES '(.*.*)*#'").map(\.id)
        #expect(found == [0, 4, 8, 12, 16])
    }

    @Test("IN with long lists of integers, strings and UUIDs gives the answers of one comparison each")
    func longInLists() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 0..<300 {
                let person = Person()
                person.id = id
                person.name = "name \(id)"
                person.age = id % 7 == 0 ? nil : id
                try db.add(person)
            }
        }
        let all = db.objects(Person.self)
        let ages = Array(stride(from: 0, to: 600, by: 3))
        #expect(try all.filter("age IN %@", ages).map(\.id) == (0..<300).filter { $0 % 3 == 0 && $0 % 7 != 0 })
        let names = (0..<300).filter { $0 % 5 == 1 }.map { "name \($0)" } + ["nobody"]
        #expect(try all.filter("name IN %@", names).count == 60)
        #expect(try all.filter("NOT name IN %@", names).count == 240)
        let withNil: [Int?] = [nil, 1, 2, 3, 4, 5, 6, 7]
        #expect(try all.filter("age IN %@", withNil).count == 43 + 6)  // nil matches the missing ages
    }

    private func gauges(_ name: String = #function) throws -> (Database, [(id: Int, wide: Int, narrow: Int8, maybe: Int?)]) {
        let db = try makeDatabase(name)
        var random = SystemRandomNumberGenerator()
        let edges = [Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max]
        var rows: [(id: Int, wide: Int, narrow: Int8, maybe: Int?)] = []
        try db.write {
            for id in 1...300 {
                let gauge = Gauge()
                gauge.id = id
                gauge.wide = id <= edges.count ? edges[id - 1] : Int.random(in: -1000...1000, using: &random)
                gauge.narrow = id % 50 == 0 ? .max : id % 51 == 0 ? .min : Int8.random(in: -20...20, using: &random)
                gauge.maybe = id % 3 == 0 ? nil : Int.random(in: -10...10, using: &random)
                try db.add(gauge)
                rows.append((id, gauge.wide, gauge.narrow, gauge.maybe))
            }
        }
        return (db, rows)
    }

    @Test("unindexed integer comparisons agree with Swift at the edges of Int64 and Int8, with nil and in conjunctions")
    func unindexedIntegerComparisons() throws {
        let (db, rows) = try gauges()
        let all = db.objects(Gauge.self)
        func ids(_ query: String, _ arguments: Any?...) throws -> [Int] {
            try all.filter(query, arguments: arguments).map(\.id)
        }
        func expected(_ keep: ((id: Int, wide: Int, narrow: Int8, maybe: Int?)) -> Bool) -> [Int] {
            rows.filter(keep).map(\.id)
        }
        for bound in [Int.min, Int.min + 1, -5, 0, 5, Int.max - 1, Int.max] {
            #expect(try ids("wide < %@", bound) == expected { $0.wide < bound })
            #expect(try ids("wide <= %@", bound) == expected { $0.wide <= bound })
            #expect(try ids("wide > %@", bound) == expected { $0.wide > bound })
            #expect(try ids("wide >= %@", bound) == expected { $0.wide >= bound })
            #expect(try ids("wide == %@", bound) == expected { $0.wide == bound })
            #expect(try ids("narrow > %@", bound) == expected { Int($0.narrow) > bound })
            #expect(try ids("narrow <= %@", bound) == expected { Int($0.narrow) <= bound })
            // nil is in no range, and != keeps it.
            #expect(try ids("maybe >= %@", bound) == expected { $0.maybe.map { $0 >= bound } ?? false })
            #expect(try ids("maybe != %@", bound) == expected { $0.maybe != bound })
        }
        #expect(try ids("narrow >= 127") == expected { $0.narrow == .max })
        #expect(try ids("narrow < -127") == expected { $0.narrow == .min })
        #expect(
            try ids("wide >= -100 AND wide < 100 AND narrow > 0") == expected { (-100..<100).contains($0.wide) && $0.narrow > 0 })
        #expect(try ids("wide > 10 AND wide < 5").isEmpty)
        #expect(try ids("wide == 0 AND wide == 1").isEmpty)
        #expect(try ids("narrow BETWEEN {-3, 3}") == expected { (-3...3).contains($0.narrow) })
        #expect(try ids("maybe BETWEEN {-3, 3} AND wide > 0") == expected { (-3...3).contains($0.maybe ?? 99) && $0.wide > 0 })
        #expect(try ids("5 > wide AND wide >= -5") == expected { (-5..<5).contains($0.wide) })
    }

    @Test("sum, min, max and average agree with Swift before and after counting, and follow writes")
    func aggregatesOverFilteredResults() throws {
        let (db, rows) = try gauges()
        let range = try db.objects(Gauge.self).filter("maybe >= -3 AND maybe < 4")
        func check(_ rows: [(id: Int, wide: Int, narrow: Int8, maybe: Int?)], sourceLocation: SourceLocation = #_sourceLocation) {
            let kept = rows.compactMap(\.maybe).filter { (-3..<4).contains($0) }
            #expect(range.sum(of: \.maybe) == kept.reduce(0, +), sourceLocation: sourceLocation)
            #expect(range.min(of: \.maybe) == kept.min(), sourceLocation: sourceLocation)
            #expect(range.max(of: \.maybe) == kept.max(), sourceLocation: sourceLocation)
            let mean = kept.isEmpty ? nil : Double(kept.reduce(0, +)) / Double(kept.count)
            #expect(range.average(of: \.maybe) == mean, sourceLocation: sourceLocation)
        }
        check(rows)  // one pass each
        #expect(range.count == rows.filter { (-3..<4).contains($0.maybe ?? 99) }.count)
        check(rows)  // from the keys the count found
        var changed = rows
        try db.write {
            for gauge in try db.objects(Gauge.self).filter("id <= 30") { gauge.maybe = 3 }
        }
        for index in 0..<30 { changed[index].maybe = 3 }
        check(changed)
        _ = range.count
        check(changed)
        // A sum over most of the table: one pass even after a count.
        let moderate = try db.objects(Gauge.self).filter("wide >= -1000 AND wide <= 1000")
        let wides = changed.map(\.wide).filter { (-1000...1000).contains($0) }
        #expect(moderate.sum(of: \.wide) == wides.reduce(0, +))
        #expect(moderate.count == wides.count)
        #expect(moderate.sum(of: \.wide) == wides.reduce(0, +))
    }
}
