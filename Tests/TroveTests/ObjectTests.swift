import Foundation
import Testing

@testable import Trove

/// A model whose `init()` sets its own properties (and so runs setters while
/// reflection makes the instance it learns the class from).
final class Preset: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var rank: Int16 = 0
    @Persisted var note: String?

    required init() {
        super.init()
        title = "untitled"
        rank = 7
    }
}

/// A subclass adds fields after its superclass's.
class Shape: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

final class Circle: Shape {
    @Persisted var radius = 0.0
    @Persisted var label: String?
}

@Suite("Objects and write transactions")
struct ObjectTests {
    @Test("properties read and written by name, managed or not (Realm's object[\"memo\"], value(forKey:), setValue(_:forKey:))")
    func keyValueAccess() throws {
        let item = ConformanceItem()
        item["id"] = 7
        item["name"] = "seven"
        item["int16"] = 300  // an Int literal for an Int16 property
        item["optName"] = "maybe"
        item["optName"] = nil
        item.setValue(2.5, forKey: "double")
        #expect(item.id == 7 && item.name == "seven" && item.int16 == 300 && item.optName == nil && item.double == 2.5)
        #expect(item["name"] as? String == "seven")
        #expect(item["optName"] == nil)
        #expect(item.value(forKey: "int16") as? Int16 == 300)
        let db = try makeDatabase()
        try db.write {
            try db.add(item)
            item["optCode"] = 42
            item["owner"] = {
                let owner = ConformanceOwner()
                owner.id = 1
                owner.name = "Min"
                return owner
            }()
            (item["tags"] as? List<String>)?.append("a")
        }
        let stored = try #require(db.object(ofType: ConformanceItem.self, forPrimaryKey: 7))
        #expect(stored["optCode"] as? Int == 42)
        #expect((stored["owner"] as? ConformanceOwner)?.name == "Min")
        #expect((stored["tags"] as? List<String>)?.array() == ["a"])
        #expect(stored["optDate"] == nil)
        #expect(stored["name"] as? String == "seven")
    }

    @Test("a name the type does not have, or a value of another type, traps saying what the type has")
    func keyValueMistakesTrap() async {
        await #expect(processExitsWith: .failure) { _ = ConformanceItem()["nmae"] }
        await #expect(processExitsWith: .failure) { ConformanceItem()["int16"] = 100_000 }
        await #expect(processExitsWith: .failure) { ConformanceItem()["name"] = 3 }
    }

