import Foundation
import Testing
import TroveTestSupport

@testable import Trove

#if canImport(Glibc)
    import Glibc
#endif

/// Transaction `n` of the power-loss workload, sized to touch many pages:
/// it adds 3 people (60 every fourth transaction, some with 3,000-byte names
/// that live on overflow pages), changes the score and city (indexed) of the
/// people transaction `n - 1` added, and deletes those of `n - 3`.
private enum PowerWorkload {
    static let baseCount = 2_000

    static func ids(_ n: Int) -> Range<Int> { n * 100..<(n * 100 + (n % 4 == 0 ? 60 : 3)) }
    static func name(_ id: Int) -> String { id % 7 == 0 ? String(repeating: "\(id % 10)", count: 3_000) : "p\(id)" }

    /// The people every file starts with (ids from 1,000,000), before transaction 1.
    static func seed(_ db: Database) throws {
        try db.write {
            for i in 0..<baseCount {
                let person = Person()
                person.id = 1_000_000 + i
                person.name = "base\(i)"
                person.city = "c\(i % 5)"
                try db.add(person)
            }
        }
    }

    static func apply(_ n: Int, in db: Database) throws {
        try db.write {
            for id in ids(n) {
                let person = Person()
                person.id = id
                person.name = name(id)
                person.city = "c\(id % 3)"
                try db.add(person)
            }
            for id in ids(n - 1) {
                guard let person = db.object(ofType: Person.self, forPrimaryKey: id) else { continue }
                person.score = Double(n)
                person.city = "moved\(n)"
            }
            for id in ids(n - 3) {
                if let person = db.object(ofType: Person.self, forPrimaryKey: id) { try db.delete(person) }
            }
        }
    }

    /// The file's state after transactions 1...count, as "name|city|score" by id.
    static func expected(count: Int, seeded: Bool) -> [Int: String] {
        var state: [Int: String] = [:]
        if seeded {
            for i in 0..<baseCount { state[1_000_000 + i] = "base\(i)|c\(i % 5)|0.0" }
        }
        guard count > 0 else { return state }
        for n in 1...count {
            for id in ids(n) { state[id] = "\(name(id))|c\(id % 3)|0.0" }
            for id in ids(n - 1) where state[id] != nil { state[id] = "\(name(id))|moved\(n)|\(Double(n))" }
            for id in ids(n - 3) { state[id] = nil }
        }
        return state
    }

    static func state(_ db: Database) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, "\($0.name)|\($0.city)|\($0.score)") })
    }
}

/// The disk under one database file, rebuilt from the journal of the power-cut
/// shim (`Tests/PowerCut/powercut.c`): 512-byte sectors whose content is
/// durable, and for each sector the versions written since it last was.
private struct SimulatedDisk {
    static let sector = 512

    /// What reaches the disk of the writes that were not durable at the cut.
    enum Fate: CaseIterable {
        /// None of them (the page cache was lost whole).
        case allLost
        /// All of them, in their last version.
        case allWritten
        /// Each sector independently: its durable content, its last version or
        /// any version in between (torn writes and writes reordered).
        case anySectorAnyVersion
    }

    private var durable: [Int: [UInt8]] = [:]
    private var pending: [Int: [[UInt8]]] = [:]
    private(set) var writes = 0, syncs = 0, durableWrites = 0, inFlight = 0

    init(baseline: [UInt8]) {
        var offset = 0
        while offset < baseline.count {
            let end = min(offset + Self.sector, baseline.count)
            durable[offset / Self.sector] = Self.padded(baseline[offset..<end])
            offset = end
        }
    }

    private static func padded(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        Array(bytes) + [UInt8](repeating: 0, count: sector - bytes.count)
    }

    private func latest(_ sector: Int) -> [UInt8] {
        pending[sector]?.last ?? durable[sector] ?? [UInt8](repeating: 0, count: Self.sector)
    }

