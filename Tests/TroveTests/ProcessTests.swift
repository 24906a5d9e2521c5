import Foundation
import Testing
import TroveStorage
import TroveTestSupport

@testable import Trove

#if canImport(Glibc)
    import Glibc
#endif

/// A path both a test and its child process can name (exit tests run in a
/// separate process and capture nothing).
private func sharedPath(_ name: String) -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-process-tests")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name)
}

private func removeDatabase(_ url: URL) {
    try? FileManager.default.removeItem(at: url)
    try? FileManager.default.removeItem(atPath: url.path + "-lock")
}

@Suite("Across processes", .serialized)
struct ProcessTests {
    @Test("what one process commits, another process reads after reopening")
    func persistenceAcrossProcesses() async throws {
        let url = sharedPath("persist-\(getpid()).trove")
        removeDatabase(url)
        setenv("TROVE_TEST_FILE", url.path, 1)
        await #expect(processExitsWith: .success) {
            let path = String(cString: getenv("TROVE_TEST_FILE"))
            let db = try! Database(fileURL: URL(fileURLWithPath: path))
            try! db.write {
                for id in 1...100 {
                    let person = Person()
                    person.id = id
                    person.name = "child \(id)"
                    person.age = id
                    try db.add(person)
                }
                try db.add(Contact(firstName: "From", lastName: "Child", age: 9))
            }
            exit(0)
        }
        let db = try Database(fileURL: url)
        #expect(db.objects(Person.self).count == 100)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 42)?.name == "child 42")
        #expect(try db.objects(Person.self).filter("age > 90").count == 10)
        #expect(db.values(Contact.self).first?.lastName == "Child")
    }

    @Test("a process killed in the middle of a write leaves exactly the committed state, and writers are not blocked")
    func killedMidWrite() async throws {
        let url = sharedPath("killed-\(getpid()).trove")
        removeDatabase(url)
        setenv("TROVE_TEST_FILE", url.path, 1)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            let path = String(cString: getenv("TROVE_TEST_FILE"))
            let db = try! Database(fileURL: URL(fileURLWithPath: path))
            try! db.write {
                for _ in 1...50 { try db.add(Dog()) }
            }
            try! db.beginWrite()
            for _ in 1...50 { try! db.add(Dog()) }
            kill(getpid(), SIGKILL)
        }
        let db = try Database(fileURL: url)
        #expect(db.objects(Dog.self).count == 50)
        try db.write { try db.add(Dog()) }  // the dead writer's lock was released
        #expect(db.objects(Dog.self).count == 51)
    }
}

/// Waits (polling) until `path` exists; false after `seconds`.
/// Waits without holding a thread: the child of an exit test is started by
/// a task, and a blocking wait on one of the few cooperative threads (two on
/// a 2-core machine) can keep that task, and every other test, from running
/// until the wait gives up.
private func waitForFile(_ path: String, seconds: Double = 30) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !FileManager.default.fileExists(atPath: path) {
        if Date() > deadline { return false }
        try? await Task.sleep(nanoseconds: 2_000_000)
    }
    return true
}

@Suite("Readers of dead processes", .serialized)
struct DeadReaderTests {
    @Test("a reader killed while holding a snapshot does not make a long-open writer's file grow without end")
    func deadReaderIsClearedByTheWriter() async throws {
        let url = sharedPath("dead-reader-\(getpid()).trove")
        removeDatabase(url)
        var configuration = Configuration(fileURL: url)
        configuration.durability = .none  // 3,000 commits; durability is not what is tested
        let writer = try Database(configuration: configuration)
        let dog = Dog()
        try writer.write { try writer.add(dog) }
        setenv("TROVE_TEST_DEAD_READER_FILE", url.path, 1)
        await #expect(processExitsWith: .signal(SIGKILL)) {
            let path = String(cString: getenv("TROVE_TEST_DEAD_READER_FILE"))
            let reader = try! Database(fileURL: URL(fileURLWithPath: path))
            _ = reader.objects(Dog.self).count  // holds a snapshot (a reader slot)
            kill(getpid(), SIGKILL)
        }
        // The writer opened before the reader died: nothing cleared its slot on open.
        for round in 0..<3_000 {
            try writer.write { dog.name = String(repeating: Character(UnicodeScalar(65 + round % 26)!), count: 2_048) }
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(size < 4 << 20, "the file grew to \(size) bytes")
        #expect(writer.readers.allSatisfy { $0.processID == getpid() })
    }
}