    @Test("a loop setting each object, in key order or not, leaves every other instance of those rows reading the new values")
    func settersSeenByOtherInstances() throws {
        let db = try makeDatabase()
        try addAllTypes(1...300, to: db)
        // Instances read before the loop: their copies were kept at an older generation.
        let held = Array(db.objects(AllTypes.self))
        let orders: [[Int]] = [Array(1...300), Array((1...300).reversed()), (1...300).map { ($0 * 37) % 300 + 1 }]
        for (round, order) in orders.enumerated() {
            try db.write {
                let fresh = Dictionary(uniqueKeysWithValues: db.objects(AllTypes.self).map { ($0.id, $0) })
                for (step, id) in order.enumerated() {
                    let object = try #require(fresh[id])
                    object.int = object.int + 1000
                    // Every held instance of a row already set reads its new value, the others their old one.
                    let probe = held[order[step / 2] - 1]
                    #expect(probe.int == probe.id + 1000 * (round + 1))
                    let later = held[order[Swift.min(step + 1, order.count - 1)] - 1]
                    if step + 1 < order.count { #expect(later.int == later.id + 1000 * round) }
                }
            }
        }
        #expect(held.allSatisfy { $0.int == $0.id + 3000 })
    }

    @Test("add, read, update and delete an object")
    func crud() throws {
        let db = try makeDatabase()
        let dog = Dog()
        dog.name = "Rex"
        dog.age = 3
        dog.treats = 10
        #expect(!dog.isManaged)
        try db.write { try db.add(dog) }
        #expect(dog.isManaged)
        #expect(db.objects(Dog.self).count == 1)

        let read = try #require(db.objects(Dog.self).first)
        #expect(read.name == "Rex")
        #expect(read.age == 3)
        #expect(read.treats == 0)  // not persisted

        try db.write { read.age = 4 }
        #expect(dog.age == 4)  // both instances read the same stored object
        #expect(read == dog)

        try db.write { try db.delete(read) }
        #expect(db.objects(Dog.self).isEmpty)
        #expect(read.isInvalidated)
        #expect(dog.isInvalidated)
        expectValid(db)
    }

    @Test("a second add with the same primary key throws primaryKeyExists and the write stays usable")
    func primaryKeyConflict() throws {
        let db = try makeDatabase()
        try db.write {
            let first = Person()
            first.id = 7
            first.name = "Ann"
            try db.add(first)
            let clash = Person()
            clash.id = 7
            clash.name = "Bob"
            let error = expectTroveError(.primaryKeyExists) { try db.add(clash) }
            #expect(error?.message.contains("7") == true)
            let other = Person()
            other.id = 8
            other.name = "Cy"
            try db.add(other)
        }
        #expect(db.objects(Person.self).count == 2)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 7)?.name == "Ann")
        #expect(db.object(ofType: Person.self, forPrimaryKey: 8)?.name == "Cy")
    }

    @Test("catch TroveError.primaryKeyExists matches by kind")
    func catchByKind() throws {
        let db = try makeDatabase()
        try db.write {
            let person = Person()
            person.id = 1
            try db.add(person)
        }
        var matched = false
        do {
            try db.write {
                let clash = Person()
                clash.id = 1
                try db.add(clash)
            }
        } catch TroveError.primaryKeyExists {
            matched = true
        }
        #expect(matched)
    }

    @Test("add(update: .modified) upserts by primary key and keeps indexes right")
    func upsert() throws {
        let db = try makeDatabase()
        try db.write {
            let person = Person()
            person.id = 1
            person.name = "Ann"
            person.city = "Oslo"
            try db.add(person)
        }
        try db.write {
            let replacement = Person()
            replacement.id = 1
            replacement.name = "Anna"
            replacement.city = "Bergen"
            try db.add(replacement, update: .modified)
            #expect(replacement.isManaged)
        }
        #expect(db.objects(Person.self).count == 1)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Anna")
        #expect(try db.objects(Person.self).filter("city == 'Oslo'").count == 0)
        #expect(try db.objects(Person.self).filter("city == 'Bergen'").count == 1)
        #expect(try db.objects(Person.self).filter("name == 'Ann'").count == 0)
        expectValid(db)
    }

    @Test("a throw inside write rolls everything back and leaves no trace")
    func rollback() throws {
        struct Oops: Error {}
        let db = try makeDatabase()
        try db.write {
            let dog = Dog()
            dog.name = "Keep"
            try db.add(dog)
        }
        let kept = try #require(db.objects(Dog.self).first)
        let added = Dog()
        #expect(throws: Oops.self) {
            try db.write {
                try db.add(added)
                kept.name = "Changed"
                throw Oops()
            }
        }
        #expect(!db.isInWriteTransaction)
        #expect(db.objects(Dog.self).count == 1)
        #expect(kept.name == "Keep")
        #expect(added.isInvalidated)
        let reopened = try Database(configuration: db.configuration)
        #expect(reopened.objects(Dog.self).map(\.name) == ["Keep"])
    }

    @Test("a write inside a write is a writeInProgress error, not a deadlock")
    func nestedWrite() throws {
        let db = try makeDatabase()
        try db.write {
            expectTroveError(.writeInProgress) { try db.write {} }
            let dog = Dog()
            try db.add(dog)
        }
        #expect(db.objects(Dog.self).count == 1)
        // A second handle on the same thread cannot deadlock either.
        let other = try Database(configuration: db.configuration)
        try db.write {
            expectTroveError(.writeInProgress) { try other.write {} }
        }
    }