    /// Replays the shim's journal.
    mutating func replay(_ journal: [UInt8]) throws {
        var at = 0
        func integer() -> Int {
            let value = journal[at..<at + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            at += 8
            return value
        }
        while at < journal.count {
            let kind = journal[at]
            at += 1
            switch kind {
            case UInt8(ascii: "W"):
                let flags = journal[at]
                at += 1
                let offset = integer(), length = integer()
                let bytes = journal[at..<at + length]
                at += length
                write(bytes, at: offset, durable: flags & 1 != 0 && flags & 2 == 0)
                if flags & 2 != 0 { inFlight += 1 }
            case UInt8(ascii: "B"):
                let length = integer()
                self = SimulatedDisk(baseline: Array(journal[at..<at + length]))
                at += length
            case UInt8(ascii: "S"):
                syncs += 1
                for (sector, versions) in pending { durable[sector] = versions.last }
                pending = [:]
            default:
                throw TroveError(.corruptFile, "power-cut journal: record kind \(kind) at byte \(at - 1)")
            }
        }
    }

    private mutating func write(_ bytes: ArraySlice<UInt8>, at offset: Int, durable isDurable: Bool) {
        writes += 1
        if isDurable { durableWrites += 1 }
        var position = offset
        var source = bytes.startIndex
        while source < bytes.endIndex {
            let sector = position / Self.sector, inSector = position % Self.sector
            let count = min(Self.sector - inSector, bytes.endIndex - source)
            var content = latest(sector)
            content.replaceSubrange(inSector..<inSector + count, with: bytes[source..<source + count])
            if isDurable {
                // The page cache held this sector's latest content, and it went to disk whole.
                durable[sector] = content
                pending[sector] = nil
            } else {
                pending[sector, default: []].append(content)
            }
            position += count
            source += count
        }
    }

    /// The file as the disk holds it after the cut.
    func image(_ fate: Fate, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        var sectors = durable
        for (sector, versions) in pending {
            switch fate {
            case .allLost: break
            case .allWritten: sectors[sector] = versions.last
            case .anySectorAnyVersion:
                let choice = Int.random(in: -1..<versions.count, using: &generator)
                if choice >= 0 { sectors[sector] = versions[choice] }
            }
        }
        guard let last = sectors.keys.max() else { return [] }
        var bytes = [UInt8](repeating: 0, count: (last + 1) * Self.sector)
        for (sector, content) in sectors {
            bytes.replaceSubrange(sector * Self.sector..<(sector + 1) * Self.sector, with: content)
        }
        return bytes
    }
}

/// Power loss, which kill -9 does not test (the OS page cache survives a
/// killed process): a child writer runs with `Tests/PowerCut/powercut.c`
/// preloaded, which journals every write and sync of the database file and
/// kills the child at a random one; the disk is rebuilt from the journal with
/// the writes that were not durable lost, written, torn or reordered, and the
/// rebuilt file must hold exactly a committed state and pass `verify()`.
@Suite(
    "Power loss", .serialized,
    // A preloaded library that is not sanitized stops a sanitized child (make test-sanitize) before it starts.
    .enabled(
        if: ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil
            && ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil))
struct PowerLossTests {
    /// Cuts per durability (TROVE_POWER_CUTS overrides).
    static let cuts = Int(ProcessInfo.processInfo.environment["TROVE_POWER_CUTS"] ?? "") ?? 200

    @Test("a power cut with full durability keeps every commit that returned, and the file verifies")
    func fullDurability() async throws {
        try await cutPower(durability: .full, rounds: Self.cuts)
    }

    @Test("a power cut with relaxed durability keeps a prefix of the commits (at most the last one lost), never a damaged file")
    func relaxedDurability() async throws {
        try await cutPower(durability: .relaxed, rounds: max(Self.cuts / 2, 1))
    }