@Suite("Compaction beside other processes", .serialized)
struct CompactionAcrossProcessesTests {
    @Test("a process the app started while the file was open does not keep it open: compaction goes ahead once the app closes it")
    func aStartedProcessDoesNotHoldTheFile() throws {
        let url = sharedPath("compact-spawned-\(getpid()).trove")
        removeDatabase(url)
        var child: pid_t = 0
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.add(Dog()) }
            // Started while the file is open, with posix_spawn as it is (Foundation's Process closes
            // every descriptor in the child; a plain spawn keeps each one not marked close-on-exec).
            let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("3"), nil]
            defer { arguments.forEach { free($0) } }
            #expect(posix_spawn(&child, "/bin/sleep", nil, nil, arguments, environ) == 0)
        }
        defer {
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        #expect(kill(child, 0) == 0)  // still running
        // (Another test's process may be between its fork and its exec for a moment, holding every
        // descriptor: compaction is tried for up to a second, well within the child's three.)
        var outcome = (bytesBefore: 0, bytesAfter: 0)
        for attempt in 1...20 {
            do {
                outcome = try Database.compact(configuration: Configuration(fileURL: url))
                break
            } catch let error as TroveError where error.kind == .fileInUse && attempt < 20 {
                usleep(50_000)
            }
        }
        #expect(outcome.bytesAfter > 0)
        #expect(try Database(fileURL: url).objects(Dog.self).count == 1)
    }

    @Test(
        "compaction refuses, and launch compaction skips, while another process commits; no commit is lost, even when a cleanup script deleted the lock file",
        arguments: [false, true])
    func compactionWhileAnotherProcessCommits(deletingTheLockFile: Bool) async throws {
        let url = sharedPath("compact-busy-\(getpid())-\(deletingTheLockFile).trove")
        removeDatabase(url)
        for marker in [".started", ".stop", ".count"] { try? FileManager.default.removeItem(atPath: url.path + marker) }
        do {
            // Free pages to compact away, so a wrongful compaction would be visible.
            let db = try Database(fileURL: url)
            try db.write { for _ in 1...2_000 { try db.add(Dog()) } }
            try db.write { try db.delete(db.objects(Dog.self)) }
        }
        setenv("TROVE_TEST_COMPACT_BUSY_FILE", url.path, 1)
        // The child commits until the parent has tried everything, then says how often it committed.
        async let child = #expect(processExitsWith: .success) {
            let path = String(cString: getenv("TROVE_TEST_COMPACT_BUSY_FILE"))
            let db = try! Database(fileURL: URL(fileURLWithPath: path))
            var commits = 0
            // Until the parent says stop; the deadline only ends a child whose
            // parent died. (At 120 s, a parent starved by the suite's other tests
            // on two cores resumed after the child had gone, and its compactions
            // then rightly went ahead.)
            let deadline = Date().addingTimeInterval(900)
            while !FileManager.default.fileExists(atPath: path + ".stop"), Date() < deadline {
                commits += 1
                try! db.write {
                    let dog = Dog()
                    dog.age = commits
                    try db.add(dog)
                }
                if commits == 1 { _ = FileManager.default.createFile(atPath: path + ".started", contents: nil) }
                usleep(5_000)
            }
            _ = FileManager.default.createFile(atPath: path + ".count", contents: Data("\(commits)".utf8))
            exit(0)
        }
        #expect(await waitForFile(url.path + ".started", seconds: 120))
        var refusals = 0
        var launches = 0
        for attempt in 0..<12 {
            // The writer keeps the deleted lock file's inode; a new one is made for the compaction.
            if deletingTheLockFile { unlink(url.path + "-lock") }
            if attempt % 2 == 0 {
                do {
                    try Database.compact(configuration: Configuration(fileURL: url))
                    Issue.record("compaction replaced a file another process had open")
                } catch let error as TroveError {
                    #expect(error.kind == .fileInUse)
                    #expect(error.message.contains("has it open"), "\(error.message)")
                    refusals += 1
                }
            } else {
                var configuration = Configuration(fileURL: url)
                configuration.shouldCompactOnLaunch = { _, _ in true }
                _ = try Database(configuration: configuration)  // opens as it is
                launches += 1
            }
            usleep(20_000)
        }
        _ = FileManager.default.createFile(atPath: url.path + ".stop", contents: nil)
        _ = await child
        let commits = try #require(
            Int(String(decoding: try Data(contentsOf: URL(fileURLWithPath: url.path + ".count")), as: UTF8.self)))
        #expect(refusals == 6 && launches == 6)
        #expect(commits > 1)
        #expect(try Database(fileURL: url).objects(Dog.self).count == commits)
        let (before, after) = try Database.compact(configuration: Configuration(fileURL: url))  // alone now
        #expect(after < before)
        let db = try Database(fileURL: url)
        #expect(db.objects(Dog.self).count == commits)
        #expect(db.objects(Dog.self).sum(of: \.age) == (1...commits).reduce(0, +))
        expectValid(db)
    }

    @Test(
        "a killed compaction's or copy's leftover file is removed when the file is next opened for writing, and a copy in progress is kept"
    )
    func abandonedCopiesAreRemovedOnOpen() throws {
        let url = sharedPath("leftovers-\(getpid()).trove")
        removeDatabase(url)
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.add(Dog()) }
        }
        // What a kill mid-compaction and mid-writeCopy leave: big files and their lock files.
        for leftover in [".compacting", ".partial"] {
            _ = FileManager.default.createFile(atPath: url.path + leftover, contents: Data(count: 1 << 20))
            _ = FileManager.default.createFile(atPath: url.path + leftover + "-lock", contents: Data(count: 8192))
        }
        // A copy another process is still writing holds a shared lock on it: it stays.
        let busy = open(url.path + ".partial", O_RDONLY)
        #expect(flock(busy, LOCK_SH) == 0)
        do {
            var readOnly = Configuration(fileURL: url)
            readOnly.readOnly = true
            _ = try Database(configuration: readOnly)  // reading only changes nothing
            #expect(FileManager.default.fileExists(atPath: url.path + ".compacting"))
            _ = try Database(fileURL: url)
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + ".compacting"))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".compacting-lock"))
        #expect(FileManager.default.fileExists(atPath: url.path + ".partial"))
        close(busy)
        #expect(try Database(fileURL: url).objects(Dog.self).count == 1)  // the handle above closed; this opens anew
        #expect(!FileManager.default.fileExists(atPath: url.path + ".partial"))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".partial-lock"))
    }

    @Test(
        "a lock file left describing a replaced file (a compaction killed after its rename) is set up anew, or refused with a message while others hold it"
    )
    func aLockFileOfAReplacedFileIsNotTrusted() async throws {
        let url = sharedPath("stale-lock-\(getpid()).trove")
        removeDatabase(url)
        let copy = URL(fileURLWithPath: url.path + ".copy")
        try? FileManager.default.removeItem(at: copy)
        for marker in [".held", ".release"] { try? FileManager.default.removeItem(atPath: url.path + marker) }
        do {
            let db = try Database(fileURL: url)
            for age in 1...40 {
                try db.write {
                    let dog = Dog()
                    dog.age = age
                    try db.add(dog)
                }
            }
            try db.writeCopy(to: copy)  // its transaction ids start again
        }
        // What a compaction killed between its rename and the lock file's reset leaves: the
        // compacted file in place, the old file's lock file beside it, another process sharing it.
        #expect(rename(copy.path, url.path) == 0)
        setenv("TROVE_TEST_STALE_LOCK_FILE", url.path, 1)
        async let child = #expect(processExitsWith: .success) {
            let path = String(cString: getenv("TROVE_TEST_STALE_LOCK_FILE"))
            let descriptor = open(path + "-lock", O_RDWR)
            var lock = flock()
            lock.l_type = Int16(F_RDLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 1
            guard descriptor >= 0, fcntl(descriptor, F_SETLK, &lock) == 0 else { exit(3) }
            _ = FileManager.default.createFile(atPath: path + ".held", contents: nil)
            let deadline = Date().addingTimeInterval(60)
            while !FileManager.default.fileExists(atPath: path + ".release"), Date() < deadline { usleep(1_000) }
            exit(0)
        }
        #expect(await waitForFile(url.path + ".held", seconds: 60))
        let refused = expectTroveError(.fileInUse) { try Database(fileURL: url) }
        #expect(refused?.message.contains("describes an earlier file") == true, "\(refused?.message ?? "")")
        _ = FileManager.default.createFile(atPath: url.path + ".release", contents: nil)
        _ = await child
        let db = try Database(fileURL: url)
        #expect(db.objects(Dog.self).count == 40)
        try db.write { try db.add(Dog()) }
        #expect(db.objects(Dog.self).count == 41)
        expectValid(db)
    }

    @Test("a process that opens the file during compaction waits for it, then commits to the compacted file")
    func openingDuringCompactionWaits() async throws {
        for readOnlyFirst in [false, true] {
            let url = sharedPath("compact-wait-\(getpid())-\(readOnlyFirst).trove")
            removeDatabase(url)
            let go = url.path + ".go"
            try? FileManager.default.removeItem(atPath: go)
            do {
                let db = try Database(fileURL: url)
                try db.write {
                    for age in 1...2_000 {
                        try db.add(
                            {
                                let dog = Dog(); dog.age = age; return dog
                            }())
                    }
                }
                try db.write { try db.delete(db.objects(Dog.self).filter("age > 10")) }
            }
            setenv("TROVE_TEST_COMPACT_WAIT_FILE", url.path, 1)
            setenv("TROVE_TEST_READ_FIRST", readOnlyFirst ? "1" : "0", 1)
            async let child = #expect(processExitsWith: .success) {
                let path = String(cString: getenv("TROVE_TEST_COMPACT_WAIT_FILE"))
                while !FileManager.default.fileExists(atPath: path + ".go") { usleep(1_000) }
                if String(cString: getenv("TROVE_TEST_READ_FIRST")) == "1" {
                    var configuration = Configuration(fileURL: URL(fileURLWithPath: path))
                    configuration.readOnly = true
                    let reader = try! Database(configuration: configuration)
                    guard reader.objects(Dog.self).count == 10 else { exit(3) }
                }
                let db = try! Database(fileURL: URL(fileURLWithPath: path))
                guard db.objects(Dog.self).count == 10 else { exit(4) }
                try! db.write {
                    try db.add(
                        {
                            let dog = Dog(); dog.name = "after"; return dog
                        }())
                }
                exit(0)
            }
            // The child goes on even when compaction fails before deciding (so the test fails instead of waiting).
            defer { _ = FileManager.default.createFile(atPath: go, contents: nil) }
            let outcome = try Environment.compact(
                path: url.path, options: Configuration(fileURL: url).environmentOptions,
                decide: { _ in
                    _ = FileManager.default.createFile(atPath: go, contents: nil)
                    usleep(300_000)  // the child reaches its open and waits on the lock file
                    return true
                }, copy: Database.copyTables)
            guard case .compacted(let before, let after) = outcome else {
                Issue.record("not compacted: \(outcome)")
                return
            }
            #expect(after < before)
            _ = await child
            let db = try Database(fileURL: url)
            #expect(db.objects(Dog.self).count == 11)
            #expect(try db.objects(Dog.self).filter("name == 'after'").count == 1)
            expectValid(db)
        }
    }
}

