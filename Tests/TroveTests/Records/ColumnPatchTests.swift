import Foundation
import Testing

@testable import Trove
@testable import TroveStorage

/// A note with a long body, as an app that edits some notes of many keeps them.
final class PatchedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var stars = 0
    @Persisted var body = ""
    @Persisted var subtitle: String?

    convenience init(_ id: Int) {
        self.init()
        self.id = id
        stars = id % 5
        body = String(repeating: "메모 본문 body \(id) ", count: 8)
        subtitle = id % 4 == 0 ? nil : "sub \(id)"
    }
}

/// Changing a few values of many clusters: each changed column is written
/// as a patch beside it (a few bytes per cluster), which every reader reads
/// into the column and the next whole rewrite of the column folds in.
@Suite("Column patches", .serialized)
struct ColumnPatchTests {
    static let types: [PropertyType] = [.int, .int16, .double, .string, .data]

    /// A column of `count` random values of `type`, through the one writer of the encoding.
    static func column(_ type: PropertyType, count: Int, _ random: inout SystemRandomNumberGenerator) -> ColumnBuffer {
        let buffer = ColumnBuffer(type: type)
        for _ in 0..<count { buffer.append(ColumnBufferTests.randomValue(type, &random)) }
        return buffer
    }

    @Test("a patched column reads as the column with the patch's values, byte for byte what rewriting it gives")
    func patchedColumnsMatchRewrites() throws {
        var random = SystemRandomNumberGenerator()
        for type in Self.types {
            for _ in 0..<40 {
                let count = Int.random(in: 1...300, using: &random)
                let base = Self.column(type, count: count, &random).encoded()
                let slots = Array(Set((0..<Int.random(in: 1...12, using: &random)).map { _ in Int.random(in: 0..<count) }))
                    .sorted()
                let values = Dictionary(uniqueKeysWithValues: slots.map { ($0, ColumnBufferTests.randomValue(type, &random)) })
                let encoded = ColumnPatch.encode(slots: slots, type: type) { values[$0]! }
                try base.withUnsafeBytes { raw in
                    let stored = try #require(ClusterColumn(raw, type: type))
                    let expected = ColumnBuffer(stored)
                    for slot in slots { expected.set(values[slot]!, at: slot) }
                    // Encoded straight from a buffer's bytes, as a write does: the same bytes.
                    #expect(ColumnPatch.encode(slots: slots, from: expected) == encoded, "\(type): the patch from a buffer")
                    try encoded.withUnsafeBytes { patchBytes in
                        let patch = try #require(ColumnPatch(patchBytes, type: type, count: count))
                        #expect(patch.slots == slots)
                        let merged = try #require(stored.patched(with: patch))
                        defer { merged.deallocate() }
                        #expect(Array(merged) == expected.encoded(), "\(type), \(count) slots, patched at \(slots)")
                    }
                }
            }
        }
    }