    private func cutPower(durability: Configuration.Durability, rounds: Int) async throws {
        let shim = try Self.buildShim()
        var generator = SystemRandomNumberGenerator()
        var lostLast = 0, keptInFlight = 0, inFlightWrites = 0, unsynced = 0, fromEmpty = 0
        var commits: [Int] = []
        for round in 0..<rounds {
            let url = CrashTests.freshFile("power", round)
            // One round in four starts with no file at all; the others with 2,000 people, synced.
            let seeded = round % 4 != 0
            if seeded {
                let db = try Database(configuration: Configuration(fileURL: url, durability: .full))
                try PowerWorkload.seed(db)
            } else {
                fromEmpty += 1
            }
            let baseline = FileManager.default.contents(atPath: url.path).map { [UInt8]($0) } ?? []
            let cutAt = Int.random(in: 1...(seeded ? 48 : 60), using: &generator)
            await Self.runWriter(on: url, durability: durability, cuttingAt: cutAt, shim: shim)

            var disk = SimulatedDisk(baseline: baseline)
            try disk.replay([UInt8](FileManager.default.contents(atPath: url.path + ".io") ?? Data()))
            inFlightWrites += disk.inFlight
            let fate = SimulatedDisk.Fate.allCases[round % 3]
            let image = disk.image(fate, using: &generator)
            if image != disk.image(.allLost, using: &generator) { unsynced += 1 }
            let returned =
                (try? String(contentsOfFile: url.path + ".journal", encoding: .utf8))?
                .split(separator: "\n").compactMap { Int($0) }.max() ?? 0
            let context =
                "\(durability) round \(round) (\(seeded ? "seeded" : "new file"), cut at I/O \(cutAt), \(fate)): \(returned) commits returned, \(disk.writes) writes, \(disk.syncs) syncs"

            let rebuilt = url.deletingLastPathComponent().appendingPathComponent("power-\(getpid())-\(round)-rebuilt.trove")
            for path in [rebuilt.path, rebuilt.path + "-lock"] { try? FileManager.default.removeItem(atPath: path) }
            if !image.isEmpty { try Data(image).write(to: rebuilt) }
            let db: Database
            do {
                // Every page is checked first: a damaged file is an error here, not an LMDB assertion later.
                var configuration = Configuration(fileURL: rebuilt, durability: durability)
                configuration.checksEveryPageOnOpen = true
                db = try Database(configuration: configuration)
            } catch {
                Issue.record("\(context): the rebuilt file does not open: \(error)")
                continue
            }
            let state = PowerWorkload.state(db)
            let lowest = durability == .full ? returned : max(returned - 1, 0)
            guard
                let committed = (lowest...returned + 1).first(where: {
                    PowerWorkload.expected(count: $0, seeded: seeded) == state
                })
            else {
                Issue.record(
                    "\(context): the file holds \(state.count) people, not the state after any of commits \(lowest)...\(returned + 1)"
                )
                continue
            }
            if committed < returned { lostLast += 1 }
            if committed > returned { keptInFlight += 1 }
            commits.append(committed)
            expectValid(db)
            try PowerWorkload.apply(committed + 1, in: db)
            #expect(PowerWorkload.state(db) == PowerWorkload.expected(count: committed + 1, seeded: seeded), "\(context)")
        }
        print(
            "power loss (\(durability)): \(rounds) cuts (\(fromEmpty) while creating the file), \(commits.reduce(0, +)) commits kept in all; \(unsynced) images differ from the synced state, \(inFlightWrites) writes cut in flight; the last returned commit lost \(lostLast) times, an unreturned commit kept \(keptInFlight) times"
        )
    }

    /// Runs the workload from transaction 1 in a child process with the shim
    /// preloaded, which kills it at I/O operation `cutAt` on the file; the
    /// shim's journal is `url.path + ".io"`, the commits that returned are
    /// listed in `url.path + ".journal"`. The round is described in the plan
    /// file; the environment is set once (see ``preparePlan()``).
    private static func runWriter(
        on url: URL, durability: Configuration.Durability, cuttingAt cutAt: Int, shim: String
    ) async {
        try? FileManager.default.removeItem(atPath: url.path + ".io")
        let plan = preparePlan(shim: shim)
        let text = "\(url.path)\n\(url.path).io\n\(cutAt)\n\(durability == .relaxed ? "relaxed" : "full")\n"
        #expect(FileManager.default.createFile(atPath: plan, contents: Data(text.utf8)))
        await #expect(processExitsWith: .signal(SIGKILL)) {
            let lines = try! String(contentsOfFile: String(cString: getenv("TROVE_POWERCUT_PLAN")), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            let path = lines[0]
            let db = try! Database(
                configuration: Configuration(
                    fileURL: URL(fileURLWithPath: path), durability: lines[3] == "relaxed" ? .relaxed : .full))
            _ = FileManager.default.createFile(atPath: path + ".journal", contents: nil)
            let handle = FileHandle(forWritingAtPath: path + ".journal")!
            for n in 1... {
                try! PowerWorkload.apply(n, in: db)
                handle.write(Data("\(n)\n".utf8))
                try! handle.synchronize()
            }
        }
    }

    nonisolated(unsafe) private static var planPath: String?

