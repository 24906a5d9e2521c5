import Foundation
import Testing

@testable import Trove

/// Objects looked up one at a time in the cluster layout: a snapshot's
/// lookups first search the file for their cluster, then (once they have
/// searched often enough) a list of the clusters' starts in memory; a write
/// reads the cluster it changed last from its cache. Each way must find
/// exactly the stored objects.
@Suite("Lookups in column clusters", .serialized)
struct ClusterLookupTests {
    static let count = 3_000

    /// A handle storing Person in clusters, with every third primary key
    /// from 10 on stored (the gaps fall inside clusters, before the first and after the last).
    static func seeded() throws -> Database {
        var configuration = Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("lookups.trove"))
        configuration.storesNewTypesInClusters = true
        let db = try Database(configuration: configuration)
        try db.write {
            for index in 0..<count {
                let person = Person()
                person.id = 10 + 3 * index
                person.name = "사람 \(index)"
                person.score = Double(index)
                try db.add(person)
            }
        }
        #expect(try db.tableInfo(named: "Person").store.table.name == "clu:Person")
        return db
    }

    static func isStored(_ id: Int) -> Bool { id >= 10 && (id - 10) % 3 == 0 && (id - 10) / 3 < count }

    @Test("random lookups in one snapshot find every stored object and nothing else, before and after the starts are listed")
    func randomLookups() throws {
        let db = try Self.seeded()
        var random = SystemRandomNumberGenerator()
        // Enough lookups that the snapshot lists the starts part way through, plus keys outside the table.
        let ids =
            (0..<(4 * Self.count)).map { _ in Int.random(in: 0..<(10 + 3 * Self.count + 20), using: &random) }
            + [0, 9, 11, 10 + 3 * (Self.count - 1), 10 + 3 * Self.count, Int.max]
        for id in ids {
            let found = db.object(ofType: Person.self, forPrimaryKey: id)
            #expect((found != nil) == Self.isStored(id), "object \(id)")
            if let found { #expect(found.name == "사람 \((id - 10) / 3)" && found.score == Double((id - 10) / 3)) }
        }
    }

    @Test("a lookup through a metatype held as Object.Type makes the stored class, reading its slot; a missing key makes nothing")
    func lookupThroughObjectMetatype() throws {
        let db = try Self.seeded()
        let type: Object.Type = Person.self
        for id in [10, 13, 10 + 3 * 1_000, 10 + 3 * (Self.count - 1)] {
            let found = try #require(db.object(ofType: type, forPrimaryKey: id), "object \(id)")
            let person = try #require(found as? Person, "object \(id) is a \(Swift.type(of: found))")
            #expect(person.name == "사람 \((id - 10) / 3)" && person.score == Double((id - 10) / 3))
        }
        #expect(db.object(ofType: type, forPrimaryKey: 11) == nil)
        #expect(db.object(ofType: type, forPrimaryKey: 10 + 3 * Self.count) == nil)
    }

    @Test("a key's cluster bounds from the list of starts: below, at and between starts, past the last, none")
    func boundsFromStarts() {
        let starts: [UInt64] = [10, 20, 30, 1 << 40]
        #expect(ClusterTable.bounds(for: 5, in: starts)! == (10, nil))
        #expect(ClusterTable.bounds(for: 10, in: starts)! == (10, 20))
        #expect(ClusterTable.bounds(for: 19, in: starts)! == (10, 20))
        #expect(ClusterTable.bounds(for: 30, in: starts)! == (30, 1 << 40))
        #expect(ClusterTable.bounds(for: .max, in: starts)! == (1 << 40, nil))
        #expect(ClusterTable.bounds(for: 7, in: [7])! == (7, nil))
        #expect(ClusterTable.bounds(for: 7, in: []) == nil)
        for key in UInt64(10)...40 {
            let bounds = ClusterTable.bounds(for: key, in: starts)!
            let expected = starts.last { $0 <= key }!
            #expect(bounds.0 == expected, "key \(key)")
            #expect(bounds.1 == starts.first { $0 > key }, "key \(key)")
        }
    }

    @Test("random lookups in an encrypted table keep its opened clusters within their byte limit and find every object")
    func encryptedLookupsStayWithinTheirLimit() throws {
        var configuration = Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("sealed.trove"))
        configuration.storesNewTypesInClusters = true
        configuration.encryptionKey = Data((0..<64).map { UInt8($0) })
        let db = try Database(configuration: configuration)
        try db.write {
            for index in 0..<Self.count {
                let person = Person()
                person.id = index
                person.name = String(repeating: "이름", count: 20) + "\(index)"
                try db.add(person)
            }
        }
        let saved = ClusterViewCache.openedBytesLimit
        ClusterViewCache.openedBytesLimit = 40_000  // about two of the six clusters
        defer { ClusterViewCache.openedBytesLimit = saved }
        let table = try db.tableInfo(named: "Person")
        var random = SystemRandomNumberGenerator()
        var largest = 0
        for _ in 0..<2_000 {
            let id = Int.random(in: 0..<Self.count, using: &random)
            let found = try #require(db.object(ofType: Person.self, forPrimaryKey: id), "object \(id)")
            #expect(found.name == String(repeating: "이름", count: 20) + "\(id)")
            let cache = try #require(db.readTransaction().readCacheEntry(table.store.table.slot) as? ClusterViewCache)
            largest = max(largest, cache.views.count)
        }
        // A cluster of 509 such objects opens about 40 KB: more than three kept would pass the limit by more than one cluster.
        #expect(largest >= 1 && largest <= 3, "\(largest) clusters kept")
    }

    @Test("a write that changes every object while it iterates them reads its own changes, then commits them")
    func changesWhileIterating() throws {
        let db = try Self.seeded()
        try db.write {
            for person in db.objects(Person.self) { person.score += 0.5 }
            for id in stride(from: 10, to: 10 + 3 * Self.count, by: 3).shuffled().prefix(500) {
                let person = try #require(db.object(ofType: Person.self, forPrimaryKey: id))
                #expect(person.score == Double((id - 10) / 3) + 0.5, "object \(id) inside the write")
            }
            #expect(db.object(ofType: Person.self, forPrimaryKey: 11) == nil)
        }
        #expect(db.objects(Person.self).map { $0.score } == (0..<Self.count).map { Double($0) + 0.5 })
        #expect(try db.verify().isValid)
    }
}