    @Test("beginWrite, commitWrite and cancelWrite")
    func explicitTransactions() throws {
        let db = try makeDatabase()
        try db.beginWrite()
        try db.add(Dog())
        try db.commitWrite()
        try db.beginWrite()
        try db.add(Dog())
        db.cancelWrite()
        #expect(db.objects(Dog.self).count == 1)
        expectTroveError(.notInWriteTransaction) { try db.commitWrite() }
        expectTroveError(.notInWriteTransaction) { try db.add(Dog()) }
    }

    @Test("deleting results, sequences and everything")
    func deletions() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...10 {
                let person = Person()
                person.id = id
                person.age = id * 10
                try db.add(person)
            }
            try db.add(Dog())
        }
        try db.write { try db.delete(db.objects(Person.self).filter("age > 50")) }
        #expect(db.objects(Person.self).count == 5)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 6) == nil)
        try db.write { try db.deleteAll() }
        #expect(db.objects(Person.self).isEmpty)
        #expect(db.objects(Dog.self).isEmpty)
        // Keys of deleted objects are free again for new objects.
        try db.write {
            let person = Person()
            person.id = 6
            try db.add(person)
        }
        #expect(db.object(ofType: Person.self, forPrimaryKey: 6) != nil)
        expectValid(db)
    }

    @Test("deleting an object twice, or one never added, is an invalidObject error")
    func invalidDeletes() throws {
        let db = try makeDatabase()
        let dog = Dog()
        try db.write {
            expectTroveError(.invalidObject) { try db.delete(dog) }
            try db.add(dog)
            try db.delete(dog)
            expectTroveError(.invalidObject) { try db.delete(dog) }
        }
    }

    @Test("auto-increment primary keys take the next value and never reuse one")
    func autoIncrement() throws {
        let db = try makeDatabase()
        let first = Ticket()
        let second = Ticket()
        try db.write {
            try db.add(first)
            try db.add(second)
        }
        #expect(first.id == 1)
        #expect(second.id == 2)
        try db.write { try db.delete(second) }
        let third = Ticket()
        try db.write { try db.add(third) }
        #expect(third.id == 3)
        let explicit = Ticket()
        explicit.id = 100
        try db.write { try db.add(explicit) }
        let next = Ticket()
        try db.write { try db.add(next) }
        #expect(next.id == 101)
        #expect(db.objects(Ticket.self).max(of: \.id) == 101)
    }

    @Test("an object, its links and collections print as Realm prints them, five levels deep")
    func description() throws {
        let db = try makeDatabase()
        let rex = PrintedPet()
        rex.name = "Rex"
        rex.tags.append(objectsIn: ["loud", "old"])
        rex.scores["walks"] = 3
        let expected = """
            PrintedPet {
            \tname = Rex;
            \tisGood = 1;
            \tweight = 12.5;
            \tchip = <61626364 65 — 5 total bytes>;
            \tborn = 1970-01-01 00:00:01 +0000;
            \tnickname = (null);
            \tfriend = (null);
            \ttags = List<string> <0x…> (
            \t\t[0] loud,
            \t\t[1] old
            \t);
            \tscores = Map<string, int> <0x…> (
            \t[walks]: 3
            \t);
            \tpack = List<PrintedPet> <0x…> (
            \t
            \t);
            }
            """
        // Collections print their address, as Realm's do.
        let address = try Regex("<0x[0-9a-f]+>")
        #expect(rex.description.replacing(address, with: "<0x…>") == expected)
        try db.write { try db.add(rex) }
        #expect(rex.description.replacing(address, with: "<0x…>") == expected)
        // A cycle stops five levels down.
        try db.write { rex.friend = rex }
        #expect(rex.description.contains("\n\t\t\t\t\tfriend = <Maximum depth exceeded>;"))
        #expect(rex.description.contains("\n\t\t\t\t\tname = Rex;") && !rex.description.contains("\t\t\t\t\t\tname"))
        #expect(rex.tags.description.hasPrefix("List<string> <0x"))
        try db.write { try db.delete(rex) }
        #expect(rex.description == "[invalid object]")
    }

    @Test("an object schema prints as Realm prints one: each property's type in Realm's words, links' targets, flags")
    func schemaDescription() throws {
        let text = PrintedPet().objectSchema.description
        #expect(text.hasPrefix("PrintedPet {\n\tname {\n\t\ttype = string;\n\t\tcolumnName = name;\n\t\tindexed = NO;\n"))
        #expect(
            text.contains(
                "\tfriend {\n\t\ttype = object;\n\t\tobjectClassName = PrintedPet;\n\t\tlinkOriginPropertyName = (null);\n\t\tcolumnName = friend;\n\t\tindexed = NO;\n\t\tisPrimary = NO;\n\t\tarray = NO;\n\t\tset = NO;\n\t\tdictionary = NO;\n\t\toptional = YES;\n\t}"
            ))
        #expect(
            text.contains(
                "\ttags {\n\t\ttype = string;\n\t\tcolumnName = tags;\n\t\tindexed = NO;\n\t\tisPrimary = NO;\n\t\tarray = YES;"))
        #expect(text.contains("\tscores {\n\t\ttype = int;") && text.hasSuffix("\t\toptional = NO;\n\t}\n}"))
    }

    @Test("setting a managed property outside a write traps with advice")
    func setterOutsideWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try! makeDatabase("setterOutsideWriteTraps-child")
            let dog = Dog()
            try! db.write { try db.add(dog) }
            dog.name = "not in a write"
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("outside a write transaction"))
        #expect(message.contains("db.write"))
    }

    @Test("reading a deleted object traps")
    func readingDeletedTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try! makeDatabase("readingDeletedTraps-child")
            let dog = Dog()
            try! db.write { try db.add(dog) }
            try! db.write { try db.delete(dog) }
            _ = dog.name
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("isInvalidated"))
    }

    @Test("a second handle on a file must use the same durability, size cap and mode")
    func mismatchedSettings() throws {
        let db = try makeDatabase()
        var other = db.configuration
        other.durability = .none
        let error = expectTroveError(.invalidValue) { try Database(configuration: other) }
        #expect(error?.message.contains("other settings") == true)
        #expect(try Database(configuration: db.configuration).objects(Dog.self).count == 0)
    }

    @Test("unmanaged setters store every field, in an init() that sets properties and in a subclass")
    func unmanagedSetters() throws {
        let db = try makeDatabase { $0.objectTypes = [Preset.self, Circle.self] }
        let preset = Preset()
        #expect(preset.title == "untitled" && preset.rank == 7 && preset.note == nil)
        preset.id = 1
        preset.note = "first"
        preset.note = "second"
        preset.rank = -3
        #expect(preset.id == 1 && preset.title == "untitled" && preset.rank == -3 && preset.note == "second")
        let circle = Circle()
        circle.id = 2
        circle.name = "wheel"
        circle.radius = 1.5
        circle.label = "round"
        circle.label = nil
        #expect(circle.id == 2 && circle.name == "wheel" && circle.radius == 1.5 && circle.label == nil)
        try db.write {
            try db.add(preset)
            try db.add(circle)
        }
        let storedPreset = try #require(db.object(ofType: Preset.self, forPrimaryKey: 1))
        #expect(storedPreset.title == "untitled" && storedPreset.rank == -3 && storedPreset.note == "second")
        let storedCircle = try #require(db.object(ofType: Circle.self, forPrimaryKey: 2))
        #expect(storedCircle.name == "wheel" && storedCircle.radius == 1.5 && storedCircle.label == nil)
        // Managed now: setters write the database.
        try db.write { storedCircle.radius = 2.5 }
        #expect(circle.radius == 2.5)
        // A fresh instance starts from the defaults, not from another instance's values.
        let fresh = Circle()
        #expect(fresh.id == 0 && fresh.name == "" && fresh.radius == 0 && fresh.label == nil)
        expectValid(db)
    }

    @Test("objects added in descending, random and ascending key order in one write are all stored; duplicates still throw")
    func insertOrder() throws {
        let db = try makeDatabase()
        var random = SystemRandomNumberGenerator()
        let keys = Array((1...200).reversed()) + Array(1001...1200).shuffled(using: &random) + Array(2001...2200)
        try db.write {
            for key in keys {
                let person = Person()
                person.id = key
                person.name = "p\(key)"
                try db.add(person)
            }
        }
        try db.write {
            // After appending at the end, a key inside the range is still a duplicate.
            let last = Person()
            last.id = 3000
            try db.add(last)
            let duplicate = Person()
            duplicate.id = 1100
            expectTroveError(.primaryKeyExists) { try db.add(duplicate) }
            let again = Person()
            again.id = 3000
            expectTroveError(.primaryKeyExists) { try db.add(again) }
        }
        let stored = db.objects(Person.self).sorted(by: \.id)
        #expect(stored.map(\.id) == (keys + [3000]).sorted())
        #expect(stored.allSatisfy { $0.name == ($0.id == 3000 ? "" : "p\($0.id)") })
        expectValid(db)
    }

    @Test("objects read current values while a loop changes each one, whatever else changes in between")
    func readsDuringALoopOfChanges() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...150 {
                let person = Person()
                person.id = id
                person.score = Double(id)
                try db.add(person)
            }
        }
        let people = db.objects(Person.self).array()  // record copies kept before the loop
        let twin = try #require(db.object(ofType: Person.self, forPrimaryKey: 150))
        try db.write {
            for (index, person) in people.enumerated() {
                #expect(person.score == (index == 99 ? -1 : Double(index + 1)))  // id 100 was upserted
                person.score += 1000
                if index == 10 {
                    // A change that is not a column write: every copy is read again.
                    let upserted = Person()
                    upserted.id = 100
                    upserted.score = -1
                    upserted.name = "upserted"
                    try db.add(upserted, update: .modified)
                }
                if index == 99 { #expect(person.score == 999 && person.name == "upserted") }
            }
            // Another instance of a changed object sees the change, also right after reading it.
            #expect(twin.score == 1150)
            people[149].score += 1
            #expect(twin.score == 1151)
        }
        var expected: [Double] = (1...150).map { id in Double(id) + 1000 }
        expected[99] = 999  // upserted with -1, then +1000
        expected[149] = 1151
        #expect(people.map(\.score) == expected)
        // A rolled-back loop leaves every object reading the committed values.
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write {
                for person in people { person.score = 0 }
                throw Abort()
            }
        }
        #expect(people.map(\.score) == expected)
        #expect(twin.score == 1151)
        expectValid(db)
    }

    @Test("fixed-size properties written in place: every type, nil to a value and back, rolled back with the write")
    func fixedSizeWrites() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("fixed.trove")
        let db = try Database(fileURL: url)
        try db.write {
            for id in 1...3 {
                let object = AllTypes()
                object.id = id
                try db.add(object)
            }
        }
        let when = Date(timeIntervalSince1970: 1_234_567)
        let uuid = UUID()
        try db.write {
            for object in db.objects(AllTypes.self) {
                object.bool = true
                object.int = object.id * 10
                object.int8 = -8
                object.int16 = 16
                object.int32 = -32
                object.int64 = .max
                object.float = 1.5
                object.double = -2.25
                object.date = when
                object.uuid = uuid
                object.priority = .high
                object.optInt = object.id  // nil to a value: the general path
                #expect(object.int == object.id * 10 && object.int64 == .max && object.optInt == object.id)
            }
            let first = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 1))
            first.optInt = nil  // and back
            first.optInt = nil
        }
        let other = try Database(fileURL: url)
        let stored = other.objects(AllTypes.self).sorted(by: \.id)
        #expect(stored.map(\.int) == [10, 20, 30])
        #expect(stored.map(\.optInt) == [nil, 2, 3])
        #expect(
            stored.allSatisfy {
                $0.bool && $0.int8 == -8 && $0.int16 == 16 && $0.int32 == -32 && $0.int64 == .max && $0.float == 1.5
                    && $0.double == -2.25 && $0.date == when && $0.uuid == uuid && $0.priority == .high
            })
        #expect(try other.objects(AllTypes.self).filter("int >= 20 AND int16 == 16").count == 2)
        // A write that throws leaves the patched copies reading the committed values again.
        let object = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 2))
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write {
                object.int = 0
                object.int8 = 100
                #expect(object.int == 0 && object.int8 == 100)
                throw Abort()
            }
        }
        #expect(object.int == 20 && object.int8 == -8)
        expectValid(db)
    }
}

