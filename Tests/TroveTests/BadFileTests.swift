import CLMDB
import Foundation
import Testing
import TroveStorage

@testable import Trove

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

    @Test("a missing directory, or a missing file opened read-only, is a fileAccess error")
    func missing() throws {
        let missingDirectory = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/db.trove")
        expectTroveError(.fileAccess) { try Database(fileURL: missingDirectory) }
        var configuration = Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("absent.trove"))
        configuration.readOnly = true
        expectTroveError(.fileAccess) { try Database(configuration: configuration) }
    }
}
