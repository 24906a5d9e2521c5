import Foundation
import Testing

@testable import Trove
@testable import TroveStorage

/// A diary entry with a long text, as an app that deletes old entries keeps them.
final class ScatteredEntry: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var title = ""
    @Persisted var mood = 0
    @Persisted var text = ""
    @Persisted var tags: List<String>

    convenience init(_ id: Int) {
        self.init()
        self.id = id
        title = "entry \(id % 997)"
        mood = id % 10
        text = String(repeating: "오늘은 산책을 했다 walk \(id) ", count: 40)
        tags.append(objectsIn: ["a", "b"].prefix(id % 3))
    }
}

final class ScatteredNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""

    convenience init(_ id: Int, text: String) {
        self.init()
        self.id = id
        self.text = text
    }
}

/// Deleting objects scattered over many clusters: a cluster that only lost
/// objects keeps them as deleted slots (a few bytes per cluster), which
/// every reader skips and the next rewrite of the cluster drops.
@Suite("Deleted slots in clusters", .serialized)
struct DeletedSlotTests {
    static func database(_ name: String = #function) throws -> Database {
        try makeDatabase(name) {
            $0.objectTypes = [ScatteredEntry.self]
            $0.storageLayout = .columnClusters
        }
    }

    /// Every way of reading the entries agrees with the ids expected.
    static func expectEntries(_ db: Database, _ ids: Set<Int>, _ context: String) throws {
        let all = db.objects(ScatteredEntry.self)
        #expect(all.count == ids.count, "\(context): count")
        #expect(all.map(\.id) == ids.sorted(), "\(context): every object, in key order")
        let calm = try all.filter("mood < 3")
        #expect(calm.count == ids.filter { $0 % 10 < 3 }.count, "\(context): a column filter's count")
        #expect(
            try all.filter("NOT mood < 3").map(\.id) == ids.filter { $0 % 10 >= 3 }.sorted(), "\(context): a negated filter")
        #expect(all.sum(of: \.mood) == ids.reduce(0) { $0 + $1 % 10 }, "\(context): a sum over the column")
        #expect(all.max(of: \.id) == ids.max(), "\(context): the largest id")
        #expect(
            try all.filter("title == 'entry 5'").map(\.id) == ids.filter { $0 % 997 == 5 }.sorted(), "\(context): an index")
        #expect(
            try all.filter("text CONTAINS 'walk 17 '").map(\.id) == ids.filter { $0 == 17 }.sorted(),
            "\(context): a filter over records")
        let moods: [Int] = all.sorted(by: \.mood, ascending: false).prefix(3).map(\.mood)
        let expected: [Int] = Array(ids.map { $0 % 10 }.sorted(by: >).prefix(3))
        #expect(moods == expected, "\(context): sorted")
        for id in ids.shuffled().prefix(50) {
            #expect(db.object(ofType: ScatteredEntry.self, forPrimaryKey: id)?.text.contains("walk \(id) ") == true)
        }
        for id in Set(0..<4_000).subtracting(ids).shuffled().prefix(50) {
            #expect(db.object(ofType: ScatteredEntry.self, forPrimaryKey: id) == nil, "\(context): \(id) is deleted")
        }
    }

    @Test("deleting a scattered half in batches keeps the file at its size, and every reader skips the deleted objects")
    func scatteredDeletesKeepTheFile() throws {
        let db = try Self.database()
        try db.write { for id in 0..<4_000 { try db.add(ScatteredEntry(id)) } }
        var ids = Set(0..<4_000)
        // A few more commits, so the pages freed before the deletes are reused (LMDB frees them two commits later).
        for _ in 0..<3 { try db.write { db.object(ofType: ScatteredEntry.self, forPrimaryKey: 1)!.mood = 1 } }
        let before = db.usedFileSize
        var generator = SeededGenerator(seed: 7)
        let doomed = Array(ids.shuffled(using: &generator).prefix(2_000))
        for start in stride(from: 0, to: doomed.count, by: 200) {
            try db.write {
                for id in doomed[start..<(start + 200)] {
                    try db.delete(db.object(ofType: ScatteredEntry.self, forPrimaryKey: id)!)
                    ids.remove(id)
                }
            }
        }
        // Ten batches each touching every cluster: rewriting their columns
        // would add a copy of the table for each of the last few batches. (An
        // encrypted file's index keys are tokens in no order: each delete
        // there copies another index page.)
        let growth = db.configuration.encryptionKey == nil ? before / 5 : before / 4
        #expect(db.usedFileSize <= before + growth, "file \(before) → \(db.usedFileSize) bytes")
        try Self.expectEntries(db, ids, "after the deletes")
        expectValid(db)

        // Another handle (another process's view) reads the same.
        let other = try Database(configuration: db.configuration)
        try Self.expectEntries(other, ids, "another handle")

        // A compacted copy leaves the deleted slots out.
        let copy = db.configuration.fileURL.deletingLastPathComponent().appendingPathComponent("copy.trove")
        try db.writeCopy(to: copy)
        var copied = db.configuration
        copied.fileURL = copy
        let compacted = try Database(configuration: copied)
        try Self.expectEntries(compacted, ids, "the compacted copy")
        expectValid(compacted)
        #expect(compacted.usedFileSize < before * 3 / 4)
    }

    @Test(
        "objects go back where deleted ones were, changes reach the live objects beside deleted ones, and a mostly deleted cluster is rewritten"
    )
    func writesBesideDeletedSlots() throws {
        let db = try Self.database()
        try db.write { for id in 0..<2_000 { try db.add(ScatteredEntry(id)) } }
        var ids = Set(0..<2_000)
        try db.write {
            for id in stride(from: 0, to: 2_000, by: 7) {
                try db.delete(db.object(ofType: ScatteredEntry.self, forPrimaryKey: id)!)
                ids.remove(id)
            }
        }
        try Self.expectEntries(db, ids, "after deleting every 7th")
        // Changing a live object of a cluster with deleted slots.
        try db.write {
            let entry = db.object(ofType: ScatteredEntry.self, forPrimaryKey: 8)!
            entry.text = "changed"
            entry.mood = 9
            db.objects(ScatteredEntry.self).filter { $0.id < 30 }.forEach { $0.title = "early" }
        }
        #expect(db.object(ofType: ScatteredEntry.self, forPrimaryKey: 8)?.text == "changed")
        #expect(try db.objects(ScatteredEntry.self).filter("title == 'early'").map(\.id) == ids.filter { $0 < 30 }.sorted())
        // A deleted primary key added again (an integer primary key is the object key: its slot is taken again).
        try db.write { try db.add(ScatteredEntry(14)) }
        ids.insert(14)
        #expect(db.object(ofType: ScatteredEntry.self, forPrimaryKey: 14)?.mood == 4)
        // Deleting most of the first cluster.
        try db.write {
            for id in 0..<400 where ids.contains(id) {
                try db.delete(db.object(ofType: ScatteredEntry.self, forPrimaryKey: id)!)
                ids.remove(id)
            }
        }
        try Self.expectEntries(db, ids, "after deleting most of a cluster")
        expectValid(db)
    }

    @Test(
        "a delete that leaves deleted slots raises the file format, so an older Trove refuses the file instead of reading deleted objects"
    )
    func formatIsRaised() throws {
        // A type without a list: a list would raise the format past deleted slots from the start.
        let db = try makeDatabase {
            $0.objectTypes = [ScatteredNote.self]
            $0.storageLayout = .columnClusters
        }
        try db.write {
            for id in 0..<100 { try db.add(ScatteredNote(id, text: String(repeating: "walk \(id) ", count: 40))) }
        }
        func format() throws -> UInt32? {
            let read = try ReadTransaction(environment: db.environment)
            defer { read.end() }
            return try Catalog.integer(UInt32.self, key: "format", in: read.existingTable(Catalog.metaTable)!, read)
        }
        #expect(try format()! < Database.deletedSlotsFormatVersion)
        try db.write { try db.delete(db.object(ofType: ScatteredNote.self, forPrimaryKey: 50)!) }
        // (A plain file's bits go after the cluster's stamp, a later format; an encrypted file's have a part of their own.)
        #expect(
            try format()
                == (db.configuration.encryptionKey == nil
                    ? Database.deletesWithStampFormatVersion : Database.deletedSlotsFormatVersion))
    }

    @Test(
        "a plain file's cluster keeps its deleted-slot bits after its stamp (a delete puts one value), a tail takes them to their own part, and every reader agrees throughout"
    )
    func bitsGoWithTheStamp() throws {
        let db = try makeDatabase {
            $0.objectTypes = [ScatteredNote.self]
            $0.storageLayout = .columnClusters
        }
        func note(_ id: Int) -> ScatteredNote { ScatteredNote(id, text: "walk \(id)") }
        try db.write { for id in 0..<100 { try db.add(note(id)) } }
        var ids = Set(0..<100)
        let table = try db.objectBinding(for: ScatteredNote.self).table
        let clusters = try #require(table.store.clusters)
        let sealed = db.configuration.encryptionKey != nil
        let other = try Database(configuration: db.configuration)
        _ = other.objects(ScatteredNote.self).count  // (a reader that keeps its views of the clusters)
        /// The one cluster's stamp part (its size), deleted-slot part and tail, as stored.
        func parts() throws -> (stamp: Int?, deleted: Int?, tail: Bool) {
            let read = try ReadTransaction(environment: db.environment)
            defer { read.end() }
            let key = try #require(try db.objectKey(forPrimaryKey: .int(1), in: table))
            let start = try #require(try clusters.clusterStart(for: key, in: read))
            func size(_ part: Int) throws -> Int? {
                try ClusterTable.withKey(start, part: part) { try read.withValue(in: table.store.table, key: $0) { $0?.count } }
            }
            return (try size(ClusterTable.stampPart), try size(ClusterTable.deletedPart), try size(ClusterTable.tailPart) != nil)
        }
        /// The bits are stored in one place at most: after the stamp, or (beside a tail, or in an encrypted file) in their own part.
        func check(_ context: String) throws {
            let stored = try parts()
            if sealed {
                #expect(stored.stamp == nil || stored.stamp == 8, "\(context): an encrypted table's stamp holds no bits")
            } else if stored.tail {
                #expect(stored.stamp == nil, "\(context): with a tail, no stamp part")
            } else {
                #expect(stored.deleted == nil, "\(context): without a tail, no part of their own")
            }
            for reader in [db, other] {
                reader.refresh()
                let all = reader.objects(ScatteredNote.self)
                #expect(all.count == ids.count, "\(context): count")
                #expect(all.map(\.id) == ids.sorted(), "\(context): every object")
                #expect(try all.filter("text BEGINSWITH 'walk'").count == ids.count, "\(context): a filter")
                for id in 0..<110 {
                    #expect(
                        (reader.object(ofType: ScatteredNote.self, forPrimaryKey: id) != nil) == ids.contains(id),
                        "\(context): \(id)")
                }
            }
            expectValid(db)
        }
        let bits = (100 + 7) / 8
        try db.write { try db.delete(db.object(ofType: ScatteredNote.self, forPrimaryKey: 50)!) }
        ids.remove(50)
        try check("a delete")
        #expect(try parts().stamp == (sealed ? nil : 8 + bits))
        #expect(try parts().deleted == (sealed ? bits : nil))
        try db.write { try db.delete(db.object(ofType: ScatteredNote.self, forPrimaryKey: 10)!) }
        ids.remove(10)
        try check("another delete")
        // An object appended in a later commit: the keys going in drop the deleted slots.
        try db.write { try db.add(note(100)) }
        ids.insert(100)
        try check("an append")
        #expect(try parts().deleted == nil && (parts().stamp ?? 8) == 8)
        // The next append goes to the tail, which holds the stamp; a delete beside it keeps its bits in their own part.
        try db.write { try db.add(note(101)) }
        ids.insert(101)
        #expect(try parts().tail)
        try db.write { try db.delete(db.object(ofType: ScatteredNote.self, forPrimaryKey: 20)!) }
        ids.remove(20)
        try check("a delete beside the tail")
        #expect(try parts().deleted != nil)
        // Appends until the tail no longer fits: the columns are written whole and the tail goes.
        var next = 102
        while try parts().tail {
            try db.write { try db.add(note(next)) }
            ids.insert(next)
            next += 1
        }
        try check("the tail written out")
        try db.write { try db.delete(db.object(ofType: ScatteredNote.self, forPrimaryKey: 30)!) }
        ids.remove(30)
        try check("a delete after it")
        #expect(try (parts().stamp ?? 0) > 8 || sealed)
        let copy = db.configuration.fileURL.deletingLastPathComponent().appendingPathComponent("copy.trove")
        try db.writeCopy(to: copy)
        var copied = db.configuration
        copied.fileURL = copy
        let compacted = try Database(configuration: copied)
        #expect(compacted.objects(ScatteredNote.self).map(\.id) == ids.sorted(), "the compacted copy")
    }

    @Test("damaged deleted-slot bits are reported by verify() for their cluster, and reads say the file is damaged")
    func damagedBitsAreReported() throws {
        let db = try Self.database()
        try db.write { for id in 0..<1_200 { try db.add(ScatteredEntry(id)) } }
        try db.write { try db.delete(db.object(ofType: ScatteredEntry.self, forPrimaryKey: 3)!) }
        let table = try db.objectBinding(for: ScatteredEntry.self).table
        let clusters = try #require(table.store.clusters)
        // (An encrypted file's object keys are not its integer primary keys: those are tokens there.)
        func key(_ id: Int) throws -> UInt64 { try #require(try db.objectKey(forPrimaryKey: .int(Int64(id)), in: table)) }
        let read = db.readTransaction()
        let start = try #require(try clusters.clusterStart(for: key(4), in: read))
        let starts = try (5..<1_200).map { ($0, try clusters.clusterStart(for: key($0), in: read)) }
        let sameCluster = try key(#require(starts.first { $0.1 == start }?.0))
        let otherCluster = try #require(starts.last { $0.1 != start }?.0)
        let sealed = db.configuration.encryptionKey != nil
        func put(_ part: Int, _ bytes: [UInt8]) throws {
            let write = try WriteTransaction(environment: db.environment)
            try ClusterTable.withKey(start, part: part) { key in
                try bytes.withUnsafeBytes { _ = try write.put(table.store.table, key: key, value: $0) }
            }
            try write.commit()
        }
        func damage(_ part: Int, _ bytes: [UInt8]) throws {
            try put(part, bytes)
            db.refresh()
            let report = try db.verify()
            #expect(
                report.problems.contains { $0.kind == .damagedRecord && $0.detail.contains("deleted-slot bits") },
                "\(report)")
            expectTroveError(.corruptFile) { try clusters.values(of: sameCluster, in: db.readTransaction(), nil) }
            // The other clusters still read.
            #expect(db.object(ofType: ScatteredEntry.self, forPrimaryKey: otherCluster)?.id == otherCluster)
        }
        // Bits for a cluster of another size: in their own part (an encrypted file's), or after the stamp (a plain file's).
        if sealed {
            try damage(ClusterTable.deletedPart, [1, 1, 1])
        } else {
            let stamped = try #require(
                try ClusterTable.withKey(start, part: ClusterTable.stampPart) { key in
                    try db.readTransaction().withValue(in: table.store.table, key: key) { $0.map { Array($0) } }
                })
            #expect(stamped.count > 8)
            try damage(ClusterTable.stampPart, Array(stamped[..<8]) + [1, 1, 1])
            // Sound bits in both places, where the writer keeps one.
            try put(ClusterTable.stampPart, stamped)
            try damage(ClusterTable.deletedPart, Array(stamped[8...]))
        }
    }
}
