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

    /// Runs `change` in a write of its own and commits it, checking the
    /// table against `model` in the write (unless `checkingInWrite` is
    /// false: reading the changed clusters there reads their columns) and
    /// after; returns the bytes the change logged.
    static func commit(
        _ db: Database, _ clusters: ClusterTable, _ context: String, checkingInWrite: Bool = true,
        _ change: (WriteTransaction, ClusterTable.ClusterCache) throws -> Void, model: () -> [UInt64: [StoredValue]]
    ) throws -> Int {
        let write = try WriteTransaction(environment: db.environment)
        let cache = ClusterTable.ClusterCache(owner: clusters)
        let before = write.loggedBytes
        try change(write, cache)
        if checkingInWrite { try Self.expectAgrees(clusters, model(), write, cache, "\(context), in the write") }
        try clusters.flush(cache, in: write)
        let written = write.loggedBytes - before
        try write.commit()
        let read = try ReadTransaction(environment: db.environment)
        defer { read.end() }
        try Self.expectAgrees(ClusterTable(table: clusters.table, layout: Self.layout), model(), read, nil, context)
        return written
    }

    /// The table with the objects of `keys`, inserted in key order in one write.
    /// `tailMaximumBytes`: the table's (``ClusterTable/tailMaximumBytes``; 0: no tails).
    static func loaded(_ db: Database, keys: ClosedRange<UInt64>, tailMaximumBytes: Int = 4000) throws -> (Table, ClusterTable) {
        let write = try WriteTransaction(environment: db.environment)
        let table = try write.openTable("clu:Clustered")!
        let clusters = ClusterTable(table: table, layout: Self.layout, tailMaximumBytes: tailMaximumBytes)
        let cache = ClusterTable.ClusterCache(owner: clusters)
        for key in keys { #expect(try clusters.insert(key, values: Self.values(key, 0), in: write, cache)) }
        try clusters.flush(cache, in: write)
        try write.commit()
        return (table, clusters)
    }

    @Test(
        "inserts in any order, replacements and deletes agree with a model, inside the write and after each commit (with and without column patches)",
        arguments: [false, true])
    func agreesWithAModel(patching: Bool) throws {
        let db = try makeDatabase()
        var generator = SystemRandomNumberGenerator()
        var model: [UInt64: [StoredValue]] = [:]
        var table: Table?
        for round in 0..<12 {
            let write = try WriteTransaction(environment: db.environment)
            table = try write.openTable("clu:Clustered")
            // Many clusters, splits and moves; patching: every change small enough is
            // written as a patch (the columns here are a few bytes).
            let clusters = ClusterTable(
                table: table!, layout: Self.layout, clusterCapacity: 4, patchMinimumColumnBytes: patching ? 0 : 2048,
                patchShare: patching ? 1 : 8)
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
        let read = try ReadTransaction(environment: db.environment)
        defer { read.end() }
        let patches = try Self.patchCount(table!, read)
        #expect(patching ? patches > 0 : patches == 0, "\(patches) column patches stored")
    }

    /// How many column patches the table holds.
    static func patchCount(_ table: Table, _ transaction: Transaction) throws -> Int {
        try transaction.withCursor(on: table) { cursor in
            var count = 0
            var entry = try cursor.first()
            while let current = entry {
                if ClusterTable.patchedColumn(ClusterTable.part(of: current.key)) != nil { count += 1 }
                entry = try cursor.next()
            }
            return count
        }
    }

    /// Whether the cluster at `start` holds a patch of `column`.
    /// Whether the cluster at `start` holds a patch of `column`: in a part of its own or in its tail.
    static func hasPatch(_ table: Table, start: UInt64, column: Int, _ transaction: Transaction) throws -> Bool {
        let inPart = try ClusterTable.withKey(start, part: ClusterTable.patchPart(column)) {
            try transaction.withValue(in: table, key: $0) { $0 != nil }
        }
        let inTail = try ClusterTable.withKey(start, part: ClusterTable.tailPart) {
            try transaction.withValue(in: table, key: $0) { bytes in
                bytes.flatMap { ClusterTail($0, columnCount: layout.columnCount)?.patch(column) } != nil
            }
        }
        return inPart || inTail
    }

    /// How many objects the tail of the cluster at `start` holds; nil when it has none.
    static func tailCount(_ table: Table, start: UInt64, _ transaction: Transaction) throws -> Int? {
        try ClusterTable.withKey(start, part: ClusterTable.tailPart) {
            try transaction.withValue(in: table, key: $0) { bytes in
                bytes.map { ClusterTail($0, columnCount: layout.columnCount)?.count ?? -1 }
            }
        }
    }

    /// How many keys the keys part of the cluster at `start` holds.
    static func keysPartCount(_ table: Table, start: UInt64, _ transaction: Transaction) throws -> Int? {
        try ClusterTable.withKey(start, part: 0) {
            try transaction.withValue(in: table, key: $0) { $0.flatMap { ClusterColumn($0, type: .int) }?.count }
        }
    }

    @Test(
        "changing a few values of a large column in many clusters writes patches, not the columns; a large change, or keys going in, rewrite the column"
    )
    func scatteredUpdatesWritePatches() throws {
        let db = try makeDatabase()
        let (table, clusters) = try Self.loaded(db, keys: 1...2_545)
        var model = Dictionary(uniqueKeysWithValues: (1...UInt64(2_545)).map { ($0, Self.values($0, 0)) })
        func commit(_ context: String, _ change: (WriteTransaction, ClusterTable.ClusterCache) throws -> Void) throws -> Int {
            try Self.commit(db, clusters, context, change) { model }
        }
        func setName(_ key: UInt64, _ name: StoredValue, _ write: WriteTransaction, _ cache: ClusterTable.ClusterCache) throws {
            #expect(try clusters.set(key, column: 1, to: name, in: write, cache))
            model[key]![1] = name
        }

        // Ten names in each of five clusters (about 6 KB of names each).
        var written = try commit("ten names per cluster") { write, cache in
            for key in stride(from: UInt64(3), through: 2_545, by: 51) {
                try setName(key, .string("renamed \(key)"), write, cache)
            }
        }
        #expect(written < 5 * 400, "\(written) bytes written to change 50 names of five clusters")
        var read = try ReadTransaction(environment: db.environment)
        #expect(try Self.hasPatch(table, start: 1, column: 1, read))
        #expect(try Self.patchCount(table, read) == 5)
        read.end()

        // More names, one of them changed again and one set to nil: the patches grow.
        written = try commit("ten more per cluster") { write, cache in
            for key in stride(from: UInt64(3), through: 2_545, by: 51) { try setName(key, .null, write, cache) }
            for key in stride(from: UInt64(20), through: 2_545, by: 51) {
                try setName(key, .string(String(repeating: "긴", count: Int(key % 7))), write, cache)
            }
        }
        #expect(written < 5 * 800, "\(written) bytes written to change 100 names of five clusters")

        // A hundred names of the first cluster: more than a patch holds, so its column is written whole.
        _ = try commit("a hundred names of one cluster") { write, cache in
            for key in 100...UInt64(199) { try setName(key, .string("bulk \(key)"), write, cache) }
        }
        read = try ReadTransaction(environment: db.environment)
        #expect(try !Self.hasPatch(table, start: 1, column: 1, read), "the first cluster's column is written whole")
        #expect(try Self.hasPatch(table, start: 510, column: 1, read), "the second cluster keeps its patch")
        read.end()

        // A delete beside a patch keeps it (bits only); a key going in rewrites the cluster.
        _ = try commit("a delete and an insert") { write, cache throws in
            #expect(try clusters.delete(20 + 51 * 10, in: write, cache))
            model[20 + 51 * 10] = nil
            #expect(try clusters.delete(1_100, in: write, cache))
            model[1_100] = nil
            #expect(try clusters.insert(1_100, values: Self.values(1_100, 3), in: write, cache))
            model[1_100] = Self.values(1_100, 3)
        }
        read = try ReadTransaction(environment: db.environment)
        #expect(try Self.hasPatch(table, start: 510, column: 1, read), "a delete keeps the patch")
        #expect(try !Self.hasPatch(table, start: 1_019, column: 1, read), "an insert rewrites the cluster")
        read.end()
    }

    @Test(
        "without tails, objects appended one per commit join each large column's patch instead of rewriting it; a full patch, a key going in before the last, or a split rewrite the column"
    )
    func appendsJoinPatches() throws {
        let db = try makeDatabase()
        // One cluster of 300 objects: names of ~2.7 KB and scores of 2.4 KB, each large enough to patch.
        // (No tails: what a write does once a tail outgrows its part.)
        let (table, clusters) = try Self.loaded(db, keys: 1...300, tailMaximumBytes: 0)
        var model = Dictionary(uniqueKeysWithValues: (1...UInt64(300)).map { ($0, Self.values($0, 0)) })
        let name = 1
        let score = 3
        func storedCount(_ column: Int, _ transaction: Transaction) throws -> Int? {
            try clusters.value(1, part: column + 1, in: transaction) {
                $0.flatMap { ClusterColumn($0, type: Self.layout.types[column]) }?.count
            }
        }
        // (As an app's commits do: nothing read in the write, so the columns are not read either.)
        func commit(
            _ context: String, checkingInWrite: Bool = false,
            _ change: (WriteTransaction, ClusterTable.ClusterCache) throws -> Void
        ) throws -> Int {
            try Self.commit(db, clusters, context, checkingInWrite: checkingInWrite, change) { model }
        }
        var largest = 0
        for key in UInt64(301)...320 {
            let written = try commit("object \(key) appended") { write, cache throws in
                #expect(try clusters.insert(key, values: Self.values(key, 1), in: write, cache))
                model[key] = Self.values(key, 1)
            }
            largest = max(largest, written)
        }
        // The keys (8 bytes each) are written whole; each column only its patch, not its 2.4–2.7 KB.
        #expect(largest < 321 * 8 + 1_000, "\(largest) bytes written by the largest single append")
        var read = try ReadTransaction(environment: db.environment)
        #expect(try storedCount(name, read) == 300, "the names are stored as they were, the new ones in the patch")
        #expect(try storedCount(score, read) == 300)
        #expect(try Self.hasPatch(table, start: 1, column: name, read))
        read.end()
        db.refresh()
        #expect(db.fileFormatVersion == Database.appendPatchesFormatVersion)

        // A change of an appended object and of an old one, and an append, in one commit: one patch holds them.
        _ = try commit("an appended object changed") { write, cache throws in
            #expect(try clusters.set(320, column: name, to: .string("changed after its append"), in: write, cache))
            model[320]![name] = .string("changed after its append")
            #expect(try clusters.set(7, column: score, to: .double(-7), in: write, cache))
            model[7]![score] = .double(-7)
            #expect(try clusters.insert(321, values: Self.values(321, 2), in: write, cache))
            model[321] = Self.values(321, 2)
        }
        // Appends read back in the same write (the columns are read then, with what was appended), changed, appended again.
        _ = try commit("appends read back in their write", checkingInWrite: true) { write, cache throws in
            #expect(try clusters.insert(322, values: Self.values(322, 2), in: write, cache))
            model[322] = Self.values(322, 2)
            #expect(try clusters.values(of: 322, in: write, cache) == model[322])
            #expect(try clusters.values(of: 5, in: write, cache) == model[5])
            #expect(try clusters.insert(323, values: Self.values(323, 2), in: write, cache))
            model[323] = Self.values(323, 2)
            #expect(try clusters.set(323, column: score, to: .double(323), in: write, cache))
            model[323]![score] = .double(323)
        }
        // More appends than an eighth of the column: it is written whole, holding every object again.
        for key in UInt64(324)...345 {
            _ = try commit("object \(key) appended") { write, cache throws in
                #expect(try clusters.insert(key, values: Self.values(key, 3), in: write, cache))
                model[key] = Self.values(key, 3)
            }
        }
        read = try ReadTransaction(environment: db.environment)
        let rewritten = try #require(try storedCount(score, read))
        #expect(rewritten > 300, "the scores' patch outgrew an eighth of the column, so it was written whole (\(rewritten))")
        read.end()

        // A key going in before the last moves the slots after it: every column is written whole.
        _ = try commit("a key before the last") { write, cache throws in
            #expect(try clusters.delete(100, in: write, cache))
            #expect(try clusters.insert(100, values: Self.values(100, 4), in: write, cache))
            model[100] = Self.values(100, 4)
        }
        read = try ReadTransaction(environment: db.environment)
        #expect(try storedCount(name, read) == model.count)
        #expect(try !Self.hasPatch(table, start: 1, column: name, read))
        read.end()

        // Appends up to a full cluster and past it (a new cluster starts).
        for key in UInt64(346)...UInt64(ClusterTable.capacity + 20) {
            _ = try commit("object \(key) appended") { write, cache throws in
                #expect(try clusters.insert(key, values: Self.values(key, 5), in: write, cache))
                model[key] = Self.values(key, 5)
            }
        }
    }

    @Test(
        "objects appended one per commit go to the cluster's tail with every column's patch, one part; a full tail, a key going in before the last, or a split write the keys and columns again"
    )
    func appendsGoToTheTail() throws {
        let db = try makeDatabase()
        // One cluster of 300 objects whose columns have patches of their own (a few changed names and scores).
        let (table, clusters) = try Self.loaded(db, keys: 1...300)
        var model = Dictionary(uniqueKeysWithValues: (1...UInt64(300)).map { ($0, Self.values($0, 0)) })
        let (name, score) = (1, 3)
        func commit(
            _ context: String, checkingInWrite: Bool = false,
            _ change: (WriteTransaction, ClusterTable.ClusterCache) throws -> Void
        ) throws -> Int {
            try Self.commit(db, clusters, context, checkingInWrite: checkingInWrite, change) { model }
        }
        func parts() throws -> (keys: Int?, tail: Int?, namePatchPart: Bool, namePatched: Bool) {
            let read = try ReadTransaction(environment: db.environment)
            defer { read.end() }
            let part = try ClusterTable.withKey(1, part: ClusterTable.patchPart(name)) {
                try read.withValue(in: table, key: $0) { $0 != nil }
            }
            return (
                try Self.keysPartCount(table, start: 1, read), try Self.tailCount(table, start: 1, read), part,
                try Self.hasPatch(table, start: 1, column: name, read)
            )
        }
        _ = try commit("a name and a score changed") { write, cache throws in
            #expect(try clusters.set(5, column: name, to: .string("changed"), in: write, cache))
            model[5]![name] = .string("changed")
            #expect(try clusters.set(6, column: score, to: .double(-6), in: write, cache))
            model[6]![score] = .double(-6)
        }
        #expect(try parts() == (300, nil, true, true))

        // Appends: the keys part stays, the tail holds the new objects and the patches (the stored ones folded in).
        var largest = 0
        for key in UInt64(301)...305 {
            let written = try commit("object \(key) appended") { write, cache throws in
                #expect(try clusters.insert(key, values: Self.values(key, 1), in: write, cache))
                model[key] = Self.values(key, 1)
            }
            largest = max(largest, written)
            #expect(try parts() == (300, Int(key - 300), false, true), "after appending \(key)")
        }
        // The tail (which holds the stamp), not the keys (2.4 KB) or any column.
        #expect(largest < 1_000, "\(largest) bytes written by the largest single append")
        db.refresh()
        #expect(db.fileFormatVersion == Database.clusterTailsFormatVersion)

        // A change of an appended object and of an old one, and an append, read back in their write.
        _ = try commit("appended and old objects changed", checkingInWrite: true) { write, cache throws in
            #expect(try clusters.set(303, column: name, to: .string("changed after its append"), in: write, cache))
            model[303]![name] = .string("changed after its append")
            #expect(try clusters.set(7, column: score, to: .double(-7), in: write, cache))
            model[7]![score] = .double(-7)
            #expect(try clusters.insert(306, values: Self.values(306, 2), in: write, cache))
            model[306] = Self.values(306, 2)
            #expect(try clusters.values(of: 306, in: write, cache) == model[306])
        }
        #expect(try parts() == (300, 6, false, true))
        // A change alone, and a delete alone (its bits; the tail stays as it is).
        _ = try commit("an old object changed") { write, cache throws in
            #expect(try clusters.set(8, column: name, to: .null, in: write, cache))
            model[8]![name] = .null
        }
        _ = try commit("an appended object deleted") { write, cache throws in
            #expect(try clusters.delete(304, in: write, cache))
            model[304] = nil
        }
        #expect(try parts() == (300, 6, false, true))

        // Keys going in drop the deleted slots first: everything is written whole, and the tail goes.
        _ = try commit("object 307 appended after a delete") { write, cache throws in
            #expect(try clusters.insert(307, values: Self.values(307, 3), in: write, cache))
            model[307] = Self.values(307, 3)
        }
        #expect(try parts() == (306, nil, false, false))

        // Appends until the tail outgrows its part: the keys part holds them all again.
        var key = UInt64(308)
        var largestTail = 0
        while true {
            _ = try commit("object \(key) appended") { write, cache throws in
                #expect(try clusters.insert(key, values: Self.values(key, 3), in: write, cache))
                model[key] = Self.values(key, 3)
            }
            key += 1
            guard let count = try parts().tail else { break }
            largestTail = count
            let read = try ReadTransaction(environment: db.environment)
            let bytes = try ClusterTable.withKey(1, part: ClusterTable.tailPart) {
                try read.withValue(in: table, key: $0) { $0?.count }
            }
            read.end()
            #expect((bytes ?? 0) <= clusters.tailMaximumBytes, "a tail of \(count) objects takes \(bytes ?? 0) bytes")
            guard key < 500 else {
                Issue.record("the tail never outgrew its part")
                return
            }
        }
        #expect(largestTail > 20, "the tail held \(largestTail) objects before it was written out")
        #expect(try parts().keys == 306 + Int(key - 308), "the keys part holds every key")
        // More appends start a new tail.
        _ = try commit("object \(key) appended after the tail was written out") { write, cache throws in
            #expect(try clusters.insert(key, values: Self.values(key, 4), in: write, cache))
            model[key] = Self.values(key, 4)
        }
        #expect(try parts().tail == 1)

        // A key going in before the last moves the slots after it: keys and columns are written whole, no tail.
        _ = try commit("a key before the last") { write, cache throws in
            #expect(try clusters.insert(304, values: Self.values(304, 5), in: write, cache))
            model[304] = Self.values(304, 5)
        }
        #expect(try parts() == (model.count, nil, false, false))

        // Appends up to a full cluster and past it (a new cluster starts, and gets its own tail).
        for next in (key + 1)...UInt64(ClusterTable.capacity + 5) {
            _ = try commit("object \(next) appended") { write, cache throws in
                #expect(try clusters.insert(next, values: Self.values(next, 6), in: write, cache))
                model[next] = Self.values(next, 6)
            }
        }
        let read = try ReadTransaction(environment: db.environment)
        #expect(try Self.keysPartCount(table, start: UInt64(ClusterTable.capacity + 1), read) == 1)
        #expect(try Self.tailCount(table, start: UInt64(ClusterTable.capacity + 1), read) == 4)
        read.end()
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
        /// Whether the cluster at `start` stores deleted-slot bits: in their own part, or after its stamp.
        func storesBits(_ start: UInt64) throws -> Bool {
            let own = try ClusterTable.withKey(start, part: ClusterTable.deletedPart) {
                try read.withValue(in: table, key: $0) { $0 != nil }
            }
            let withStamp = try ClusterTable.withKey(start, part: ClusterTable.stampPart) {
                try read.withValue(in: table, key: $0) { ($0?.count ?? 0) > 8 }
            }
            return own || withStamp
        }
        #expect(try !storesBits(1), "the first cluster's deleted slots are gone")
        #expect(try storesBits(510), "the second cluster still has its deleted slots")
        try Self.expectAgrees(clusters, model, read, nil, "after an insert")
        read.end()
    }
}
