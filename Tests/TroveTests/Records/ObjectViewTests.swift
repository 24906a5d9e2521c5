import Foundation
import Testing

@testable import Trove

/// Objects that read their properties in place from their cluster's columns
/// (a view of the snapshot) instead of a record copy, outside writes.
@Suite("Objects reading their cluster in place")
struct ObjectViewTests {
    /// A database storing types in column clusters (the views' layout), not encrypted.
    private func clusterDatabase(_ name: String = #function, types: [Object.Type] = [AllTypes.self]) throws -> Database {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory(name).appendingPathComponent("views.trove"), objectTypes: types)
        configuration.storesNewTypesInClusters = true
        return try Database(configuration: configuration)
    }

    /// An object of every fixed-size, string and data type, nils on odd ids.
    private func sample(_ id: Int) -> AllTypes {
        let object = AllTypes()
        object.id = id
        object.bool = id % 3 == 0
        object.int = id * 1_000_003
        object.int8 = Int8(truncatingIfNeeded: id)
        object.int16 = Int16(truncatingIfNeeded: id * 7)
        object.int32 = Int32(truncatingIfNeeded: id * 70_001)
        object.int64 = Int64(id) << 40 | Int64(id)
        object.float = Float(id) / 4
        object.double = Double(id) * 0.125
        object.string = id % 5 == 0 ? "" : "이름 \(id) " + String(repeating: "x", count: id % 40)
        object.data = Data((0..<(id % 17)).map { UInt8(truncatingIfNeeded: $0 &+ id) })
        object.date = Date(timeIntervalSinceReferenceDate: Double(id) * 60)
        if id % 2 == 0 {
            object.optBool = id % 4 == 0
            object.optInt = -id
            object.optInt32 = Int32(id)
            object.optDouble = Double(id) / 3
            object.optString = "opt \(id)"
            object.optData = Data([UInt8(truncatingIfNeeded: id)])
            object.optDate = Date(timeIntervalSinceReferenceDate: Double(id))
        }
        return object
    }

    /// Checks every property `sample(id)` set, as `object` reads it.
    private func expectSample(_ object: AllTypes, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = sample(object.id)
        #expect(object.bool == expected.bool, sourceLocation: sourceLocation)
        #expect(object.int == expected.int, sourceLocation: sourceLocation)
        #expect(object.int8 == expected.int8, sourceLocation: sourceLocation)
        #expect(object.int16 == expected.int16, sourceLocation: sourceLocation)
        #expect(object.int32 == expected.int32, sourceLocation: sourceLocation)
        #expect(object.int64 == expected.int64, sourceLocation: sourceLocation)
        #expect(object.float == expected.float, sourceLocation: sourceLocation)
        #expect(object.double == expected.double, sourceLocation: sourceLocation)
        #expect(object.string == expected.string, sourceLocation: sourceLocation)
        #expect(object.data == expected.data, sourceLocation: sourceLocation)
        #expect(object.date == expected.date, sourceLocation: sourceLocation)
        #expect(object.optBool == expected.optBool, sourceLocation: sourceLocation)
        #expect(object.optInt == expected.optInt, sourceLocation: sourceLocation)
        #expect(object.optInt32 == expected.optInt32, sourceLocation: sourceLocation)
        #expect(object.optDouble == expected.optDouble, sourceLocation: sourceLocation)
        #expect(object.optString == expected.optString, sourceLocation: sourceLocation)
        #expect(object.optData == expected.optData, sourceLocation: sourceLocation)
        #expect(object.optDate == expected.optDate, sourceLocation: sourceLocation)
        #expect(object.optInt8 == nil, sourceLocation: sourceLocation)
    }

