import Foundation
import Testing

@testable import Trove

/// `Results.set(_:to:)` and `Results.update(_:_:)`: one property of every
/// match changed in one call, without materializing the objects.
@Suite("Updating a property of every result")
struct ResultsUpdateTests {
    /// 1,200 objects: more than two clusters in the cluster layout.
    private func filled(_ name: String = #function) throws -> Database {
        let db = try makeDatabase(name)
        try db.write {
            for id in 1...1_200 {
                let object = AllTypes()
                object.id = id
                object.int = id
                object.string = "s\(id)"
                object.optInt = id % 2 == 0 ? id : nil
                try db.add(object)
            }
        }
        return db
    }

    @Test("every stored type set on a filtered subset; other handles, queries and held objects see it")
    func everyType() throws {
        let db = try filled()
        let held = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 600))
        #expect(held.int == 600)
        let when = Date(timeIntervalSince1970: 86_400)
        let uuid = UUID()
        try db.write {
            let odd = try db.objects(AllTypes.self).filter("id >= 100 AND id < 1100")
            #expect(try odd.update(\.int) { $0 * 10 } == 1_000)
            try odd.set(\.bool, to: true)
            try odd.set(\.int8, to: -8)
            try odd.update(\.int16) { _ in .max }
            try odd.set(\.int64, to: .min)
            try odd.set(\.float, to: 0.5)
            try odd.set(\.double, to: -1.25)
            try odd.update(\.string) { $0 + "-and-a-longer-tail" }  // grows past its old bytes
            try odd.set(\.data, to: Data([1, 2, 3]))
            try odd.set(\.date, to: when)
            try odd.set(\.uuid, to: uuid)
            try odd.set(\.decimal, to: Decimal(string: "12.5")!)
            try odd.set(\.mood, to: .sad)
            try odd.set(\.priority, to: .high)
            try odd.update(\.optInt) { $0 == nil ? -1 : nil }  // nil to a value and a value to nil
            try odd.set(\.optString, to: "set")
            #expect(held.int == 6_000 && held.string == "s600-and-a-longer-tail")  // inside the write too
        }
        #expect(held.int == 6_000 && held.mood == .sad && held.optInt == nil)
        let other = try Database(configuration: db.configuration)
        let all = other.objects(AllTypes.self).sorted(by: \.id)
        for object in all {
            let inside = object.id >= 100 && object.id < 1100
            #expect(object.int == (inside ? object.id * 10 : object.id))
            #expect(object.string == (inside ? "s\(object.id)-and-a-longer-tail" : "s\(object.id)"))
            #expect(object.optInt == (inside ? (object.id % 2 == 0 ? nil : -1) : (object.id % 2 == 0 ? object.id : nil)))
            guard inside else {
                #expect(!object.bool && object.int8 == 0 && object.mood == .happy && object.optString == nil)
                continue
            }
            #expect(object.bool && object.int8 == -8 && object.int16 == .max && object.int64 == .min)
            #expect(object.float == 0.5 && object.double == -1.25 && object.data == Data([1, 2, 3]))
            #expect(object.date == when && object.uuid == uuid && object.decimal == Decimal(string: "12.5")!)
            #expect(object.mood == .sad && object.priority == .high && object.optString == "set")
        }
        // The 1,000 updated (1,000 through 10,990) and ids 1,100 through 1,200, not updated.
        #expect(try other.objects(AllTypes.self).filter("int >= 1000 AND int < 11000").count == 1_101)
        #expect(try other.objects(AllTypes.self).filter("string ENDSWITH 'tail'").count == 1_000)
        expectValid(other)
    }

    @Test("sorted results, indexed properties and the primary key")
    func indexesAndOrder() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...1_200 {
                let person = Person()
                person.id = id
                person.name = "p\(id)"
                person.city = id % 3 == 0 ? "Seoul" : "Busan"
                person.score = Double(id)
                try db.add(person)
            }
        }
        try db.write {
            // Sorted by score, descending: the keys come out of order.
            let seoul = try db.objects(Person.self).filter("city == 'Seoul'").sorted(by: \.score, ascending: false)
            #expect(try seoul.set(\.city, to: "Jeju") == 400)
            try db.objects(Person.self).filter("id <= 10").update(\.name) { $0.uppercased() }
            #expect(seoul.isEmpty)  // the results are live: nobody is in Seoul now
        }
        #expect(try db.objects(Person.self).filter("city == 'Jeju'").count == 400)
        #expect(try db.objects(Person.self).filter("city == 'Seoul'").isEmpty)
        #expect(try db.objects(Person.self).filter("name == 'P7'").first?.id == 7)
        #expect(try db.objects(Person.self).filter("name == 'p7'").isEmpty)
        expectValid(db)

        let error = try #require(
            expectTroveError(.invalidProperty) {
                try db.write { try db.objects(Person.self).update(\.id) { $0 + 1 } }
            })
        #expect(error.message.contains("primary key Person.id"))
        expectTroveError(.notInWriteTransaction) { try db.objects(Person.self).set(\.score, to: 0) }
        #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.score == 1)
    }

    @Test("a transform that throws out of the write leaves every value as it was")
    func throwingTransform() throws {
        let db = try filled()
        struct Stop: Error {}
        let held = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 900))
        #expect(throws: Stop.self) {
            try db.write {
                try db.objects(AllTypes.self).update(\.int) { value in
                    if value == 1_000 { throw Stop() }
                    return -value
                }
            }
        }
        #expect(held.int == 900)
        #expect(db.objects(AllTypes.self).map(\.int) == Array(1...1_200))
        #expect(try db.objects(AllTypes.self).filter("int < 0").isEmpty)
        expectValid(db)
    }

    @Test("observers hear each updated object as modified, and filters let objects out")
    func notifications() throws {
        let db = try filled()
        let everything = db.objects(AllTypes.self)
        let small = try db.objects(AllTypes.self).filter("int < 100")
        var modified: [Int] = []
        var left: [Int] = []
        let tokens = [
            everything.observe { change in
                if case .update(_, _, _, let modifications) = change { modified = modifications }
            },
            small.observe { change in
                if case .update(_, let deletions, _, _) = change { left = deletions }
            },
        ]
        try db.write { try db.objects(AllTypes.self).filter("id > 1190 OR id <= 5").update(\.int) { $0 + 100 } }
        #expect(modified == [0, 1, 2, 3, 4] + Array(1190..<1200))
        #expect(left == [0, 1, 2, 3, 4])
        #expect(small.count == 94)
        _ = tokens
    }

    @Test("Persistable structs, and a key path through a link set object by object")
    func structsAndLinks() throws {
        let db = try makeDatabase()
        try db.write {
            for number in 1...3 {
                try db.add(Contact(firstName: "F\(number)", lastName: "L\(number)", age: number == 2 ? nil : number * 10))
            }
            let owner = ConformanceOwner()
            owner.id = 1
            let item = ConformanceItem()
            item.id = 1
            item.owner = owner
            try db.add(item)
        }
        try db.write {
            #expect(try db.values(Contact.self).update(\.age) { ($0 ?? 0) + 1 } == 3)
            try db.values(Contact.self).filter("lastName != 'L3'").set(\.lastName, to: "Kim")  // an indexed field
            #expect(try db.objects(ConformanceItem.self).set(\.owner!.name, to: "Lee") == 1)
        }
        #expect(db.values(Contact.self).sorted(by: \.id).map(\.age) == [11, 1, 31])
        #expect(try db.values(Contact.self).filter("lastName == 'Kim'").count == 2)
        #expect(db.object(ofType: ConformanceOwner.self, forPrimaryKey: 1)?.name == "Lee")
        expectValid(db)
    }
    @Test("an update of every page of a small map, plain and encrypted")
    func growthAndEncryption() throws {
        for encrypted in [false, true] {
            let db = try makeDatabase("growthAndEncryption\(encrypted)") { configuration in
                configuration.initialMapSize = 1 << 20
                configuration.reservesMap = false
                if encrypted { configuration.encryptionKey = Data((0..<64).map { UInt8($0) }) }
            }
            try db.write {
                for id in 1...6_000 {
                    let object = AllTypes()
                    object.id = id
                    object.int = id
                    object.string = String(repeating: "x", count: 100)
                    try db.add(object)
                }
            }
            // Every page is copied by the write.
            let counts = try db.write {
                (
                    try db.objects(AllTypes.self).update(\.int) { $0 + 1 },
                    try db.objects(AllTypes.self).filter("id <= 3").update(\.optInt) { _ in 5 }
                )
            }
            #expect(counts == (6_000, 3))
            let reopened = try Database(configuration: db.configuration)
            #expect(reopened.objects(AllTypes.self).map(\.int) == Array(2...6_001))
            #expect(try reopened.objects(AllTypes.self).filter("optInt == 5").count == 3)
            expectValid(reopened)
        }
    }
}
