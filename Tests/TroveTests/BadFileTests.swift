import CLMDB
import Foundation
import Testing

@testable import Trove
@testable import TroveStorage

/// Files that are not what they should be open with a clear TroveError,
/// never a crash, and are never overwritten.
@Suite("Bad files")
struct BadFileTests {
    private func goodFile(_ name: String = #function) throws -> URL {
        let db = try makeDatabase(name)
        try db.write {
            for id in 1...200 {
                let person = Person()
                person.id = id
                person.name = String(repeating: "n", count: 200)
                try db.add(person)
            }
        }
        return db.configuration.fileURL
    }

    /// Opens `url`, expects `kind`, and checks the bytes did not change.
    private func expectRefused(_ url: URL, _ kind: TroveError.Kind, readOnly: Bool = false) throws {
        let before = try Data(contentsOf: url)
        var configuration = Configuration(fileURL: url)
        configuration.readOnly = readOnly
        let error = expectTroveError(kind) { try Database(configuration: configuration) }
        #expect(error?.message.contains(url.lastPathComponent) == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: url) == before, "the file was changed")
    }

    @Test("a truncated file is refused as damaged instead of crashing on the missing pages")
    func truncated() throws {
        let url = try goodFile()
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        try expectRefused(url, .corruptFile)
    }

    @Test("a zeroed file and a text file are not Trove databases")
    func zeroedAndText() throws {
        let zeroed = makeTemporaryDirectory().appendingPathComponent("zeroed.trove")
        try Data(count: 64 * 1024).write(to: zeroed)
        try expectRefused(zeroed, .corruptFile)
        let text = makeTemporaryDirectory().appendingPathComponent("notes.trove")
        try Data(String(repeating: "dear diary\n", count: 1000).utf8).write(to: text)
        try expectRefused(text, .corruptFile)
    }