    /// Sets `LD_PRELOAD` and `TROVE_POWERCUT_PLAN` once for the rest of the
    /// test process: changing the environment while other tests' threads read
    /// it (to start their own child processes) crashes them. Every later child
    /// loads the shim; it only watches the file the plan names.
    private static func preparePlan(shim: String) -> String {
        if let planPath { return planPath }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trove-crash-tests")
            .appendingPathComponent("powercut-\(getpid()).plan").path
        setenv("TROVE_POWERCUT_PLAN", path, 1)
        setenv("LD_PRELOAD", shim, 1)
        planPath = path
        return path
    }

    @Test("a power cut at each of the first I/O operations of a new file leaves no file or a database that opens")
    func cutWhileCreating() async throws {
        let shim = try Self.buildShim()
        var generator = SystemRandomNumberGenerator()
        for cutAt in 1...8 {
            let url = CrashTests.freshFile("power-creation", cutAt)
            await Self.runWriter(on: url, durability: .full, cuttingAt: cutAt, shim: shim)
            var disk = SimulatedDisk(baseline: [])
            try disk.replay([UInt8](FileManager.default.contents(atPath: url.path + ".io") ?? Data()))
            for fate in SimulatedDisk.Fate.allCases {
                let rebuilt = CrashTests.freshFile("power-creation-rebuilt", cutAt)
                let image = disk.image(fate, using: &generator)
                if !image.isEmpty { try Data(image).write(to: rebuilt) }
                let db = try Database(fileURL: rebuilt)
                let state = PowerWorkload.state(db)
                #expect(
                    state == PowerWorkload.expected(count: 0, seeded: false)
                        || state == PowerWorkload.expected(count: 1, seeded: false), "cut at I/O \(cutAt), \(fate)")
                expectValid(db)
            }
        }
        let files = try FileManager.default.contentsOfDirectory(
            atPath: FileManager.default.temporaryDirectory.path + "/trove-crash-tests")
        #expect(
            files.filter { $0.contains(".creating-") && $0.contains("power-creation-rebuilt") }.isEmpty,
            "no file is left from creating a database")
    }

    @Test("creating a file removes what a process that died while creating it left beside it")
    func abandonedCreationIsRemoved() throws {
        let url = CrashTests.freshFile("power-abandoned", 0)
        let finished = try ChildProcess("/bin/true", [])
        finished.wait()
        let abandoned = url.path + ".creating-\(finished.pid)"
        #expect(FileManager.default.createFile(atPath: abandoned, contents: Data([1, 2, 3])))
        let living = url.path + ".creating-1"  // init never dies: what it is making stays
        #expect(FileManager.default.createFile(atPath: living, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: living) }
        _ = try Database(fileURL: url)
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: living))
    }

    @Test("a file with a commit and a damaged meta page is refused, never emptied")
    func damagedMetaPageAfterACommitIsNotRestarted() throws {
        let url = CrashTests.freshFile("power-damaged", 0)
        do {
            let db = try Database(fileURL: url)
            try PowerWorkload.apply(1, in: db)
        }
        var bytes = [UInt8](try Data(contentsOf: url))
        let size = bytes.count
        // Whichever meta page holds transaction 0 (LMDB's first) or the older one: empty it.
        bytes.replaceSubrange(0..<4096, with: [UInt8](repeating: 0, count: 4096))
        try Data(bytes).write(to: url)
        try? FileManager.default.removeItem(atPath: url.path + "-lock")
        #expect(throws: TroveError.self) { _ = try Database(fileURL: url) }
        #expect(try Data(contentsOf: url).count == size, "the file is left as it was")
    }

    /// Compiles the shim once per test process (with the C compiler beside the
    /// Swift toolchain's, or the system's `cc`).
    private static func buildShim() throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("PowerCut/powercut.c")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("trove-crash-tests")
            .appendingPathComponent("powercut-\(getpid()).so")
        if FileManager.default.fileExists(atPath: output.path) { return output.path }
        try FileManager.default.createDirectory(
            at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        var failures: [String] = []
        for compiler in ["/usr/bin/cc", "/usr/bin/clang", "/opt/swift/usr/bin/clang"]
        where FileManager.default.isExecutableFile(atPath: compiler) {
            let compiled = try ChildProcess.run(
                compiler, ["-shared", "-fPIC", "-O1", "-o", output.path, source.path, "-ldl", "-lpthread"],
                mergingErrors: true)
            if compiled.ending == .exited(0) { return output.path }
            failures.append("\(compiler) \(compiled.ending): \(compiled.out)")
        }
        throw TroveError(.fileAccess, "no C compiler built \(source.path): \(failures)")
    }
}
