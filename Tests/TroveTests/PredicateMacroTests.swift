import Foundation
import Testing

@testable import Trove

/// Foundation `#Predicate` through Trove's query engine. The expected answer
/// is the closure itself: `Predicate.evaluate` run on every object.
@Suite("#Predicate")
struct PredicateMacroTests {
    /// 60 persons: id 1...60, age id % 25 (nil every 7th), name "P<id>" (every 5th lower-case),
    /// city by id % 3, score id / 3.
    private func people() throws -> Database {
        let db = try makeDatabase(#function + UUID().uuidString)
        let cities = ["Oslo", "Seoul", "Lima"]
        try db.write {
            for id in 1...60 {
                let person = Person()
                person.id = id
                person.name = id % 5 == 0 ? "p\(id)" : "P\(id)"
                person.age = id % 7 == 0 ? nil : id % 25
                person.city = cities[id % 3]
                person.score = Double(id) / 3
                try db.add(person)
            }
        }
        return db
    }

    /// Checks Trove's answer against the closure evaluated on each object.
    private func expectAgrees<T: Object>(
        _ db: Database, _ predicate: Predicate<T>, _ key: (T) -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let all = db.objects(T.self)
        let expected = Set(try all.filter { try predicate.evaluate($0) }.map(key))
        let actual = Set(try all.filter(predicate).map(key))
        #expect(actual == expected, "\(predicate.expression)", sourceLocation: sourceLocation)
    }

    @Test("comparisons, logic, strings, captured values and nil agree with the closure")
    func scalars() throws {
        let db = try people()
        let limit = 10
        let cities = ["Oslo", "Lima"]
        let name: (Person) -> String = { "\($0.id)" }
        let cases: [Predicate<Person>] = [
            #Predicate { $0.id == 7 },
            #Predicate { $0.id != 7 && $0.id < 12 },
            #Predicate { $0.age == nil },
            #Predicate { $0.age != nil && $0.score >= 10.5 },
            #Predicate { $0.age ?? 0 > limit },
            #Predicate { ($0.age ?? 100) <= 3 },
            #Predicate { $0.score > 5 || $0.city == "Seoul" },
            #Predicate { !($0.city == "Oslo") },
            #Predicate { $0.name.contains("1") },
            #Predicate { $0.name.starts(with: "p") },
            #Predicate { $0.name.contains("5") && !$0.name.starts(with: "P") },
            #Predicate { cities.contains($0.city) },
            #Predicate { [3, 5, 8].contains($0.id) },
            #Predicate { (10...14).contains($0.id) },
            #Predicate { (10..<14).contains($0.id) },
            #Predicate { $0.id + 5 > 60 },
            #Predicate { $0.score - 1.5 < 1 },
            #Predicate { 3 < $0.id && 6 >= $0.id },
            #Predicate { $0.age! > 20 },
            #Predicate { _ in true },
            #Predicate { _ in limit > 100 },
        ]
        for predicate in cases {
            // A forced unwrap throws in Swift where Trove leaves the object out: compare on the non-nil ones.
            if "\(predicate.expression)".contains("ForcedUnwrap") {
                #expect(try db.objects(Person.self).filter(predicate).allSatisfy { ($0.age ?? 0) > 20 })
                #expect(
                    try db.objects(Person.self).filter(predicate).count == (1...60).filter { $0 % 7 != 0 && $0 % 25 > 20 }.count)
                continue
            }
            try expectAgrees(db, predicate, name)
        }
    }

