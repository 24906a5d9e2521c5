import Foundation
import Testing

@testable import Trove

@Suite("Queries")
struct QueryTests {
    /// 100 persons: id 1...100, age id % 50 (nil every 10th), name "P<id>", city by id % 4.
    private func populated(_ name: String = #function) throws -> Database {
        let db = try makeDatabase(name)
        let cities = ["Oslo", "Seoul", "Lima", "Perth"]
        try db.write {
            for id in 1...100 {
                let person = Person()
                person.id = id
                person.name = "P\(id)"
                person.age = id % 10 == 0 ? nil : id % 50
                person.city = cities[id % 4]
                person.score = Double(id) / 4
                try db.add(person)
            }
        }
        return db
    }

    private func ids(_ results: Results<Person>) -> [Int] { results.map(\.id) }

    @Test("comparison operators on Int, Double and String")
    func comparisons() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        #expect(try all.filter("age == 7").map(\.id) == [7, 57])
        #expect(try all.filter("age = 7").count == 2)
        #expect(try all.filter("age != 7").count == 98)
        #expect(try all.filter("age <> 7").count == 98)
        #expect(try all.filter("age < 3").map(\.id) == [1, 2, 51, 52])
        #expect(try all.filter("age <= 1").map(\.id) == [1, 51])
        #expect(try all.filter("age > 48").map(\.id) == [49, 99])
        #expect(try all.filter("age >= 49").map(\.id) == [49, 99])
        #expect(try all.filter("score > 24.5").map(\.id) == [99, 100])
        #expect(try all.filter("score >= 25").map(\.id) == [100])
        #expect(try all.filter("name == 'P42'").map(\.id) == [42])
        #expect(try all.filter("name > 'P98'").map(\.id) == [99])
    }

    @Test("AND, OR, NOT, parentheses, TRUEPREDICATE and FALSEPREDICATE")
    func logic() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        #expect(try all.filter("age > 45 AND city == 'Seoul'").map(\.id) == [49, 97])
        #expect(try all.filter("age > 45 && city == 'Seoul'").map(\.id) == [49, 97])
        #expect(try all.filter("id == 1 OR id == 3").map(\.id) == [1, 3])
        #expect(try all.filter("id == 1 || id == 3").map(\.id) == [1, 3])
        #expect(try all.filter("NOT id > 2").map(\.id) == [1, 2])
        #expect(try all.filter("!(id > 2)").map(\.id) == [1, 2])
        #expect(try all.filter("(id == 1 OR id == 2) AND NOT id == 1").map(\.id) == [2])
        #expect(try all.filter("TRUEPREDICATE").count == 100)
        #expect(try all.filter("FALSEPREDICATE").count == 0)
    }

    @Test("%@ arguments of every kind, including the seeds' two forms")
    func arguments() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        let id = 42
        #expect(try all.filter("id = \(id)").first?.name == "P42")
        #expect(try all.filter("name == %@", "P42").first?.id == 42)
        #expect(try all.filter("age > %@ AND city == %@", 40, "Oslo").map(\.id) == [44, 48, 92, 96])
        #expect(try all.filter("score == %@", 2.5).map(\.id) == [10])
        #expect(try all.filter("id IN %@", [3, 5, 999]).map(\.id) == [3, 5])
        #expect(try all.filter("id IN {1, 2}").map(\.id) == [1, 2])
        #expect(try all.filter("age BETWEEN {10, 11}").map(\.id) == [11, 61])
        #expect(try all.filter("age == nil").count == 10)
        #expect(try all.filter("age != NULL").count == 90)
        #expect(try all.filter("age == %@", nil as Int?).count == 10)
        #expect(try all.filter("%K == %@", "name", "P7").map(\.id) == [7])
        #expect(try all.filter("name == $0 OR name == $1", "P1", "P2").count == 2)
    }

    @Test("string operators with [c] and [d] across Unicode")
    func strings() throws {
        let db = try makeDatabase()
        try db.write {
            for (id, name) in ["Ålesund", "alesund", "ÉCOLE", "straße", "İstanbul", "서울"].enumerated() {
                let person = Person()
                person.id = id
                person.name = name
                try db.add(person)
            }
        }
        let all = db.objects(Person.self)
        #expect(try all.filter("name BEGINSWITH 'Å'").count == 1)
        #expect(try all.filter("name BEGINSWITH[c] 'å'").count == 1)
        #expect(try all.filter("name BEGINSWITH[cd] 'a'").count == 2)
        #expect(try all.filter("name ENDSWITH[c] 'COLE'").count == 1)
        #expect(try all.filter("name CONTAINS 'ß'").count == 1)
        #expect(try all.filter("name CONTAINS[cd] 'ecol'").count == 1)
        #expect(try all.filter("name LIKE '?lesund'").count == 2)
        #expect(try all.filter("name LIKE '*und'").count == 2)
        #expect(try all.filter("name LIKE[c] 'é*'").count == 1)
        #expect(try all.filter("name == '서울'").count == 1)
        #expect(try all.filter("name ==[c] 'ALESUND'").count == 1)
    }

    @Test("queries on Date, Bool, UUID, Data, Decimal and enums")
    func otherTypes() throws {
        let db = try makeDatabase()
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        let uuid = UUID()
        try db.write {
            for id in 0..<5 {
                let object = AllTypes()
                object.id = id
                object.date = base.addingTimeInterval(Double(id) * 86_400)
                object.bool = id % 2 == 0
                object.uuid = id == 3 ? uuid : UUID()
                object.data = Data([UInt8(id), 1, 2])
                object.decimal = Decimal(id) / 10
                object.mood = id < 2 ? .sad : .happy
                object.priority = id == 4 ? .high : .low
                try db.add(object)
            }
        }
        let all = db.objects(AllTypes.self)
        #expect(try all.filter("date == %@", base).map(\.id) == [0])
        #expect(try all.filter("date > %@", base.addingTimeInterval(86_400)).map(\.id) == [2, 3, 4])
        #expect(try all.filter("bool == true").map(\.id) == [0, 2, 4])
        #expect(try all.filter("bool == NO").map(\.id) == [1, 3])
        #expect(try all.filter("uuid == %@", uuid).map(\.id) == [3])
        #expect(try all.filter("data == %@", Data([2, 1, 2])).map(\.id) == [2])
        #expect(try all.filter("data BEGINSWITH %@", Data([4])).map(\.id) == [4])
        #expect(try all.filter("decimal >= 0.3").map(\.id) == [3, 4])
        #expect(try all.filter("mood == %@", Mood.sad).map(\.id) == [0, 1])
        #expect(try all.filter("priority == %@", Priority.high).map(\.id) == [4])
        #expect(try all.filter("priority > 1").map(\.id) == [4])
    }

    @Test("indexed and unindexed equality give the same answers")
    func indexAgreesWithScan() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        for city in ["Oslo", "Seoul", "Lima", "Perth", "Nowhere"] {
            let indexed = try all.filter("city == %@", city).map(\.id)
            let scanned = try all.filter("city ==[c] %@", city).map(\.id)  // [c] is not answered from the index
            #expect(indexed == scanned)
            #expect(indexed == all.filter { $0.city == city }.map(\.id))
        }
        #expect(try all.filter("city IN {'Oslo', 'Lima'}").count == 50)
        #expect(try all.filter("city == 'Oslo' AND age > 40").map(\.id) == [44, 48, 92, 96])
        #expect(try all.filter("id == 77").map(\.id) == [77])
        #expect(try all.filter("id == 77 AND city == 'Oslo'").isEmpty)
    }

    @Test("sorting by key path and by name, ascending and descending, nil first")
    func sorting() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        #expect(all.sorted(by: \.score, ascending: false).prefix(3).map(\.id) == [100, 99, 98])
        #expect(all.sorted(byKeyPath: "name").prefix(3).map(\.name) == ["P1", "P10", "P100"])
        let byAge = try all.filter("id <= 20").sorted(by: \.age)
        #expect(byAge.prefix(2).map(\.id) == [10, 20])  // nil ages first
        #expect(byAge.last?.id == 19)
        let multi = try all.filter("id <= 8").sorted(by: [
            SortDescriptor(keyPath: "city"), SortDescriptor(keyPath: "id", ascending: false),
        ])
        #expect(multi.map(\.id) == [6, 2, 8, 4, 7, 3, 5, 1])  // Lima, Oslo, Perth, Seoul
    }

    @Test("aggregates: min, max, sum, average, count, on all or filtered results")
    func aggregates() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        #expect(all.max(of: \.id) == 100)
        #expect(all.min(of: \.id) == 1)
        #expect(all.sum(of: \.id) == 5050)
        #expect(all.average(of: \.id) == 50.5)
        #expect(all.max(of: \.age) == 49)
        #expect(try all.filter("city == 'Oslo'").sum(of: \.id) == (1...100).filter { $0 % 4 == 0 }.reduce(0, +))
        #expect(try all.filter("id > 1000").max(of: \.id) == nil)
        #expect(try all.filter("id > 1000").average(of: \.score) == nil)
        #expect(all.max(ofProperty: "id") as Int? == 100)
        #expect(db.objects(Dog.self).max(of: \.age) == nil)
    }

    @Test("results are live: they follow writes on their handle")
    func liveResults() throws {
        let db = try populated()
        let oslo = try db.objects(Person.self).filter("city == 'Oslo'")
        #expect(oslo.count == 25)
        try db.write {
            let person = Person()
            person.id = 1000
            person.city = "Oslo"
            try db.add(person)
        }
        #expect(oslo.count == 26)
        try db.write { oslo.first!.city = "Lima" }
        #expect(oslo.count == 25)
    }

    @Test("SORT, DISTINCT and LIMIT after a predicate apply in the order written")
    func suffixes() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        // Ages 49, 48, 47 are held by ids 49/99, 48/98, 47/97; the larger id comes first among equals.
        let top = try all.filter("age > 40 SORT(age DESC, id DESC) LIMIT(3)")
        #expect(ids(top) == [99, 49, 98])
        #expect(top.count == 3)
        #expect(ids(try all.filter("age > 40 SORT(age DESC) DISTINCT(age) LIMIT(3)")) == [49, 48, 47])
        // LIMIT first, then the sort orders what it kept.
        #expect(ids(try all.filter("TRUEPREDICATE LIMIT(3) SORT(id DESC)")) == [3, 2, 1])
        #expect(ids(try all.filter("city == 'Oslo' distinct(city)")) == [4])
        #expect(try all.filter("age == 1 LIMIT(0)").isEmpty)
        // Later filters narrow what the LIMIT kept; aggregates see only it.
        let firstTen = try all.filter("TRUEPREDICATE SORT(id ASC) LIMIT(10)")
        #expect(ids(try firstTen.filter("age > 5")) == [6, 7, 8, 9])
        #expect(firstTen.sum(of: \.score) == Double((1...10).reduce(0, +)) / 4)
        // A bad suffix points at itself.
        #expect(expectTroveError(.invalidQuery) { try all.filter("age > 1 SORT(agee DESC)") }?.position == 8)
        #expect(expectTroveError(.invalidQuery) { try all.filter("age > 1 LIMIT(-1)") }?.position == 14)
        #expect(expectTroveError(.invalidQuery) { try all.filter("age > 1 SORT(age DESC") }?.message.contains("end") == true)
        #expect(expectTroveError(.invalidQuery) { try all.filter("age > 1 LIMIT(2) extra") }?.position == 17)
    }

    @Test("first is the first of the matches in order, sorted or not")
    func first() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        #expect(try all.filter("age > 40").first?.id == 41)
        #expect(all.sorted(by: \.id, ascending: false).first?.id == 100)
        #expect(try all.filter("age > 40").sorted(by: \.score, ascending: false).first?.id == 99)
        #expect(try all.filter("age > 400").first == nil)
        #expect(try all.filter("city == 'Lima' AND age < 3").first?.id == 2)
        try db.write { try db.delete(db.objects(Person.self).filter("id < 45")) }
        #expect(try all.filter("age > 40").first?.id == 45)
    }

    @Test("distinct(by:) keeps the first of each value and stays live")
    func distinct() throws {
        let db = try populated()
        let byCity = db.objects(Person.self).sorted(by: \.id).distinct(by: \.city)
        #expect(ids(byCity) == [1, 2, 3, 4])
        #expect(
            try ids(db.objects(Person.self).sorted(by: \.id, ascending: false).distinct(by: ["city", "age"]).filter("id > 95"))
                == [
                    100, 99, 98, 97, 96,
                ])
        try db.write {
            let person = Person()
            person.id = 0
            person.city = "Rome"
            try db.add(person)
        }
        #expect(ids(byCity) == [0, 1, 2, 3, 4])
    }

    @Test("explain() names the index or the scan, the sort and the later steps")
    func explain() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        let indexed = try all.filter("city == 'Oslo' AND age > 30").explain()
        #expect(indexed.contains("index on city == \"Oslo\": 25 candidates, each checked"))
        let both = try all.filter("city == 'Oslo' AND name == 'P8' AND score > 1")
        #expect(both.explain().contains("index on city == \"Oslo\" and index on name == \"P8\": 1 candidate, each checked"))
        #expect(ids(both) == [8])
        #expect(
            try all.filter("city == 'Oslo' AND name IN {'P8', 'P9', 'P12'}").explain().contains("2 candidates, no record read"))
        #expect(try all.filter("id == 7").explain().contains("primary key on id == 7: 1 candidate, no record read"))
        #expect(try all.filter("score > 3").explain().contains("scan of 100 objects, reading score"))
        let prefixed = try all.filter("name BEGINSWITH 'P1'")
        #expect(prefixed.explain().contains("index on name BEGINSWITH \"P1\": 12 candidates, no record read"))
        #expect(Set(ids(prefixed)) == Set((1...100).filter { "P\($0)".hasPrefix("P1") }))
        #expect(try all.filter("name BEGINSWITH[c] 'p1'").count == 12)
        let shaped = try all.filter("name BEGINSWITH 'P1' SORT(age DESC) DISTINCT(age) LIMIT(2)").explain()
        #expect(shaped.split(separator: "\n").count == 4)
        #expect(shaped.contains("sort by age DESC\ndistinct by age\nat most 2"))
    }

    @Test("malformed predicates throw invalidQuery with the position and the token")
    func malformed() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        var error = expectTroveError(.invalidQuery) { try all.filter("age >") }
        #expect(error?.position == 5)
        error = expectTroveError(.invalidQuery) { try all.filter("age > 3 AND") }
        #expect(error?.message.contains("end") == true)
        error = expectTroveError(.invalidQuery) { try all.filter("age 3") }
        #expect(error?.position == 4)
        #expect(error?.message.contains("'3'") == true || error?.message.contains("3") == true)
        error = expectTroveError(.invalidQuery) { try all.filter("(age > 3") }
        #expect(error?.message.contains("')'") == true)
        error = expectTroveError(.invalidQuery) { try all.filter("name == 'open") }
        #expect(error?.position == 8)
        expectTroveError(.invalidQuery) { try all.filter("age > %@") }
        expectTroveError(.invalidQuery) { try all.filter("age > 3", 4) }
        expectTroveError(.invalidQuery) { try all.filter("age ># 3") }
        expectTroveError(.invalidQuery) { try all.filter("") }
    }

    @Test("an unknown property names the type and suggests the closest name")
    func unknownProperty() throws {
        let db = try populated()
        let error = expectTroveError(.invalidQuery) { try db.objects(Person.self).filter("naem == 'x'") }
        #expect(error?.message.contains("Person") == true)
        #expect(error?.message.contains("'name'") == true)
        #expect(error?.position == 0)
    }

    @Test("an argument of the wrong type names the property and both types")
    func wrongArgumentType() throws {
        let db = try populated()
        let error = expectTroveError(.invalidQuery) { try db.objects(Person.self).filter("age == %@", "old") }
        #expect(error?.message.contains("age") == true)
        #expect(error?.message.contains("Int") == true)
        #expect(error?.message.contains("String") == true)
        expectTroveError(.invalidQuery) { try db.objects(Person.self).filter("age BEGINSWITH 'x'") }
    }

    @Test(
        "ordered against nil as realm-core orders: a number > or < nil never holds, >= and <= only for nil; a string is greater than nil"
    )
    func orderingAgainstNil() throws {
        let db = try makeDatabase()
        try db.write {
            for (id, value) in [(1, 5), (2, nil), (3, -1)] as [(Int, Int?)] {
                let row = AllTypes()
                row.id = id
                row.optInt = value
                try db.add(row)
            }
        }
        func ids(_ query: String) throws -> [Int] { try db.objects(AllTypes.self).filter(query, nil as Int?).map(\.id).sorted() }
        #expect(try ids("optInt > %@").isEmpty && ids("optInt < %@").isEmpty)
        #expect(try ids("optInt >= %@") == [2] && ids("optInt <= %@") == [2])
        #expect(try ids("NOT optInt > %@") == [1, 2, 3])
        try db.write {
            db.object(ofType: AllTypes.self, forPrimaryKey: 1)?.optString = "b"
            db.object(ofType: AllTypes.self, forPrimaryKey: 3)?.optString = ""
        }
        #expect(try ids("optString > %@") == [1, 3] && ids("optString >= %@") == [1, 2, 3])
        #expect(try ids("optString < %@").isEmpty && ids("optString <= %@") == [2])
        expectTroveError(.invalidQuery) { try db.objects(AllTypes.self).filter("optInt BEGINSWITH nil") }
    }

    @Test("random and mutated query strings never crash the parser")
    func fuzzParser() throws {
        let db = try populated()
        let all = db.objects(Person.self)
        let seeds = [
            "age > 3 AND (name BEGINSWITH[c] 'p' OR city IN {'Oslo', 'Lima'})", "NOT id BETWEEN {1, 5}", "name LIKE '*1?'",
            "score >= -1.5e3 || TRUEPREDICATE", "%K == %@",
            "SUBQUERY(city, $c, $c.name == %@).@count > %@", "age > 1 SORT(age DESC, name ASC) DISTINCT(city) LIMIT(3)",
            "city['k.x'] == %@ AND ANY city.@allKeys == %@", "%@ IN city",
        ]
        let pieces = Array("()[]{}'\"%@K$0123456789.,=<>!&|ANDORNOT age name id city cd\\ SUBQUERYSORTLIMITDISTINCT")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            var text = Array(seeds.randomElement(using: &generator)!)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: 0...text.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: text.insert(pieces.randomElement(using: &generator)!, at: at)
                case 1: if at < text.count { text.remove(at: at) }
                default: if at < text.count { text[at] = pieces.randomElement(using: &generator)! }
                }
            }
            do {
                _ = try all.filter(String(text), "name", 1).count
            } catch let error as TroveError {
                #expect(error.kind == .invalidQuery)
            }
        }
    }
}
