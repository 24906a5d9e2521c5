import CLMDB
import Foundation

/// Raw LMDB: the same library Trove uses, 8-byte big-endian keys and a
/// hand-packed value. The floor of Trove's own overhead.
final class LMDBEngine: Engine {
    static let name = "LMDB"
    private var env: OpaquePointer?
    private var dbiA: MDB_dbi = 0
    private var dbiB: MDB_dbi = 0
    private let path: String

    init(directory: URL, durability: Durability) throws {
        path = directory.appendingPathComponent("bench.lmdb").path
        try check(mdb_env_create(&env), "create")
        try check(mdb_env_set_maxdbs(env, 8), "maxdbs")
        try check(mdb_env_set_mapsize(env, 16 << 30), "mapsize")
        var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
        if durability == .relaxed { flags |= UInt32(MDB_NOMETASYNC) }
        try check(mdb_env_open(env, path, flags, 0o644), "open")
        try write { txn in
            try check(mdb_dbi_open(txn, "a", UInt32(MDB_CREATE), &dbiA), "dbi a")
            try check(mdb_dbi_open(txn, "b", UInt32(MDB_CREATE), &dbiB), "dbi b")
        }
    }

    deinit { mdb_env_close(env) }

    private func check(_ rc: Int32, _ what: String) throws {
        if rc != 0 { throw BenchmarkFailure(description: "LMDB \(what): \(String(cString: mdb_strerror(rc)))") }
    }

