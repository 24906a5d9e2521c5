import Foundation
import Testing

@testable import Trove

final class Journal: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var mood = 0
    @Persisted var title = ""
    @Persisted var tags: List<String>
    @Persisted var pet: Pet?
}

/// Change sets derived from the commits' change records (not by running the
/// query again) must be exactly what a full comparison gives.
@Suite struct ChangeLogTests {
    /// A query, and what the test expects of its observer.
    private struct Case {
        let name: String
        let make: (Database) throws -> Results<Journal>
        /// Whether the change records can serve it (no full comparison after the first).
        let incremental: Bool
    }

    private let cases: [Case] = [
        Case(name: "unsorted", make: { try $0.objects(Journal.self).filter("mood < 7") }, incremental: true),
        Case(name: "all", make: { $0.objects(Journal.self) }, incremental: true),
        Case(
            name: "sorted by mood", make: { try $0.objects(Journal.self).filter("mood >= 2").sorted(by: \.mood) },
            incremental: true),
        Case(
            name: "sorted by mood descending, then title",
            make: {
                $0.objects(Journal.self).sorted(by: [
                    SortDescriptor(keyPath: "mood", ascending: false), SortDescriptor(keyPath: "title"),
                ])
            }, incremental: true),
        Case(name: "by its own list", make: { try $0.objects(Journal.self).filter("tags.@count > 1") }, incremental: true),
        Case(
            name: "through a link", make: { try $0.objects(Journal.self).filter("pet.age > 3").sorted(by: \.title) },
            incremental: false),
    ]

    /// Random commits of inserts, deletes and changes (some to properties no
    /// query reads, some to linked objects): after each, the observer's
    /// mirror, built only from the change sets, equals the results, and
    /// exactly the objects whose observed values changed are modifications.
    @Test(arguments: [false, true])
    func derivedChangeSetsAgreeWithTheResults(observedFromAnotherHandle: Bool) throws {
        for testCase in cases {
            let writer = try makeDatabase("derived-\(observedFromAnotherHandle)-\(testCase.name.filter(\.isLetter))")
            var generator = SystemRandomNumberGenerator()
            var nextID = 1
            func add() throws {
                let journal = Journal()
                journal.id = nextID
                nextID += 1
                journal.mood = Int.random(in: 0..<10, using: &generator)
                journal.title = "t\(Int.random(in: 0..<50, using: &generator))"
                journal.tags.append(objectsIn: (0..<Int.random(in: 0..<3, using: &generator)).map { "tag\($0)" })
                try writer.add(journal)
            }
            try writer.write {
                for _ in 0..<60 { try add() }
                for index in 0..<5 {
                    let pet = Pet()
                    pet.name = "pet\(index)"
                    pet.age = index * 2
                    try writer.add(pet)
                }
            }
            let reader = observedFromAnotherHandle ? try Database(configuration: writer.configuration) : writer
            let results = try testCase.make(reader)
            var mirror: [Int] = []
            var seen: [Int: String] = [:]
            var failures: [String] = []
            func observed(_ journal: Journal) -> String {
                "\(journal.mood)/\(journal.title)/\(Array(journal.tags))/\(journal.pet?.name ?? "-")/\(journal.pet?.age ?? -1)"
            }
            let token = try results.observe(properties: ["mood", "title", "tags", "pet.age"]) { change in
                switch change {
                case .initial(let results):
                    mirror = results.map(\.id)
                    for journal in results { seen[journal.id] = observed(journal) }
                case .update(let results, let deletions, let insertions, let modifications):
                    for index in deletions.sorted(by: >) { mirror.remove(at: index) }
                    for index in insertions.sorted() { mirror.insert(results[index].id, at: index) }
                    if mirror != results.map(\.id) { failures.append("order") }
                    for (index, journal) in results.enumerated() where !insertions.contains(index) {
                        let changed = seen[journal.id] != observed(journal)
                        if changed != modifications.contains(index) {
                            failures.append("modification of \(journal.id) changed=\(changed) in \(testCase.name)")
                        }
                    }
                    seen = [:]
                    for journal in results { seen[journal.id] = observed(journal) }
                case .error(let error): failures.append("error \(error)")
                }
            }
            let fullBefore = reader.fullComparisons
            for _ in 0..<150 {
                try writer.write {
                    let all = writer.objects(Journal.self).array()
                    for _ in 0..<Int.random(in: 1...4, using: &generator) {
                        guard let journal = all.randomElement(using: &generator), !journal.isInvalidated else { continue }
                        switch Int.random(in: 0..<8, using: &generator) {
                        case 0: try add()
                        case 1: try writer.delete(journal)
                        case 2: journal.mood = Int.random(in: 0..<10, using: &generator)
                        case 3: journal.title = "t\(Int.random(in: 0..<50, using: &generator))"
                        case 4: journal.tags.append("more")
                        case 5: if !journal.tags.isEmpty { journal.tags.removeLast() }
                        case 6: journal.pet = writer.objects(Pet.self).randomElement(using: &generator)
                        default:
                            writer.objects(Pet.self).randomElement(using: &generator)!.age = Int.random(
                                in: 0..<8, using: &generator)
                        }
                    }
                }
                reader.refresh()
                #expect(mirror == results.map(\.id), "\(testCase.name)")
            }
            #expect(failures.isEmpty, "\(testCase.name): \(failures.prefix(5))")
            if testCase.incremental {
                // Observed through pet.age, so commits that change pets compare in full.
                #expect(reader.fullComparisons - fullBefore < 100, "\(testCase.name)")
            }
            _ = token
        }
    }