/// A snapshot that outlives a remap of the file (another handle's commit
/// grew it) must not read the clusters it kept from before: their pages now
/// lie elsewhere in memory.
@Suite("Lookups in column clusters across a remap", .serialized)
struct ClusterRemapTests {
    @Test("a reader's lookups in one snapshot still find every object after a writer grows the map under it")
    func lookupsSurviveRemaps() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("remap.trove")
        var configuration = Configuration(fileURL: url)
        configuration.storesNewTypesInClusters = true
        configuration.initialMapSize = 1 << 20  // a small map: the writer's commits remap it
        configuration.reservesMap = false
        let writer = try Database(configuration: configuration)
        try writer.write {
            for id in 0..<2_000 {
                let person = Person()
                person.id = id
                person.name = "사람 \(id)"
                try writer.add(person)
            }
        }
        let reader = try Database(configuration: configuration)
        reader.autorefresh = false  // one snapshot throughout
        var random = SystemRandomNumberGenerator()
        for round in 0..<10 {
            for _ in 0..<300 {
                let id = Int.random(in: 0..<2_000, using: &random)
                #expect(reader.object(ofType: Person.self, forPrimaryKey: id)?.name == "사람 \(id)", "round \(round)")
            }
            // About 1.5 MB of new objects: the map grows, and every pointer into the old one is gone.
            try writer.write {
                for id in 0..<3_000 {
                    let person = Person()
                    person.id = 100_000 * (round + 1) + id
                    person.name = String(repeating: "가", count: 150)
                    try writer.add(person)
                }
            }
        }
        #expect(reader.objects(Person.self).count == 2_000, "the reader's snapshot is the first commit")
    }
}
