import Foundation
import Testing
import Trove
import TroveTestSupport

private func runTrove(_ arguments: [String]) throws -> ChildProcess.Finished {
    try ChildProcess.run(
        try built("trove").path, arguments, environment: ["COLUMNS": "100", "SWIFT_BACKTRACE": "enable=no"])
}

/// A library of books and shelves whose titles are easy to find in the file's bytes.
private func markedLibrary(_ name: String = #function) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
        .appendingPathComponent("damaged-\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent("library.trove")
    let db = try Database(fileURL: url)
    try db.write {
        var books: [Book] = []
        for id in 1...60 {
            let book = Book()
            book.id = id
            book.title = "TITLE\(id)-" + String(repeating: "q", count: id % 7)
            book.pages = id % 3 == 0 ? nil : id * 10
            try db.add(book)
            books.append(book)
        }
        for index in 0..<4 {
            let shelf = Shelf()
            shelf.name = "SHELF\(index)"
            shelf.labels.append(objectsIn: ["LABEL\(index)", "common"])
            shelf.books.append(objectsIn: books[(index * 10)..<(index * 10 + 8)])
            shelf.notes["n"] = "NOTE\(index)"
            shelf.favorite = books[index * 10 + 6]  // SHELF1's is book 17, the one the first test damages
            try db.add(shelf)
        }
    }
    return url
}

/// Where `marker` lies in the file's bytes.
private func offsets(of marker: String, in bytes: [UInt8]) -> [Int] {
    let needle = Array(marker.utf8)
    var found: [Int] = []
    var index = 0
    while index + needle.count <= bytes.count {
        if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle { found.append(index) }
        index += 1
    }
    return found
}

@Suite("trove on damaged files", .serialized)
struct DamagedFileTests {
    @Test(
        "a title damaged by hand (valid pages, bytes that are not UTF-8): verify lists it, query and export skip it and go on, exit 1"
    )
    func aDamagedValueIsReportedAndSkipped() throws {
        let url = try markedLibrary()
        var bytes = [UInt8](try Data(contentsOf: url))
        let at = try #require(offsets(of: "TITLE17-", in: bytes).first)
        bytes[at + 2] = 0xC0  // "TI\u{C0}LE17": no longer UTF-8
        try Data(bytes).write(to: url)

        let verify = try runTrove(["verify", url.path])
        #expect(verify.ending == .exited(1), "\(verify.err)")
        #expect(verify.out.contains("Book") && verify.out.contains("UTF-8"), "\(verify.out)")

        let query = try runTrove(["query", url.path, "Book", "pages > 0", "--format", "jsonl"])
        #expect(query.ending == .exited(1), "\(query.err)")
        #expect(query.err.contains("skipped Book object"), "\(query.err)")
        #expect(query.out.contains("TITLE20-") && !query.out.contains("LE17-"), "\(query.out)")

        let export = try runTrove(["export", url.path, "--format", "json"])
        #expect(export.ending == .exited(1), "\(export.err)")
        #expect(export.err.contains("skipped Book"), "\(export.err)")
        #expect(export.out.contains("TITLE20-") && export.out.contains("SHELF1"), "\(export.out.prefix(300))")

        // A query that follows links into the damaged books is refused, not evaluated over them.
        let linked = try runTrove(["query", url.path, "Shelf", "ANY books.title BEGINSWITH 'TITLE'"])
        #expect(linked.ending == .exited(1), "\(linked.err)")
        #expect(linked.err.contains("follows links into Book, which has damaged objects"), "\(linked.err)")
        let plain = try runTrove(["query", url.path, "Shelf", "name == 'SHELF1.x'"])  // a dot in quotes is no key path
        #expect(plain.ending == .exited(0), "\(plain.err)")
        // The table names a link by its target's primary key, and a damaged target by its object key (never read).
        let shelves = try runTrove(["query", url.path, "Shelf"])
        #expect(shelves.ending == .exited(0), "\(shelves.err)")
        #expect(shelves.out.contains("Book 7") && shelves.out.contains("Book#"), "\(shelves.out)")
        #expect(!shelves.out.contains("Book 17"), "\(shelves.out)")

        // The studio: the grid leaves the damaged book out, its own address says why.
        let server = try StudioServer(file: url.path)
        let page = try server.get("/api/types/Book/objects?limit=100")
        #expect(page.status == 200)
        #expect((page.json["objects"] as? [Any])?.count ?? 0 >= 50, "\(page.text.prefix(300))")
        #expect(try server.get("/api/types/Shelf/objects").status == 200)
        // Writes to the damaged type are refused (they would rewrite its clusters); other types take them.
        #expect(try server.send("POST", "/api/types/Book/objects", json: #"{"id": 500, "title": "new"}"#).status == 422)
        #expect(try server.send("POST", "/api/types/Shelf/objects", json: #"{"name": "SHELF9"}"#).status == 201)
        let ratio = try runTrove(["query", url.path, "Book", "pages > 1.5"])  // a number's dot follows no link
        #expect(ratio.ending == .exited(1) && !ratio.err.contains("follows links"), "\(ratio.err)")
        #expect(server.stop() == 0)
    }

    @Test(
        "60 files (TROVE_DAMAGE_ROUNDS) with random bytes changed (in values and anywhere): verify, info, query and export exit 0 or 1, never on a signal"
    )
    func randomDamageNeverKillsTheTool() throws {
        let base = try markedLibrary()
        let original = [UInt8](try Data(contentsOf: base))
        let values = ["TITLE", "SHELF", "LABEL", "NOTE", "common"].flatMap { offsets(of: $0, in: original) }
        // The same damage on every run (TROVE_DAMAGE_SEED picks other damage, as `make test-long` does).
        var seed = ProcessInfo.processInfo.environment["TROVE_DAMAGE_SEED"].flatMap { UInt64($0) } ?? 20_261_203
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        let started = seed
        var refused = 0
        let rounds = ProcessInfo.processInfo.environment["TROVE_DAMAGE_ROUNDS"].flatMap { Int($0) } ?? 60
        for round in 0..<rounds {
            var bytes = original
            for _ in 0..<(1 + next() % 3) {
                // Two in three near a stored value (past the page checks), the rest anywhere.
                let at =
                    round % 3 == 2
                    ? next() % bytes.count : min(bytes.count - 1, max(0, values[next() % values.count] + next() % 96 - 32))
                if next() % 2 == 0 { bytes[at] ^= UInt8(1 << (next() % 8)) } else { bytes[at] = UInt8(next() % 256) }
            }
            let url = base.deletingLastPathComponent().appendingPathComponent("round-\(round).trove")
            try Data(bytes).write(to: url)
            defer {
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(atPath: url.path + "-lock")
            }
            for arguments in [
                ["verify", url.path], ["info", url.path], ["query", url.path, "Book"],
                ["query", url.path, "Shelf", "--format", "json"], ["query", url.path, "Book", "title BEGINSWITH 'TITLE1'"],
                ["query", url.path, "Shelf", "ANY books.pages > 100"],
                ["export", url.path, "--format", "json"],
            ] {
                let run = try runTrove(arguments)
                #expect(
                    run.ending == .exited(0) || run.ending == .exited(1),
                    "round \(round) (seed \(started)): trove \(arguments[0]) \(run.ending): \(run.err.prefix(700))")
                if run.ending == .exited(1) { refused += 1 }
                if case .signaled = run.ending, let keep = ProcessInfo.processInfo.environment["TROVE_DAMAGE_KEEP"] {
                    try? FileManager.default.copyItem(at: url, to: URL(fileURLWithPath: "\(keep)/round-\(round).trove"))
                }
            }
            // Every third file in the studio too: every answer, and the server stays up.
            if round % 3 == 0, let server = try? StudioServer(file: url.path) {
                for path in [
                    "/api/types", "/api/types/Book/objects?limit=100", "/api/types/Shelf/objects",
                    "/api/types/Book/objects?filter=title%20BEGINSWITH%20'TITLE1'", "/api/types/Book/objects/9223372036854775817",
                    "/api/types/Shelf/objects/1/books", "/api/types/Book/chart/pages", "/api/verify",
                ] {
                    let reply = try server.get(path)
                    #expect(
                        reply.status < 500 || reply.status == 507,
                        "round \(round) (seed \(started)): \(path): \(reply.text.prefix(300))")
                }
                #expect(server.stop() == 0, "round \(round) (seed \(started)): the studio did not stop cleanly")
            }
        }
        #expect(refused > 0)
    }
}