    @Test("an LMDB file of another program is refused, untouched")
    func foreignLMDB() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("other.mdb")
        do {
            let environment = try Environment.open(path: url.path)
            let write = try WriteTransaction(environment: environment)
            let table = try #require(try write.openTable("customers"))
            try ([1, 2, 3] as [UInt8]).withUnsafeBytes { _ = try write.put(table, key: 1, value: $0) }
            try write.commit()
        }
        try expectRefused(url, .corruptFile)
    }

    @Test("a file from a newer Trove says so")
    func newerFormat() throws {
        let url = try goodFile()
        do {
            let environment = try Environment.open(path: url.path)
            let write = try WriteTransaction(environment: environment)
            let meta = try #require(try write.openTable(Catalog.metaTable))
            try Catalog.put(UInt32(99).littleEndian, key: "format", in: meta, write)
            try write.commit()
        }
        try expectRefused(url, .fileFormatTooNew)
    }

    @Test("a read-only file opens read-only, and refuses a write with a clear error")
    func readOnlyFile() throws {
        let url = try goodFile()
        chmod(url.path, 0o444)
        defer { chmod(url.path, 0o644) }
        if getuid() != 0 {  // root may write anyway
            try expectRefused(url, .fileAccess)
        }
        var configuration = Configuration(fileURL: url)
        configuration.readOnly = true
        let db = try Database(configuration: configuration)
        #expect(db.objects(Person.self).count == 200)
        let error = expectTroveError(.fileAccess) { try db.write {} }
        #expect(error?.message.contains("read-only") == true)
    }

    /// A file with every kind of page LMDB writes: multi-level trees, index
    /// keys with many objects each (a tree per key), short lists of objects
    /// per key (sub-pages), values too big for a page (overflow pages), lists.
    private func richFile(_ name: String = #function, bigValues: Bool) throws -> URL {
        let db = try makeDatabase(name)
        try addPlaylists(to: db)
        try db.write {
            for id in 1...1500 {
                let person = Person()
                person.id = id
                person.name = "person \(id % 300)"
                person.city = ["Seoul", "Busan", "Incheon"][id % 3]
                person.age = id % 90
                try db.add(person)
            }
            if bigValues {
                for id in 1...3 {
                    let item = AllTypes()
                    item.id = id
                    item.data = Data(repeating: UInt8(id), count: 6000 * id)
                    try db.add(item)
                }
            }
        }
        expectValid(db)
        return db.configuration.fileURL
    }

    /// LMDB's own count of the pages in use: every page up to the last one
    /// written, less the two meta pages and the pages on its free list.
    private func pagesInUse(_ url: URL) throws -> Int {
        let environment = try Environment.open(path: url.path)
        return try environment.liveSize() / environment.pageSize - 2
    }

    /// Opens a damaged copy and verifies it: either step may refuse it with a
    /// TroveError; returns whether the damage was found.
    private func damageFound(_ url: URL) throws -> Bool {
        do {
            let db = try Database(fileURL: url)
            let report = try db.verify()
            return !report.isValid
        } catch let error as TroveError {
            #expect([.corruptFile, .schemaMismatch, .fileFormatTooNew].contains(error.kind), "\(error)")
            return true
        }
    }

    @Test("the page check reads exactly the pages LMDB counts as in use")
    func pageCheckCoversEveryPage() throws {
        let url = try richFile(bigValues: true)
        let report = try Database(fileURL: url).verify()
        #expect(report.isValid)
        #expect(report.pagesChecked == (try pagesInUse(url)))
    }

    @Test("a page whose header is damaged is found, on open or by verify(), for every page in use")
    func everyDamagedPageHeaderIsFound() throws {
        let url = try richFile(bigValues: false)
        let inUse = try pagesInUse(url)
        let original = try Data(contentsOf: url)
        let pageSize = 4096
        let copy = makeTemporaryDirectory().appendingPathComponent("damaged.trove")
        var found = 0
        var lowerBoundsFound = 0
        for page in 2..<original.count / pageSize {
            // The page number in the header, then the free-space bounds.
            for offset in [0, 12] {
                var bytes = original
                if offset == 0 {
                    bytes[page * pageSize] ^= 0x40
                } else {
                    bytes[page * pageSize + 12] = 3
                    bytes[page * pageSize + 13] = 0
                }
                try bytes.write(to: copy)
                if try damageFound(copy) {
                    if offset == 0 { found += 1 } else { lowerBoundsFound += 1 }
                }
                try? FileManager.default.removeItem(atPath: copy.path + "-lock")
            }
        }
        // Pages not in use (free, or past the last commit's) hold nothing to damage.
        #expect(found == inUse)
        #expect(lowerBoundsFound == inUse)
    }

    @Test("random damage anywhere in the file is refused or reported with a TroveError, never a crash (300 rounds)")
    func randomDamage() throws {
        let url = try richFile(bigValues: true)
        let original = try Data(contentsOf: url)
        let pageSize = 4096
        let copy = makeTemporaryDirectory().appendingPathComponent("damaged.trove")
        var generator = SplitMix64(seed: 2026)
        var found = 0
        for round in 0..<300 {
            var bytes = original
            let page = Int.random(in: 0..<original.count / pageSize, using: &generator)
            // Half the rounds hit the header and the entry offsets, half anywhere.
            let start = page * pageSize + Int.random(in: 0..<(round.isMultiple(of: 2) ? 64 : pageSize - 8), using: &generator)
            for index in start..<start + Int.random(in: 1...8, using: &generator) {
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            try bytes.write(to: copy)
            if try damageFound(copy) { found += 1 }
            try? FileManager.default.removeItem(atPath: copy.path + "-lock")
        }
        // Damage to free space or unused pages cannot be seen; most rounds hit pages in use.
        #expect(found > 30, "\(found) of 300 damaged copies were found")
    }

    @Test("a missing directory, or a missing file opened read-only, is a fileAccess error")
    func missing() throws {
        let missingDirectory = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/db.trove")
        expectTroveError(.fileAccess) { try Database(fileURL: missingDirectory) }
        var configuration = Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("absent.trove"))
        configuration.readOnly = true
        expectTroveError(.fileAccess) { try Database(configuration: configuration) }
    }

    // MARK: Crafted files

    /// Writes `value` little-endian at `offset` of the file at `url`.
    private func poke<T: FixedWidthInteger>(_ url: URL, at offset: Int, _ value: T) throws {
        var bytes = try Data(contentsOf: url)
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<offset + MemoryLayout<T>.size, with: $0) }
        try bytes.write(to: url)
    }

    /// The offset of the leaf node whose value starts with `marker` (an
    /// object record: an 8-byte key, so the node header sits 16 bytes before the value).
    /// In the cluster layout, the leaf node of the first cluster's object keys
    /// (small enough to sit in the leaf; a long string column sits on
    /// overflow pages, with no node around it); nil in the record layout.
    private func clusterKeysNode(in url: URL) throws -> Int? {
        let environment = try Environment.open(path: url.path)
        let transaction = try ReadTransaction(environment: environment)
        defer { transaction.end() }
        guard let clusters = try transaction.existingTable("clu:Person") else { return nil }
        // Where the map holds the value is where the file does (old copies of the page may hold the same bytes).
        return try transaction.withCursor(on: clusters) { cursor in
            let entry = try #require(try cursor.first())
            let offset = Int(UInt(bitPattern: entry.value.baseAddress!) - environment.mapStart)
            return offset - 8 - entry.key.count
        }
    }

    private func nodeOffset(of marker: String, in url: URL) throws -> Int {
        let bytes = try Data(contentsOf: url)
        let found = try #require(bytes.range(of: Data(marker.utf8)))
        // The record's own header and fixed slots come before the string: walk back to the node.
        // (In the cluster layout the string sits in its column, keyed by 10 bytes, after the column's other values.)
        for start in stride(from: found.lowerBound - 16, through: max(0, found.lowerBound - 4_000), by: -1) {
            let keySize = Int(bytes[start + 6]) | Int(bytes[start + 7]) << 8
            let dataSize = Int(bytes[start]) | Int(bytes[start + 1]) << 8
            if keySize == 8 || keySize == 10, bytes[start + 4] == 0, bytes[start + 5] == 0,
                dataSize > found.lowerBound - start - 8 - keySize, dataSize < 4096
            {
                return start
            }
        }
        Issue.record("no node found for \(marker)")
        throw CancellationError()
    }

    @Test("crafted meta pages (page size 0, a last page near 2^60, a root past the end) are refused before LMDB reads them")
    func craftedMetaPages() throws {
        for (offset, value) in [(40, UInt64(0)), (136, UInt64(1) << 60), (128, UInt64(1) << 40)] as [(Int, UInt64)] {
            let url = try goodFile("craftedMeta\(offset)")
            for meta in [0, 4096] {
                if offset == 40 {
                    try poke(url, at: meta + offset, UInt32(value))
                } else {
                    try poke(url, at: meta + offset, value)
                }
            }
            try? FileManager.default.removeItem(atPath: url.path + "-lock")
            try expectRefused(url, .corruptFile)
            try expectRefused(url, .corruptFile, readOnly: true)
        }
    }

    @Test("a crafted value size is a corruptFile error on read, never a read past the file, plain or encrypted")
    func craftedValueSize() throws {
        for key in [nil, Data(repeating: 3, count: 64)] {
            let url = makeTemporaryDirectory("craftedValueSize\(key == nil)").appendingPathComponent("crafted.trove")
            var configuration = Configuration(fileURL: url)
            configuration.encryptionKey = key
            do {
                let db = try Database(configuration: configuration)
                try db.write {
                    for id in 1...20 {
                        let person = Person()
                        person.id = id
                        person.name = "MARKER-\(id)-" + String(repeating: "n", count: 40)
                        try db.add(person)
                    }
                }
            }
            // The stored (for an encrypted file, sealed) bytes of one record (or
            // cluster column), found in the raw file.
            // (An encrypted file stores a table under a token of its name: worked out with the key.)
            let names = try ["clu:Person", "obj:Person"].map {
                try Environment.open(path: url.path, options: configuration.environmentOptions).storedName($0)
            }
            let (storedKey, stored): ([UInt8], [UInt8]) = try {
                let environment = try Environment.open(path: url.path)
                let transaction = try ReadTransaction(environment: environment)
                defer { transaction.end() }
                let objects = try #require(try transaction.existingTable(names[0]) ?? transaction.existingTable(names[1]))
                return try transaction.withCursor(on: objects) {
                    let entry = try #require(try $0.first())
                    return (Array(entry.key), Array(entry.value))
                }
            }()
            // An LMDB node: 8 bytes of sizes and flags, the key, the value.
            let node = try #require(try Data(contentsOf: url).range(of: Data(stored))).lowerBound - 8 - storedKey.count
            try poke(url, at: node, UInt16(0xFFFF))
            try poke(url, at: node + 2, UInt16(0x7FFF))
            try? FileManager.default.removeItem(atPath: url.path + "-lock")
            do {
                let environment = try Environment.open(path: url.path, options: configuration.environmentOptions)
                let transaction = try ReadTransaction(environment: environment)
                defer { transaction.end() }
                let objects = try #require(
                    try transaction.existingTable("clu:Person") ?? transaction.existingTable("obj:Person"))
                let error = expectTroveError(.corruptFile) {
                    try transaction.withCursor(on: objects) { cursor in
                        var entry = try cursor.first()
                        while entry != nil { entry = try cursor.next() }
                    }
                }
                #expect(error?.message.contains("claims 2147483647 bytes") == true, "\(String(describing: error))")
            }
            var checked = configuration
            checked.checksEveryPageOnOpen = true
            let refused = expectTroveError(.corruptFile) { try Database(configuration: checked) }
            #expect(refused?.message.contains("runs past the page") == true, "\(String(describing: refused))")
        }
    }

    @Test("crafted key sizes and node offsets are refused by the full page check the trove tool runs")
    func craftedNodes() throws {
        for craft in ["key size", "node offset"] {
            let url = try goodFile("craftedNodes\(craft.filter(\.isLetter))")
            do {
                let db = try Database(fileURL: url)
                try db.write { db.object(ofType: Person.self, forPrimaryKey: 7)?.name = "MARKER-7-x" }
            }
            let node = try clusterKeysNode(in: url) ?? nodeOffset(of: "MARKER-7-", in: url)
            if craft == "key size" {
                try poke(url, at: node + 6, UInt16(0xFFFF))
            } else {
                let page = node / 4096 * 4096
                let bytes = try Data(contentsOf: url)
                let lower = Int(bytes[page + 12]) | Int(bytes[page + 13]) << 8
                let slot = try #require(
                    stride(from: page + 16, to: page + lower, by: 2).first {
                        Int(bytes[$0]) | Int(bytes[$0 + 1]) << 8 == node - page
                    })
                try poke(url, at: slot, UInt16(0xFFF0))
            }
            try? FileManager.default.removeItem(atPath: url.path + "-lock")
            var configuration = Configuration(fileURL: url)
            configuration.readOnly = true
            configuration.checksEveryPageOnOpen = true
            let error = expectTroveError(.corruptFile) { try Database(configuration: configuration) }
            #expect(error?.message.contains("page") == true, "\(String(describing: error))")
            configuration.checksEveryPageOnOpen = false
            let db = try Database(configuration: configuration)  // the pages every launch reads are sound
            let report = try db.verify()
            #expect(!report.isValid)
        }
    }

    /// Writes the seed files of the whole-file fuzz target (`Fuzz/Corpus/file`):
    /// `TROVE_WRITE_FUZZ_SEEDS=1 swift test --filter writeFileFuzzSeeds`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TROVE_WRITE_FUZZ_SEEDS"] != nil))
    func writeFileFuzzSeeds() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/file")
        try FileManager.default.createDirectory(at: corpus, withIntermediateDirectories: true)
        func seed(_ name: String, _ fill: (Database) throws -> Void) throws {
            let url = makeTemporaryDirectory("seed\(name)").appendingPathComponent("seed.trove")
            do {
                let db = try Database(fileURL: url)
                try fill(db)
            }
            let target = corpus.appendingPathComponent("seed-\(name)")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: url, to: target)
        }
        try seed("empty") { _ in }
        try seed("people") { db in
            try db.write {
                for id in 1...12 {
                    let person = Person()
                    person.id = id
                    person.name = "person \(id)"
                    person.age = id % 3 == 0 ? nil : id
                    try db.add(person)
                }
            }
        }
        // A cluster with a tail: objects appended a commit each, one of them changed since.
        try seed("people-appended") { db in
            func add(_ id: Int) throws {
                let person = Person()
                person.id = id
                person.name = "person \(id)"
                person.age = id % 3 == 0 ? nil : id
                try db.add(person)
            }
            try db.write { for id in 1...8 { try add(id) } }
            for id in 9...12 { try db.write { try add(id) } }
            try db.write { db.object(ofType: Person.self, forPrimaryKey: 10)!.name = "changed" }
        }
        try seed("items") { db in
            try db.write {
                for id in 1...3 {
                    let item = ConformanceItem()
                    item.id = id
                    item.name = "item \(id)"
                    item.owner = {
                        let owner = ConformanceOwner()
                        owner.id = id
                        return owner
                    }()
                    item.tags.append(contentsOf: ["a", "b"])
                    item.numbers.append(id)
                    item.parts.append(
                        {
                            let part = ConformancePart()
                            part.id = id
                            return part
                        }())
                    try db.add(item)
                }
            }
        }
    }
}
