import Foundation
import Testing

@testable import Trove

final class Ranked: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bucket: Int?
    @Persisted(indexed: true) var level = 0
    @Persisted(indexed: true) var tag: String?
    @Persisted var word: String?
    @Persisted var weight: Double?
    @Persisted var owner: RankedOwner?
}

final class RankedOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var rank: Int?
    @Persisted var picks = List<Ranked>()
}

final class Worded: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text: String?
    @Persisted var group = 0
}

@Suite("The first n of a sort")
struct SortedLimitTests {
    /// One object's sort values by property name, as a brute-force sort reads them.
    private struct Row {
        var id: Int
        var values: [String: StoredValue]
    }

    private static let keyPaths = ["bucket", "level", "tag", "word", "weight", "owner.rank", "id"]

    private func fill(_ db: Database, count: Int, using random: inout some RandomNumberGenerator) throws -> [Row] {
        var rows: [Row] = []
        try db.write {
            var owners: [RankedOwner] = []
            for id in 0..<4 {
                let owner = RankedOwner()
                owner.id = id
                owner.rank = id == 3 ? nil : Int.random(in: 0...1, using: &random)
                try db.add(owner)
                owners.append(owner)
            }
            for id in 0..<count {
                let ranked = Ranked()
                ranked.id = id
                // Few distinct values, so most sort values tie; nil in every optional.
                ranked.bucket = Int.random(in: 0..<5, using: &random) == 0 ? nil : Int.random(in: -2...2, using: &random)
                ranked.level = Int.random(in: 0...3, using: &random)
                ranked.tag = Bool.random(using: &random) ? nil : ["a", "b", "ab", "é", ""].randomElement(using: &random)!
                ranked.word = Int.random(in: 0..<4, using: &random) == 0 ? nil : ["x", "y", "서울"].randomElement(using: &random)!
                ranked.weight =
                    Int.random(in: 0..<4, using: &random) == 0 ? nil : Double(Int.random(in: -2...2, using: &random)) / 2
                ranked.owner = Int.random(in: 0..<5, using: &random) == 0 ? nil : owners.randomElement(using: &random)!
                try db.add(ranked)
                let rank = ranked.owner.map { $0.rank.map { StoredValue.int(Int64($0)) } ?? .null } ?? .null
                rows.append(
                    Row(
                        id: id,
                        values: [
                            "bucket": ranked.bucket.map { .int(Int64($0)) } ?? .null, "level": .int(Int64(ranked.level)),
                            "tag": ranked.tag.map { .string($0) } ?? .null, "word": ranked.word.map { .string($0) } ?? .null,
                            "weight": ranked.weight.map { .double($0) } ?? .null, "owner.rank": rank, "id": .int(Int64(id)),
                        ]))
            }
            for owner in owners {
                for _ in 0..<Int.random(in: 0...12, using: &random) where count > 0 {
                    owner.picks.append(db.object(ofType: Ranked.self, forPrimaryKey: Int.random(in: 0..<count, using: &random))!)
                }
            }
        }
        return rows
    }

    /// The rows in the order of `sort`: nil first when ascending, last when descending, ties by id.
    private func bruteForce(_ rows: [Row], _ sort: [Trove.SortDescriptor]) -> [Int] {
        rows.sorted { a, b in
            for descriptor in sort {
                let (x, y) = (a.values[descriptor.keyPath]!, b.values[descriptor.keyPath]!)
                if x == y { continue }
                if x.isNull || y.isNull { return x.isNull == descriptor.ascending }
                return (ValueComparison.order(x, y) == .orderedAscending) == descriptor.ascending
            }
            return a.id < b.id
        }.map(\.id)
    }

