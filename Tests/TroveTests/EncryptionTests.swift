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

/// Every kind of key that holds user data: a String primary key, an indexed
/// value, a set, a map, a searchable text, a link to a type with a primary key.
final class VaultEntry: Object {
    @Persisted(primaryKey: true) var handleOfEntry = ""
    @Persisted(indexed: true) var emailAddress = ""
    @Persisted(indexed: .fullText) var memoText = ""
    @Persisted var labelSet = MutableSet<String>()
    @Persisted var extrasMap = Map<String, String>()
    @Persisted var keeperOf: VaultKeeper?
}

final class VaultKeeper: Object {
    @Persisted(primaryKey: true) var keeperName = ""
}

final class VaultTicket: Object {
    @Persisted(primaryKey: true) var number = 0
    @Persisted var amount = 0
    @Persisted var previous: VaultTicket?
}

final class VaultStamp: Object {
    @Persisted(primaryKey: true, autoIncrement: true) var serial = 0
    @Persisted var note = ""
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

    /// Every string a ``VaultEntry`` file holds that is user data: values,
    /// primary keys, indexed values, set members, map keys, words of a
    /// searchable text, and the type and property names.
    private static let vaultStrings =
        [
            "VaultEntry", "VaultKeeper", "handleOfEntry", "emailAddress", "memoText", "labelSet", "extrasMap", "keeperOf",
            "keeperName",
        ]
        + (1...40).flatMap { id in
            [
                "handle-\(id)-xq", "person\(id)@mailhost.example", "launchcode\(id)", "swordfish", "vaultlabel\(id)",
                "extrakey\(id)", "extravalue\(id)", "keeper\(id % 3)name",
            ]
        }

    private func fillVault(_ db: Database) throws {
        try db.write {
            for id in 1...40 {
                let entry = VaultEntry()
                entry.handleOfEntry = "handle-\(id)-xq"
                entry.emailAddress = "person\(id)@mailhost.example"
                entry.memoText = "the launchcode\(id) for the vault is swordfish"
                entry.labelSet.insert("vaultlabel\(id)")
                entry.extrasMap["extrakey\(id)"] = "extravalue\(id)"
                entry.keeperOf = try db.create(VaultKeeper.self, value: ["keeperName": "keeper\(id % 3)name"], update: .modified)
                try db.add(entry)
            }
        }
    }

