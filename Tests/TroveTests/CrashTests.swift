import Foundation
import Testing

@testable import Trove

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Crash safety", .serialized)
struct CrashTests {
    /// Kill points per run (TROVE_CRASH_POINTS overrides; 200 take a few seconds).
    static let points = Int(ProcessInfo.processInfo.environment["TROVE_CRASH_POINTS"] ?? "") ?? 200

    @Test("a process killed at random points, inside and between transactions, loses exactly the uncommitted work")
    func killedAtRandomPoints() async throws {
        var generator = SystemRandomNumberGenerator()
        var killedInsideWrite = 0
        defer {
            print(
                "crash tests: \(CrashTests.points) kill points, \(killedInsideWrite) inside a write transaction (writer lock held)"
            )
        }
        for round in 0..<CrashTests.points {
            let url = CrashTests.freshFile("crash", round)
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
                CrashWorkload.runForever(db, journal: journal) {
                    points += 1
                    if points == killAt { kill(getpid(), SIGKILL) }
                }
            }
            try checkSurvivor(url, "round \(round), killed at point \(killAt)")
            if killAt % 5 != 0 { killedInsideWrite += 1 }
        }
    }

    @Test("a process killed by a timer at an arbitrary instruction (mid-commit, mid-sync) loses exactly the uncommitted work")
    func killedByATimer() async throws {
        var generator = SystemRandomNumberGenerator()
        let rounds = CrashTests.points / 2
        var commits: [Int] = []
        defer {
            print(
                "crash tests: \(rounds) timer kills at 0.5-40 ms, after \(commits.min() ?? 0)-\(commits.max() ?? 0) commits (\(commits.reduce(0, +)) in all)"
            )
        }
        for round in 0..<rounds {
            let url = CrashTests.freshFile("timer", round)
            let delay = Int.random(in: 500...40_000, using: &generator)
            setenv("TROVE_CRASH_FILE", url.path, 1)
            setenv("TROVE_CRASH_DELAY_US", String(delay), 1)
            await #expect(processExitsWith: .signal(SIGKILL)) {
                let path = String(cString: getenv("TROVE_CRASH_FILE"))
                let delay = UInt32(String(cString: getenv("TROVE_CRASH_DELAY_US")))!
                let db = try! Database(fileURL: URL(fileURLWithPath: path))
                Thread.detachNewThread {
                    usleep(delay)
                    kill(getpid(), SIGKILL)
                }
                CrashWorkload.runForever(db, journal: path + ".journal") {}
            }
            commits.append(try checkSurvivor(url, "timer round \(round), killed after \(delay) µs"))
        }
    }

    static func freshFile(_ prefix: String, _ round: Int) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-crash-tests")
            .appendingPathComponent("\(prefix)-\(getpid())-\(round).trove")
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        for path in [url.path, url.path + "-lock", url.path + ".journal"] { try? FileManager.default.removeItem(atPath: path) }
        return url
    }

    /// Reopens a killed process's file: exactly the journaled commits (or one
    /// more, committed but not journaled yet), a valid file, and a writer
    /// that is not blocked by the dead process's lock or reader slot.
    @discardableResult
    private func checkSurvivor(_ url: URL, _ context: String) throws -> Int {
        let journaled =
            (try? String(contentsOfFile: url.path + ".journal", encoding: .utf8))?
            .split(separator: "\n").compactMap { Int($0) }.max() ?? 0
        let db = try Database(fileURL: url)
        let state = CrashWorkload.state(db)
        let committed = state.keys.max() ?? 0
        #expect(
            committed == journaled || committed == journaled + 1,
            "\(context): \(committed) committed, \(journaled) journaled")
        #expect(state == CrashWorkload.expected(count: committed), "\(context): state after \(committed) transactions differs")
        expectValid(db)
        try CrashWorkload.apply(committed + 1, in: db) {}
        #expect(CrashWorkload.state(db) == CrashWorkload.expected(count: committed + 1))
        return committed
    }
}