    @Test("objects read every type in place outside a write, and from a record inside one")
    func readsInPlace() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...1_200 { try db.add(sample(id)) } }
        #expect(db.environment.mapIsFixed)
        let all = Array(db.objects(AllTypes.self))
        #expect(all.count == 1_200)
        for object in all {
            expectSample(object)
            #expect(object._view != nil)
        }
        let one = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 777))
        expectSample(one)
        #expect(one._view != nil)
        try db.write {
            // A write edits its clusters in place: the object takes a record.
            #expect(one.string == sample(777).string)
            #expect(one._view == nil)
            one.string = "changed"
            one.optInt = nil
        }
        #expect(one.string == "changed")
        #expect(one.optInt == nil)
        #expect(one._view != nil)
        #expect(one.int == sample(777).int)
    }

    @Test("iteration reads each object's own slot: deleted slots left in a cluster, sorted and filtered orders")
    func iterationSkipsDeletedSlotsAndFollowsAnyOrder() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...1_500 { try db.add(sample(id)) } }
        // Scattered deletes leave deleted slots among the live ones (their bits, not a rewrite).
        try db.write {
            for id in stride(from: 3, through: 1_500, by: 3) {
                try db.delete(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: id)))
            }
        }
        let all = Array(db.objects(AllTypes.self))
        #expect(all.map(\.id) == (1...1_500).filter { $0 % 3 != 0 })
        for object in all {
            expectSample(object)
            #expect(object._view != nil)
        }
        let descending = Array(db.objects(AllTypes.self).sorted(by: \.id, ascending: false))
        #expect(descending.map(\.id) == (1...1_500).filter { $0 % 3 != 0 }.reversed())
        for object in descending { expectSample(object) }
        let some = try db.objects(AllTypes.self).filter("id > 700 AND id < 760").array()
        #expect(some.map(\.id) == (701..<760).filter { $0 % 3 != 0 })
        for object in some { expectSample(object) }
    }

    @Test("values appended or changed after a cluster was written (its column patches) read in place")
    func patchedColumnsReadInPlace() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...600 { try db.add(sample(id)) } }
        // One object per transaction: each append and change lands in a patch of its cluster's columns.
        for id in 601...620 { try db.write { try db.add(sample(id)) } }
        for id in [3, 250, 602] {
            try db.write {
                let object = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: id))
                object.int = -id
                object.optString = nil
                object.string = "patched \(id)"
            }
        }
        for object in db.objects(AllTypes.self) {
            #expect(object._view != nil)
            if [3, 250, 602].contains(object.id) {
                #expect(object.int == -object.id)
                #expect(object.optString == nil)
                #expect(object.string == "patched \(object.id)")
                #expect(object.double == sample(object.id).double)
            } else {
                expectSample(object)
            }
        }
        expectValid(db)
    }

    @Test("an object moves to the handle's new snapshot: another handle's commits read after refresh, never stale pages")
    func followsOtherHandlesCommits() throws {
        let db = try clusterDatabase()
        try db.write { for id in 1...1_000 { try db.add(sample(id)) } }
        let other = try Database(configuration: db.configuration)
        let held = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 500))
        let before = held.string
        // Many commits rewrite the cluster, so pages of the old snapshot are freed and reused.
        for round in 0..<20 {
            try other.write {
                for object in try other.objects(AllTypes.self).filter("id BETWEEN {400, 600}") {
                    object.string = "round \(round) \(object.id)"
                }
            }
        }
        #expect(held.string == before)  // the handle still reads its snapshot
        db.refresh()
        #expect(held.string == "round 19 500")
        #expect(held.int == sample(500).int)
        db.releaseSnapshot()
        try other.write { other.object(ofType: AllTypes.self, forPrimaryKey: 500)!.string = "after release" }
        #expect(held.string == "after release")
        try other.write { try other.delete(other.object(ofType: AllTypes.self, forPrimaryKey: 500)!) }
        db.refresh()
        #expect(held.isInvalidated)
    }

    @Test("objects of a cluster written before a property was added read its default from a record")
    func clusterOlderThanAProperty() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("old.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [ViewNoteV1.self])
        configuration.storesNewTypesInClusters = true
        do {
            let db = try Database(configuration: configuration)
            try db.write { for id in 1...700 { try db.add(ViewNoteV1(id: id)) } }
        }
        configuration.objectTypes = [ViewNoteV2.self]
        configuration.schemaVersion = 2
        let db = try Database(configuration: configuration)
        for note in db.objects(ViewNoteV2.self) {
            #expect(note.title == "note \(note.id)")
            #expect(note.stars == 3)
            #expect(note.tag == nil)
        }
        try db.write { try db.add(ViewNoteV2(id: 701)) }
        let fresh = try #require(db.object(ofType: ViewNoteV2.self, forPrimaryKey: 701))
        #expect(fresh.stars == 3)
        #expect(fresh.title == "note 701")
    }

    @Test("an encrypted file's objects keep reading record copies")
    func encryptedFilesReadRecords() throws {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory().appendingPathComponent("sealed.trove"), objectTypes: [AllTypes.self])
        configuration.storesNewTypesInClusters = true
        configuration.encryptionKey = Data((0..<64).map { UInt8($0) })
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...50 { try db.add(sample(id)) } }
        for object in db.objects(AllTypes.self) {
            expectSample(object)
            #expect(object._view == nil)
        }
    }
}

/// Objects inside a write, which read and set their values in the clusters of the write's cache.
@Suite("Objects reading a write's clusters")
struct WriteClusterObjectTests {
    private func database(_ name: String = #function) throws -> Database {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory(name).appendingPathComponent("write.trove"), objectTypes: [InPlaceGauge.self])
        configuration.storesNewTypesInClusters = true
        configuration.encryptionKey = suiteEncryptionKey
        return try Database(configuration: configuration)
    }

    private func fill(_ db: Database, _ ids: some Sequence<Int>) throws {
        try db.write {
            for id in ids { try db.add(InPlaceGauge(id: id)) }
        }
    }

