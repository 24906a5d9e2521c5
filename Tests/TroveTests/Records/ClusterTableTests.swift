import Foundation
import Testing

@testable import Trove
@testable import TroveStorage

@Suite("Cluster tables", .serialized)
struct ClusterTableTests {
    static let layout = RecordLayout(
        ObjectSchema(
            name: "Clustered",
            properties: [
                PropertySchema(name: "id", type: .int),
                PropertySchema(name: "name", type: .string, isOptional: true),
                PropertySchema(name: "tags", type: .string, collection: .list),
                PropertySchema(name: "score", type: .double),
            ]))

    static func values(_ key: UInt64, _ version: Int) -> [StoredValue] {
        [.int(Int64(key)), key % 5 == 0 ? .null : .string("n\(key)-\(version)"), .null, .double(Double(version))]
    }

    /// Compares every way of reading the table with the model.
    static func expectAgrees(
        _ clusters: ClusterTable, _ model: [UInt64: [StoredValue]], _ transaction: Transaction,
        _ cache: ClusterTable.ClusterCache?, _ context: String
    ) throws {
        var seen: [(UInt64, [StoredValue])] = []
        try clusters.forEach(in: transaction, cache) { key, values in
            seen.append((key, values))
            return true
        }
        #expect(seen.map(\.0) == model.keys.sorted(), "\(context): keys in order")
        for (key, values) in seen { #expect(values == model[key], "\(context): object \(key)") }
        for key in model.keys.shuffled().prefix(20) {
            #expect(try clusters.values(of: key, in: transaction, cache) == model[key], "\(context): lookup \(key)")
        }
        #expect(try clusters.values(of: 999_999, in: transaction, cache) == nil)
        #expect(try clusters.count(in: transaction, cache) == model.count, "\(context): count")
        let sorted = model.keys.sorted()
        if sorted.count > 2 {
            let (low, high) = (sorted[sorted.count / 3], sorted[sorted.count * 2 / 3])
            #expect(
                try clusters.keys(in: transaction, cache, from: low, through: high) == sorted.filter { $0 >= low && $0 <= high },
                "\(context): keys from \(low) through \(high)")
        }
        #expect(try clusters.lastKey(in: transaction, cache) == sorted.last, "\(context): the last key")
    }

