import Foundation
import Testing
import Trove
import TroveTestSupport

final class Book: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var title = ""
    @Persisted var pages: Int?
    @Persisted var cover: Data?
    @Persisted var published = Date(timeIntervalSince1970: 0)
}

final class Shelf: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var labels = List<String>()
    @Persisted var books = List<Book>()
    @Persisted var notes = Map<String, String>()
    @Persisted var favorite: Book?
}

final class Ledger: Object {
    @Persisted(primaryKey: true) var id = ObjectId()
    @Persisted var amount: Decimal128 = 0
    @Persisted var note: Mixed = .none
}

/// A built executable of this package (`trove`, the examples), beside the tests in `.build/<config>/`.
func built(_ name: String) throws -> URL {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    guard
        let binary = ["debug", "release"].map({ root.appendingPathComponent(".build/\($0)/\(name)") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
    else {
        Issue.record("\(name) is not built; run `swift build` (make test does) first")
        throw CancellationError()
    }
    return binary
}

/// Runs the built `trove` binary; returns its exit status, stdout and stderr.
func trove(_ arguments: String..., input: String? = nil, environment: [String: String] = [:]) throws -> (
    status: Int32, out: String, err: String
) {
    try run(built("trove"), arguments, input: input, environment: environment)
}

func run(_ binary: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> (
    status: Int32, out: String, err: String
) {
    let finished = try ChildProcess.run(
        binary.path, arguments, environment: ["COLUMNS": "100"].merging(environment) { $1 }, input: input)
    return (finished.status, finished.out, finished.err)
}

/// A library file with `count` books; every third has no page count.
private func library(_ count: Int = 20, name: String = #function) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
        .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent("library.trove")
    let db = try Database(fileURL: url)
    try db.write {
        for id in 1...count {
            let book = Book()
            book.id = id
            book.title = "Book, \"\(id)\""
            book.pages = id % 3 == 0 ? nil : id * 10
            book.cover = id == 1 ? Data([0xFF, 0xD8, 0xFF, 0xE0, 0x01]) : nil
            try db.add(book)
        }
    }
    return url.path
}

@Suite("trove command-line tool", .serialized)
struct CLITests {
    @Test("an encrypted file opens with TROVE_ENCRYPTION_KEY, and says what is missing without it")
    func encryptedFile() throws {
        let key = Data((0..<64).map { UInt8($0) })
        let url = URL(fileURLWithPath: try library(1)).deletingLastPathComponent().appendingPathComponent("sealed.trove")
        var configuration = Configuration(fileURL: url)
        configuration.encryptionKey = key
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let book = Book()
                book.id = 7
                book.title = "Sealed"
                book.pages = 77
                try db.add(book)
            }
        }
        let hex = key.map { String(format: "%02x", $0) }.joined()
        let opened = try trove(
            "query", url.path, "Book", "pages > 10", "--format", "jsonl", environment: ["TROVE_ENCRYPTION_KEY": hex])
        #expect(opened.status == 0)
        #expect(opened.out.contains("\"pages\":77"))
        let locked = try trove("info", url.path)
        #expect(locked.status == 1)
        #expect(locked.err.contains("is encrypted"))
        let malformed = try trove("info", url.path, environment: ["TROVE_ENCRYPTION_KEY": "abc"])
        #expect(malformed.status == 2)
        #expect(malformed.err.contains("128 hex digits"))
        #expect(locked.err.contains("TROVE_ENCRYPTION_KEY"))
        // A bad digit is reported by position and variable; the key's characters never reach the output.
        var bad = Array(hex)
        bad[40] = "q"
        bad[41] = "1"
        let badDigit = try trove("info", url.path, environment: ["TROVE_ENCRYPTION_KEY": String(bad)])
        #expect(badDigit.status == 2)
        #expect(badDigit.err.contains("TROVE_ENCRYPTION_KEY has a character that is not a hex digit at position 41"))
        #expect(!badDigit.err.contains("q1"))
        var signed = Array(hex)
        signed[0] = "+"
        let plusSign = try trove("info", url.path, environment: ["TROVE_ENCRYPTION_KEY": String(signed)])
        #expect(plusSign.status == 2, "'+b' is not a hex byte")
        let newKeyBad = try trove(
            "copy", url.path, url.path + ".copy",
            environment: ["TROVE_ENCRYPTION_KEY": hex, "TROVE_NEW_ENCRYPTION_KEY": String(bad)])
        #expect(newKeyBad.err.contains("TROVE_NEW_ENCRYPTION_KEY has a character"), "\(newKeyBad.err)")

        // copy --decrypt makes a plain file; TROVE_NEW_ENCRYPTION_KEY seals a copy with another key.
        let plain = url.deletingLastPathComponent().appendingPathComponent("plain.trove").path
        let decrypted = try trove("copy", url.path, plain, "--decrypt", environment: ["TROVE_ENCRYPTION_KEY": hex])
        #expect(decrypted.status == 0)
        #expect(decrypted.out.contains("decrypted"))
        #expect(try trove("query", plain, "Book", "--format", "jsonl").out.contains("\"pages\":77"))
        let newHex = String(repeating: "ab", count: 64)
        let resealed = url.deletingLastPathComponent().appendingPathComponent("resealed.trove").path
        let copied = try trove("copy", plain, resealed, environment: ["TROVE_NEW_ENCRYPTION_KEY": newHex])
        #expect(copied.status == 0)
        #expect(try trove("info", resealed).err.contains("is encrypted"))
        #expect(
            try trove("query", resealed, "Book", "--format", "jsonl", environment: ["TROVE_ENCRYPTION_KEY": newHex]).status == 0)

        // A file encrypted before key tokens (its index keys and names readable): convert gives it tokens.
        let legacy = url.deletingLastPathComponent().appendingPathComponent("legacy.trove")
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("TroveTests/Fixtures/secret-legacy-encryption.trove"), to: legacy)
        let legacyHex = (0..<64).map { String(format: "%02x", ($0 &* 7 &+ 3) & 0xFF) }.joined()
        func readable(_ text: String) throws -> Bool { try Data(contentsOf: legacy).range(of: Data(text.utf8)) != nil }
        #expect(try readable("folder-1") && readable("SecretNote"))
        let upgraded = try trove("convert", legacy.path, environment: ["TROVE_ENCRYPTION_KEY": legacyHex])
        #expect(upgraded.status == 0 && upgraded.out.contains("its keys now hold tokens"), "\(upgraded.out)\(upgraded.err)")
        #expect(try !readable("folder-1") && !readable("SecretNote"))
        let read = try trove(
            "query", legacy.path, "SecretNote", "--format", "jsonl", environment: ["TROVE_ENCRYPTION_KEY": legacyHex])
        #expect(read.out.contains("legacy body 3"))
        #expect(try trove("verify", legacy.path, environment: ["TROVE_ENCRYPTION_KEY": legacyHex]).status == 0)
    }

    @Test("info shows versions, sizes, counts and indexes; --json is machine-readable")
    func info() throws {
        let file = try library()
        let text = try trove("info", file)
        #expect(text.status == 0)
        // (1 when the files are made with types as records: TROVE_LAYOUT=records.)
        let clustered = ProcessInfo.processInfo.environment["TROVE_LAYOUT"] != "records"
        #expect(text.out.contains("format version:  \(clustered ? 6 : 1)"))
        #expect(
            text.out.contains("Book: 20 objects\(clustered ? " in column clusters" : ""); indexed: id (primary key), title"))
        let json = try trove("info", file, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let types = try #require(object["types"] as? [[String: Any]])
        #expect(types.first?["objects"] as? Int == 20)
    }

    @Test("schema prints the stored schema, and Swift models with --swift")
    func schema() throws {
        let file = try library()
        let text = try trove("schema", file)
        #expect(text.out.contains("  pages: Int?"))
        #expect(text.out.contains("  id: Int  (primary key)"))
        let swift = try trove("schema", file, "--swift")
        #expect(swift.out.contains("final class Book: Object {"))
        #expect(swift.out.contains("@Persisted(indexed: true) var title: String"))
    }

    @Test("query filters, sorts and limits, in every format")
    func query() throws {
        let file = try library()
        let table = try trove("query", file, "Book", "pages > 150", "--sort", "pages:desc", "--limit", "2")
        #expect(table.status == 0, "\(table.err)")
        #expect(table.out.contains("(2 Book objects)"))
        let lines = table.out.split(separator: "\n")
        #expect(lines[2].hasPrefix("20 "))
        #expect(lines[3].hasPrefix("19 "))

        let json = try trove("query", file, "Book", "id <= 3", "--format", "json")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
        #expect(rows.count == 3)
        #expect(rows[0]["title"] as? String == "Book, \"1\"")
        #expect(rows[0]["cover"] as? String == Data([0xFF, 0xD8, 0xFF, 0xE0, 0x01]).base64EncodedString())
        #expect(rows[2]["pages"] is NSNull)

        let jsonl = try trove("query", file, "Book", "id IN {4, 5}", "--format", "jsonl")
        #expect(jsonl.out.split(separator: "\n").count == 2)

        let csv = try trove("query", file, "Book", "id == 1", "--format", "csv")
        #expect(csv.out.hasPrefix("id,title,pages,cover,published\r\n"))
        #expect(csv.out.contains("1,\"Book, \"\"1\"\"\",10,"))
    }

    @Test("ObjectId, Decimal128 and mixed values: shown and queried from the command line")
    func realmValueTypes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
            .appendingPathComponent("ledger-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("ledger.trove").path
        let id = try ObjectId(string: "5f1b2c3d4e5f60718293a4b5")
        do {
            let db = try Database(fileURL: URL(fileURLWithPath: file))
            try db.write {
                let entry = Ledger()
                entry.id = id
                entry.amount = try Decimal128(string: "1234.5")
                entry.note = .string("rent")
                try db.add(entry)
                let other = Ledger()
                other.id = ObjectId.generate()
                other.amount = 7
                other.note = .int(42)
                try db.add(other)
            }
        }
        let schema = try trove("schema", file)
        #expect(schema.out.contains("id: ObjectId  (primary key)") && schema.out.contains("amount: Decimal128"))
        let json = try trove("query", file, "Ledger", "id == oid(\(id.stringValue))", "--format", "json")
        #expect(json.status == 0, "\(json.err)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["id"] as? String == id.stringValue)
        #expect(rows.first?["note"] as? String == "rent")
        #expect(try trove("query", file, "Ledger", "amount > 1000").out.contains("(1 Ledger object)"))
        #expect(try trove("query", file, "Ledger", "note == 42").out.contains("(1 Ledger object)"))
    }

    @Test("the table shows Data as its size and first bytes, and nil as nil")
    func tableShowsData() throws {
        let file = try library()
        let table = try trove("query", file, "Book", "id == 1")
        #expect(table.out.contains("<5 B ffd8ffe0…>"))
        let missing = try trove("query", file, "Book", "id == 3")
        #expect(missing.out.contains(" nil "))
    }

    @Test("export writes every object; CSV needs one type")
    func export() throws {
        let file = try library()
        let output = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("books.jsonl").path
        let result = try trove("export", file, "--format", "jsonl", "-o", output)
        #expect(result.status == 0)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 20)
        let all = try trove("export", file, "--format", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(all.out.utf8)) as? [[String: Any]])
        #expect(object.count == 20)
        let csv = try trove("export", file, "--format", "csv")
        #expect(csv.status == 0)  // one type in the file: no --type needed
        #expect(csv.out.split(separator: "\r\n").count == 21)
    }

    @Test("copy and compact give files with the same objects, compact ones smaller after deletes")
    func copyAndCompact() throws {
        let file = try library(2_000)
        do {
            let db = try Database(fileURL: URL(fileURLWithPath: file))
            try db.write { try db.delete(db.objects(Book.self).filter("id > 100")) }
        }
        let copy = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("copy.trove").path
        let copied = try trove("copy", file, copy)
        #expect(copied.status == 0, "\(copied.err)")
        #expect(try trove("info", copy).out.contains("Book: 100 objects"))
        let before = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let compacted = try trove("compact", file)
        #expect(compacted.status == 0, "\(compacted.err)")
        let after = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        #expect(after < before)
        #expect(try Database(fileURL: URL(fileURLWithPath: file)).objects(Book.self).count == 100)
    }

    @Test("convert stores every type in column clusters; the objects, queries and verify are unchanged; again, it does nothing")
    func convertToClusters() throws {
        let directory = URL(fileURLWithPath: try library(1)).deletingLastPathComponent()
        var configuration = Configuration(fileURL: directory.appendingPathComponent("rows.trove"))
        configuration.storageLayout = .records
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for id in 1...1_500 {
                    let book = Book()
                    book.id = id
                    book.title = "책 \(id)"
                    book.pages = id % 3 == 0 ? nil : id
                    try db.add(book)
                }
            }
        }
        let file = configuration.fileURL.path
        #expect(!(try trove("info", file).out.contains("in column clusters")))
        let query = try trove("query", file, "Book", "pages > 1000 AND pages < 1100", "--format", "jsonl")
        let converted = try trove("convert", file)
        #expect(converted.status == 0, "\(converted.err)")
        #expect(converted.out.contains("converted Book in \(file) to column clusters (file format 6)"), "\(converted.out)")
        let info = try trove("info", file).out
        #expect(info.contains("in column clusters"), "\(info)")
        #expect(info.contains("format version:  6"), "\(info)")
        #expect(try trove("query", file, "Book", "pages > 1000 AND pages < 1100", "--format", "jsonl").out == query.out)
        #expect(try trove("verify", file).status == 0)
        let again = try trove("convert", file)
        #expect(again.status == 0 && again.out.contains("already in column clusters"), "\(again.out)")
        // A handle that stores records still reads the converted type.
        let db = try Database(configuration: configuration)
        #expect(db.objects(Book.self).count == 1_500)
        #expect(db.object(ofType: Book.self, forPrimaryKey: 777)?.title == "책 777")
    }

    @Test("compact refuses a file another process is committing to, and no commit is lost")
    func compactRefusesAFileInUse() throws {
        let file = try library(200)
        let url = URL(fileURLWithPath: file)
        do {
            let writer = try Database(fileURL: url)  // this test process is the other process
            for commit in 1...50 {
                try writer.write {
                    let book = Book()
                    book.id = 10_000 + commit
                    book.title = "added while compacting \(commit)"
                    try writer.add(book)
                }
                if commit % 10 == 0 {
                    let compact = try trove("compact", file)
                    #expect(compact.status == 1)
                    #expect(compact.err.contains("process \(getpid()) has it open"), "\(compact.err)")
                }
            }
        }
        // The writer closed: a new handle opens whatever file is at the path now.
        #expect(try Database(fileURL: url).objects(Book.self).filter("id > 10000").count == 50)
    }

    @Test("compact keeps the file's permissions and sees the last commit of a closed writer")
    func compactAfterTheWriterClosed() throws {
        let file = try library(200)
        let url = URL(fileURLWithPath: file)
        chmod(file, 0o600)
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.delete(db.objects(Book.self).filter("id > 10")) }
        }
        let compact = try trove("compact", file)
        #expect(compact.status == 0, "\(compact.err)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try Database(fileURL: url).objects(Book.self).count == 10)
    }

    @Test("info lists other processes' readers and how far behind their snapshots are")
    func infoShowsReaders() throws {
        let file = try library(5)
        let url = URL(fileURLWithPath: file)
        let reader = try Database(fileURL: url)
        #expect(reader.objects(Book.self).count == 5)  // holds a snapshot from here on
        let writer = try Database(fileURL: url)
        for id in 100..<103 {
            try writer.write {
                try writer.add(
                    {
                        let book = Book(); book.id = id; return book
                    }())
            }
        }
        #expect(reader.objects(Book.self).count == 5)  // still the old snapshot
        let info = try trove("info", file)
        #expect(info.out.contains("process \(getpid()): reading a snapshot 3 commits old"), "\(info.out)")
        let json = try trove("info", file, "--json")
        #expect(json.out.contains("{\"pid\":\(getpid()),\"commitsBehind\":3}"), "\(json.out)")
        _ = reader
    }

    @Test("every page of a file is checked before the tool reads it; --trust skips the check")
    func damagedPagesAreCheckedFirst() throws {
        let file = try library(20)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let record = try #require(bytes.range(of: Data("Book, \"7\"".utf8)))
        let page = record.lowerBound / 4096
        bytes[page * 4096] ^= 0x40  // the page's header names another page
        try bytes.write(to: URL(fileURLWithPath: file))
        let checked = try trove("query", file, "Book", "--format", "jsonl")
        #expect(checked.status == 1)
        #expect(checked.err.contains("is damaged: page \(page)"), "\(checked.err)")
        #expect(checked.out.isEmpty)
        let trusted = try trove("info", file, "--trust")  // LMDB does not look at that header
        #expect(trusted.status == 0, "\(trusted.err)")
    }

    @Test("verify reports a clean file with exit code 0")
    func verify() throws {
        let file = try library()
        let result = try trove("verify", file)
        #expect(result.status == 0)
        #expect(result.out.contains(" pages, 20 objects and 20 index entries: no problems"))
        let json = try trove("verify", file, "--json")
        #expect(json.out.contains("\"valid\":true,\"pages\":"))
    }

    @Test("set changes one property in one transaction; bad values and keys are refused")
    func set() throws {
        let file = try library()
        let result = try trove("set", file, "Book", "3", "pages", "123")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("set Book[3].pages = 123"))
        #expect(try trove("set", file, "Book", "3", "title", "Renamed").status == 0)
        #expect(
            try trove("query", file, "Book", "title == 'Renamed' AND pages == 123", "--format", "jsonl").out.contains("\"id\":3"))
        #expect(try trove("set", file, "Book", "4", "pages", "nil").status == 0)
        let bad = try trove("set", file, "Book", "3", "pages", "many")
        #expect(bad.status == 1)
        #expect(bad.err.contains("'many' is not a value of type Int?"))
        #expect(try trove("set", file, "Book", "999", "pages", "1").err.contains("no Book with id = 999"))
        #expect(try trove("set", file, "Book", "3", "id", "7").status == 1)
        #expect(try trove("verify", file).status == 0)
    }

    @Test("delete removes the matches with --yes, and refuses without it off a terminal")
    func delete() throws {
        let file = try library()
        let refused = try trove("delete", file, "Book", "id > 10")
        #expect(refused.status == 2)
        #expect(refused.err.contains("--yes"))
        let deleted = try trove("delete", file, "Book", "id > 10", "--yes")
        #expect(deleted.out.contains("deleted 10 Book objects"))
        #expect(try trove("info", file).out.contains("Book: 10 objects"))
        #expect(try trove("verify", file).status == 0)
    }

    @Test("export then import gives back the same objects, in every format, for 100k objects too (inputs of many read chunks)")
    func roundTrip() throws {
        for (count, formats) in [(30, ["json", "jsonl", "csv"]), (100_000, ["jsonl", "json", "csv"])] {
            let file = try library(count)
            let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
            let original = try trove("export", file, "--format", "jsonl").out
            for format in formats {
                let exported = directory.appendingPathComponent("books.\(format)").path
                #expect(try trove("export", file, "--type", "Book", "--format", format, "-o", exported).status == 0)
                let target = directory.appendingPathComponent("target-\(format).trove").path
                #expect(try trove("copy", file, target).status == 0)
                #expect(try trove("delete", target, "Book", "TRUEPREDICATE", "--yes").status == 0)
                let imported = try trove("import", target, "--type", "Book", exported)
                #expect(imported.status == 0, "\(format): \(imported.err)")
                #expect(imported.out.contains("imported \(count) Book objects"))
                #expect(try trove("export", target, "--format", "jsonl").out == original, "\(format) round trip differs")
                #expect(try trove("verify", target).status == 0)
            }
        }
    }

    @Test("import reports every bad row with its line and writes nothing, unless --skip-bad")
    func importBadRows() throws {
        let file = try library(2)
        let input = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("in.jsonl").path
        let rows = [
            #"{"id": 10, "title": "ok"}"#,
            #"{"id": 11, "title": "bad pages", "pages": "many"}"#,
            "not json",
            #"{"id": 12, "tilte": "typo"}"#,
            #"{"id": 1, "title": "exists"}"#,
        ]
        try rows.joined(separator: "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let refused = try trove("import", file, "--type", "Book", input)
        #expect(refused.status == 1)
        #expect(refused.err.contains("line 2: 'many' is not a value of type Int?"))
        #expect(refused.err.contains("line 3: not a JSON object"))
        #expect(refused.err.contains("line 4: Book has no property named 'tilte'"))
        #expect(try trove("info", file).out.contains("Book: 2 objects"))
        let skipped = try trove("import", file, "--type", "Book", input, "--skip-bad")
        #expect(skipped.status == 0)
        #expect(skipped.out.contains("imported 1 Book object"))
        #expect(skipped.err.contains("skipped line 5: a Book with this primary key is already stored"))
        let updated = try trove("import", file, "--type", "Book", input, "--skip-bad", "--update")
        #expect(updated.out.contains("imported 2 Book objects"))
        #expect(try trove("query", file, "Book", "id == 1", "--format", "jsonl").out.contains(#""title":"exists""#))
    }

    @Test("the shell answers queries and dot commands from a pipe, without prompts")
    func shell() throws {
        let file = try library(5)
        let session = try trove(
            "shell", file, input: ".types\nBook where pages > 30\n.format jsonl\nBook where id == 2\n.history\n!2\nNope\n")
        #expect(session.status == 0)
        #expect(!session.out.contains("trove>"))
        #expect(session.out.contains("Book: 5 objects"))
        #expect(session.out.contains("(2 Book objects)"))
        #expect(session.out.contains(#"{"id":2,"#))
        #expect(session.out.contains("2  Book where pages > 30"))
        #expect(session.err.contains("no type named 'Nope'"))
        let one = try trove("shell", try library(1), input: ".types\n.schema Book\n")
        #expect(one.out.contains("Book: 1 object\n"), "\(one.out)")
        #expect(one.out.contains("  id: Int  (primary key)"), "\(one.out)")  // as `trove schema` prints it
        #expect(one.out.contains("  title: String  (indexed)"))
    }

    @Test("trove reads the file the photo diary example app wrote")
    func exampleFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
            .appendingPathComponent("diary-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("photos.trove").path
        #expect(try run(built("PhotoDiary"), [file]).status == 0)
        // (The app runs without the test's environment: in the default layout, whatever TROVE_LAYOUT says here.)
        #expect(
            try trove("info", file).out.contains("PhotoData: 2 objects in column clusters; indexed: id (primary key), date"))
        let calm = try trove("query", file, "PhotoData", "mood == 'calm'", "--format", "json")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(calm.out.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["date"] as? String == "2024-05-03")
        #expect(try trove("verify", file).status == 0)
        #expect(try trove("schema", file, "--swift").out.contains("@Persisted(indexed: true) var date: String"))
    }

    @Test("reading commands never change the file")
    func readOnly() throws {
        let file = try library()
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        _ = try trove("info", file)
        _ = try trove("query", file, "Book", "pages > 10")
        _ = try trove("export", file, "--format", "json")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
    }

    @Test("files an app migrated (schema version 3, the checked-in fixtures) open in every command, unchanged by reading")
    func migratedFiles() throws {
        let directory = URL(fileURLWithPath: try library(1)).deletingLastPathComponent()
        let url = directory.appendingPathComponent("migrated.trove")
        for version: UInt64 in [1, 3] {
            let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: version, objectTypes: [Book.self]))
            try db.write {
                try db.add(
                    {
                        let book = Book(); book.id = Int(version); book.title = "v\(version)"; return book
                    }())
            }
        }
        let file = url.path
        let before = try Data(contentsOf: url)
        let info = try trove("info", file)
        #expect(info.status == 0, "\(info.err)")
        #expect(info.out.contains("schema version:  3"))
        #expect(try trove("info", file, "--json").out.contains("\"schemaVersion\":3"))
        for arguments in [
            ["schema", file], ["schema", file, "--swift"], ["query", file, "Book", "id > 0"],
            ["export", file, "--format", "jsonl"],
            ["verify", file],
        ] {
            let result = try run(built("trove"), arguments)
            #expect(result.status == 0, "\(arguments): \(result.err)")
        }
        #expect(try trove("shell", file, input: "Book where id == 3\n").out.contains("v3"))
        #expect(try Data(contentsOf: url) == before, "a reading command changed the file")
        let set = try trove("set", file, "Book", "3", "title", "changed")
        #expect(set.status == 0, "\(set.err)")
        #expect(try trove("info", file).out.contains("schema version:  3"))  // writing did not migrate either
        // The fixtures an older model wrote.
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TroveTests/Fixtures")
        for name in ["photos-v0.trove", "memos-v1.trove"] {
            let copy = directory.appendingPathComponent(name)
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name), to: copy)
            let result = try trove("info", copy.path)
            #expect(result.status == 0, "\(name): \(result.err)")
            #expect(result.out.contains("schema version:  \(name.contains("v1") ? 1 : 0)"), "\(result.out)")
        }
    }

    @Test("an empty file is refused by every command, and stays empty")
    func emptyFile() throws {
        let directory = URL(fileURLWithPath: try library(1)).deletingLastPathComponent()
        let empty = directory.appendingPathComponent("empty.trove").path
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        for arguments in [["info", empty], ["set", empty, "Book", "1", "title", "x"], ["compact", empty]] {
            let result = try run(built("trove"), arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.err.contains("is empty (0 bytes)"), "\(arguments): \(result.err)")
        }
        #expect((try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int) == 0)
    }

    @Test("mistakes: exit code 2 for usage, 1 for failures, with the reason on stderr")
    func mistakes() throws {
        let file = try library()
        let unknown = try trove("frobnicate", file)
        #expect(unknown.status == 2)
        #expect(unknown.err.contains("unknown command 'frobnicate'"))
        #expect(try trove("query", file).status == 2)
        #expect(try trove("query", file, "Book", "--limit", "many").status == 2)
        #expect(try trove("export", file, "--format", "xml").status == 2)
        let badType = try trove("query", file, "Bok")
        #expect(badType.status == 1)
        #expect(badType.err.contains("did you mean 'Book'?"))
        let badQuery = try trove("query", file, "Book", "pages >> 3")
        #expect(badQuery.status == 1)
        #expect(badQuery.err.contains("position"))
        let missing = try trove("info", "/nonexistent/nothing.trove")
        #expect(missing.status == 1)
        #expect(missing.err.contains("/nonexistent/nothing.trove"))
        let text = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("notes.txt").path
        try "not a database".write(toFile: text, atomically: true, encoding: .utf8)
        let notDatabase = try trove("info", text)
        #expect(notDatabase.status == 1)
        #expect(!notDatabase.err.isEmpty)
        #expect(try String(contentsOfFile: text, encoding: .utf8) == "not a database")
        #expect(try trove("--version").out.hasPrefix("trove "))
        #expect(try trove("--version").out.contains("file formats up to \(Database.newestFileFormatVersion)"))
        #expect(try trove("query", "--help").out.contains("example:"))
    }

    @Test("query and export show links, lists and maps; queries follow links")
    func collections() throws {
        let path = try library(3)
        do {
            let db = try Database(fileURL: URL(fileURLWithPath: path))
            try db.write {
                let shelf = Shelf()
                shelf.name = "top"
                shelf.labels.append(contentsOf: ["new", "signed"])
                shelf.books.append(contentsOf: db.objects(Book.self).filter { $0.id != 2 })
                shelf.notes["dust"] = "weekly"
                shelf.favorite = db.object(ofType: Book.self, forPrimaryKey: 3)
                try db.add(shelf)
                let ledger = Ledger()
                ledger.note = .object(db.object(ofType: Book.self, forPrimaryKey: 2)!)
                try db.add(ledger)
            }
        }
        let table = try trove("query", path, "Shelf")
        #expect(table.status == 0, "\(table.err)")
        #expect(table.out.contains("[new, signed]"))
        #expect(table.out.contains("[dust: weekly]"))
        // Links show their target's primary key, in a link property and in a mixed value.
        #expect(table.out.contains("Book 3"), "\(table.out)")
        let ledgers = try trove("query", path, "Ledger")
        #expect(ledgers.out.contains("Book 2"), "\(ledgers.out)")
        let json = try trove("export", path, "--type", "Shelf", "--format", "json")
        #expect(json.out.contains("\"labels\":[\"new\",\"signed\"]"))
        #expect(json.out.contains("\"notes\":{\"dust\":\"weekly\"}"))
        let through = try trove("query", path, "Shelf", "ANY books.pages == 10 AND favorite.id == 3")
        #expect(through.out.contains("(1 Shelf object)"), "\(through.out)\(through.err)")
        let none = try trove("query", path, "Shelf", "ANY books.id == 2")
        #expect(none.out.contains("(0 Shelf objects)"))
    }
}
