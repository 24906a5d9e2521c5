import Foundation
import Testing

@testable import Trove

/// Small columns (a bool, an Int8: their parts lie inside B-tree leaves and
/// move whenever a neighbour's part is written) beside large ones (a Double,
/// a String: overflow pages, which stay put until their cluster is written).
final class Meter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var isOn = false
    @Persisted var level: Int8 = 0
    @Persisted var reading = 0.0
    @Persisted var label = ""
}

/// A handle that refreshes beside a writer keeps the clusters its previous
/// snapshot read when no commit since wrote them (the change log names the
/// clusters each commit wrote). It must still read exactly the latest
/// committed values: of the clusters written, of the ones beside them whose
/// parts moved, of clusters split or emptied.
@Suite("Cluster views kept across snapshots", .serialized)
struct ClusterViewCarryTests {
    struct Expected: Equatable {
        var isOn: Bool
        var level: Int8
        var reading: Double
        var label: String
    }

    static func configuration(_ url: URL) -> Configuration {
        var configuration = Configuration(fileURL: url, objectTypes: [Meter.self])
        configuration.storesNewTypesInClusters = true
        return configuration
    }

    static func add(_ id: Int, in db: Database, _ expected: inout [Int: Expected]) throws {
        let gauge = Meter()
        gauge.id = id
        gauge.isOn = id % 2 == 0
        gauge.level = Int8(id % 100)
        gauge.reading = Double(id) / 4
        gauge.label = "게이지 \(id)"
        try db.add(gauge)
        expected[id] = Expected(isOn: gauge.isOn, level: gauge.level, reading: gauge.reading, label: gauge.label)
    }

    /// Every stored object read by primary key through `db`, and keys that are not stored.
    static func check(_ db: Database, _ expected: [Int: Expected], round: Int) {
        for id in expected.keys.sorted().shuffled() {
            guard let gauge = db.object(ofType: Meter.self, forPrimaryKey: id) else {
                Issue.record("round \(round): object \(id) is missing")
                continue
            }
            let read = Expected(isOn: gauge.isOn, level: gauge.level, reading: gauge.reading, label: gauge.label)
            #expect(read == expected[id], "round \(round): object \(id)")
        }
        for id in [-1, (expected.keys.max() ?? 0) + 1] where expected[id] == nil {
            #expect(db.object(ofType: Meter.self, forPrimaryKey: id) == nil, "round \(round): object \(id)")
        }
    }