@Suite("Examples", .serialized)
struct ExampleTests {
    /// The built example executable, beside the test bundle in `.build/<config>/`.
    private func executable(_ name: String) throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/\(name)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        Issue.record("\(name) is not built; run `swift build` (make test does) before the tests")
        throw CancellationError()
    }

    private func run(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let finished = try ChildProcess.run(try executable(name).path, arguments, mergingErrors: true)
        return (finished.status, finished.out)
    }

    @Test("the photo diary saves, fetches, updates, deletes and finds its data after a reopen, twice in a row")
    func photoDiary() throws {
        let file = makeTemporaryDirectory().appendingPathComponent("photos.trove").path
        let first = try run("PhotoDiary", [file])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("reopened the file: 2 photo(s) (expected 2)"))
        #expect(first.output.contains("the edit survived: edited: rain in the afternoon"))
        #expect(first.output.contains("view model: 2 item(s) after 5 change sets, always equal to a fresh query"))
        let second = try run("PhotoDiary", [file])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("found 2 photo(s) from earlier runs"))
        #expect(second.output.contains("reopened the file: 4 photo(s) (expected 4)"))
        #expect(second.output.contains("view model: 4 item(s) after 4 change sets, always equal to a fresh query"))
    }

    @Test("the inventory stores Codable persons with auto-increment ids")
    func inventory() throws {
        let file = makeTemporaryDirectory().appendingPathComponent("inventory.trove").path
        let result = try run("Inventory", [file])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("added #1: 트랜잭션 테스트, age 22"))
        #expect(result.output.contains("added #3: Alan Turing, age unknown"))
        #expect(result.output.contains("next free id by max(of: \\.id) + 1: 4"))
        #expect(result.output.contains("adults, oldest first: Ada (36), 트랜잭션 (22)"))
        #expect(result.output.contains("updated Ada: age 37"))
        #expect(result.output.contains("deleted #3; 2 person(s) stored in total"))
    }

    @Test("the chat sends messages into rooms, blocks, and deletes a room with its messages and photos, twice in a row")
    func chat() throws {
        let file = makeTemporaryDirectory().appendingPathComponent("chat.trove").path
        let first = try run("Chat", [file])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("room-bo holds 4 message(s), tags [\"friends\"]"))
        #expect(first.output.contains("last 3 in room-bo: Bo: cute [read] | me: look [sending] | Bo: hey! [read]"))
        #expect(first.output.contains("Cy has 0 room(s), messages from Cy: 0, photos 2 -> 1"))
        #expect(first.output.contains("integrity: no problems"))
        let second = try run("Chat", [file])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("found 4 message(s) from earlier runs"))
        #expect(second.output.contains("reopened the file: 8 message(s) (expected 8)"))
    }
}
