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
    }
}