    /// The views the handle's snapshot holds for Meter, by cluster start.
    static func views(_ db: Database) throws -> [UInt64: ClusterView] {
        let slot = try db.tableInfo(named: "Meter").store.table.slot
        let entries = (db.readTransaction().readCacheEntry(slot) as? ClusterViewCache)?.views.entries ?? []
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.start, $0.view) })
    }

    @Test(
        "a reader refreshing after each of another handle's commits reads exactly what was committed",
        arguments: [false, true])
    func readerBesideWriter(observed: Bool) throws {
        let url = makeTemporaryDirectory("carry-\(observed)").appendingPathComponent("carry.trove")
        let writer = try Database(configuration: Self.configuration(url))
        let reader = try Database(configuration: Self.configuration(url))
        var expected: [Int: Expected] = [:]
        try writer.write { for id in 0..<2_000 { try Self.add(id, in: writer, &expected) } }
        #expect(try writer.tableInfo(named: "Meter").store.table.name == "clu:Meter")
        // With an observer, a refresh parks the old snapshot for it and reads through another.
        var changes = 0
        let token = observed ? reader.objects(Meter.self).observe { _ in changes += 1 } : nil
        defer { token?.invalidate() }
        reader.refresh()
        Self.check(reader, expected, round: 0)
        var random = SystemRandomNumberGenerator()
        var nextID = 2_000
        for round in 1...40 {
            try writer.write {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let id = expected.keys.randomElement(using: &random)!
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0:
                        writer.object(ofType: Meter.self, forPrimaryKey: id)!.isOn.toggle()
                        expected[id]!.isOn.toggle()
                    case 1:
                        writer.object(ofType: Meter.self, forPrimaryKey: id)!.level = Int8(round)
                        expected[id]!.level = Int8(round)
                    case 2:
                        writer.object(ofType: Meter.self, forPrimaryKey: id)!.reading = Double(-round)
                        expected[id]!.reading = Double(-round)
                    case 3:
                        writer.object(ofType: Meter.self, forPrimaryKey: id)!.label = "바뀜 \(round)"
                        expected[id]!.label = "바뀜 \(round)"
                    case 4:
                        try writer.delete(writer.object(ofType: Meter.self, forPrimaryKey: id)!)
                        expected[id] = nil
                    default:
                        for _ in 0..<Int.random(in: 1...700, using: &random) {
                            try Self.add(nextID, in: writer, &expected)
                            nextID += 1
                        }
                    }
                }
            }
            reader.refresh()
            Self.check(reader, expected, round: round)
        }
        #expect(try reader.verify().isValid)
        #expect(!observed || changes > 0)
    }

    @Test("a refresh keeps the clusters no commit since wrote, and reads the written one again")
    func unwrittenClustersAreKept() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("kept.trove")
        let writer = try Database(configuration: Self.configuration(url))
        let reader = try Database(configuration: Self.configuration(url))
        var expected: [Int: Expected] = [:]
        try writer.write { for id in 0..<3_000 { try Self.add(id, in: writer, &expected) } }
        reader.refresh()
        Self.check(reader, expected, round: 0)
        let before = try Self.views(reader)
        #expect(before.count > 2, "the lookups read several clusters")
        // Object 0 lies in the first cluster; the last cluster's parts are not written.
        try writer.write { writer.object(ofType: Meter.self, forPrimaryKey: 0)!.isOn.toggle() }
        expected[0]!.isOn.toggle()
        reader.refresh()
        Self.check(reader, expected, round: 1)
        let after = try Self.views(reader)
        let first = try #require(before.keys.min())
        let last = try #require(before.keys.max())
        #expect(after[first] !== before[first], "the written cluster is read again")
        #expect(after[last] === before[last], "a cluster no commit wrote is kept")
        #expect(after.count == before.count)
    }

    /// Replaces the change record of commit `forged` with the one of commit
    /// `source`, as anyone who can write a plain file can: in a transaction
    /// of its own, which records that it changed nothing.
    static func replaceRecord(of forged: Int, with source: Int, in db: Database) throws {
        let write = try WriteTransaction(environment: db.environment)
        let log = try #require(try write.existingTable(ChangeLog.tableName))
        var parts: [UInt64: [(key: [UInt8], value: [UInt8])]] = [:]
        try write.withCursor(on: log) { cursor in
            var entry = try cursor.first()
            while let current = entry {
                parts[OrderedKey.objectKey(from: current.key), default: []].append((Array(current.key), Array(current.value)))
                entry = try cursor.next()
            }
        }
        for (key, _) in try #require(parts[UInt64(forged)]) { _ = try key.withUnsafeBytes { try write.delete(log, key: $0) } }
        for (key, value) in try #require(parts[UInt64(source)]) {
            let moved = withUnsafeBytes(of: UInt64(forged).bigEndian) { Array($0) } + key.dropFirst(8)
            _ = try moved.withUnsafeBytes { k in try value.withUnsafeBytes { try write.put(log, key: k, value: $0) } }
        }
        try ChangeLog.append(ChangeRecord(), in: write)
        try write.commit()
    }

    @Test("a change record rewritten to leave out what its commit wrote does not make a reader keep what it read before")
    func forgedRecordsAreNotTrusted() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("forged.trove")
        let writer = try Database(configuration: Self.configuration(url))
        let reader = try Database(configuration: Self.configuration(url))
        var expected: [Int: Expected] = [:]
        try writer.write { for id in 0..<3_000 { try Self.add(id, in: writer, &expected) } }
        reader.refresh()
        // Enough lookups that the reader lists the clusters' starts, and every cluster read.
        for round in 0..<3 { Self.check(reader, expected, round: round) }
        #expect(try reader.objects(Meter.self).filter("reading >= 0").count == 3_000)
        // A commit that writes the last cluster only: the forgery's record.
        try writer.write { writer.object(ofType: Meter.self, forPrimaryKey: 2_999)!.label = "끝" }
        expected[2_999]!.label = "끝"
        reader.refresh()
        Self.check(reader, expected, round: 3)
        let honest = writer.readTransaction().id
        // A commit that writes the first cluster and adds clusters past the last.
        try writer.write {
            let first = writer.object(ofType: Meter.self, forPrimaryKey: 0)!
            first.reading = -1
            first.label = "바뀜"
            for id in 3_000..<4_200 { try Self.add(id, in: writer, &expected) }
        }
        expected[0]!.reading = -1
        expected[0]!.label = "바뀜"
        try Self.replaceRecord(of: writer.readTransaction().id, with: honest, in: writer)
        reader.refresh()
        Self.check(reader, expected, round: 4)
        #expect(try reader.objects(Meter.self).filter("reading < 0").count == 1)
        #expect(try reader.objects(Meter.self).filter("reading >= 0").count == 4_199)
        #expect(reader.objects(Meter.self).count == 4_200)
    }

    @Test(
        "a change record rewritten to leave out an append to a cluster's tail (which holds the cluster's stamp) does not make a reader keep what it read before"
    )
    func forgedRecordsOfTailsAreNotTrusted() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("forged-tail.trove")
        let writer = try Database(configuration: Self.configuration(url))
        let reader = try Database(configuration: Self.configuration(url))
        var expected: [Int: Expected] = [:]
        // Two clusters: 0...508 and 509...599.
        try writer.write { for id in 0..<600 { try Self.add(id, in: writer, &expected) } }
        reader.refresh()
        for round in 0..<3 { Self.check(reader, expected, round: round) }
        // A commit that writes the first cluster only: the forgery's record.
        try writer.write { writer.object(ofType: Meter.self, forPrimaryKey: 0)!.label = "처음" }
        expected[0]!.label = "처음"
        reader.refresh()
        Self.check(reader, expected, round: 3)
        let honest = writer.readTransaction().id
        let table = try writer.objectBinding(for: Meter.self).table
        let clusters = try #require(table.store.clusters)
        // Appends, a commit each: the first puts the last cluster's tail in place of its stamp, the next extend it.
        for (round, id) in [600, 601, 602].enumerated() {
            try writer.write { try Self.add(id, in: writer, &expected) }
            try Self.replaceRecord(of: writer.readTransaction().id, with: honest, in: writer)
            let key = try #require(writer.object(ofType: Meter.self, forPrimaryKey: id))._objectKey
            let read = try ReadTransaction(environment: writer.environment)
            defer { read.end() }
            let start = try #require(try clusters.clusterStart(for: key, in: read))
            let parts = try [ClusterTable.tailPart, ClusterTable.stampPart].map { part in
                try ClusterTable.withKey(start, part: part) { try read.withValue(in: table.store.table, key: $0) { $0 != nil } }
            }
            #expect(parts == [true, false], "object \(id) went to the cluster's tail, which holds its stamp")
            reader.refresh()
            Self.check(reader, expected, round: 4 + round)
            #expect(reader.objects(Meter.self).count == id + 1)
        }
        // A delete in the cluster with the tail (its deleted-slot bits alone change): the tail's stamp changes too.
        try writer.write { try writer.delete(writer.object(ofType: Meter.self, forPrimaryKey: 550)!) }
        expected[550] = nil
        try Self.replaceRecord(of: writer.readTransaction().id, with: honest, in: writer)
        reader.refresh()
        Self.check(reader, expected, round: 7)
        #expect(reader.object(ofType: Meter.self, forPrimaryKey: 550) == nil)
        #expect(reader.objects(Meter.self).count == 602)
    }

    @Test("a plain file with clusters from before stamps is raised to format 6 when opened for writing, not when read")
    func olderFilesAreRaisedBeforeStamps() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("older.trove")
        do {
            let db = try Database(configuration: Self.configuration(url))
            var expected: [Int: Expected] = [:]
            try db.write { try Self.add(1, in: db, &expected) }
            #expect(db.fileFormatVersion == Database.clusterStampsFormatVersion)
            // As a Trove before stamps left it.
            let write = try WriteTransaction(environment: db.environment)
            try Catalog.put(
                Database.clustersFormatVersion.littleEndian, key: "format",
                in: try #require(try write.openTable(Catalog.metaTable)), write)
            try write.commit()
        }
        var readOnly = Self.configuration(url)
        readOnly.readOnly = true
        #expect(try Database(configuration: readOnly).fileFormatVersion == Database.clustersFormatVersion)
        #expect(try Database(configuration: Self.configuration(url)).fileFormatVersion == Database.clusterStampsFormatVersion)
    }

    @Test("a change record names the clusters its commit wrote, and an older record that does not is not trusted")
    func recordsNameTheClustersWritten() throws {
        let db = try Database(configuration: Self.configuration(makeTemporaryDirectory().appendingPathComponent("log.trove")))
        var expected: [Int: Expected] = [:]
        try db.write { for id in 0..<1_200 { try Self.add(id, in: db, &expected) } }
        let before = db.readTransaction().id
        try db.write { db.object(ofType: Meter.self, forPrimaryKey: 1_199)!.reading = 1 }
        let transaction = db.readTransaction()
        let record = try #require(ChangeLog.changes(after: before, through: transaction.id, in: transaction))
        let written = try #require(record.types["Meter"]?.clusters)
        #expect(written.count == 1, "one cluster written: \(written)")
        #expect(record.knowsClusters)
        // The same record in the format of a Trove that did not name clusters.
        var old = record.encoded()
        old[0] = 1
        old.removeLast(4 + 8 * written.count)
        let decoded = try #require(old.withUnsafeBytes { ChangeRecord(decoding: $0) })
        #expect(!decoded.knowsClusters)
        #expect(decoded.types["Meter"]?.clusters == nil)
        #expect(decoded.types["Meter"]?.objects == record.types["Meter"]?.objects)
    }
}
