import Foundation
import Testing

@testable import Trove

final class Gadget: Object {
    @Persisted var name = ""
    @Persisted var payload = Data()
}

final class Widget: Object {
    @Persisted var label = ""
}

@Suite("Edge cases of writes, keys and queries")
struct EdgeCaseTests {
    @Test("an object added in a cancelled write stays invalid and never aliases a later object")
    func cancelledAddDoesNotAlias() throws {
        let db = try makeDatabase()
        try db.write { try db.add(Dog()) }
        let ghost = Dog()
        ghost.name = "ghost"
        try db.beginWrite()
        try db.add(ghost)
        db.cancelWrite()
        #expect(ghost.isInvalidated)
        let real = Dog()
        real.name = "real"
        try db.write { try db.add(real) }
        #expect(ghost.isInvalidated)
        #expect(!real.isInvalidated)
        #expect(db.objects(Dog.self).map(\.name).sorted() == ["", "real"])
    }

    @Test("a type first used in a cancelled write leaves nothing usable behind")
    func cancelledRegistration() throws {
        let db = try makeDatabase()
        let widget = Widget()
        try db.beginWrite()
        try db.add(widget)
        let inside = db.objects(Widget.self)
        #expect(inside.count == 1)
        db.cancelWrite()
        #expect(widget.isInvalidated)
        #expect(inside.isEmpty)
        // Another new type now takes the freed table slots; the old object must not see it.
        let gadget = Gadget()
        gadget.name = "g"
        try db.write { try db.add(gadget) }
        #expect(widget.isInvalidated)
        try db.write { try db.add(Widget()) }
        #expect(db.objects(Widget.self).count == 1)
        #expect(db.objects(Gadget.self).first?.name == "g")
        expectValid(db)
    }

