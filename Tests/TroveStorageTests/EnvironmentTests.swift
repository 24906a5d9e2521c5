import CLMDB
import Foundation
import Testing

@testable import TroveStorage

@Suite("Environment")
struct EnvironmentTests {
    /// A new file whose map starts at 1 MiB and grows (no reservation).
    private func growableEnvironment(_ name: String) throws -> Environment {
        var options = Environment.Options()
        options.initialMapSize = 1 << 20
        options.reservesMap = false
        return try Environment.open(
            path: makeTemporaryDirectory().appendingPathComponent("\(name).trove").path, options: options)
    }

    @Test("one environment per file, shared by every opener, whatever the path spelling")
    func registrySharesEnvironments() throws {
        let directory = makeTemporaryDirectory()
        let path = directory.appendingPathComponent("shared.trove").path
        let first = try Environment.open(path: path)
        let second = try Environment.open(path: directory.path + "/./shared.trove")
        #expect(first === second)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: directory)
        let third = try Environment.open(path: link.path + "/shared.trove")
        #expect(first === third)
        let other = try Environment.open(path: directory.appendingPathComponent("other.trove").path)
        #expect(other !== first)
    }

    #if os(Linux)
        @Test("the map's address is known, before and after the map grows, so reads are bounded by the file")
        func mapAddressIsKnown() throws {
            let environment = try growableEnvironment("bounds")
            for round in 0..<2 {
                let write = try WriteTransaction(environment: environment)
                let table = try #require(try write.openTable("values"))
                for key in 0..<(round == 0 ? 10 : 400) {
                    try pattern(4_000, seed: UInt8(key % 200)).withUnsafeBytes {
                        _ = try write.put(table, key: UInt64(key + round * 1_000), value: $0)
                    }
                }
                try write.commit()
                let read = try ReadTransaction(environment: environment)
                defer { read.end() }
                #expect(environment.mapStart != 0, "round \(round)")
                let start = try read.withValue(in: table, key: UInt64(round * 1_000)) { UInt(bitPattern: $0?.baseAddress) }
                #expect(start >= environment.mapStart && start < environment.mapStart + UInt(environment.usedSize))
            }
            #expect(environment.mapSize > 1 << 20)  // it grew: the address was looked up again
        }
    #endif

    @Test("a write much larger than the starting 1 MiB map grows the map and commits everything")
    func mapGrowsUnderALargeWrite() throws {
        let environment = try growableEnvironment("grow")
        #expect(environment.mapSize == 1 << 20)
        let write = try WriteTransaction(environment: environment)
        let table = try #require(try write.openTable("data"))
        let value = pattern(1000, seed: 7)
        for key in 0..<8_000 as Range<UInt64> {
            try value.withUnsafeBytes { _ = try write.put(table, key: key, value: $0) }
        }
        #expect(write.mapGrowths > 0)
        try write.commit()
        #expect(environment.mapSize > 8 << 20)

        let read = try ReadTransaction(environment: environment)
        #expect(try read.count(of: table) == 8_000)
        let stored = try read.withValue(in: table, key: 7_999) { $0.map { Array($0) } }
        #expect(stored == value)
    }

    @Test("values written where they are stored (reserved) survive the map growing under the write: the log replays them")
    func reservedValuesReplayWhenTheMapGrows() throws {
        let environment = try growableEnvironment("reserve")
        let write = try WriteTransaction(environment: environment)
        let table = try #require(try write.openTable("data"))
        for key in 0..<8_000 as Range<UInt64> {
            let value = pattern(Int(key % 1_500) + 1, seed: UInt8(key % 251))
            var bigEndian = key.bigEndian
            try withUnsafeBytes(of: &bigEndian) { k in
                if key % 2 == 0 {
                    try write.put(table, key: k, reserving: value.count) { target in
                        value.withUnsafeBytes { target.copyMemory(from: $0) }
                    }
                } else {
                    try value.withUnsafeBytes { _ = try write.put(table, key: k, value: $0) }
                }
            }
        }
        #expect(write.mapGrowths > 0)
        try write.commit()

        let read = try ReadTransaction(environment: environment)
        defer { read.end() }
        #expect(try read.count(of: table) == 8_000)
        for key in stride(from: 0, to: 8_000, by: 7) as StrideTo<UInt64> {
            let stored = try read.withValue(in: table, key: key) { $0.map { Array($0) } }
            #expect(stored == pattern(Int(key % 1_500) + 1, seed: UInt8(key % 251)), "key \(key)")
        }
    }