    /// Without a path through links, no commit makes the observer run its query again.
    @Test func aQueryOnItsOwnPropertiesNeverRunsAgain() throws {
        let writer = try makeDatabase()
        let reader = try Database(configuration: writer.configuration)
        try writer.write {
            for id in 1...100 {
                let journal = Journal()
                journal.id = id
                journal.mood = id % 10
                try writer.add(journal)
            }
        }
        reader.refresh()
        let results = try reader.objects(Journal.self).filter("mood < 5").sorted(by: \.mood)
        var changes: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = results.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                changes.append((deletions, insertions, modifications))
            }
        }
        let fullBefore = reader.fullComparisons
        // Object 3 (mood 3) moves to mood 0: it is placed first; object 4 only changes its title.
        let three = writer.object(ofType: Journal.self, forPrimaryKey: 3)!
        let four = writer.object(ofType: Journal.self, forPrimaryKey: 4)!
        try writer.write {
            three.mood = 0
            four.title = "edited"
        }
        reader.refresh()
        // The results' own cache took the derived keys.
        let fresh = try reader.objects(Journal.self).filter("mood < 5").sorted(by: \.mood)
        #expect(results.map(\.id) == fresh.map(\.id))
        #expect(changes.count == 1)
        #expect(reader.fullComparisons == fullBefore)
        let moved = results.map(\.id).firstIndex(of: 3)!
        #expect(changes.first?.insertions == [moved])
        #expect(changes.first?.modifications == [results.map(\.id).firstIndex(of: 4)!])
        // A commit to another type says nothing to these results.
        try writer.write { try writer.add(Pet()) }
        reader.refresh()
        #expect(changes.count == 1)
        #expect(reader.fullComparisons == fullBefore)
        _ = token
    }

    /// A handle that falls further behind than the log keeps compares in full, and is still exact.
    @Test func aHandleFarBehindComparesInFull() throws {
        let writer = try makeDatabase()
        try writer.write {
            let journal = Journal()
            journal.id = 1
            try writer.add(journal)
        }
        let reader = try Database(configuration: writer.configuration)
        let results = reader.objects(Journal.self).sorted(by: \.id)
        var last: (deletions: [Int], insertions: [Int], modifications: [Int])?
        let token = results.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                last = (deletions, insertions, modifications)
            }
        }
        for id in 2...(ChangeLog.retained + 10) {
            try writer.write {
                let journal = Journal()
                journal.id = id
                try writer.add(journal)
            }
        }
        let fullBefore = reader.fullComparisons
        reader.refresh()
        #expect(reader.fullComparisons == fullBefore + 1)
        #expect(last?.insertions == Array(1..<(ChangeLog.retained + 10)))
        #expect(results.count == ChangeLog.retained + 10)
        _ = token
    }

    @Test func aRecordSurvivesItsEncoding() throws {
        var record = ChangeRecord()
        record.types["Journal"] = .init(objects: [1, 5, UInt64.max], collections: ["tags": [5, 7]])
        record.types["Pet"] = .init(isOverflowed: true)
        let bytes = record.encoded()
        #expect(bytes.withUnsafeBytes { ChangeRecord(decoding: $0) } == record)
        // Cut or padded bytes are not a record.
        #expect(bytes.dropLast().withUnsafeBytes { ChangeRecord(decoding: $0) } == nil)
        #expect((bytes + [0]).withUnsafeBytes { ChangeRecord(decoding: $0) } == nil)
    }

    /// Each commit's record names what it wrote; the file keeps a bounded
    /// log; verify() reads it.
    @Test func aCommitAfterCompactionReplacesTheRecordOfAnEarlierCommitWithItsId() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("log.trove")
        var configuration = Configuration(fileURL: url)
        var before: [(id: UInt64, record: ChangeRecord?)] = []
        do {
            let db = try Database(configuration: configuration)
            // Records of several parts (1,500 objects each) and of one.
            for round in 0..<4 {
                try db.write { for id in 0..<1_500 { try db.create(Journal.self, value: ["id": round * 10_000 + id]) } }
            }
            for _ in 0..<20 { try db.write { db.objects(Journal.self).first!.mood += 1 } }
            before = try ChangeLog.entries(in: db.readTransaction())
        }
        // Compaction starts the commit ids again: the next commits reuse ids the log holds.
        configuration.shouldCompactOnLaunch = { _, _ in true }
        let db = try Database(configuration: configuration)
        let pet = Pet()
        try db.write { try db.add(pet) }
        try db.write { pet.age = 7 }
        let after = try ChangeLog.entries(in: db.readTransaction())
        #expect(after.allSatisfy { $0.record != nil })  // (no part of a longer earlier record left over)
        let reused = try #require(after.first { entry in entry.record?.types["Pet"] != nil })
        #expect(before.contains { $0.id == reused.id && $0.record?.types["Journal"] != nil })
        #expect(reused.record?.types["Journal"] == nil)
        #expect(after.filter { $0.record?.types["Pet"] != nil }.count == 2)
        #expect(try db.verify().isValid)
    }

    @Test func theLogNamesEachCommitsObjectsAndStaysBounded() throws {
        let db = try makeDatabase()
        let journal = Journal()
        journal.id = 42
        try db.write { try db.add(journal) }
        try db.write { journal.tags.append("a") }
        let transaction = db.readTransaction()
        let entries = try ChangeLog.entries(in: transaction)
        #expect(entries.last?.record?.types["Journal"]?.collections["tags"] == [journal._objectKey])
        #expect(entries.last?.record?.types["Journal"]?.objects.isEmpty == true)
        for _ in 0..<(ChangeLog.retained * 2) {
            try db.write { journal.mood += 1 }
        }
        let kept = try ChangeLog.entries(in: db.readTransaction())
        #expect(kept.count <= 2 * ChangeLog.retained)
        #expect(kept.count >= ChangeLog.retained)
        #expect(kept.allSatisfy { $0.record?.types["Journal"]?.objects.count == 1 })
        #expect(try db.verify().isValid)
    }

    /// The log keeps its records by block of ids in two tables: a handle a
    /// whole block behind, across the start of a block, still has its
    /// changes from the log; the commit that starts a block drops the block
    /// before last, so what stays is the last block and the current one, with
    /// no id missing; the first record in the second table raises the format.
    @Test func aHandleABlockBehindReadsTheLogAcrossBlocks() throws {
        let writer = try makeDatabase()
        let reader = try Database(configuration: writer.configuration)
        func id(_ db: Database) -> UInt64 { UInt64(db.readTransaction().id) }
        func format() throws -> UInt32? {
            let read = try ReadTransaction(environment: writer.environment)
            defer { read.end() }
            return try Catalog.integer(UInt32.self, key: "format", in: read.existingTable(Catalog.metaTable)!, read)
        }
        var nextID = 1
        func add() throws {
            try writer.write {
                let journal = Journal()
                journal.id = nextID
                nextID += 1
                try writer.add(journal)
            }
        }
        let results = reader.objects(Journal.self).sorted(by: \.id)
        var insertions: [[Int]] = []
        let token = results.observe { change in
            if case .update(_, _, let inserted, _) = change { insertions.append(inserted) }
        }
        let block = UInt64(ChangeLog.retained)
        for round in 0..<3 {
            // The reader stands 100 ids into a block; the writer goes a whole block further.
            while id(writer) % block != 100 { try add() }
            reader.refresh()
            let before = (reader.fullComparisons, results.count)
            if round == 0 { #expect(try format()! < Database.changeLogBlocksFormatVersion) }
            insertions.removeAll()
            for _ in 0..<ChangeLog.retained { try add() }
            reader.refresh()
            #expect(reader.fullComparisons == before.0, "round \(round): the log covered the block")
            #expect(insertions == [Array(before.1..<(before.1 + ChangeLog.retained))])
            #expect(results.count == nextID - 1)

            // Contiguous, from the start of the last block (round 0: from the file's first record).
            let last = id(writer)
            let ids = try ChangeLog.entries(in: writer.readTransaction()).map(\.id)
            let first = round == 0 ? try #require(ids.first) : (last / block - 1) * block
            #expect(ids.elementsEqual(first...last), "round \(round): \(ids.first ?? 0)...\(ids.last ?? 0), \(ids.count) ids")
            if round == 0 { #expect(first <= 2) }
        }
        #expect(try format() == Database.changeLogBlocksFormatVersion)
        #expect(try writer.verify().isValid)
        _ = token
    }
}