    @Test("a write that outgrows the file size cap fails as a whole and the handle stays usable")
    func capInsideAWrite() throws {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory().appendingPathComponent("cap.trove"), maximumFileSize: 2 << 20)
        configuration.initialMapSize = 1 << 20
        let db = try Database(configuration: configuration)
        let kept = Gadget()
        kept.name = "kept"
        try db.write { try db.add(kept) }
        let big = Data(repeating: 7, count: 64 * 1024)
        let error = expectTroveError(.fileSizeLimitReached) {
            try db.write {
                for _ in 0..<100 {
                    let gadget = Gadget()
                    gadget.payload = big
                    try db.add(gadget)
                }
            }
        }
        #expect(error?.message.contains("cap.trove") == true)
        // Setters that fail (they cannot throw) surface at commit.
        let setterError = expectTroveError(.fileSizeLimitReached) {
            try db.write {
                for _ in 0..<40 {
                    let gadget = Gadget()
                    try db.add(gadget)
                }
                for gadget in db.objects(Gadget.self) { gadget.payload = big }
            }
        }
        #expect(setterError != nil)
        #expect(db.objects(Gadget.self).map(\.name) == ["kept"])
        try db.write { kept.name = "still writable" }
        #expect(try Database(configuration: configuration).objects(Gadget.self).first?.name == "still writable")
    }

    @Test("auto-increment steps over explicit keys added in the same write")
    func autoIncrementAfterExplicitKey() throws {
        let db = try makeDatabase()
        let first = Ticket()
        let explicit = Ticket()
        explicit.id = 2
        let third = Ticket()
        try db.write {
            try db.add(first)
            try db.add(explicit)
            try db.add(third)
        }
        #expect(first.id == 1)
        #expect(explicit.id == 2)
        #expect(third.id == 3)
    }

    @Test("numeric arguments of any type find integer and double columns, through indexes too")
    func numericArguments() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...5 {
                let person = Person()
                person.id = id
                person.score = Double(id) / 2
                try db.add(person)
            }
        }
        let all = db.objects(Person.self)
        #expect(try all.filter("id == %@", Float(3)).map(\.id) == [3])
        #expect(try all.filter("id == %@", Decimal(3)).map(\.id) == [3])
        #expect(try all.filter("id == %@", 3.0).map(\.id) == [3])
        #expect(try all.filter("id == %@", 2.5).isEmpty)
        #expect(try all.filter("id IN %@", [2.0, 4]).map(\.id) == [2, 4])
        #expect(try all.filter("score == %@", 1).map(\.id) == [2])
        #expect(try all.filter("score == %@", Decimal(string: "2.5")!).map(\.id) == [5])
    }

    @Test("strings are compared by their code points, consistently in the index and in scans")
    func unicodeForms() throws {
        let db = try makeDatabase()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let person = Person()
        person.id = 1
        person.name = composed
        try db.write { try db.add(person) }
        try db.write { person.name = decomposed }
        let all = db.objects(Person.self)
        #expect(try all.filter("name == %@", decomposed).count == 1)
        #expect(try all.filter("name == %@", composed).count == 0)
        #expect(try all.filter("name ==[c] %@", decomposed).count == 1)
        try db.write { try db.delete(person) }
        #expect(try all.filter("name == %@", decomposed).count == 0)
        expectValid(db)
    }

    @Test("deeply nested or very long predicates are refused or answered, never a crash")
    func deepAndLongPredicates() throws {
        let db = try makeDatabase()
        try db.write {
            let person = Person()
            person.id = 1
            try db.add(person)
        }
        let deep = String(repeating: "(", count: 10_000) + "id == 1" + String(repeating: ")", count: 10_000)
        expectTroveError(.invalidQuery) { try db.objects(Person.self).filter(deep) }
        let nots = String(repeating: "NOT ", count: 10_000) + "id == 1"
        expectTroveError(.invalidQuery) { try db.objects(Person.self).filter(nots) }
        // Found by the predicate fuzzer: nested braces recursed without limit.
        let braces = "id IN " + String(repeating: "{", count: 100_000)
        expectTroveError(.invalidQuery) { try db.objects(Person.self).filter(braces) }
        let long = (1...5_000).map { "id == \($0)" }.joined(separator: " OR ")
        #expect(try db.objects(Person.self).filter(long).count == 1)
    }

    @Test("deleted largest keys and auto-increment values are not reused, even after a reopen")
    func noReuseAcrossReopen() throws {
        let db = try makeDatabase()
        try db.write {
            for _ in 0..<3 { try db.add(Ticket()) }
        }
        try db.write { try db.delete(db.objects(Ticket.self).filter("id == 3")) }
        do {
            let reopened = try Database(configuration: db.configuration)
            let next = Ticket()
            try reopened.write { try reopened.add(next) }
            #expect(next.id == 4)
            try reopened.write { try reopened.delete(reopened.objects(Ticket.self)) }
            #expect(reopened.objects(Ticket.self).isEmpty)
        }
        let again = try Database(configuration: db.configuration)
        let after = Ticket()
        try again.write { try again.add(after) }
        #expect(after.id == 5)
        try again.write { try again.deleteAll() }
        let last = Ticket()
        try again.write { try again.add(last) }
        #expect(last.id == 6)
    }

    @Test("single deletes in commits one after another store the object-key counter past every deleted key")
    func keyCounterAfterSingleDeletes() throws {
        let db = try makeDatabase()
        var dogs: [Dog] = []
        try db.write {
            for index in 0..<6 {
                let dog = Dog()
                dog.name = "d\(index)"
                try db.add(dog)
                dogs.append(dog)
            }
        }
        let keys = dogs.map(\._objectKey)
        func storedCounter() throws -> UInt64 {
            let read = try ReadTransaction(environment: db.environment)
            defer { read.end() }
            let meta = try #require(try read.existingTable(Catalog.metaTable))
            return try #require(try Catalog.integer(UInt64.self, key: "seq:Dog", in: meta, read))
        }
        try db.write { try db.delete(dogs[1]) }
        #expect(try storedCounter() > keys[1])
        // Below the counter this handle's last commit stored: nothing to store.
        try db.write { try db.delete(dogs[2]) }
        // The largest key, right after this handle's own commit: stored.
        try db.write { try db.delete(dogs[5]) }
        #expect(try storedCounter() > keys[5])
        // Another handle's commit between: this handle reads the counter again.
        let other = try Database(configuration: db.configuration)
        try other.write { try other.delete(other.objects(Dog.self).filter("name == 'd4'")) }
        try db.write { try db.delete(dogs[3]) }
        try db.write { try db.delete(dogs[0]) }
        #expect(try storedCounter() > keys.max()!)
        #expect(db.objects(Dog.self).isEmpty)
        // A write that adds an object and deletes one below the counter keeps it too.
        let added = Dog()
        try db.write {
            try db.add(added)
            try db.delete(added)
        }
        #expect(try storedCounter() > added._objectKey)
    }

    @Test("deleting a whole type through its Results empties it and its indexes")
    func deleteWholeType() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...50 {
                let person = Person()
                person.id = id
                person.name = "n\(id % 5)"
                try db.add(person)
            }
        }
        let kept = db.objects(Person.self).first!
        try db.write { try db.delete(db.objects(Person.self)) }
        #expect(kept.isInvalidated)
        #expect(db.objects(Person.self).isEmpty)
        #expect(try db.objects(Person.self).filter("name == 'n1'").isEmpty)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 7) == nil)
        try db.write {
            let person = Person()
            person.id = 7
            person.name = "n1"
            try db.add(person)
        }
        #expect(try db.objects(Person.self).filter("name == 'n1'").map(\.id) == [7])
        #expect(try db.objects(Person.self).filter("name == 'n1'").count == 1)
    }
}
