import Foundation
import Testing

@testable import Trove

/// Another actor that is handed a main-actor handle.
actor HandleBorrower {
    func count(_ db: Database) -> Int { db.objects(Dog.self).count }
}

/// Swift 6 lets a fresh handle be sent to another actor (nothing else refers
/// to it yet, by what the compiler can see); the handle knows better.
@MainActor func sendAFreshHandleToAnotherActor(_ path: String) async {
    let db = try! Database(fileURL: URL(fileURLWithPath: path))
    _ = await HandleBorrower().count(db)
}

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("a handle opened on the main actor and sent to another actor traps there, saying what to do")
    func handleUsedInAnotherIsolation() async throws {
        let url = makeTemporaryDirectory().appendingPathComponent("sent.trove")
        setenv("TROVE_TEST_SENT_FILE", url.path, 1)
        // A trap (SIGILL), not a data race: the check stops the borrowed handle at its first use.
        await #expect(processExitsWith: .signal(SIGILL)) {
            await sendAFreshHandleToAnotherActor(String(cString: getenv("TROVE_TEST_SENT_FILE")))
        }
    }

    @Test("handles on several threads write and read one file while the map grows")
    func threadsWriteWhileTheMapGrows() async throws {
        let url = makeTemporaryDirectory().appendingPathComponent("threads.trove")
        var configuration = Configuration(fileURL: url)
        configuration.initialMapSize = 1 << 20
        configuration.reservesMap = false
        _ = try Database(configuration: configuration)
        let frozen = configuration
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let db = try Database(configuration: frozen)
                    var seen = 0
                    for round in 0..<150 {
                        try db.write {
                            let gadget = Gadget()
                            gadget.name = "w\(worker)-\(round)"
                            gadget.payload = Data(repeating: UInt8(worker), count: 4096)
                            try db.add(gadget)
                        }
                        seen = max(seen, db.objects(Gadget.self).count)
                    }
                    return seen
                }
            }
            for try await seen in group { #expect(seen >= 150) }
        }
        let db = try Database(configuration: configuration)
        #expect(db.objects(Gadget.self).count == 600)
        #expect(try db.objects(Gadget.self).filter("name BEGINSWITH 'w3-'").count == 150)
        expectValid(db)
    }

    @Test("two threads opening a new file at once both succeed")
    func concurrentCreation() async throws {
        for _ in 0..<10 {
            let url = makeTemporaryDirectory().appendingPathComponent("race.trove")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        let db = try Database(fileURL: url)
                        try db.write { try db.add(Dog()) }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try Database(fileURL: url).objects(Dog.self).count == 2)
        }
    }
}

@Suite("Opening while another handle writes")
struct OpenWhileWritingTests {
    @Test func aHandleOpensWithoutWaitingForAnotherHandlesWrite() throws {
        let db = try makeDatabase()
        try db.write { try db.add(TodoItem(value: ["id": 1])) }
        let configuration = db.configuration
        try db.beginWrite()
        defer { db.cancelWrite() }
        let opened = DispatchSemaphore(value: 0)
        Thread {
            let other = try? Database(configuration: configuration)
            if other?.objects(TodoItem.self).count == 1 { opened.signal() }
        }.start()
        // Before: the open took the writer lock to look for the (absent) key-check table.
        #expect(opened.wait(timeout: .now() + 30) == .success)
    }
}
