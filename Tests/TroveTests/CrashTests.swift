import Foundation
import Testing

@testable import Trove

#if canImport(Glibc)
    import Glibc
#endif

/// Transaction `n` of the crash workload: add person n, change person n-1's
/// score and city (indexed), delete person n-4. After `count` committed
/// transactions the state is exactly ``expected(count:)``.
private enum CrashWorkload {
    static func apply(_ n: Int, in db: Database, point: () -> Void) throws {
        try db.beginWrite()
        point()
        let person = Person()
        person.id = n
        person.name = "t\(n)"
        person.city = "c\(n % 3)"
        try db.add(person)
        point()
        if let previous = db.object(ofType: Person.self, forPrimaryKey: n - 1) {
            previous.score = Double(n)
            previous.city = "moved"
        }
        point()
        if let old = db.object(ofType: Person.self, forPrimaryKey: n - 4) { try db.delete(old) }
        point()
        try db.commitWrite()
        point()
    }

    static func expected(count: Int) -> [Int: String] {
        var state: [Int: String] = [:]
        for n in stride(from: 1, through: count, by: 1) {
            state[n] = "t\(n)|c\(n % 3)|0.0"
            if state[n - 1] != nil { state[n - 1] = "t\(n - 1)|moved|\(Double(n))" }
            state[n - 4] = nil
        }
        return state
    }

    static func state(_ db: Database) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, "\($0.name)|\($0.city)|\($0.score)") })
    }
}

@Suite("Crash safety", .serialized)
struct CrashTests {
    /// Kill points per run (TROVE_CRASH_POINTS overrides; 200 take a few seconds).
    static let points = Int(ProcessInfo.processInfo.environment["TROVE_CRASH_POINTS"] ?? "") ?? 200

    @Test("a process killed at random points, inside and between transactions, loses exactly the uncommitted work")
    func killedAtRandomPoints() async throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<CrashTests.points {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-crash-tests")
                .appendingPathComponent("crash-\(getpid())-\(round).trove")
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.removeItem(atPath: url.path + "-lock")
            // Five points per transaction; die somewhere in the first 12 transactions.
            let killAt = Int.random(in: 1...60, using: &generator)
            setenv("TROVE_CRASH_FILE", url.path, 1)
            setenv("TROVE_CRASH_AT", String(killAt), 1)
            await #expect(processExitsWith: .signal(SIGKILL)) {
                let path = String(cString: getenv("TROVE_CRASH_FILE"))
                let killAt = Int(String(cString: getenv("TROVE_CRASH_AT")))!
                let journal = path + ".journal"
                let db = try! Database(fileURL: URL(fileURLWithPath: path))
                var points = 0
                for n in 1... {
                    try! CrashWorkload.apply(n, in: db) {
                        points += 1
                        if points == killAt { kill(getpid(), SIGKILL) }
                    }
                    // Record the commit durably, after it happened.
                    let handle =
                        FileHandle(forWritingAtPath: journal)
                        ?? {
                            _ = FileManager.default.createFile(atPath: journal, contents: nil)
                            return FileHandle(forWritingAtPath: journal)!
                        }()
                    handle.seekToEndOfFile()
                    handle.write(Data("\(n)\n".utf8))
                    try! handle.synchronize()
                    try! handle.close()
                }
            }
            let journaled =
                (try? String(contentsOfFile: url.path + ".journal", encoding: .utf8))?
                .split(separator: "\n").compactMap { Int($0) }.max() ?? 0
            let db = try Database(fileURL: url)
            let state = CrashWorkload.state(db)
            let committed = state.keys.max() ?? 0
            // Everything journaled is there; at most the one transaction whose journal line was not written yet is more.
            #expect(
                committed == journaled || committed == journaled + 1,
                "round \(round): killed at \(killAt), \(committed) committed, \(journaled) journaled")
            #expect(
                state == CrashWorkload.expected(count: committed), "round \(round): state after \(committed) transactions differs"
            )
            expectValid(db)
            // The dead process's writer lock and reader slot do not block a new writer.
            try CrashWorkload.apply(committed + 1, in: db) {}
            #expect(CrashWorkload.state(db) == CrashWorkload.expected(count: committed + 1))
        }
    }
}