    private func write(_ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        do {
            try body(txn!)
            try check(mdb_txn_commit(txn), "commit")
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    private func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        return try body(txn!)
    }

    func anotherHandle() throws -> any Engine { self }

    func fileSize() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    func compact() throws -> Int {
        let target = path + ".compact"
        try check(mdb_env_copy2(env, target, UInt32(MDB_CP_COMPACT)), "copy")
        return ((try? FileManager.default.attributesOfItem(atPath: target)[.size]) as? Int) ?? 0
    }

    @inline(__always)
    private func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ id: Int, _ value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws {
        var key = UInt64(id).bigEndian
        try withUnsafeMutableBytes(of: &key) { keyBytes in
            var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            try check(mdb_put(txn, dbi, &k, &v, flags), "put")
        }
    }

    func insertA(_ rows: [RowA]) throws {
        var buffer = [UInt8](repeating: 0, count: 80)
        try write { txn in
            for row in rows {
                buffer.withUnsafeMutableBytes { out in
                    for (index, value) in row.values.enumerated() {
                        out.storeBytes(of: value, toByteOffset: index * 8, as: Int64.self)
                    }
                }
                try buffer.withUnsafeBytes { try put(txn, dbiA, row.id, $0, flags: UInt32(MDB_APPEND)) }
            }
        }
    }

    func scanA() throws -> (count: Int, checksum: Int64) {
        var count = 0
        var sum: Int64 = 0
        try scan(dbiA) { id, value in
            count += 1
            sum = sum &+ Int64(id)
            for index in 0..<10 { sum = sum &+ value.loadUnaligned(fromByteOffset: index * 8, as: Int64.self) }
        }
        return (count, sum)
    }

    /// Walks a table in key order with one cursor in one read transaction.
    private func scan(_ dbi: MDB_dbi, _ visit: (_ id: Int, _ value: UnsafeMutableRawPointer) throws -> Void) throws {
        try read { txn in
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, dbi, &cursor), "cursor")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &k, &v, op) == 0 {
                op = MDB_NEXT
                try visit(Int(UInt64(bigEndian: k.mv_data.loadUnaligned(as: UInt64.self))), v.mv_data)
            }
        }
    }

    private func pack(_ row: RowB, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { buffer.append(contentsOf: $0) } }
        append(row.flag ? UInt8(1) : 0)
        append(row.int8)
        append(row.int16)
        append(row.int32)
        append(row.int64)
        append(row.float)
        append(row.double)
        let utf8 = Array(row.string.utf8)
        append(UInt16(utf8.count))
        buffer.append(contentsOf: utf8)
        append(UInt16(row.data.count))
        buffer.append(contentsOf: row.data)
    }

    private func checksum(id: Int, _ value: UnsafeRawPointer) -> Int64 {
        let stringBytes = Int(value.loadUnaligned(fromByteOffset: 28, as: UInt16.self))
        // Decode the string and data as an app would.
        let string = String(decoding: UnsafeRawBufferPointer(start: value + 30, count: stringBytes), as: UTF8.self)
        let dataBytes = Int(value.loadUnaligned(fromByteOffset: 30 + stringBytes, as: UInt16.self))
        let data = Data(UnsafeRawBufferPointer(start: value + 32 + stringBytes, count: dataBytes))
        return RowB.checksum(
            id: id, flag: value.load(as: UInt8.self) != 0, int8: value.loadUnaligned(fromByteOffset: 1, as: Int8.self),
            int16: value.loadUnaligned(fromByteOffset: 2, as: Int16.self),
            int32: value.loadUnaligned(fromByteOffset: 4, as: Int32.self),
            int64: value.loadUnaligned(fromByteOffset: 8, as: Int64.self),
            float: value.loadUnaligned(fromByteOffset: 16, as: Float.self),
            double: value.loadUnaligned(fromByteOffset: 20, as: Double.self), stringBytes: string.utf8.count,
            dataBytes: data.count)
    }

    func insertB(_ rows: [RowB]) throws {
        var buffer: [UInt8] = []
        try write { txn in
            for row in rows {
                pack(row, into: &buffer)
                try buffer.withUnsafeBytes { try put(txn, dbiB, row.id, $0, flags: UInt32(MDB_NOOVERWRITE)) }
            }
        }
    }

    func insertEachB(_ rows: [RowB]) throws -> [Double] {
        var buffer: [UInt8] = []
        return try rows.map { row in
            try measure {
                try write { txn in
                    pack(row, into: &buffer)
                    try buffer.withUnsafeBytes { try put(txn, dbiB, row.id, $0, flags: UInt32(MDB_NOOVERWRITE)) }
                }
            }
        }
    }

    /// Reads, changes `int64`, writes back: what an update of one field costs.
    private func increment(_ txn: OpaquePointer, id: Int, to newValue: Int64?) throws {
        var key = UInt64(id).bigEndian
        try withUnsafeMutableBytes(of: &key) { keyBytes in
            var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
            var v = MDB_val()
            try check(mdb_get(txn, dbiB, &k, &v), "get \(id)")
            var copy = [UInt8](UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            copy.withUnsafeMutableBytes { bytes in
                let old = bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)
                bytes.storeBytes(of: newValue ?? (old &+ 1), toByteOffset: 8, as: Int64.self)
            }
            try copy.withUnsafeBytes { try put(txn, dbiB, id, $0) }
        }
    }

    func updateEachB(_ rows: [RowB]) throws -> [Double] {
        try rows.map { row in
            try measure { try write { txn in try increment(txn, id: row.id, to: row.int64 &+ 1) } }
        }
    }

    func deleteEachB(_ ids: [Int]) throws -> [Double] {
        try ids.map { id in
            try measure {
                try write { txn in
                    var key = UInt64(id).bigEndian
                    try withUnsafeMutableBytes(of: &key) { keyBytes in
                        var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                        try check(mdb_del(txn, dbiB, &k, nil), "delete \(id)")
                    }
                }
            }
        }
    }

    func scanB() throws -> (count: Int, checksum: Int64) {
        var count = 0
        var sum: Int64 = 0
        try scan(dbiB) { id, value in
            count += 1
            sum = sum &+ checksum(id: id, value)
        }
        return (count, sum)
    }

    /// Raw LMDB has no objects to fetch: its scan (the row runs Trove beside SQLite).
    func fetchAllB() throws -> (count: Int, checksum: Int64) { try scanB() }

    func lookupB(_ ids: [Int]) throws -> (checksum: Int64, latencies: [Double]) {
        try read { txn in
            var sum: Int64 = 0
            var latencies: [Double] = []
            latencies.reserveCapacity(ids.count)
            for id in ids {
                let start = now()
                var key = UInt64(id).bigEndian
                try withUnsafeMutableBytes(of: &key) { keyBytes in
                    var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var v = MDB_val()
                    try check(mdb_get(txn, dbiB, &k, &v), "get \(id)")
                    sum = sum &+ checksum(id: id, v.mv_data)
                }
                latencies.append(Double(now() - start) / 1e9)
            }
            return (sum, latencies)
        }
    }

    func updateAllB() throws -> Int {
        var ids: [Int] = []
        try scan(dbiB) { id, _ in ids.append(id) }
        try write { txn in
            for id in ids { try increment(txn, id: id, to: nil) }
        }
        return ids.count
    }

    func updateB(_ ids: [Int], batch: Int) throws {
        for start in stride(from: 0, to: ids.count, by: batch) {
            try write { txn in
                for id in ids[start..<min(start + batch, ids.count)] { try increment(txn, id: id, to: nil) }
            }
        }
    }

    func deleteAllB() throws {
        try write { txn in try check(mdb_drop(txn, dbiB, 0), "drop") }
    }

    func deleteB(_ ids: [Int]) throws {
        try write { txn in
            for id in ids {
                var key = UInt64(id).bigEndian
                try withUnsafeMutableBytes(of: &key) { keyBytes in
                    var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    try check(mdb_del(txn, dbiB, &k, nil), "del")
                }
            }
        }
    }

    func countB() throws -> Int {
        try read { txn in
            var stat = MDB_stat()
            try check(mdb_stat(txn, dbiB, &stat), "stat")
            return stat.ms_entries
        }
    }

    private func unsupported() -> BenchmarkFailure {
        BenchmarkFailure(description: "raw LMDB has no secondary indexes or query engine")
    }
    func insertC(_ rows: [RowC]) throws { throw unsupported() }
    func linkFriends(_ friends: [[Int]]) throws { throw unsupported() }
    func sumFriendAges() throws -> (people: Int, checksum: Int) { throw unsupported() }
    func appendFriends(_ ids: [Int]) throws -> Int { throw unsupported() }
    func deletePerson(_ id: Int) throws { throw unsupported() }
    func countLinks(to id: Int) throws -> Int { throw unsupported() }
    func countAgeEquals(_ value: Int) throws -> Int { throw unsupported() }
    func countNameEquals(_ value: String) throws -> Int { throw unsupported() }
    func countScoreEquals(_ value: Int) throws -> Int { throw unsupported() }
    func countAndSumScore(_ low: Int, _ high: Int) throws -> (count: Int, sum: Int) { throw unsupported() }
    func fetchScoreRange(_ low: Int, _ high: Int, limit: Int) throws -> (count: Int, checksum: Int) { throw unsupported() }
    func countNameRange(_ low: String, _ high: String) throws -> Int { throw unsupported() }
    func firstByScore(limit: Int) throws -> (count: Int, checksum: Int) { throw unsupported() }
    func firstByCityAndScore(limit: Int) throws -> (count: Int, checksum: Int) { throw unsupported() }
    func firstByScoreAndCity(limit: Int) throws -> (count: Int, checksum: Int) { throw unsupported() }
    func firstByNameAndScore(limit: Int) throws -> (count: Int, checksum: Int) { throw unsupported() }
    func insertMemos(_ rows: [RowMemo]) throws { throw unsupported() }
    func countMemos(containing needle: String, caseInsensitive: Bool) throws -> Int { throw unsupported() }

    static func readersAndWriter(directory: URL, readers: Int, seconds: Double, count: Int) throws
        -> (reads: Int, latencies: [Double])
    {
        let engine = try LMDBEngine(directory: directory, durability: .full)
        let shared = UncheckedBox(engine)
        return try runReadersAndWriter(
            readers: readers, seconds: seconds,
            reader: { index, results in
                var random = SeededGenerator(seed: UInt64(100 + index))
                var reads = 0
                while reads % 256 != 0 || !results.isStopped {
                    // One read transaction per 256 lookups, like the other engines' refresh.
                    let ids = (0..<256).map { _ in Int.random(in: 1...count, using: &random) }
                    _ = try shared.value.lookupB(ids)
                    reads += 256
                }
                return reads
            },
            writer: { results in
                var random = SeededGenerator(seed: 99)
                var latencies: [Double] = []
                while !results.isStopped {
                    let id = Int.random(in: 1...count, using: &random)
                    latencies.append(try measure { try shared.value.updateB([id], batch: 1) })
                }
                return latencies
            })
    }
}

/// Hands a thread-safe object (an LMDB environment) to other threads.
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