    @Test("a column shorter than its cluster reads with the patch holding the objects appended since, byte for byte a rewrite")
    func appendedSlotsMatchRewrites() throws {
        var random = SystemRandomNumberGenerator()
        for type in Self.types {
            for _ in 0..<40 {
                let stored = Int.random(in: 0...300, using: &random)
                let appended = Int.random(in: 1...20, using: &random)
                let count = stored + appended
                let base = Self.column(type, count: stored, &random).encoded()
                // A few edits of stored slots, and every appended slot (nil among them: the bitmap grows).
                let edited =
                    stored == 0 ? [] : (0..<Int.random(in: 0...5, using: &random)).map { _ in Int.random(in: 0..<stored) }
                let slots = Array(Set(edited)).sorted() + Array(stored..<count)
                let values = Dictionary(
                    uniqueKeysWithValues: slots.map { slot in
                        (slot, Bool.random(using: &random) ? StoredValue.null : ColumnBufferTests.randomValue(type, &random))
                    })
                try base.withUnsafeBytes { raw in
                    let column = try #require(ClusterColumn(raw, type: type))
                    let expected = ColumnBuffer(column)
                    for slot in stored..<count { expected.append(values[slot]!) }
                    for slot in edited { expected.set(values[slot]!, at: slot) }
                    let encoded = ColumnPatch.encode(slots: slots, from: expected)
                    try encoded.withUnsafeBytes { patchBytes in
                        let patch = try #require(ColumnPatch(patchBytes, type: type, count: count, stored: stored))
                        let merged = try #require(column.patched(with: patch, count: count))
                        defer { merged.deallocate() }
                        #expect(
                            Array(merged) == expected.encoded(),
                            "\(type): \(stored) stored, \(appended) appended, edited \(edited)")
                        // Read against a column holding every slot, or missing one more, it is refused.
                        #expect(ColumnPatch(patchBytes, type: type, count: count + 1, stored: stored) == nil)
                        if stored > 0, !edited.contains(stored - 1) {
                            #expect(ColumnPatch(patchBytes, type: type, count: count, stored: stored - 1) == nil)
                        }
                    }
                    if appended > 1 {
                        // A patch that leaves out one appended slot is refused: that object would have no value.
                        let missing = slots.filter { $0 != count - 2 }
                        let short = ColumnPatch.encode(slots: missing, from: expected)
                        short.withUnsafeBytes {
                            #expect(ColumnPatch($0, type: type, count: count, stored: stored) == nil, "\(type): a slot missing")
                        }
                    }
                }
            }
        }
    }

    @Test("a damaged patch is refused, never trapped on")
    func damagedPatchesAreRefused() {
        let good = ColumnPatch.encode(slots: [2, 5], type: .string) { .string("v\($0)") }
        func reads(_ bytes: [UInt8], count: Int = 10, checkingValues: Bool = false) -> Bool {
            bytes.withUnsafeBytes { ColumnPatch($0, type: .string, count: count, checkingValues: checkingValues) != nil }
        }
        #expect(reads(good))
        #expect(!reads(good, count: 5), "a slot past the column")
        #expect(!reads([UInt8](good.prefix(5))), "cut short")
        #expect(!reads([]))
        var descending = good
        descending[2] = 6  // slots 6, 5
        #expect(!reads(descending), "slots out of order")
        var text = good
        text[text.count - 1] = 0xFF  // the last value's last byte: not UTF-8
        #expect(!reads(text, checkingValues: true), "a value that is not UTF-8, for verify()")
        #expect(reads(text), "readers leave values to the value's reader")
        var outside = good
        outside[outside.count - 6] = 9  // the last offset: past the values' bytes
        #expect(!reads(outside), "a value pointing outside the patch")
        var empty = good
        empty[0] = 0
        empty[1] = 0
        #expect(!reads(empty), "a patch of no values")
        // Random bytes: refused or read, never a trap.
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = reads(bytes)
            _ = reads(bytes, checkingValues: true)
        }
    }

    static func database(_ name: String = #function) throws -> Database {
        try makeDatabase(name) {
            $0.objectTypes = [PatchedNote.self]
            $0.storageLayout = .columnClusters
        }
    }

    /// A compacted copy of `db`'s file beside it, opened.
    static func compactedCopy(of db: Database) throws -> Database {
        let copy = db.configuration.fileURL.deletingLastPathComponent().appendingPathComponent("copy.trove")
        try db.writeCopy(to: copy)
        var copied = db.configuration
        copied.fileURL = copy
        return try Database(configuration: copied)
    }

    /// Every way of reading the notes agrees with the bodies and subtitles expected.
    static func expectNotes(
        _ db: Database, _ bodies: [Int: String], _ subtitles: [Int: String?], _ stars: [Int: Int], _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let all = db.objects(PatchedNote.self)
        #expect(
            try all.filter("stars >= 3").count == bodies.keys.filter { stars[$0]! >= 3 }.count, "\(context): a column filter",
            sourceLocation: sourceLocation)
        #expect(
            all.sum(of: \.stars) == bodies.keys.reduce(0) { $0 + stars[$1]! }, "\(context): a column sum",
            sourceLocation: sourceLocation)
        #expect(all.count == bodies.count, "\(context): count", sourceLocation: sourceLocation)
        let listed = Array(all)
        #expect(listed.map(\.id) == bodies.keys.sorted(), "\(context): every note", sourceLocation: sourceLocation)
        #expect(
            listed.allSatisfy { $0.body == bodies[$0.id] && $0.subtitle == subtitles[$0.id]! }, "\(context): every body",
            sourceLocation: sourceLocation)
        for id in bodies.keys.shuffled().prefix(40) {
            let note = db.object(ofType: PatchedNote.self, forPrimaryKey: id)
            #expect(note?.body == bodies[id], "\(context): lookup \(id)", sourceLocation: sourceLocation)
        }
        #expect(
            try all.filter("body BEGINSWITH 'edited'").map(\.id) == bodies.filter { $0.value.hasPrefix("edited") }.keys.sorted(),
            "\(context): a filter over the bodies", sourceLocation: sourceLocation)
        #expect(
            try all.filter("subtitle == nil").count == subtitles.values.filter { $0 == nil }.count, "\(context): nil subtitles",
            sourceLocation: sourceLocation)
        let longest = all.sorted(by: \.body, ascending: false).first?.body
        #expect(longest == bodies.values.max(), "\(context): sorted by body", sourceLocation: sourceLocation)
    }

    @Test(
        "editing a few notes of every cluster in many commits keeps the file near its size, and every reader, handle and copy sees the edits"
    )
    func scatteredEditsArePatched() throws {
        let db = try Self.database()
        try db.write { for id in 0..<3_000 { try db.add(PatchedNote(id)) } }
        var bodies = Dictionary(uniqueKeysWithValues: (0..<3_000).map { ($0, PatchedNote($0).body) })
        var subtitles = Dictionary(uniqueKeysWithValues: (0..<3_000).map { ($0, PatchedNote($0).subtitle) })
        var stars = Dictionary(uniqueKeysWithValues: (0..<3_000).map { ($0, $0 % 5) })
        for _ in 0..<3 { try db.write { db.object(ofType: PatchedNote.self, forPrimaryKey: 2)!.subtitle = "sub 2" } }
        let before = db.usedFileSize
        // A reader that keeps its views across the commits.
        let reader = try Database(configuration: db.configuration)
        try Self.expectNotes(reader, bodies, subtitles, stars, "before the edits")
        var generator = SeededGenerator(seed: 11)
        for round in 0..<12 {
            try db.write {
                for id in (0..<3_000).shuffled(using: &generator).prefix(30) {
                    let note = db.object(ofType: PatchedNote.self, forPrimaryKey: id)!
                    note.body = "edited \(round) " + String(repeating: "수정", count: id % 9)
                    note.subtitle = round % 2 == 0 ? nil : "round \(round)"
                    if id % 7 == 0 {
                        note.stars = (note.stars + 1) % 5
                        stars[id] = note.stars
                    }
                    bodies[id] = note.body
                    subtitles[id] = note.subtitle
                }
            }
            reader.refresh()
            try Self.expectNotes(reader, bodies, subtitles, stars, "round \(round), a reader kept across commits")
        }
        // Twelve commits each touching every cluster: rewriting their body columns would add a copy of them per commit.
        #expect(db.usedFileSize <= before + before / 5, "file \(before) → \(db.usedFileSize) bytes")
        let table = try db.objectBinding(for: PatchedNote.self).table
        let read = try ReadTransaction(environment: db.environment)
        #expect(try ClusterTableTests.patchCount(table.store.table, read) > 0, "the edits are stored as patches")
        read.end()
        try Self.expectNotes(db, bodies, subtitles, stars, "after the edits")
        expectValid(db)

        let other = try Database(configuration: db.configuration)
        try Self.expectNotes(other, bodies, subtitles, stars, "another handle")
        #expect(other.fileFormatVersion == Database.columnPatchesFormatVersion)

        let compacted = try Self.compactedCopy(of: db)
        try Self.expectNotes(compacted, bodies, subtitles, stars, "the compacted copy")
        expectValid(compacted)

        // Whole rewrites fold the patches in: every note edited, then some deleted and new ones added.
        try db.write {
            for note in db.objects(PatchedNote.self) {
                note.body = "edited all \(note.id)"
                bodies[note.id] = note.body
            }
            for id in stride(from: 0, to: 3_000, by: 13) {
                try db.delete(db.object(ofType: PatchedNote.self, forPrimaryKey: id)!)
                bodies[id] = nil
                subtitles[id] = nil
                stars[id] = nil
            }
            for id in 3_000..<3_050 {
                try db.add(PatchedNote(id))
                stars[id] = id % 5
                bodies[id] = PatchedNote(id).body
                subtitles[id] = PatchedNote(id).subtitle
            }
        }
        try Self.expectNotes(db, bodies, subtitles, stars, "after rewriting every body")
        expectValid(db)
    }

    @Test(
        "notes added one per commit are stored in the columns' patches; readers kept across the commits, another handle, verify() and a compacted copy see every one"
    )
    func appendedNotesArePatched() throws {
        let db = try Self.database()
        try db.write { for id in 0..<400 { try db.add(PatchedNote(id)) } }
        var bodies = Dictionary(uniqueKeysWithValues: (0..<400).map { ($0, PatchedNote($0).body) })
        var subtitles = Dictionary(uniqueKeysWithValues: (0..<400).map { ($0, PatchedNote($0).subtitle) })
        var stars = Dictionary(uniqueKeysWithValues: (0..<400).map { ($0, $0 % 5) })
        let reader = try Database(configuration: db.configuration)
        try Self.expectNotes(reader, bodies, subtitles, stars, "before the appends")
        let table = try db.objectBinding(for: PatchedNote.self).table
        let body = try #require(table.schema.properties.firstIndex { $0.name == "body" })
        var patched = 0
        var largestTail = 0
        for id in 400..<460 {
            try db.write {
                try db.add(PatchedNote(id))
                if id % 10 == 0 {
                    // An object appended earlier, changed: its value moves within the patch.
                    let earlier = db.object(ofType: PatchedNote.self, forPrimaryKey: id - 3)!
                    earlier.body = "edited after its append \(id)"
                    earlier.subtitle = nil
                    bodies[id - 3] = earlier.body
                    subtitles[id - 3] = .some(nil)
                }
            }
            bodies[id] = PatchedNote(id).body
            subtitles[id] = PatchedNote(id).subtitle
            stars[id] = id % 5
            let read = try ReadTransaction(environment: db.environment)
            let start = try #require(
                try table.store.clusters!.clusterStart(
                    for: db.object(ofType: PatchedNote.self, forPrimaryKey: id)!._objectKey, in: read))
            if try ClusterTableTests.hasPatch(table.store.table, start: start, column: body, read) { patched += 1 }
            // A tail stays within its limit (one overflow page) however it was written, extended or afresh.
            let tailBytes = try ClusterTable.withKey(start, part: ClusterTable.tailPart) {
                try read.withValue(in: table.store.table, key: $0) { $0?.count ?? 0 }
            }
            largestTail = max(largestTail, tailBytes)
            #expect(tailBytes <= table.store.clusters!.tailMaximumBytes, "note \(id): a tail of \(tailBytes) bytes")
            read.end()
            if id % 15 == 0 {
                reader.refresh()
                try Self.expectNotes(reader, bodies, subtitles, stars, "note \(id) appended, a reader kept across commits")
            }
        }
        #expect(patched > 30, "\(patched) of 60 appends left the body column patched (in its part or the tail)")
        #expect(largestTail > 2_000, "the largest tail took \(largestTail) bytes")
        #expect(db.fileFormatVersion == Database.clusterTailsFormatVersion)
        reader.refresh()
        try Self.expectNotes(reader, bodies, subtitles, stars, "after the appends, the reader")
        try Self.expectNotes(db, bodies, subtitles, stars, "after the appends")
        expectValid(db)
        let other = try Database(configuration: db.configuration)
        try Self.expectNotes(other, bodies, subtitles, stars, "another handle")

        let compacted = try Self.compactedCopy(of: db)
        try Self.expectNotes(compacted, bodies, subtitles, stars, "the compacted copy")
        expectValid(compacted)

        // Deletes and a note going in below the last key rewrite the columns whole; appends then patch again.
        try db.write {
            for id in [401, 430, 455] {
                try db.delete(db.object(ofType: PatchedNote.self, forPrimaryKey: id)!)
                (bodies[id], subtitles[id], stars[id]) = (nil, nil, nil)
            }
            // (An encrypted file's object keys are not the primary keys: there 430 comes back after the last.)
            if suiteEncryptionKey == nil {
                try db.add(PatchedNote(430))
                (bodies[430], subtitles[430], stars[430]) = (PatchedNote(430).body, PatchedNote(430).subtitle, 0)
            }
        }
        for id in 460..<470 {
            try db.write { try db.add(PatchedNote(id)) }
            (bodies[id], subtitles[id], stars[id]) = (PatchedNote(id).body, PatchedNote(id).subtitle, id % 5)
        }
        reader.refresh()
        try Self.expectNotes(reader, bodies, subtitles, stars, "after deletes and more appends, the reader")
        try Self.expectNotes(db, bodies, subtitles, stars, "after deletes and more appends")
        expectValid(db)
    }

    @Test("a damaged patch is reported by verify() for its cluster, and reads say the file is damaged")
    func damagedPatchesAreReported() throws {
        let db = try Self.database()
        try db.write { for id in 0..<1_200 { try db.add(PatchedNote(id)) } }
        try db.write { db.object(ofType: PatchedNote.self, forPrimaryKey: 3)!.body = "edited" }
        let table = try db.objectBinding(for: PatchedNote.self).table
        let clusters = try #require(table.store.clusters)
        let body = try #require(table.schema.properties.firstIndex { $0.name == "body" })
        // (An encrypted file's object keys are not the primary keys: found through the objects.)
        func objectKey(_ id: Int) throws -> UInt64 {
            try #require(db.object(ofType: PatchedNote.self, forPrimaryKey: id))._objectKey
        }
        let edited = try objectKey(3)
        let write = try WriteTransaction(environment: db.environment)
        let start = try #require(try clusters.clusterStart(for: edited, in: write))
        let elsewhere = try #require(
            try (0..<1_200).first { try clusters.clusterStart(for: objectKey($0), in: write) != start })
        let found = try ClusterTable.withKey(start, part: ClusterTable.patchPart(body)) {
            try write.withValue(in: table.store.table, key: $0) { $0 != nil }
        }
        #expect(found, "the edit is stored as a patch")
        // A patch naming a slot past the cluster's objects.
        let damaged = ColumnPatch.encode(slots: [4_000], type: .string) { _ in .string("x") }
        try ClusterTable.withKey(start, part: ClusterTable.patchPart(body)) { key in
            try damaged.withUnsafeBytes { _ = try write.put(table.store.table, key: key, value: $0) }
        }
        try write.commit()
        db.refresh()
        let report = try db.verify()
        #expect(
            report.problems.contains { $0.kind == .damagedRecord && $0.detail.contains("body column patch") }, "\(report)")
        expectTroveError(.corruptFile) { try clusters.values(of: edited, in: db.readTransaction(), nil) }
        #expect(db.object(ofType: PatchedNote.self, forPrimaryKey: elsewhere)?.id == elsewhere, "the other clusters still read")
    }

    @Test(
        "a damaged tail (keys out of order, cut short, a column patch or a stamp part beside it) is reported by verify() for its cluster, and reads say the file is damaged",
        arguments: ["keys out of order", "cut short", "a patch beside it", "a stamp part beside it"])
    func damagedTailsAreReported(damage: String) throws {
        let db = try Self.database()
        try db.write { for id in 0..<600 { try db.add(PatchedNote(id)) } }
        for id in 600..<603 { try db.write { try db.add(PatchedNote(id)) } }
        let table = try db.objectBinding(for: PatchedNote.self).table
        let clusters = try #require(table.store.clusters)
        let body = try #require(table.schema.properties.firstIndex { $0.name == "body" })
        let appended = try #require(db.object(ofType: PatchedNote.self, forPrimaryKey: 601))._objectKey
        let elsewhere = try #require(db.object(ofType: PatchedNote.self, forPrimaryKey: 5))._objectKey
        let write = try WriteTransaction(environment: db.environment)
        let start = try #require(try clusters.clusterStart(for: appended, in: write))
        #expect(try clusters.clusterStart(for: elsewhere, in: write) != start)
        let stored = try ClusterTable.withKey(start, part: ClusterTable.tailPart) {
            try write.withValue(in: table.store.table, key: $0) { $0.map { Array($0) } }
        }
        var tail = try #require(stored, "the appends are in the cluster's tail")
        func put(_ bytes: [UInt8], part: Int) throws {
            try ClusterTable.withKey(start, part: part) { key in
                try bytes.withUnsafeBytes { _ = try write.put(table.store.table, key: key, value: $0) }
            }
        }
        switch damage {
        case "keys out of order":
            // The first appended key made the cluster's first: not past the keys part's.
            tail.withUnsafeMutableBytes { $0.storeBytes(of: start.littleEndian, toByteOffset: 10, as: UInt64.self) }
            try put(tail, part: ClusterTable.tailPart)
        case "cut short": try put(Array(tail.dropLast(3)), part: ClusterTable.tailPart)
        case "a stamp part beside it": try put(Array(repeating: 7, count: 8), part: ClusterTable.stampPart)
        default: try put(ColumnPatch.encode(slots: [0], type: .string) { _ in .string("x") }, part: ClusterTable.patchPart(body))
        }
        try write.commit()
        db.refresh()
        if damage == "a stamp part beside it", suiteEncryptionKey != nil {
            // An encrypted table's clusters carry no stamp: a stamp part (compaction leaves one) is let be.
            #expect(try db.verify().problems.isEmpty)
            #expect(try clusters.values(of: appended, in: db.readTransaction(), nil) != nil)
            return
        }
        let report = try db.verify()
        #expect(report.problems.contains { $0.kind == .damagedRecord && $0.detail.contains("appended objects") }, "\(report)")
        expectTroveError(.corruptFile) { try clusters.values(of: appended, in: db.readTransaction(), nil) }
        #expect(try clusters.values(of: elsewhere, in: db.readTransaction(), nil) != nil, "the other clusters still read")
    }
}
