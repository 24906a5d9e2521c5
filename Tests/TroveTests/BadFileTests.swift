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
}
