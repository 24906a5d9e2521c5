import Foundation
import Testing

@testable import Trove

/// Iteration over objects that read their clusters in place: a batch's
/// places are found at once and each object is made as the loop reaches it.
@Suite("Objects made as an iteration reaches them")
struct PlacedBatchTests {
    struct Reading: Persistable, Equatable {
        static var primaryKey: KeyPath<Reading, Int> { \.id }
        var id = 0
        var label = ""
        var value = 0.0
        var note: String?

        static func make(_ id: Int) -> Reading {
            Reading(
                id: id, label: "reading \(id) " + String(repeating: "ㄹ", count: id % 30), value: Double(id) / 8,
                note: id % 2 == 0 ? "note \(id)" : nil)
        }
    }

    private func clusterDatabase(_ name: String = #function) throws -> Database {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory(name).appendingPathComponent("placed.trove"), objectTypes: [AllTypes.self])
        configuration.storesNewTypesInClusters = true
        return try Database(configuration: configuration)
    }

    private func sample(_ id: Int) -> AllTypes {
        let object = AllTypes()
        object.id = id
        object.int = id * 1_000_003
        object.string = "이름 \(id) " + String(repeating: "x", count: id % 40)
        object.optInt = id % 2 == 0 ? -id : nil
        return object
    }

    private func expectSample(_ object: AllTypes, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = sample(object.id)
        #expect(object.int == expected.int, sourceLocation: sourceLocation)
        #expect(object.string == expected.string, sourceLocation: sourceLocation)
        #expect(object.optInt == expected.optInt, sourceLocation: sourceLocation)
    }

    @Test("each object reads its own slot, across batches and clusters, kept by the loop or not")
    func objectsReadTheirSlots() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...1_500 { try db.add(sample(id)) } }
        try db.write {
            for id in stride(from: 7, through: 1_500, by: 7) {
                try db.delete(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: id)))
            }
        }
        let expected = (1...1_500).filter { $0 % 7 != 0 }
        var seen: [Int] = []
        for object in db.objects(AllTypes.self) {
            #expect(object._view != nil)
            expectSample(object)
            seen.append(object.id)
        }
        #expect(seen == expected)
        // Kept objects are distinct instances, each still reading its own slot.
        var kept: [AllTypes] = []
        for object in db.objects(AllTypes.self).sorted(by: \.id, ascending: false) { kept.append(object) }
        #expect(kept.map(\.id) == expected.reversed())
        #expect(Set(kept.map { ObjectIdentifier($0) }).count == kept.count)
        for object in kept { expectSample(object) }
        let filtered = try db.objects(AllTypes.self).filter("id > 600 AND id <= 700")
        #expect(filtered.map(\.id) == (601...700).filter { $0 % 7 != 0 })
    }

    @Test("a commit in the loop: objects reached after it read the new snapshot, a deleted one is invalidated")
    func commitInsideTheLoop() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...300 { try db.add(sample(id)) } }
        let other = try Database(configuration: db.configuration)
        var reached = 0
        for object in db.objects(AllTypes.self) {
            reached += 1
            // (In key order: the loop's count is the id. A deleted object's id cannot be read.)
            switch reached {
            case 10:
                // Inside the first batch: objects 20 and 30 are not made yet.
                try db.write {
                    try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 20)).string = "changed"
                    try db.delete(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 30)))
                }
            case 20:
                #expect(object.string == "changed")
                #expect(object.int == sample(20).int)
            case 30:
                #expect(object.isInvalidated)
            case 40:
                try other.write { try #require(other.object(ofType: AllTypes.self, forPrimaryKey: 50)).int = -50 }
                db.refresh()
            case 50:
                #expect(object.int == -50)
                #expect(object.string == sample(50).string)
            default:
                #expect(object.id == reached)
                expectSample(object)
            }
        }
        // The keys are the loop's snapshot: the deleted object is reached, none is skipped.
        #expect(reached == 300)
        expectValid(db)
    }

    @Test("a write begun in the loop: objects reached after it read and set the write's values")
    func writeBegunInsideTheLoop() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...200 { try db.add(sample(id)) } }
        for object in db.objects(AllTypes.self) {
            if object.id == 5 {
                try db.beginWrite()
                try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 8)).int = 8
            }
            if object.id == 8 { #expect(object.int == 8) }
            if object.id > 5 { object.optInt = object.id }
        }
        try db.commitWrite()
        for object in db.objects(AllTypes.self) {
            #expect(object.optInt == (object.id > 5 ? object.id : sample(object.id).optInt))
            #expect(object.int == (object.id == 8 ? 8 : sample(object.id).int))
        }
        expectValid(db)
    }

    @Test(
        "struct values are read as the loop reaches them: across batches, and a commit in the loop shows in the values after it")
    func valuesReadAsReached() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...300 { try db.add(Reading.make(id)) } }
        var expected = (1...300).map(Reading.make)
        #expect(Array(db.values(Reading.self)) == expected)
        var seen: [Reading] = []
        for value in db.values(Reading.self) {
            if value.id == 10 {
                // Inside the first batch: value 20 is not read yet.
                try db.write {
                    var changed = try #require(db.value(ofType: Reading.self, forPrimaryKey: 20))
                    changed.label = "changed"
                    changed.note = nil
                    _ = try db.add(changed, update: .modified)
                }
            }
            seen.append(value)
        }
        expected[19].label = "changed"
        expected[19].note = nil
        #expect(seen == expected)
        #expect(db.values(Reading.self).array() == expected)
        let sorted = db.values(Reading.self).sorted(by: \.value, ascending: false)
        #expect(Array(sorted) == expected.reversed())
    }
}