    @Test("prefix, first and LIMIT after a sort give the full sort's first n: random data, keys, directions and limits")
    func firstOfASortAgreesWithTheFullSort() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        let rows = try fill(db, count: Int.random(in: 40...90, using: &random), using: &random)
        let all = db.objects(Ranked.self)
        for round in 0..<150 {
            let sort = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Trove.SortDescriptor(
                    keyPath: Self.keyPaths.randomElement(using: &random)!, ascending: Bool.random(using: &random))
            }
            let level = Int.random(in: -1...3, using: &random)
            let filtered = round % 2 == 0 ? all : try all.filter("level >= %@", level)
            let kept =
                round % 2 == 0
                ? rows
                : rows.filter { $0.values["level"]! == .int(Int64(level)) || ($0.values["level"]!.numeric ?? 0) > Double(level) }
            let expected = bruteForce(kept, sort)
            let sorted = filtered.sorted(by: sort)
            #expect(sorted.map(\.id) == expected, "\(sort)")
            for limit in [
                0, 1, 2, 3, expected.count / 2, expected.count, expected.count + 5, Int.random(in: 0...100, using: &random),
            ] {
                #expect(sorted.prefix(limit).map(\.id) == Array(expected.prefix(limit)), "\(sort) prefix(\(limit))")
                let order = sort.map { "\($0.keyPath) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ")
                let query = (round % 2 == 0 ? "TRUEPREDICATE" : "level >= \(level)") + " SORT(\(order)) LIMIT(\(limit))"
                let limited = try all.filter(query)
                #expect(limited.map(\.id) == Array(expected.prefix(limit)), "\(query)")
                #expect(limited.count == Swift.min(limit, expected.count), "\(query)")
            }
            #expect(sorted.first?.id == expected.first, "\(sort) first")
            // A new results value, so `first` runs its own query rather than reading the keys above.
            #expect(filtered.sorted(by: sort).first?.id == expected.first, "\(sort) first")
        }
    }

    @Test("a whole sort by one string follows code-point order: prefixes, empty strings, nil, Korean, ties, both ways")
    func wholeSortByOneString() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        let pieces = ["", "a", "ab", "abc", "b", "B", "서", "서울", "é", "e\u{301}", "\u{0}", "z z", "😀"]
        var texts: [Int: String?] = [:]
        try db.write {
            for id in 0..<400 {
                let object = Worded()
                object.id = id
                object.group = id % 3
                object.text =
                    Int.random(in: 0..<6, using: &random) == 0
                    ? nil
                    : (0..<Int.random(in: 0...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
                texts[id] = object.text
                try db.add(object)
            }
        }
        func expected(_ ids: [Int], ascending: Bool) -> [Int] {
            ids.sorted { a, b in
                switch (texts[a]!, texts[b]!) {
                case (nil, nil): return a < b
                case (nil, _): return ascending
                case (_, nil): return !ascending
                case (let x?, let y?):
                    let order = ValueComparison.order(.string(x), .string(y))
                    if order == .orderedSame { return a < b }
                    return (order == .orderedAscending) == ascending
                }
            }
        }
        for ascending in [true, false] {
            let all = db.objects(Worded.self).sorted(byKeyPath: "text", ascending: ascending)
            #expect(all.map(\.id) == expected(Array(0..<400), ascending: ascending))
            let some = try db.objects(Worded.self).filter("group == 1").sorted(byKeyPath: "text", ascending: ascending)
            #expect(some.map(\.id) == expected((0..<400).filter { $0 % 3 == 1 }, ascending: ascending))
        }
    }

    @Test("a sort read from an index stops at the first n, from either end")
    func firstFromAnIndex() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        let rows = try fill(db, count: 70, using: &random)
        let all = db.objects(Ranked.self)
        for keyPath in ["level", "tag", "id"] {
            for ascending in [true, false] {
                let sort = [Trove.SortDescriptor(keyPath: keyPath, ascending: ascending)]
                let sorted = all.sorted(by: sort)
                #expect(sorted.explain().contains("read in order"))
                let expected = bruteForce(rows, sort)
                for limit in [0, 1, 5, 69, 70, 71] {
                    #expect(sorted.prefix(limit).map(\.id) == Array(expected.prefix(limit)), "\(keyPath) \(ascending) \(limit)")
                }
                #expect(sorted.first?.id == expected.first)
            }
        }
    }

    @Test(
        "a sort led by an indexed key: long values sharing a cut index key, and NaN in a later key, still give the full sort's first n"
    )
    func firstOfASortLedByAnIndex() throws {
        let db = try makeDatabase()
        let long = String(repeating: "가", count: 200)  // 600 bytes: every tag below shares one cut index key
        try db.write {
            for id in 0..<60 {
                let ranked = Ranked()
                ranked.id = id
                ranked.tag = id % 7 == 0 ? nil : long + ["c", "a", "b"][id % 3]
                ranked.weight = id % 11 == 0 ? nil : Double(id % 4)
                ranked.level = id % 5
                try db.add(ranked)
            }
        }
        func check(_ sort: [Trove.SortDescriptor]) {
            // The full sort goes through a filter, which never reads the index in order.
            let full = try! db.objects(Ranked.self).filter("id >= 0").sorted(by: sort).map(\.id)
            let sorted = db.objects(Ranked.self).sorted(by: sort)
            for limit in [1, 2, 9, 10, 30, 59, 60, 61] {
                #expect(sorted.prefix(limit).map(\.id) == Array(full.prefix(limit)), "\(sort) \(limit)")
            }
        }
        for ascending in [true, false] {
            check([.init(keyPath: "tag", ascending: ascending), .init(keyPath: "weight", ascending: !ascending)])
            check([
                .init(keyPath: "level", ascending: ascending), .init(keyPath: "weight"), .init(keyPath: "id", ascending: false),
            ])
        }
        try db.write {
            for ranked in db.objects(Ranked.self) where ranked.id % 6 == 1 { ranked.weight = .nan }
        }
        for ascending in [true, false] {
            check([.init(keyPath: "level", ascending: ascending), .init(keyPath: "weight", ascending: ascending)])
        }
    }

    @Test("the first n of a sorted list follow the full sort of its objects, repeats included")
    func firstOfASortedList() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        _ = try fill(db, count: 30, using: &random)
        for owner in db.objects(RankedOwner.self) {
            for keyPath in Self.keyPaths {
                for ascending in [true, false] {
                    let sorted = owner.picks.sorted(byKeyPath: keyPath, ascending: ascending)
                    let full = sorted.map(\.id)
                    #expect(full.count == owner.picks.count)
                    for limit in [0, 1, 2, 5, full.count, full.count + 1] {
                        #expect(sorted.prefix(limit).map(\.id) == Array(full.prefix(limit)), "\(keyPath) \(ascending) \(limit)")
                    }
                }
            }
        }
    }

    @Test("NaN and other values that compare with nothing: the first n are still the full sort's")
    func unorderedValues() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        _ = try fill(db, count: 60, using: &random)
        try db.write {
            for ranked in db.objects(Ranked.self) where Int.random(in: 0..<4, using: &random) == 0 { ranked.weight = .nan }
        }
        for ascending in [true, false] {
            let sorted = db.objects(Ranked.self).sorted(by: [
                Trove.SortDescriptor(keyPath: "weight", ascending: ascending), Trove.SortDescriptor(keyPath: "bucket"),
            ])
            let full = sorted.map(\.id)
            for limit in [1, 3, 10, 59] {
                #expect(sorted.prefix(limit).map(\.id) == Array(full.prefix(limit)))
            }
        }
    }

    @Test("a prefix is live and counts, filters and explains like LIMIT")
    func prefixIsResults() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        _ = try fill(db, count: 20, using: &random)
        let newest = db.objects(Ranked.self).sorted(by: \.id, ascending: false).prefix(3)
        #expect(newest.map(\.id) == [19, 18, 17])
        #expect(newest.count == 3)
        #expect(newest.explain().hasSuffix("at most 3"))
        try db.write {
            let ranked = Ranked()
            ranked.id = 20
            try db.add(ranked)
        }
        #expect(newest.map(\.id) == [20, 19, 18])
        #expect(try newest.filter("id != 19").map(\.id) == [20, 18])
        #expect(db.objects(Ranked.self).prefix(2).map(\.id) == [0, 1])
    }
}