    @Test("a setter loop in a write reads and sets the cluster's columns; the values hold in the write and after it")
    func setterLoop() throws {
        let db = try database()
        try fill(db, stride(from: 2, through: 2_400, by: 2))
        try db.write {
            for gauge in db.objects(InPlaceGauge.self) {
                #expect(gauge._cluster != nil)
                gauge.level += gauge.id
                gauge.label = "L\(gauge.id)"
                gauge.note = gauge.id % 3 == 0 ? nil : "n\(gauge.level)"
            }
            for gauge in db.objects(InPlaceGauge.self) {
                #expect(gauge.level == gauge.id)
                #expect(gauge.label == "L\(gauge.id)")
            }
            let one = try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 700))
            #expect(one.level == 700)
            #expect(one.note == "n700")
        }
        for gauge in db.objects(InPlaceGauge.self) {
            #expect(gauge._cluster == nil)
            #expect(gauge.level == gauge.id)
            #expect(gauge.label == "L\(gauge.id)")
            #expect(gauge.note == (gauge.id % 3 == 0 ? nil : "n\(gauge.level)"))
        }
        #expect(try db.objects(InPlaceGauge.self).filter("code == %@", "c700").first?.level == 700)
        expectValid(db)
    }

    @Test("objects whose slots move (inserts between keys, a split, deletes) find their slot again")
    func slotsMove() throws {
        let db = try database()
        try fill(db, stride(from: 10, through: 6_000, by: 10))
        try db.write {
            let held = Array(try db.objects(InPlaceGauge.self).filter("id BETWEEN {1000, 1400}"))
            #expect(held.count == 41)
            #expect(held.allSatisfy { $0._cluster != nil })
            // Keys between the held ones: every later slot of their cluster moves, and a full cluster splits.
            for id in stride(from: 1_001, through: 1_399, by: 2) { try db.add(InPlaceGauge(id: id)) }
            for gauge in held { gauge.level = -gauge.id }
            for id in stride(from: 1_003, through: 1_399, by: 4) {
                try db.delete(try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: id)))
            }
            for gauge in held {
                #expect(gauge.level == -gauge.id)
                #expect(gauge.code == "c\(gauge.id)")
                gauge.level -= 1
            }
        }
        for id in stride(from: 1_000, through: 1_400, by: 10) {
            #expect(db.object(ofType: InPlaceGauge.self, forPrimaryKey: id)?.level == -id - 1)
        }
        #expect(db.objects(InPlaceGauge.self).count == 600 + 200 - 100)
        #expect(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 1_001)?.level == 0)
        #expect(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 1_003) == nil)
        expectValid(db)
    }

    @Test("two objects for one stored object see each other's sets; an indexed property set through one is found")
    func twoInstances() throws {
        let db = try database()
        try fill(db, 1...600)
        try db.write {
            let added = InPlaceGauge(id: 601)
            try db.add(added)  // keeps a record of its own
            let found = try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 601))
            found.level = 42
            #expect(added.level == 42)
            added.level = 43
            #expect(found.level == 43)
            let first = try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 5))
            let second = try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 5))
            first.label = "first"
            second.code = "moved"  // indexed: the general path, with the index entry
            #expect(second.label == "first")
            #expect(first.code == "moved")
        }
        #expect(try db.objects(InPlaceGauge.self).filter("code == %@", "moved").map(\.id) == [5])
        #expect(try db.objects(InPlaceGauge.self).filter("code == %@", "c5").isEmpty)
    }

    @Test("a cancelled write leaves the stored values, and its objects read them again")
    func cancelled() throws {
        let db = try database()
        try fill(db, 1...100)
        let kept = try #require(db.object(ofType: InPlaceGauge.self, forPrimaryKey: 50))
        try db.beginWrite()
        kept.level = 99
        #expect(kept._cluster != nil)
        for gauge in db.objects(InPlaceGauge.self) { gauge.level = 7 }
        #expect(kept.level == 7)
        db.cancelWrite()
        #expect(kept.level == 0)
        #expect(db.objects(InPlaceGauge.self).allSatisfy { $0.level == 0 })
    }
}

final class InPlaceGauge: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var level = 0
    @Persisted var label = ""
    @Persisted var note: String?
    @Persisted(indexed: true) var code = ""
    convenience init(id: Int) {
        self.init()
        self.id = id
        code = "c\(id)"
    }
}

final class ViewNoteV1: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    override class func _realmObjectName() -> String? { "ViewNote" }
    convenience init(id: Int) {
        self.init()
        self.id = id
        title = "note \(id)"
    }
}

final class ViewNoteV2: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var stars = 3
    @Persisted var tag: String?
    override class func _realmObjectName() -> String? { "ViewNote" }
    convenience init(id: Int) {
        self.init()
        self.id = id
        title = "note \(id)"
    }
}