    @Test("an index answers a #Predicate as it answers a query string")
    func usesIndexes() throws {
        let db = try people()
        let wanted = "Oslo"
        let results = try db.objects(Person.self).filter(#Predicate { $0.city == wanted && $0.score > 10 })
        #expect(results.explain().contains("index on city == \"Oslo\""))
        #expect(try db.objects(Person.self).filter(#Predicate { $0.id == 42 }).explain().contains("primary key on id == 42"))
        // Chained with a string filter, both apply.
        #expect(try results.filter("age > 10").map(\.id) == [33, 36, 39, 42, 45, 48].filter { $0 % 25 > 10 && $0 % 7 != 0 })
    }

    @Test("optional chains through links keep Swift's nil semantics")
    func links() throws {
        let db = try makeDatabase(#function + UUID().uuidString)
        try db.write {
            for (index, name) in ["Ana", "Bo", "Cy", "Di"].enumerated() {
                let owner = Owner()
                owner.name = name
                if index < 3 {
                    let pet = Pet()
                    pet.name = index == 2 ? "" : "Pet\(index)"
                    pet.age = index * 4
                    owner.pet = pet
                    pet.owner = owner
                }
                try db.add(owner)
                for title in ["dishes", "bins"].prefix(index) {
                    let chore = Chore()
                    chore.title = title
                    chore.done = title == "bins"
                    chore.owner = owner
                    try db.add(chore)
                }
            }
            try db.add(Chore())  // no owner at all
        }
        let owners: [Predicate<Owner>] = [
            #Predicate { $0.pet?.name == "Pet1" },
            #Predicate { $0.pet?.name != "Pet1" },  // Di (no pet) matches in Swift
            #Predicate { $0.pet == nil },
            #Predicate { $0.pet?.age ?? 99 > 5 },
            #Predicate { ($0.pet?.age ?? 0) >= 4 },
            #Predicate { $0.pet?.name.contains("et") == true },
            #Predicate { $0.pet?.name.contains("et") == false },
            #Predicate { $0.pet?.name.contains("et") != true },
            #Predicate { $0.chores.count == 2 },
            #Predicate { $0.chores.isEmpty },
            #Predicate { $0.chores.contains { $0.done && $0.title == "bins" } },
            #Predicate { $0.chores.allSatisfy { !$0.done } },
            #Predicate { $0.chores.filter { $0.title.starts(with: "d") }.count >= 1 },
        ]
        for predicate in owners { try expectAgrees(db, predicate, \.name) }
        let chores: [Predicate<Chore>] = [
            #Predicate { $0.owner?.pet?.age == 4 },
            #Predicate { $0.owner?.pet?.name != "Pet2" },
            #Predicate { $0.owner?.name == nil },
        ]
        for predicate in chores { try expectAgrees(db, predicate) { "\($0.title)-\($0.owner?.name ?? "-")" } }
    }

    @Test("lists of objects and of values")
    func lists() throws {
        let db = try makeDatabase(#function + UUID().uuidString)
        try addPlaylists(to: db)
        let cases: [Predicate<Playlist>] = [
            #Predicate { $0.tags.contains("jazz") },
            #Predicate { !$0.tags.contains("jazz") },
            #Predicate { $0.tags.count > 1 },
            #Predicate { $0.songs.isEmpty },
            #Predicate { $0.songs.contains { $0.seconds > 150 && $0.title.starts(with: "b") } },
            #Predicate { $0.songs.filter { $0.seconds > 150 }.count == 2 },
            #Predicate { $0.songs.allSatisfy { $0.seconds < 150 } },
            #Predicate { $0.tags.contains { $0.starts(with: "R") } },
        ]
        for predicate in cases { try expectAgrees(db, predicate, \.name) }
        let a = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "a"))
        #expect(try a.songs.filter(#Predicate { $0.seconds > 150 }).map(\.title) == ["hit", "hit"])
    }

    @Test("key-path filters compare one property, with indexes")
    func keyPathFilters() throws {
        let people = try people().objects(Person.self)
        #expect(people.filter(\.id, .lessOrEqual, 3).map(\.id) == [1, 2, 3])
        #expect(people.filter(\.age, .equal, nil).map(\.id) == [7, 14, 21, 28, 35, 42, 49, 56])
        #expect(
            Set(people.filter(\.name, .beginsWith(caseInsensitive: true), "p5").map(\.id)) == [
                5, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
            ])
        #expect(people.filter(\.name, .beginsWith(), "p5").map(\.id) == [5, 50, 55])
        let oslo = people.filter(\.city, in: ["Oslo"]).filter(\.score, .greater, 19)
        #expect(oslo.map(\.id) == [60])
        #expect(oslo.explain().contains("index on city IN (1 values)"))
    }

    @Test("#Predicate works on Codable values too, with their indexes")
    func persistableValues() throws {
        let db = try makeDatabase(#function + UUID().uuidString)
        let people = [("Ann", "Lee", 31), ("Bo", "Kim", nil), ("Cy", "Lee", 17), ("Di", "Park", 45)]
        try db.write {
            for (first, last, age) in people { try db.add(Contact(firstName: first, lastName: last, age: age)) }
        }
        let contacts = db.values(Contact.self)
        let lees = try contacts.filter(#Predicate { $0.lastName == "Lee" && ($0.age ?? 0) > 18 })
        #expect(lees.map(\.firstName) == ["Ann"])
        #expect(lees.explain().contains("index on lastName"))
        let evaluated = contacts.array().filter { ($0.age ?? 0) > 18 || $0.firstName.starts(with: "B") }
        #expect(
            try contacts.filter(#Predicate { ($0.age ?? 0) > 18 || $0.firstName.starts(with: "B") }).map(\.firstName)
                == evaluated.map(\.firstName))
    }

    @Test("what Trove cannot run is an unsupportedPredicate naming the expression")
    func unsupported() throws {
        let people = try people().objects(Person.self)
        let multiply = expectTroveError(.unsupportedPredicate) { try people.filter(#Predicate { $0.id * 2 > 10 }) }
        #expect(multiply?.message.contains("Arithmetic") == true)
        let length = expectTroveError(.unsupportedPredicate) { try people.filter(#Predicate { $0.name.count > 2 }) }
        #expect(length?.message.contains("not a stored property") == true)
        expectTroveError(.unsupportedPredicate) { try people.filter(#Predicate { $0.id == $0.id * 1 }) }
        expectTroveError(.unsupportedPredicate) { try people.filter(#Predicate { ($0.age ?? $0.id) > 3 }) }
        expectTroveError(.unsupportedPredicate) { try people.filter(#Predicate { $0.score / 2 > 3 }) }
    }
}