/// A type keyed by an optional integer: nil is a key too.
final class Locker: Object {
    @Persisted(primaryKey: true) var number: Int?
    @Persisted var owner = ""
}

@Suite("Optional integer primary keys")
struct OptionalIntegerKeyTests {
    private func locker(_ number: Int?, _ owner: String) -> Locker {
        let locker = Locker()
        locker.number = number
        locker.owner = owner
        return locker
    }

    @Test func nilIsOneUniqueKeyThatLookupsFindAndQueriesTellApart() throws {
        let db = try makeDatabase()
        try db.write { try db.add([locker(nil, "lost and found"), locker(2, "ann"), locker(7, "bo")]) }
        #expect(db.object(ofType: Locker.self, forPrimaryKey: nil as Int?)?.owner == "lost and found")
        #expect(db.object(ofType: Locker.self, forPrimaryKey: 2)?.owner == "ann")
        #expect(db.object(ofType: Locker.self, forPrimaryKey: 3) == nil)
        expectTroveError(.primaryKeyExists) { try db.write { try db.add(locker(nil, "again")) } }
        try db.write { try db.add(locker(nil, "found"), update: .modified) }
        #expect(db.objects(Locker.self).count == 3)
        #expect(try db.objects(Locker.self).filter("number == nil").map(\.owner) == ["found"])
        #expect(try db.objects(Locker.self).filter("number < 5").map(\.owner) == ["ann"])
        #expect(try db.objects(Locker.self).filter("number != 2").count == 2)
        #expect(db.objects(Locker.self).sorted(by: \.number).map(\.owner) == ["found", "ann", "bo"])
        if db.integerKeysAreIndexed {
            // Found through the primary key index (a new encrypted file), Int.min is a key like any other.
            try db.write { try db.add(locker(Int.min, "lowest")) }
            #expect(db.object(ofType: Locker.self, forPrimaryKey: Int.min)?.owner == "lowest")
            #expect(db.object(ofType: Locker.self, forPrimaryKey: nil as Int?)?.owner == "found")
        } else {
            // Int.min's object key is nil's.
            expectTroveError(.invalidPrimaryKey) { try db.write { try db.add(locker(Int.min, "reserved")) } }
        }
        expectValid(db)
    }
}

final class PrintedPet: Object {
    @Persisted var name = ""
    @Persisted var isGood = true
    @Persisted var weight = 12.5
    @Persisted var chip = Data("abcde".utf8)
    @Persisted var born = Date(timeIntervalSince1970: 1)
    @Persisted var nickname: String?
    @Persisted var friend: PrintedPet?
    @Persisted var tags = List<String>()
    @Persisted var scores = Map<String, Int>()
    @Persisted var pack = List<PrintedPet>()
}