    /// Every key and value of every table of the file at `url`, read with
    /// plain LMDB and no key, and the tables' names.
    private func plainDump(_ url: URL) throws -> [[UInt8]] {
        let environment = try Environment.open(path: url.path)
        var dump: [[UInt8]] = []
        for name in try environment.tableNames() {
            dump.append(Array(name.utf8))
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            guard let table = try transaction.existingTable(name, isMultiValue: name.hasPrefix("idx:")) else { continue }
            try transaction.withCursor(on: table) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    dump.append(Array(current.key))
                    dump.append(Array(current.value))
                    entry = try cursor.next()
                }
            }
        }
        return dump
    }

    /// The strings of `strings` that the file's bytes, or its plain dump, hold.
    private func readable(_ strings: [String], in url: URL) throws -> [String] {
        let raw = try Data(contentsOf: url)
        let dump = try plainDump(url)
        return strings.filter { text in
            raw.range(of: Data(text.utf8)) != nil || dump.contains { Data($0).range(of: Data(text.utf8)) != nil }
        }
    }

    @Test(
        "an encrypted file shows no value, primary key, indexed value, set member, map key, word or name, in its bytes or a plain dump"
    )
    func rawFileHoldsNoPlaintext() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("vault.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [VaultEntry.self, VaultKeeper.self])
        configuration.encryptionKey = key
        do {
            let db = try Database(configuration: configuration)
            try fillVault(db)
            // Deletes and updates leave free pages behind: they hold nothing readable either.
            try db.write {
                try db.delete(try db.objects(VaultEntry.self).filter("handleOfEntry == 'handle-40-xq'"))
                db.object(ofType: VaultEntry.self, forPrimaryKey: "handle-39-xq")?.extrasMap["extrakey39"] = "extravalue39"
            }
        }
        #expect(try readable(Self.vaultStrings, in: url) == [])

        // And everything still works on it: lookups, uniqueness, sets, maps, words, prefixes, ranges, links.
        let db = try Database(configuration: configuration)
        let entries = db.objects(VaultEntry.self)
        #expect(db.object(ofType: VaultEntry.self, forPrimaryKey: "handle-7-xq")?.emailAddress == "person7@mailhost.example")
        #expect(try entries.filter("emailAddress == 'person12@mailhost.example'").map(\.handleOfEntry) == ["handle-12-xq"])
        #expect(try entries.filter("emailAddress BEGINSWITH 'person3'").count == 11)  // a scan: tokens keep no order
        #expect(try entries.filter("emailAddress > 'person8'").count == 2)
        #expect(try entries.filter("ANY labelSet == 'vaultlabel5'").count == 1)
        #expect(try entries.filter("extrasMap['extrakey6'] == 'extravalue6'").count == 1)
        #expect(try entries.filter("extrasMap.@allKeys == 'extrakey9'").count == 1)
        #expect(try entries.filter("memoText TEXT 'launchcode21'").map(\.handleOfEntry) == ["handle-21-xq"])
        #expect(try entries.filter("memoText TEXT 'launchcode2*'").count == 11)  // a prefix: the texts decide
        #expect(try entries.filter("memoText TEXT '\"vault is swordfish\"'").count == 39)
        #expect(try entries.filter("keeperOf.keeperName == 'keeper1name'").count == 13)
        #expect(entries.sorted(by: \.emailAddress).first?.emailAddress == "person10@mailhost.example")
        let entry = try #require(db.object(ofType: VaultEntry.self, forPrimaryKey: "handle-3-xq"))
        #expect(Array(entry.extrasMap.keys) == ["extrakey3"])
        #expect(Array(entry.labelSet) == ["vaultlabel3"])
        expectTroveError(.primaryKeyExists) {
            try db.write { _ = try db.create(VaultEntry.self, value: ["handleOfEntry": "handle-3-xq"]) }
        }
        expectValid(db)

        // The same data without a key is in plain sight: the test can tell.
        let plainURL = directory.appendingPathComponent("plain.trove")
        do {
            try fillVault(
                try Database(configuration: Configuration(fileURL: plainURL, objectTypes: [VaultEntry.self, VaultKeeper.self])))
        }
        #expect(try readable(Self.vaultStrings, in: plainURL).count == Self.vaultStrings.count)
    }

    /// The byte forms an integer primary key could take in a key: the
    /// object key, big- and little-endian.
    private func integerForms(_ value: Int) -> [Data] {
        let objectKey = TableInfo.objectKey(forInteger: Int64(value))
        return [
            withUnsafeBytes(of: objectKey.bigEndian) { Data($0) }, withUnsafeBytes(of: objectKey.littleEndian) { Data($0) },
            withUnsafeBytes(of: Int64(value).bigEndian) { Data($0) },
        ]
    }

    /// The integers among `values` one of whose forms is in the file or in a keyless dump's keys.
    private func readableIntegers(_ values: [Int], in url: URL) throws -> [Int] {
        let raw = try Data(contentsOf: url)
        let dump = try plainDump(url)
        return values.filter { value in
            integerForms(value).contains { form in raw.range(of: form) != nil || dump.contains { Data($0).range(of: form) != nil }
            }
        }
    }

    @Test(
        "a new encrypted file keeps integer primary keys out of its keys: lookups, ranges, sorts, links and auto-increment still work"
    )
    func integerPrimaryKeysAreHidden() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("tickets.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [VaultTicket.self, VaultStamp.self])
        configuration.encryptionKey = key
        let numbers = (0..<60).map { 7_340_019_238_000 + $0 * 7_919 }
        func fill(_ db: Database) throws {
            try db.write {
                var previous: VaultTicket?
                for (index, number) in numbers.enumerated() {
                    let ticket = VaultTicket()
                    ticket.number = number
                    ticket.amount = index
                    ticket.previous = previous
                    try db.add(ticket)
                    previous = ticket
                }
                for index in 0..<5 {
                    let stamp = VaultStamp()
                    stamp.note = "stamp \(index)"
                    try db.add(stamp)
                }
            }
        }
        do {
            let db = try Database(configuration: configuration)
            #expect(db.fileFormatVersion == Database.indexedIntegerKeysFormatVersion)
            try fill(db)
            try db.write { try db.delete(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[59])!) }
        }
        #expect(try readableIntegers(numbers, in: url) == [])
        let db = try Database(configuration: configuration)
        #expect(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[17])?.amount == 17)
        #expect(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[59]) == nil)
        #expect(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[0] + 1) == nil)
        let tickets = db.objects(VaultTicket.self)
        #expect(try tickets.filter("number == %@", numbers[30]).map(\.amount) == [30])
        #expect(try tickets.filter("number > %@", numbers[50]).count == 8)  // a scan: the keys keep no order
        #expect(tickets.sorted(by: \.number).map(\.amount) == Array(0..<59))
        #expect(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[9])?.previous?.number == numbers[8])
        expectTroveError(.primaryKeyExists) {
            try db.write { _ = try db.create(VaultTicket.self, value: ["number": numbers[3]]) }
        }
        try db.write { _ = try db.create(VaultTicket.self, value: ["number": numbers[3], "amount": 99], update: .modified) }
        #expect(db.object(ofType: VaultTicket.self, forPrimaryKey: numbers[3])?.amount == 99)
        #expect(db.objects(VaultStamp.self).sorted(by: \.serial).map(\.serial) == [1, 2, 3, 4, 5])
        try db.write {
            let stamp = VaultStamp()
            try db.add(stamp)
        }
        #expect(db.objects(VaultStamp.self).max(of: \.serial) == 6)
        expectValid(db)
        // A compacted copy keeps them hidden; the same data in a plain file shows them (the test can tell).
        let copy = directory.appendingPathComponent("copy.trove")
        try db.writeCopy(to: copy)
        #expect(try readableIntegers(numbers.filter { $0 != numbers[59] }, in: copy) == [])
        let plain = directory.appendingPathComponent("plain.trove")
        try fill(try Database(configuration: Configuration(fileURL: plain, objectTypes: [VaultTicket.self, VaultStamp.self])))
        #expect(try readableIntegers(numbers, in: plain).count == numbers.count)
    }

    @Test("a file encrypted before key tokens keeps working, and upgradeKeys (trove convert) and writeCopy give it tokens")
    func filesBeforeKeyTokensAreUpgraded() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("vault.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [VaultEntry.self, VaultKeeper.self])
        configuration.encryptionKey = key
        do {
            // Started as the earlier scheme did: a salt and no tokens.
            var options = configuration.environmentOptions
            options.tokenizesKeys = false
            #expect(try Environment.open(path: url.path, options: options).keyTokens == nil)
            let db = try Database(configuration: configuration)
            #expect(db.keysHoldPlainData)
            try fillVault(db)
            #expect(db.fileFormatVersion == Database.sealedLogFormatVersion)
        }
        #expect(try readable(Self.vaultStrings, in: url).contains("person5@mailhost.example"))  // an index key
        let copyURL = directory.appendingPathComponent("copy.trove")
        try Database(configuration: configuration).writeCopy(to: copyURL, encryptionKey: key)
        #expect(try readable(Self.vaultStrings, in: copyURL) == [])

        #expect(try Database.upgradeKeys(configuration: configuration))
        #expect(try readable(Self.vaultStrings, in: url) == [])
        let db = try Database(configuration: configuration)
        #expect(!db.keysHoldPlainData && db.fileFormatVersion == Database.keyTokensFormatVersion)
        #expect(db.objects(VaultEntry.self).count == 40)
        #expect(
            try db.objects(VaultEntry.self).filter("memoText TEXT 'launchcode7' AND emailAddress == 'person7@mailhost.example'")
                .count == 1)
        #expect(db.object(ofType: VaultEntry.self, forPrimaryKey: "handle-8-xq")?.extrasMap["extrakey8"] == "extravalue8")
        expectValid(db)
    }

    @Test("a copy under another key, a decrypted copy and a compacted file keep every object, index and word")
    func copiesRebuildTheirTokens() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("vault.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [VaultEntry.self, VaultKeeper.self])
        configuration.encryptionKey = key
        func check(_ db: Database) throws {
            let entries = db.objects(VaultEntry.self)
            #expect(entries.count == 40)
            #expect(db.object(ofType: VaultEntry.self, forPrimaryKey: "handle-17-xq")?.labelSet.contains("vaultlabel17") == true)
            #expect(try entries.filter("emailAddress == 'person17@mailhost.example'").count == 1)
            #expect(try entries.filter("memoText TEXT 'launchcode17'").count == 1)
            #expect(try entries.filter("extrasMap['extrakey17'] == 'extravalue17'").count == 1)
            expectValid(db)
        }
        do { try fillVault(try Database(configuration: configuration)) }
        var other = configuration
        other.encryptionKey = Data(key.reversed())
        other.fileURL = directory.appendingPathComponent("rekeyed.trove")
        var plain = configuration
        plain.encryptionKey = nil
        plain.fileURL = directory.appendingPathComponent("decrypted.trove")
        do {
            let db = try Database(configuration: configuration)
            try db.writeCopy(to: other.fileURL, encryptionKey: other.encryptionKey)
            try db.writeCopy(to: plain.fileURL, encryptionKey: nil)
        }
        try check(try Database(configuration: other))
        #expect(try readable(Self.vaultStrings, in: other.fileURL) == [])
        try check(try Database(configuration: plain))
        // Compaction keeps the file's salt and copies its tokens as they are.
        try Database.compact(configuration: configuration)
        try check(try Database(configuration: configuration))
        #expect(try readable(Self.vaultStrings, in: url) == [])
        // And a plain file encrypted again gets tokens.
        let again = directory.appendingPathComponent("again.trove")
        try Database(configuration: plain).writeCopy(to: again, encryptionKey: key)
        var againConfiguration = configuration
        againConfiguration.fileURL = again
        try check(try Database(configuration: againConfiguration))
        #expect(try readable(Self.vaultStrings, in: again) == [])
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
        let names = try storedObjectNames(url, "SecretNote")
        let sealed: [UInt8] = try {
            let environment = try Environment.open(path: url.path)
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            let objects = try objectsTable(transaction, names)
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

    /// The table of a type's objects: its clusters, or its records, by the
    /// names LMDB has for them in the file at `url` (tokens of the names,
    /// worked out with the file's key).
    /// (Called before the file is opened without its key.)
    private func storedObjectNames(_ url: URL, _ type: String) throws -> [String] {
        var options = Environment.Options()
        options.encryptionKey = Array(key)
        let keyed = try Environment.open(path: url.path, options: options)
        let names = ["clu:\(type)", "obj:\(type)"].map { keyed.storedName($0) }
        #expect(!names.contains("clu:\(type)"))
        return names
    }

    private func objectsTable(_ transaction: Transaction, _ names: [String]) throws -> Table {
        try #require(try transaction.existingTable(names[0]) ?? transaction.existingTable(names[1]))
    }

    /// The key and raw (sealed) value of the first entry of a type's objects
    /// (the one object's record, or its cluster's keys), read without the key.
    private func rawEntry(_ url: URL, type: String) throws -> (key: [UInt8], value: [UInt8]) {
        let names = try storedObjectNames(url, type)
        let environment = try Environment.open(path: url.path)
        let transaction = try ReadTransaction(environment: environment)
        defer { transaction.end() }
        let objects = try objectsTable(transaction, names)
        return try transaction.withCursor(on: objects) { cursor in
            let entry = try #require(try cursor.first())
            return (Array(entry.key), Array(entry.value))
        }
    }

    private func putRaw(_ url: URL, type: String, key: [UInt8], _ value: [UInt8]) throws {
        let names = try storedObjectNames(url, type)
        let environment = try Environment.open(path: url.path)
        let transaction = try WriteTransaction(environment: environment)
        let objects = try objectsTable(transaction, names)
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
            #expect(db.fileFormatVersion == Database.packedListsFormatVersion)  // SecretNote.lines: its list is in chunks
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
        // Writes go on past it, until the start of the block after next drops its block.
        var id = 100
        while db.readTransaction().id <= 2 * ChangeLog.retained {
            try db.write {
                let note = SecretNote()
                note.id = id
                try db.add(note)
            }
            id += 1
        }
        #expect(db.objects(SecretNote.self).count == 5 + id - 100)
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
        // Its plain change log dropped, sealed from now on, and its lists in chunks.
        #expect(db.fileFormatVersion == Database.packedListsFormatVersion)
        #expect(db.objects(SecretNote.self).contains { !$0.lines.isEmpty })
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
