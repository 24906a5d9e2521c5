import Foundation
import Testing
import TroveStorage

@testable import Trove

final class SecretNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var folder = ""
    @Persisted var confidentialBody = ""
    @Persisted var lines = List<String>()
    @Persisted var attributes = Map<String, String>()
    @Persisted var score = 0.0
}

/// Two types whose records look alike, for moving sealed values between their tables.
final class DiaryOfAlice: Object {
    @Persisted var text = ""
}

final class DiaryOfBob: Object {
    @Persisted var text = ""
}

@Suite("Encryption at rest")
struct EncryptionTests {
    private let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

    private func configuration(_ url: URL, key: Data?) -> Configuration {
        var configuration = Configuration(fileURL: url, objectTypes: [SecretNote.self])
        configuration.encryptionKey = key
        return configuration
    }

    private func fill(_ db: Database, count: Int = 50) throws {
        try db.write {
            for id in 1...count {
                let note = SecretNote()
                note.id = id
                note.folder = id % 2 == 0 ? "even-folder" : "odd-folder"
                note.confidentialBody = "TOP-SECRET-BODY-\(id)"
                note.lines.append(contentsOf: ["SECRET-LINE-A-\(id)", "SECRET-LINE-B-\(id)"])
                note.attributes["colour"] = "SECRET-MAP-VALUE-\(id)"
                note.score = Double(id) / 2
                try db.add(note)
            }
        }
    }