    @Test("the last commit can be read from another thread while writes grow (remap) the map")
    func lastCommitIsReadSafelyDuringMapGrowth() throws {
        let environment = try growableEnvironment("watch")
        let stop = Locked(false)
        let seen = Locked(0)
        let thread = Thread {
            // What the commit watcher does, without its sleep.
            while !stop.withLock({ $0 }) {
                let last = environment.lastCommittedTransaction
                seen.withLock { $0 = max($0, last) }
            }
        }
        thread.start()
        let value = pattern(4_000, seed: 9)
        for round in 0..<12 {
            let write = try WriteTransaction(environment: environment)
            let table = try #require(try write.openTable("data"))
            for key in 0..<(UInt64(round + 1) * 400) {
                try value.withUnsafeBytes { _ = try write.put(table, key: UInt64(round) << 32 | key, value: $0) }
            }
            try write.commit()
        }
        stop.withLock { $0 = true }
        while !thread.isFinished { usleep(1_000) }
        #expect(environment.mapSize >= 64 << 20)  // remapped at least six times
        #expect(seen.withLock { $0 } > 0)
    }

    @Test("a write whose replay log moved to its file replays from the file when the map fills")
    func aSpilledReplayLogReplays() throws {
        var options = Environment.Options()
        options.initialMapSize = 1 << 20
        options.reservesMap = false
        options.replayMemoryLimit = 100_000  // not a multiple of an entry: entries straddle the file's chunks
        let path = makeTemporaryDirectory().appendingPathComponent("spill.trove").path
        let environment = try Environment.open(path: path, options: options)
        let write = try WriteTransaction(environment: environment)
        let table = try #require(try write.openTable("data"))
        for key in 0..<12_000 as Range<UInt64> {
            try pattern(Int(key % 2_000) + 1, seed: UInt8(key % 251)).withUnsafeBytes {
                _ = try write.put(table, key: key, value: $0)
            }
            if key % 3 == 0 { try write.delete(table, key: key / 2) }
        }
        #expect(write.spilledBytes > 0)
        #expect(write.loggedBytes - write.spilledBytes < 100_000)
        #expect(write.mapGrowths > 0)
        try write.commit()

        let read = try ReadTransaction(environment: environment)
        var expected: [UInt64: [UInt8]] = [:]
        for key in 0..<12_000 as Range<UInt64> {
            expected[key] = pattern(Int(key % 2_000) + 1, seed: UInt8(key % 251))
            if key % 3 == 0 { expected[key / 2] = nil }
        }
        #expect(try read.count(of: table) == expected.count)
        for key in [0, 1, 2, 3, 4_999, 5_000, 6_001, 11_999] as [UInt64] {
            #expect(try read.withValue(in: table, key: key) { $0.map { Array($0) } } == expected[key])
        }
        // The spill file was unlinked when it was made: nothing is left beside the database.
        let directory = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.contains("replay") })
    }

    @Test("a rewrite through one cursor that fills the map grows it, replays and goes on where it stopped")
    func aRewriteThatFillsTheMapGoesOn() throws {
        let environment = try growableEnvironment("rewrite")
        let first = try WriteTransaction(environment: environment)
        let table = try #require(try first.openTable("data"))
        for key in stride(from: 0, to: 4_000, by: 2) as StrideTo<UInt64> {
            try pattern(100, seed: UInt8(key % 251)).withUnsafeBytes { _ = try first.put(table, key: key, value: $0) }
        }
        try first.commit()

        let write = try WriteTransaction(environment: environment)
        var runs: [UInt64: Int] = [:]
        // Odd keys are not stored; every tenth stored value is left as it is.
        try write.rewrite(table, keys: Array(0..<4_000)) { key, value in
            runs[key, default: 0] += 1
            #expect(key % 2 == 0 && value == pattern(100, seed: UInt8(key % 251)))
            guard key % 20 != 0 else { return false }
            value += pattern(1_000, seed: 7)  // larger: the map fills
            return true
        }
        #expect(write.mapGrowths > 0)
        #expect(runs.count == 2_000)
        #expect(runs.values.reduce(0, +) - runs.count == write.mapGrowths)  // the key whose write filled the map, again
        try write.commit()

        let read = try ReadTransaction(environment: environment)
        #expect(try read.count(of: table) == 2_000)
        for key in [0, 2, 20, 1_998, 2_000, 3_998] as [UInt64] {
            let expected = pattern(100, seed: UInt8(key % 251)) + (key % 20 == 0 ? [] : pattern(1_000, seed: 7))
            #expect(try read.withValue(in: table, key: key) { $0.map { Array($0) } } == expected)
        }
        #expect(try read.withValue(in: table, key: 1) { $0 } == nil)
        read.end()

        // Every entry, walked without a list of keys, grown again on the way.
        let again = try WriteTransaction(environment: environment)
        var seen: [UInt64: Int] = [:]
        try again.rewrite(table, keys: nil) { key, value in
            seen[key, default: 0] += 1
            value += pattern(3_000, seed: 9)
            return true
        }
        #expect(again.mapGrowths > 0)
        #expect(seen.keys.sorted() == Array(stride(from: 0, to: 4_000, by: 2)))
        #expect(seen.values.reduce(0, +) - seen.count == again.mapGrowths)
        try again.commit()
        let last = try ReadTransaction(environment: environment)
        #expect(try last.withValue(in: table, key: 3_998) { $0?.count } == 100 + 1_000 + 3_000)
        #expect(try last.withValue(in: table, key: 20) { $0?.count } == 100 + 3_000)
    }

    @Test("a run of entries deleted through one cursor goes whole, once, even when the map fills in the middle of it")
    func aRunOfDeletesGoesWhole() throws {
        var options = Environment.Options()
        options.initialMapSize = 4 << 20
        options.reservesMap = false  // a full map grows it
        let path = makeTemporaryDirectory().appendingPathComponent("run.trove").path
        let environment = try Environment.open(path: path, options: options)
        let first = try WriteTransaction(environment: environment)
        let table = try #require(try first.openTable("data"))
        for key in 0..<5_000 as Range<UInt64> {
            try pattern(40, seed: UInt8(key % 251)).withUnsafeBytes { _ = try first.put(table, key: key, value: $0) }
        }
        try first.commit()
        func bigEndian(_ key: UInt64) -> [UInt8] { withUnsafeBytes(of: key.bigEndian) { Array($0) } }
        func key(_ bytes: UnsafeRawBufferPointer) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) }

        for injected in [false, true] {
            let write = try WriteTransaction(environment: environment)
            var reported: [UInt64] = []
            write.changeHook = { _, bytes in if let bytes { reported.append(key(bytes)) } }
            // A put before the run: a map that fills during the run replays it.
            let low: UInt64 = injected ? 3_000 : 1_000
            try [UInt8]([1, 2, 3]).withUnsafeBytes { _ = try write.put(table, key: 10_000 + low, value: $0) }
            reported.removeAll()
            // The walk's 20th LMDB call fails as a full map would.
            if injected { FaultInjection.arm(failAt: 20, code: MDB_MAP_FULL) }
            let removed = try bigEndian(low).withUnsafeBytes { start in
                try write.deleteRun(table, from: start) { $0.count == 8 && key($0) < low + 1_500 }
            }
            if injected { #expect(FaultInjection.disarm().fired) }
            #expect(write.mapGrowths == (injected ? 1 : 0))
            #expect(removed == 1_500)
            #expect(reported == Array(low..<(low + 1_500)), "each key reported once, in order")
            try write.commit()
        }
        let read = try ReadTransaction(environment: environment)
        #expect(try read.count(of: table) == 5_000 - 3_000 + 2)
        for key in [0, 999, 2_500, 2_999, 4_500, 4_999] as [UInt64] {
            #expect(try read.withValue(in: table, key: key) { $0.map { Array($0) } } == pattern(40, seed: UInt8(key % 251)))
        }
        for key in [1_000, 1_777, 2_499, 3_000, 4_499] as [UInt64] {
            #expect(try read.withValue(in: table, key: key) { $0 } == nil)
        }
        #expect(try read.withValue(in: table, key: 13_000) { $0.map { Array($0) } } == [1, 2, 3])
    }

    #if (os(Linux) || os(macOS)) && (arch(x86_64) || arch(arm64))
        @Test("the map is reserved at its largest when the file opens: it never moves, and the file stays its own size")
        func reservedMapNeverMoves() throws {
            var options = Environment.Options()
            options.initialMapSize = 1 << 20  // ignored: the reservation replaces it
            let path = makeTemporaryDirectory().appendingPathComponent("reserved.trove").path
            let environment = try Environment.open(path: path, options: options)
            #expect(environment.mapIsFixed)
            #expect(environment.mapSize >= 8 << 30)
            let start = environment.mapStart
            let value = pattern(4_000, seed: 5)
            let write = try WriteTransaction(environment: environment)
            let table = try #require(try write.openTable("data"))
            for key in 0..<4_000 as Range<UInt64> {  // 16 MB: a 1 MiB map would have moved four times
                try value.withUnsafeBytes { _ = try write.put(table, key: key, value: $0) }
            }
            try write.commit()
            #expect(write.mapGrowths == 0)
            #expect(environment.mapStart == start)
            #expect(environment.mapSize >= 8 << 30)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(size < 64 << 20)  // the file holds its data, not the reservation
            let read = try ReadTransaction(environment: environment)
            #expect(try read.count(of: table) == 4_000)
            #expect(try read.withValue(in: table, key: 3_999) { $0.map(Array.init) } == value)
        }

        @Test("with a cap, the cap is the reservation: a write past it fails with fileSizeLimitReached and the map stays put")
        func capIsTheReservation() throws {
            var options = Environment.Options()
            options.maximumMapSize = 4 << 20
            let path = makeTemporaryDirectory().appendingPathComponent("capped.trove").path
            let environment = try Environment.open(path: path, options: options)
            #expect(environment.mapIsFixed)
            #expect(environment.mapSize == 4 << 20)
            let start = environment.mapStart
            let value = pattern(1000, seed: 3)
            let first = try WriteTransaction(environment: environment)
            let table = try #require(try first.openTable("data"))
            for key in 0..<100 as Range<UInt64> {
                try value.withUnsafeBytes { _ = try first.put(table, key: key, value: $0) }
            }
            try first.commit()
            let second = try WriteTransaction(environment: environment)
            #expect {
                for key in 1_000..<20_000 as Range<UInt64> {
                    try value.withUnsafeBytes { _ = try second.put(table, key: key, value: $0) }
                }
                try second.commit()
            } throws: { error in
                (error as? TroveError)?.kind == .fileSizeLimitReached
                    && (error as? TroveError)?.message.contains("maximum file size") == true
            }
            #expect(environment.mapStart == start)
            let read = try ReadTransaction(environment: environment)
            #expect(try read.count(of: table) == 100)
        }

        @Test("no reservation when the cap is smaller than the file; otherwise one that fits the file with room to grow")
        func reservationSizes() {
            #expect(Environment.reservation(fileSize: 8 << 20, cap: 4 << 20) == nil)
            #expect(Environment.reservation(fileSize: 1 << 20, cap: 4 << 20) == 4 << 20)
            let size = Environment.reservation(fileSize: 3 << 30, cap: nil)
            #expect(size.map { $0 >= 8 << 30 && $0 >= 2 * (3 << 30) } == true)  // room for the file to double, at least 8 GiB
        }
    #endif

    @Test("a cap on the file size stops a write with fileSizeLimitReached and keeps what was committed")
    func capStopsGrowthAndKeepsCommittedData() throws {
        var options = Environment.Options()
        options.initialMapSize = 1 << 20
        options.reservesMap = false
        options.maximumMapSize = 4 << 20
        let path = makeTemporaryDirectory().appendingPathComponent("cap.trove").path
        let environment = try Environment.open(path: path, options: options)
        let value = pattern(1000, seed: 3)

        let first = try WriteTransaction(environment: environment)
        let table = try #require(try first.openTable("data"))
        for key in 0..<100 as Range<UInt64> {
            try value.withUnsafeBytes { _ = try first.put(table, key: key, value: $0) }
        }
        try first.commit()

        let second = try WriteTransaction(environment: environment)
        var thrown: TroveError?
        do {
            for key in 1_000..<20_000 as Range<UInt64> {
                try value.withUnsafeBytes { _ = try second.put(table, key: key, value: $0) }
            }
            try second.commit()
        } catch let error as TroveError {
            thrown = error
        }
        #expect(thrown?.kind == .fileSizeLimitReached)
        #expect(thrown?.message.contains(path) == true)

        let read = try ReadTransaction(environment: environment)
        #expect(try read.count(of: table) == 100)
        // The environment is still usable for a write that fits.
        let third = try WriteTransaction(environment: environment)
        try value.withUnsafeBytes { _ = try third.put(table, key: 100, value: $0) }
        try third.commit()
        read.end()
        let check = try ReadTransaction(environment: environment)
        #expect(try check.count(of: table) == 101)
    }

    @Test(
        "a file's table slots grow with it: reopened, a file of 1,000 tables takes 3,000, each read back; past its slots the error says what uses tables"
    )
    func thousandsOfTables() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("tables.trove").path
        func addTables(_ numbers: Range<Int>, in environment: Environment) throws {
            let write = try WriteTransaction(environment: environment)
            for number in numbers {
                let table = try #require(try write.openTable("table \(number)"))
                try pattern(8, seed: UInt8(number % 200)).withUnsafeBytes {
                    _ = try write.put(table, key: UInt64(number), value: $0)
                }
            }
            try write.commit()
        }
        do {
            let environment = try Environment.open(path: path)
            #expect(environment.options.maxTables == 1_024)
            try addTables(0..<1_000, in: environment)
            let full = try WriteTransaction(environment: environment)
            defer { full.abort() }
            let error = #expect(throws: TroveError.self) {
                for number in 1_000..<2_000 { _ = try full.openTable("table \(number)") }
            }
            #expect(error?.message.contains("more tables than this process opened it with room for") == true)
            #expect(error?.message.contains("each index, link and list, set or map property") == true)
            #expect(error?.message.contains("Configuration.objectTypes") == true)
        }
        func expectTables(in environment: Environment) throws {
            let read = try ReadTransaction(environment: environment)
            defer { read.end() }
            for number in [0, 999, 1_000, 1_023, 1_024, 2_999] {
                let table = try #require(try read.existingTable("table \(number)"))
                let value = try read.withValue(in: table, key: UInt64(number)) { $0.map { Array($0) } }
                #expect(value == pattern(8, seed: UInt8(number % 200)))
            }
        }
        #expect(!Environment.isOpen(path: path))
        do {
            let environment = try Environment.open(path: path)
            #expect(environment.options.maxTables == 4_096)  // twice 1,000 and 64, rounded up
            try addTables(1_000..<3_000, in: environment)
            try expectTables(in: environment)
        }
        // A compacting copy, made in a new file, gets room for every table of the old one.
        let least = Environment.Options()
        #expect(least.maxTables == 1_024)
        let outcome = try Environment.compact(
            path: path, options: least, decide: { _ in true },
            copy: { from, into in try from.copyTables(into: into, skipping: []) })
        guard case .compacted = outcome else {
            Issue.record("not compacted: \(outcome)")
            return
        }
        let compacted = try Environment.open(path: path)
        #expect(compacted.options.maxTables == 8_192)  // twice 3,000 and 64, rounded up
        try expectTables(in: compacted)
    }

    @Test("a meta page claiming a trillion tables opens with 16,384 slots, and the file reads as before")
    func craftedTableCount() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("crafted.trove").path
        do {
            let environment = try Environment.open(path: path)
            let write = try WriteTransaction(environment: environment)
            let table = try #require(try write.openTable("kept"))
            try pattern(8, seed: 7).withUnsafeBytes { _ = try write.put(table, key: 1, value: $0) }
            try write.commit()
        }
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        let header = try #require(try file.read(upToCount: 48))
        let pageSize = header.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 40, as: UInt32.self))) }
        for page in 0..<2 {  // the main tree's entry count, in both meta pages
            try file.seek(toOffset: UInt64(page * pageSize + 120))
            try file.write(contentsOf: withUnsafeBytes(of: (UInt64(1) << 40).littleEndian) { Data($0) })
        }
        try file.close()
        let environment = try Environment.open(path: path)
        #expect(environment.options.maxTables == 16_384)
        let read = try ReadTransaction(environment: environment)
        defer { read.end() }
        let table = try #require(try read.existingTable("kept"))
        #expect(try read.withValue(in: table, key: 1) { $0.map { Array($0) } } == pattern(8, seed: 7))
    }

    @Test(
        "table slots: at least the least asked for, room for the file's tables to double, capped at 16,384 (a meta page's count is not trusted further)"
    )
    func tableSlots() {
        #expect(Environment.tableSlots(forExisting: 0, least: 1_024) == 1_024)
        #expect(Environment.tableSlots(forExisting: 480, least: 1_024) == 1_024)
        #expect(Environment.tableSlots(forExisting: 481, least: 1_024) == 2_048)
        #expect(Environment.tableSlots(forExisting: 1_000, least: 8_192) == 8_192)
        #expect(Environment.tableSlots(forExisting: 1 << 20, least: 1_024) == 16_384)
        #expect(Environment.tableSlots(forExisting: 5_000, least: 1_024) == 16_384)
        #expect(Environment.tableSlots(forExisting: -5, least: 16) == 64)
    }

    @Test("opening a file in a missing directory is a fileAccess error naming the path")
    func missingDirectory() throws {
        let path = "/nonexistent-\(UUID().uuidString)/db.trove"
        #expect {
            _ = try Environment.open(path: path)
        } throws: { error in
            guard let error = error as? TroveError else { return false }
            return error.kind == .fileAccess && error.message.contains("nonexistent")
        }
    }

    @Test("a second write on the same thread is an error, not a deadlock")
    func secondWriteOnSameThread() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("nested.trove").path
        let environment = try Environment.open(path: path)
        let write = try WriteTransaction(environment: environment)
        #expect(throws: TroveError.self) { _ = try WriteTransaction(environment: environment) }
        write.abort()
        let again = try WriteTransaction(environment: environment)
        again.abort()
    }

    @Test("an aborted write leaves no trace")
    func abortLeavesNoTrace() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("abort.trove").path
        let environment = try Environment.open(path: path)
        let setup = try WriteTransaction(environment: environment)
        let table = try #require(try setup.openTable("data"))
        try ([1, 2, 3] as [UInt8]).withUnsafeBytes { _ = try setup.put(table, key: 1, value: $0) }
        try setup.commit()

        let write = try WriteTransaction(environment: environment)
        try ([9] as [UInt8]).withUnsafeBytes { _ = try write.put(table, key: 1, value: $0) }
        try ([9] as [UInt8]).withUnsafeBytes { _ = try write.put(table, key: 2, value: $0) }
        write.abort()

        let read = try ReadTransaction(environment: environment)
        #expect(try read.count(of: table) == 1)
        #expect(try read.withValue(in: table, key: 1) { $0.map { Array($0) } } == [1, 2, 3])
    }

    @Test("insert-only puts report an existing key without failing the transaction")
    func insertOnly() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("insert.trove").path
        let environment = try Environment.open(path: path)
        let write = try WriteTransaction(environment: environment)
        let table = try #require(try write.openTable("data"))
        #expect(try ([1] as [UInt8]).withUnsafeBytes { try write.put(table, key: 5, value: $0, mode: .insertOnly) })
        #expect(try ([2] as [UInt8]).withUnsafeBytes { try write.put(table, key: 5, value: $0, mode: .insertOnly) } == false)
        try write.commit()
        let read = try ReadTransaction(environment: environment)
        #expect(try read.withValue(in: table, key: 5) { $0.map { Array($0) } } == [1])
    }

    @Test("an open that fails after the environment exists throws, without deadlocking the registry")
    func failedOpenDoesNotHang() throws {
        let path = makeTemporaryDirectory().appendingPathComponent("fails.trove").path
        do {
            let environment = try Environment.open(path: path)
            let write = try WriteTransaction(environment: environment)
            _ = try write.openTable("data")
            try write.commit()
        }
        // Fail each of the first calls made while opening (listing and opening tables).
        for failAt in 1...6 {
            FaultInjection.arm(failAt: failAt, code: EIO)
            let opened = try? Environment.open(path: path)
            let fired = FaultInjection.disarm().fired
            if fired { #expect(opened == nil, "call \(failAt) failed but the open succeeded") }
        }
        let environment = try Environment.open(path: path)
        let read = try ReadTransaction(environment: environment)
        #expect(try read.existingTable("data") != nil)
    }
}