    /// The table with the objects of `keys`, inserted in key order in one write.
    static func loaded(_ db: Database, keys: ClosedRange<UInt64>) throws -> (Table, ClusterTable) {
        let write = try WriteTransaction(environment: db.environment)
        let table = try write.openTable("clu:Clustered")!
        let clusters = ClusterTable(table: table, layout: Self.layout)
        let cache = ClusterTable.ClusterCache(owner: clusters)
        for key in keys { #expect(try clusters.insert(key, values: Self.values(key, 0), in: write, cache)) }
        try clusters.flush(cache, in: write)
        try write.commit()
        return (table, clusters)
    }

    @Test("inserts in any order, replacements and deletes agree with a model, inside the write and after each commit")
    func agreesWithAModel() throws {
        let saved = ClusterTable.capacity
        ClusterTable.capacity = 4  // many clusters, splits and moves
        defer { ClusterTable.capacity = saved }
        let db = try makeDatabase()
        var generator = SystemRandomNumberGenerator()
        var model: [UInt64: [StoredValue]] = [:]
        var table: Table?
        for round in 0..<12 {
            let write = try WriteTransaction(environment: db.environment)
            table = try write.openTable("clu:Clustered")
            let clusters = ClusterTable(table: table!, layout: Self.layout)
            let cache = ClusterTable.ClusterCache(owner: clusters)
            for step in 0..<150 {
                let key = UInt64.random(in: 1...200, using: &generator)
                switch Int.random(in: 0..<5, using: &generator) {
                case 0, 1:
                    let inserted = try clusters.insert(key, values: Self.values(key, round), in: write, cache)
                    #expect(inserted == (model[key] == nil), "round \(round) step \(step): insert \(key)")
                    if inserted { model[key] = Self.values(key, round) }
                case 2:
                    let replaced = try clusters.replace(key, values: Self.values(key, round * 100 + step), in: write, cache)
                    #expect(replaced == (model[key] != nil))
                    if replaced { model[key] = Self.values(key, round * 100 + step) }
                case 3:
                    // One column changed: the cluster's other columns are read only when needed.
                    let score = StoredValue.double(Double(step))
                    let set = try clusters.set(key, column: 3, to: score, in: write, cache)
                    #expect(set == (model[key] != nil))
                    if set { model[key]![3] = score }
                default:
                    let deleted = try clusters.delete(key, in: write, cache)
                    #expect(deleted == (model[key] != nil), "round \(round) step \(step): delete \(key)")
                    model[key] = nil
                }
                if step % 20 == 0 {
                    for key in model.keys.shuffled().prefix(5) {
                        #expect(try clusters.values(of: key, in: write, cache) == model[key])
                    }
                }
            }
            try Self.expectAgrees(clusters, model, write, cache, "round \(round), in the write")
            try clusters.flush(cache, in: write)
            try write.commit()
            let read = try ReadTransaction(environment: db.environment)
            defer { read.end() }
            try Self.expectAgrees(
                ClusterTable(table: table!, layout: Self.layout), model, read, nil, "round \(round), committed")
        }
    }

    @Test("a bulk load in key order fills whole clusters, and changing one column rewrites only that column")
    func columnsAreWrittenOnce() throws {
        let db = try makeDatabase()
        let (_, clusters) = try Self.loaded(db, keys: 1...2_000)
        let write = try WriteTransaction(environment: db.environment)
        let cache = ClusterTable.ClusterCache(owner: clusters)
        let before = write.loggedBytes
        for key in 1...UInt64(2_000) {
            var values = Self.values(key, 0)
            values[3] = .double(1)
            #expect(try clusters.replace(key, values: values, in: write, cache))
        }
        try clusters.flush(cache, in: write)
        // Four clusters of 509 (and one of the rest), one score column each: about 2,000 × 8 bytes, not the names.
        let written = write.loggedBytes - before
        #expect(written < 2_000 * 8 + 4_096, "\(written) bytes written to change one Double of 2,000 objects")
        #expect(cache.clusters.count == 4)
        try write.commit()
    }

    @Test(
        "deleting objects of many clusters writes a few bytes per cluster, not its columns; keys going in drop the deleted slots")
    func scatteredDeletesWriteBits() throws {
        let db = try makeDatabase()
        let (table, clusters) = try Self.loaded(db, keys: 1...2_545)
        var model = Dictionary(uniqueKeysWithValues: (1...UInt64(2_545)).map { ($0, Self.values($0, 0)) })

        // Five clusters, ten objects deleted from each.
        var write = try WriteTransaction(environment: db.environment)
        var cache = ClusterTable.ClusterCache(owner: clusters)
        let before = write.loggedBytes
        for key in stride(from: UInt64(3), through: 2_545, by: 51) {
            #expect(try clusters.delete(key, in: write, cache))
            model[key] = nil
        }
        try clusters.flush(cache, in: write)
        let written = write.loggedBytes - before
        #expect(written < 5 * 200, "\(written) bytes written to delete 50 objects of five clusters")
        try Self.expectAgrees(clusters, model, write, cache, "after the deletes, in the write")
        try write.commit()
        var read = try ReadTransaction(environment: db.environment)
        try Self.expectAgrees(clusters, model, read, nil, "after the deletes")
        read.end()

        // A key going in where one was deleted: the cluster is written without its deleted slots.
        write = try WriteTransaction(environment: db.environment)
        cache = ClusterTable.ClusterCache(owner: clusters)
        #expect(try clusters.insert(3, values: Self.values(3, 1), in: write, cache))
        model[3] = Self.values(3, 1)
        try clusters.flush(cache, in: write)
        try write.commit()
        read = try ReadTransaction(environment: db.environment)
        let bits = try ClusterTable.withKey(1, part: ClusterTable.deletedPart) {
            try read.withValue(in: table, key: $0) { $0 != nil }
        }
        #expect(!bits, "the first cluster's deleted slots are gone")
        let kept = try ClusterTable.withKey(510, part: ClusterTable.deletedPart) {
            try read.withValue(in: table, key: $0) { $0 != nil }
        }
        #expect(kept, "the second cluster still has its deleted slots")
        try Self.expectAgrees(clusters, model, read, nil, "after an insert")
        read.end()
    }
}