    @Test("an encrypted file reads back, queries, deletes and verifies with its key")
    func roundTrip() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        do {
            let db = try Database(configuration: configuration(url, key: key))
            try fill(db)
            try db.write { db.object(ofType: SecretNote.self, forPrimaryKey: 7)?.confidentialBody = "changed" }
        }
        let db = try Database(configuration: configuration(url, key: key))
        let notes = db.objects(SecretNote.self)
        #expect(notes.count == 50)
        #expect(db.object(ofType: SecretNote.self, forPrimaryKey: 7)?.confidentialBody == "changed")
        #expect(try notes.filter("confidentialBody ENDSWITH '-12'").map(\.id) == [12])
        #expect(try notes.filter("folder == 'even-folder' AND score > 20").map(\.id) == [42, 44, 46, 48, 50])
        #expect(try notes.filter("ANY lines == 'SECRET-LINE-B-3' AND attributes['colour'] == 'SECRET-MAP-VALUE-3'").count == 1)
        #expect(db.object(ofType: SecretNote.self, forPrimaryKey: 3)?.lines.array() == ["SECRET-LINE-A-3", "SECRET-LINE-B-3"])
        try db.write { try db.delete(notes.filter("id > 40")) }
        #expect(notes.count == 40)
        expectValid(db)
    }

    @Test("no stored value appears in the raw file; indexed values and primary keys do, as documented")
    func rawFileHoldsNoPlaintext() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        do {
            let db = try Database(configuration: configuration(url, key: key))
            try fill(db, count: 200)
        }
        let raw = try Data(contentsOf: url)
        func contains(_ text: String) -> Bool { raw.range(of: Data(text.utf8)) != nil }
        #expect(!contains("TOP-SECRET-BODY"))
        #expect(!contains("SECRET-LINE-A"))
        #expect(!contains("SECRET-MAP-VALUE"))
        #expect(!contains("confidentialBody"))  // the schema catalog is sealed too
        #expect(contains("even-folder"))  // an indexed value is an index key: visible
        #expect(contains("colour"))  // so is a map key

        // The same data without a key is in plain sight: the test can tell.
        let plainURL = makeTemporaryDirectory().appendingPathComponent("plain.trove")
        do { try fill(try Database(configuration: configuration(plainURL, key: nil)), count: 200) }
        let plain = try Data(contentsOf: plainURL)
        #expect(plain.range(of: Data("TOP-SECRET-BODY".utf8)) != nil)
    }

    @Test("a wrong, missing or unexpected key is a wrongEncryptionKey, and the file stays intact")
    func wrongKeys() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        do { try fill(try Database(configuration: configuration(url, key: key))) }
        var other = key
        other[0] ^= 1
        let wrong = expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(url, key: other)) }
        #expect(wrong?.message.contains("does not open") == true)
        let missing = expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(url, key: nil)) }
        #expect(missing?.message.contains("is encrypted") == true)
        expectTroveError(.invalidValue) { try Database(configuration: configuration(url, key: Data(count: 32))) }
        // Still opens with the right key, unchanged.
        #expect(try Database(configuration: configuration(url, key: key)).objects(SecretNote.self).count == 50)

        let plainURL = makeTemporaryDirectory().appendingPathComponent("plain.trove")
        do { try fill(try Database(configuration: configuration(plainURL, key: nil))) }
        let unexpected = expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(plainURL, key: key)) }
        #expect(unexpected?.message.contains("not encrypted") == true)
        #expect(try Database(configuration: configuration(plainURL, key: nil)).objects(SecretNote.self).count == 50)
    }

    @Test("a second handle in the process must bring the same key")
    func secondHandle() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        let first = try Database(configuration: configuration(url, key: key))
        try fill(first)
        expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(url, key: nil)) }
        let second = try Database(configuration: configuration(url, key: key))
        #expect(second.objects(SecretNote.self).count == 50)
    }

    @Test("a changed byte in an encrypted record fails authentication: verify() reports it")
    func tampering() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        do { try fill(try Database(configuration: configuration(url, key: key)), count: 1) }
        // The sealed record, as stored: read through LMDB without the key.
        let sealed: [UInt8] = try {
            let environment = try Environment.open(path: url.path)
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            let objects = try objectsTable(transaction, "SecretNote")
            return try transaction.withCursor(on: objects) { Array(try #require(try $0.first()).value) }
        }()
        #expect(sealed.count > Cipher.overhead)
        var raw = try Data(contentsOf: url)
        let range = try #require(raw.range(of: Data(sealed)))
        raw[range.lowerBound + sealed.count / 2] ^= 0x40
        try raw.write(to: url)
        let db = try Database(configuration: configuration(url, key: key))
        let report = try db.verify()  // reported, and the rest of the file checked
        #expect(report.problems.contains { $0.kind == .damagedRecord && $0.detail.contains("fails authentication") }, "\(report)")
    }

    @Test("writeCopy(to:encryptionKey:) encrypts a plain file, changes a key and removes it")
    func copies() throws {
        let directory = makeTemporaryDirectory()
        let plainURL = directory.appendingPathComponent("plain.trove")
        let plain = try Database(configuration: configuration(plainURL, key: nil))
        try fill(plain, count: 120)  // with a list and a map per object: more entries than fit one page

        let encryptedURL = directory.appendingPathComponent("encrypted.trove")
        try plain.writeCopy(to: encryptedURL, encryptionKey: key)
        #expect(try Data(contentsOf: encryptedURL).range(of: Data("TOP-SECRET-BODY".utf8)) == nil)
        expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(encryptedURL, key: nil)) }
        let encrypted = try Database(configuration: configuration(encryptedURL, key: key))
        #expect(encrypted.objects(SecretNote.self).count == 120)
        #expect(encrypted.object(ofType: SecretNote.self, forPrimaryKey: 99)?.attributes["colour"] == "SECRET-MAP-VALUE-99")
        expectValid(encrypted)

        var newKey = key
        newKey[63] ^= 0xFF
        let rekeyedURL = directory.appendingPathComponent("rekeyed.trove")
        try encrypted.writeCopy(to: rekeyedURL, encryptionKey: newKey)
        expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(rekeyedURL, key: key)) }
        let rekeyed = try Database(configuration: configuration(rekeyedURL, key: newKey))
        #expect(try rekeyed.objects(SecretNote.self).filter("ANY lines == 'SECRET-LINE-B-7'").map(\.id) == [7])

        let decryptedURL = directory.appendingPathComponent("decrypted.trove")
        try rekeyed.writeCopy(to: decryptedURL, encryptionKey: nil)
        let decrypted = try Database(configuration: configuration(decryptedURL, key: nil))
        #expect(decrypted.objects(SecretNote.self).count == 120)
        expectValid(decrypted)
        // The destination must not exist; nothing is left behind when it does.
        expectTroveError(.fileAccess) { try plain.writeCopy(to: decryptedURL, encryptionKey: key) }
        #expect(!FileManager.default.fileExists(atPath: decryptedURL.path + ".partial"))
    }

    @Test("launch options read an encrypted file with its key; a wrong key deletes and compacts nothing")
    func launchOptions() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("secret.trove")
        do { try fill(try Database(configuration: configuration(url, key: key))) }
        var other = key
        other[5] ^= 1
        var wrong = configuration(url, key: other)
        wrong.deleteDatabaseIfMigrationNeeded = true
        wrong.schemaVersion = 9
        wrong.shouldCompactOnLaunch = { _, _ in true }
        expectTroveError(.wrongEncryptionKey) { try Database(configuration: wrong) }
        #expect(FileManager.default.fileExists(atPath: url.path))
        var right = configuration(url, key: key)
        right.shouldCompactOnLaunch = { _, _ in true }
        #expect(try Database(configuration: right).objects(SecretNote.self).count == 50)
        right.deleteDatabaseIfMigrationNeeded = true
        right.schemaVersion = 9
        #expect(try Database(configuration: right).objects(SecretNote.self).isEmpty)  // a cache starts over
    }

    /// The table of a type's objects: its clusters, or its records.
    private func objectsTable(_ transaction: Transaction, _ type: String) throws -> Table {
        try #require(try transaction.existingTable("clu:\(type)") ?? transaction.existingTable("obj:\(type)"))
    }

    /// The key and raw (sealed) value of the first entry of a type's objects
    /// (the one object's record, or its cluster's keys), read without the key.
    private func rawEntry(_ url: URL, type: String) throws -> (key: [UInt8], value: [UInt8]) {
        let environment = try Environment.open(path: url.path)
        let transaction = try ReadTransaction(environment: environment)
        defer { transaction.end() }
        let objects = try objectsTable(transaction, type)
        return try transaction.withCursor(on: objects) { cursor in
            let entry = try #require(try cursor.first())
            return (Array(entry.key), Array(entry.value))
        }
    }

    private func putRaw(_ url: URL, type: String, key: [UInt8], _ value: [UInt8]) throws {
        let environment = try Environment.open(path: url.path)
        let transaction = try WriteTransaction(environment: environment)
        let objects = try objectsTable(transaction, type)
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { _ = try transaction.put(objects, key: k, value: $0) }
        }
        try transaction.commit()
    }

    @Test("values swapped between tables, or copied in from another file with the same key, fail authentication")
    func valuesAreBoundToTheirTableAndFile() throws {
        let directory = makeTemporaryDirectory()
        var alice = Configuration(
            fileURL: directory.appendingPathComponent("diaries.trove"), objectTypes: [DiaryOfAlice.self, DiaryOfBob.self])
        alice.encryptionKey = key
        do {
            let db = try Database(configuration: alice)
            try db.write {
                try db.add(
                    {
                        let entry = DiaryOfAlice(); entry.text = "alice: secret 1"; return entry
                    }())
                try db.add(
                    {
                        let entry = DiaryOfBob(); entry.text = "bob: secret 01"; return entry
                    }())
            }
        }
        let url = alice.fileURL
        let fromAlice = try rawEntry(url, type: "DiaryOfAlice")
        let fromBob = try rawEntry(url, type: "DiaryOfBob")
        #expect(fromAlice.key == fromBob.key)
        try putRaw(url, type: "DiaryOfAlice", key: fromAlice.key, fromBob.value)
        try putRaw(url, type: "DiaryOfBob", key: fromBob.key, fromAlice.value)
        do {
            let db = try Database(configuration: alice)
            let report = try db.verify()
            #expect(
                report.problems.contains { $0.detail.contains(":DiaryOfAlice") && $0.detail.contains("authentication") },
                "\(report)")
        }
        try putRaw(url, type: "DiaryOfAlice", key: fromAlice.key, fromAlice.value)
        try putRaw(url, type: "DiaryOfBob", key: fromBob.key, fromBob.value)
        do {
            let db = try Database(configuration: alice)
            #expect(db.objects(DiaryOfAlice.self).first?.text == "alice: secret 1")
            expectValid(db)
        }

        // The same key, another file: another salt, so another AES key.
        var other = alice
        other.fileURL = directory.appendingPathComponent("other.trove")
        do {
            let db = try Database(configuration: other)
            try db.write {
                try db.add(
                    {
                        let entry = DiaryOfAlice(); entry.text = "other file: 12"; return entry
                    }())
            }
        }
        try putRaw(other.fileURL, type: "DiaryOfAlice", key: fromAlice.key, fromAlice.value)
        let db = try Database(configuration: other)
        #expect(try !db.verify().isValid)
    }

    @Test("the change log of an encrypted file is sealed: no type or property name in it, and a changed record is not trusted")
    func theChangeLogIsSealed() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("log.trove")
        do {
            let db = try Database(configuration: configuration(url, key: key))
            try fill(db, count: 5)
            try db.write { db.object(ofType: SecretNote.self, forPrimaryKey: 3)!.confidentialBody = "changed" }
            #expect(db.fileFormatVersion == Database.sealedLogFormatVersion)
        }
        // Read without the key: the records are there, and say nothing readable.
        var records: [(key: [UInt8], value: [UInt8])] = []
        do {
            let environment = try Environment.open(path: url.path)
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            let log = try #require(try transaction.existingTable(ChangeLog.tableName))
            try transaction.withCursor(on: log) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    records.append((Array(current.key), Array(current.value)))
                    entry = try cursor.next()
                }
            }
        }
        #expect(records.count >= 2)
        for name in ["SecretNote", "confidentialBody", "folder", "attributes"] {
            #expect(
                !records.contains { Data($0.value).range(of: Data(name.utf8)) != nil }, "\(name) is readable in the change log")
        }
        // A record changed behind the file's back fails authentication: no handle keeps what it read on its word.
        var (lastKey, lastValue) = try #require(records.last)
        lastValue[lastValue.count / 2] ^= 0x01
        do {
            let environment = try Environment.open(path: url.path)
            let write = try WriteTransaction(environment: environment)
            let log = try #require(try write.existingTable(ChangeLog.tableName))
            try lastKey.withUnsafeBytes { k in try lastValue.withUnsafeBytes { _ = try write.put(log, key: k, value: $0) } }
            try write.commit()
        }
        let db = try Database(configuration: configuration(url, key: key))
        let transaction = db.readTransaction()
        #expect(ChangeLog.changes(after: transaction.id - 1, through: transaction.id, in: transaction) == nil)
        let report = try db.verify()
        #expect(
            report.problems.contains { $0.typeName == ChangeLog.tableName && $0.detail.contains("authentication") }, "\(report)")
        // Writes go on past it: the pruning of old records (every 64th commit past 256) meets it, and the log starts again.
        for id in 100..<430 {
            try db.write {
                let note = SecretNote()
                note.id = id
                try db.add(note)
            }
        }
        #expect(db.objects(SecretNote.self).count == 335)
        #expect(try db.verify().isValid)
    }

    @Test("a file encrypted before per-file keys opens, reads, writes and verifies; a copy of it gets its own salt")
    func fileEncryptedBeforeSalts() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("legacy.trove")
        try FileManager.default.copyItem(
            at: OldFileTests.fixtures.appendingPathComponent("secret-legacy-encryption.trove"), to: url)
        // Read-only first: its plain change log is left alone, and verify does not count it as damage.
        var readOnly = configuration(url, key: key)
        readOnly.readOnly = true
        #expect(try Database(configuration: readOnly).verify().isValid)
        let db = try Database(configuration: configuration(url, key: key))
        #expect(db.fileFormatVersion == Database.sealedLogFormatVersion)  // its plain change log dropped, sealed from now on
        #expect(db.objects(SecretNote.self).sorted(by: \.id).map(\.confidentialBody) == (1...5).map { "legacy body \($0)" })
        #expect(db.object(ofType: SecretNote.self, forPrimaryKey: 2)?.attributes["k"] == "v2")
        try db.write {
            let note = SecretNote()
            note.id = 6
            note.confidentialBody = "written today"
            try db.add(note)
        }
        expectValid(db)
        expectTroveError(.wrongEncryptionKey) { try Database(configuration: configuration(url, key: nil)) }
        let copyURL = directory.appendingPathComponent("upgraded.trove")
        try db.writeCopy(to: copyURL, encryptionKey: key)
        let copy = try Database(configuration: configuration(copyURL, key: key))
        #expect(copy.object(ofType: SecretNote.self, forPrimaryKey: 6)?.confidentialBody == "written today")
        #expect(copy.environment.cipher?.bindsTables == true)
        #expect(db.environment.cipher?.bindsTables == false)
        expectValid(copy)
    }
}
