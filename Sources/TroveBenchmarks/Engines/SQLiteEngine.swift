import CSQLite
import Foundation

/// Raw SQLite: the C API, statements prepared once and reused, WAL,
/// `INTEGER PRIMARY KEY`. Every SQLite-based library is at most this fast.
final class SQLiteEngine: Engine {
    static let name = "SQLite"
    private var db: OpaquePointer?
    private let path: String
    private let directory: URL
    private let durability: Durability
    private var statements: [String: OpaquePointer] = [:]

    init(directory: URL, durability: Durability) throws {
        path = directory.appendingPathComponent("bench.sqlite").path
        self.directory = directory
        self.durability = durability
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw failure("open") }
        sqlite3_busy_timeout(db, 10_000)  // other connections (W8's threads) may hold the lock briefly
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
        try execute(
            "CREATE TABLE IF NOT EXISTS a (id INTEGER PRIMARY KEY, v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, v4 INTEGER, v5 INTEGER, v6 INTEGER, v7 INTEGER, v8 INTEGER, v9 INTEGER)"
        )
        try execute(
            "CREATE TABLE IF NOT EXISTS b (id INTEGER PRIMARY KEY, flag INTEGER, i8 INTEGER, i16 INTEGER, i32 INTEGER, i64 INTEGER, f REAL, d REAL, s TEXT, data BLOB)"
        )
        try execute("CREATE TABLE IF NOT EXISTS c (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, city TEXT, score INTEGER)")
        try execute("CREATE INDEX IF NOT EXISTS c_name ON c(name)")
        try execute("CREATE INDEX IF NOT EXISTS c_age ON c(age)")
        try execute("CREATE INDEX IF NOT EXISTS c_city ON c(city)")
        try execute(
            "CREATE TABLE IF NOT EXISTS c_friends (owner INTEGER, position INTEGER, friend INTEGER, PRIMARY KEY (owner, position)) WITHOUT ROWID"
        )
        try execute("CREATE INDEX IF NOT EXISTS c_friends_friend ON c_friends(friend)")
        try execute("CREATE TABLE IF NOT EXISTS memo (id INTEGER PRIMARY KEY, memo TEXT)")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    private func failure(_ what: String) -> BenchmarkFailure {
        BenchmarkFailure(description: "SQLite \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            return cached
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw failure(sql) }
        statements[sql] = statement
        return statement
    }

    private func step(_ statement: OpaquePointer) throws {
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw failure("step") }
    }

    private func transaction(_ body: () throws -> Void) throws {
        try step(try statement("BEGIN"))
        try body()
        try step(try statement("COMMIT"))
    }

    func anotherHandle() throws -> any Engine { try SQLiteEngine(directory: directory, durability: durability) }

    func fileSize() -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + (((try? FileManager.default.attributesOfItem(atPath: file)[.size]) as? Int) ?? 0)
        }
    }

    func compact() throws -> Int {
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try execute("VACUUM")
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return fileSize()
    }

    func insertA(_ rows: [RowA]) throws {
        let insert = try statement("INSERT INTO a VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try transaction {
            for row in rows {
                sqlite3_bind_int64(insert, 1, Int64(row.id))
                for (index, value) in row.values.enumerated() { sqlite3_bind_int64(insert, Int32(index + 2), value) }
                try step(insert)
                sqlite3_reset(insert)
            }
        }
    }

    func scanA() throws -> (count: Int, checksum: Int64) {
        let select = try statement("SELECT * FROM a")
        var count = 0
        var sum: Int64 = 0
        while sqlite3_step(select) == SQLITE_ROW {
            count += 1
            for column in 0..<11 as Range<Int32> { sum = sum &+ sqlite3_column_int64(select, column) }
        }
        return (count, sum)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ row: RowB, to insert: OpaquePointer) {
        sqlite3_bind_int64(insert, 1, Int64(row.id))
        sqlite3_bind_int(insert, 2, row.flag ? 1 : 0)
        sqlite3_bind_int(insert, 3, Int32(row.int8))
        sqlite3_bind_int(insert, 4, Int32(row.int16))
        sqlite3_bind_int(insert, 5, row.int32)
        sqlite3_bind_int64(insert, 6, row.int64)
        sqlite3_bind_double(insert, 7, Double(row.float))
        sqlite3_bind_double(insert, 8, row.double)
        sqlite3_bind_text(insert, 9, row.string, -1, SQLiteEngine.transient)
        _ = row.data.withUnsafeBytes { sqlite3_bind_blob(insert, 10, $0.baseAddress, Int32($0.count), SQLiteEngine.transient) }
    }

    func insertB(_ rows: [RowB]) throws {
        let insert = try statement("INSERT INTO b VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try transaction {
            for row in rows {
                bind(row, to: insert)
                try step(insert)
                sqlite3_reset(insert)
            }
        }
    }

    func insertEachB(_ rows: [RowB]) throws -> [Double] {
        let insert = try statement("INSERT INTO b VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        return try rows.map { row in
            try measure {
                try transaction {
                    bind(row, to: insert)
                    try step(insert)
                    sqlite3_reset(insert)
                }
            }
        }
    }

    func updateEachB(_ rows: [RowB]) throws -> [Double] {
        let update = try statement("UPDATE b SET i64 = ? WHERE id = ?")
        return try rows.map { row in
            try measure {
                try transaction {
                    sqlite3_bind_int64(update, 1, row.int64 &+ 1)
                    sqlite3_bind_int64(update, 2, Int64(row.id))
                    try step(update)
                    sqlite3_reset(update)
                }
            }
        }
    }

    func deleteEachB(_ ids: [Int]) throws -> [Double] {
        let delete = try statement("DELETE FROM b WHERE id = ?")
        return try ids.map { id in
            try measure {
                try transaction {
                    sqlite3_bind_int64(delete, 1, Int64(id))
                    try step(delete)
                    sqlite3_reset(delete)
                }
            }
        }
    }

    private func rowChecksum(_ select: OpaquePointer) -> Int64 {
        RowB.checksum(
            id: Int(sqlite3_column_int64(select, 0)), flag: sqlite3_column_int(select, 1) != 0,
            int8: Int8(truncatingIfNeeded: sqlite3_column_int(select, 2)),
            int16: Int16(truncatingIfNeeded: sqlite3_column_int(select, 3)),
            int32: sqlite3_column_int(select, 4), int64: sqlite3_column_int64(select, 5),
            float: Float(sqlite3_column_double(select, 6)),
            double: sqlite3_column_double(select, 7),
            stringBytes: {
                _ = sqlite3_column_text(select, 8); return Int(sqlite3_column_bytes(select, 8))
            }(),
            dataBytes: {
                _ = sqlite3_column_blob(select, 9); return Int(sqlite3_column_bytes(select, 9))
            }())
    }

    func scanB() throws -> (count: Int, checksum: Int64) {
        let select = try statement("SELECT * FROM b")
        var count = 0
        var sum: Int64 = 0
        while sqlite3_step(select) == SQLITE_ROW {
            count += 1
            sum = sum &+ rowChecksum(select)
        }
        return (count, sum)
    }

    func fetchAllB() throws -> (count: Int, checksum: Int64) {
        let select = try statement("SELECT * FROM b")
        var rows: [RowB] = []
        while sqlite3_step(select) == SQLITE_ROW {
            let text = sqlite3_column_text(select, 8)
            let textCount = Int(sqlite3_column_bytes(select, 8))
            let blob = sqlite3_column_blob(select, 9)
            let blobCount = Int(sqlite3_column_bytes(select, 9))
            rows.append(
                RowB(
                    id: Int(sqlite3_column_int64(select, 0)), flag: sqlite3_column_int(select, 1) != 0,
                    int8: Int8(truncatingIfNeeded: sqlite3_column_int(select, 2)),
                    int16: Int16(truncatingIfNeeded: sqlite3_column_int(select, 3)),
                    int32: sqlite3_column_int(select, 4), int64: sqlite3_column_int64(select, 5),
                    float: Float(sqlite3_column_double(select, 6)), double: sqlite3_column_double(select, 7),
                    string: text.map { String(decoding: UnsafeBufferPointer(start: $0, count: textCount), as: UTF8.self) } ?? "",
                    data: blob.map { Array(UnsafeRawBufferPointer(start: $0, count: blobCount)) } ?? []))
        }
        return (rows.count, rows.reduce(0) { $0 &+ $1.checksum })
    }

    func lookupB(_ ids: [Int]) throws -> (checksum: Int64, latencies: [Double]) {
        let select = try statement("SELECT * FROM b WHERE id = ?")
        var sum: Int64 = 0
        var latencies: [Double] = []
        latencies.reserveCapacity(ids.count)
        for id in ids {
            let start = now()
            sqlite3_bind_int64(select, 1, Int64(id))
            guard sqlite3_step(select) == SQLITE_ROW else { throw failure("row \(id) missing") }
            sum = sum &+ rowChecksum(select)
            sqlite3_reset(select)
            latencies.append(Double(now() - start) / 1e9)
        }
        return (sum, latencies)
    }

    func updateAllB() throws -> Int {
        try transaction { try step(try statement("UPDATE b SET i64 = i64 + 1")) }
        return Int(sqlite3_changes(db))
    }

    func updateB(_ ids: [Int], batch: Int) throws {
        let update = try statement("UPDATE b SET i64 = i64 + 1 WHERE id = ?")
        for start in stride(from: 0, to: ids.count, by: batch) {
            try transaction {
                for id in ids[start..<min(start + batch, ids.count)] {
                    sqlite3_bind_int64(update, 1, Int64(id))
                    try step(update)
                    sqlite3_reset(update)
                }
            }
        }
    }

    func deleteAllB() throws {
        try transaction { try step(try statement("DELETE FROM b")) }
    }

    func deleteB(_ ids: [Int]) throws {
        let delete = try statement("DELETE FROM b WHERE id = ?")
        try transaction {
            for id in ids {
                sqlite3_bind_int64(delete, 1, Int64(id))
                try step(delete)
                sqlite3_reset(delete)
            }
        }
    }

    func countB() throws -> Int {
        let count = try statement("SELECT COUNT(*) FROM b")
        guard sqlite3_step(count) == SQLITE_ROW else { throw failure("count") }
        return Int(sqlite3_column_int64(count, 0))
    }

    func insertC(_ rows: [RowC]) throws {
        let insert = try statement("INSERT INTO c VALUES (?, ?, ?, ?, ?)")
        try transaction {
            for row in rows {
                sqlite3_bind_int64(insert, 1, Int64(row.id))
                sqlite3_bind_text(insert, 2, row.name, -1, SQLiteEngine.transient)
                sqlite3_bind_int64(insert, 3, Int64(row.age))
                sqlite3_bind_text(insert, 4, row.city, -1, SQLiteEngine.transient)
                sqlite3_bind_int64(insert, 5, Int64(row.score))
                try step(insert)
                sqlite3_reset(insert)
            }
        }
    }

    func linkFriends(_ friends: [[Int]]) throws {
        let insert = try statement("INSERT INTO c_friends VALUES (?, ?, ?)")
        try transaction {
            for (index, list) in friends.enumerated() {
                for (position, friend) in list.enumerated() {
                    sqlite3_bind_int64(insert, 1, Int64(index + 1))
                    sqlite3_bind_int64(insert, 2, Int64(position))
                    sqlite3_bind_int64(insert, 3, Int64(friend))
                    try step(insert)
                    sqlite3_reset(insert)
                }
            }
        }
    }

    func appendFriends(_ ids: [Int]) throws -> Int {
        let insert = try statement(
            "INSERT INTO c_friends VALUES (1, (SELECT COALESCE(MAX(position), -1) + 1 FROM c_friends WHERE owner = 1), ?)")
        for id in ids {
            try transaction {
                sqlite3_bind_int64(insert, 1, Int64(id))
                try step(insert)
                sqlite3_reset(insert)
            }
        }
        return try count("SELECT COUNT(*) FROM c_friends WHERE owner = 1") { _ in }
    }

    func deletePerson(_ id: Int) throws {
        try transaction {
            let unlink = try statement("DELETE FROM c_friends WHERE friend = ?")
            sqlite3_bind_int64(unlink, 1, Int64(id))
            try step(unlink)
            let delete = try statement("DELETE FROM c WHERE id = ?")
            sqlite3_bind_int64(delete, 1, Int64(id))
            try step(delete)
        }
    }

    func countLinks(to id: Int) throws -> Int {
        try count("SELECT COUNT(*) FROM c_friends WHERE friend = ?") { sqlite3_bind_int64($0, 1, Int64(id)) }
    }

    func sumFriendAges() throws -> (people: Int, checksum: Int) {
        let select = try statement(
            "SELECT l.owner, SUM(f.age) FROM c_friends l JOIN c f ON f.id = l.friend GROUP BY l.owner")
        var people = 0
        var checksum = 0
        while sqlite3_step(select) == SQLITE_ROW {
            people += 1
            checksum &+= Int(sqlite3_column_int64(select, 0)) &* Int(sqlite3_column_int64(select, 1))
        }
        return (people, checksum)
    }

    private func count(_ sql: String, bind: (OpaquePointer) -> Void) throws -> Int {
        let select = try statement(sql)
        bind(select)
        guard sqlite3_step(select) == SQLITE_ROW else { throw failure(sql) }
        return Int(sqlite3_column_int64(select, 0))
    }

    func countAgeEquals(_ value: Int) throws -> Int {
        try count("SELECT COUNT(*) FROM c WHERE age = ?") { sqlite3_bind_int64($0, 1, Int64(value)) }
    }

    func countNameEquals(_ value: String) throws -> Int {
        try count("SELECT COUNT(*) FROM c WHERE name = ?") { sqlite3_bind_text($0, 1, value, -1, SQLiteEngine.transient) }
    }

    func countScoreEquals(_ value: Int) throws -> Int {
        try count("SELECT COUNT(*) FROM c WHERE score = ?") { sqlite3_bind_int64($0, 1, Int64(value)) }
    }

    func countAndSumScore(_ low: Int, _ high: Int) throws -> (count: Int, sum: Int) {
        let select = try statement("SELECT COUNT(*), TOTAL(score) FROM c WHERE score >= ? AND score < ?")
        sqlite3_bind_int64(select, 1, Int64(low))
        sqlite3_bind_int64(select, 2, Int64(high))
        guard sqlite3_step(select) == SQLITE_ROW else { throw failure("range") }
        return (Int(sqlite3_column_int64(select, 0)), Int(sqlite3_column_double(select, 1)))
    }

    func fetchScoreRange(_ low: Int, _ high: Int, limit: Int) throws -> (count: Int, checksum: Int) {
        let select = try statement("SELECT * FROM c WHERE score >= ? AND score < ? ORDER BY score, id LIMIT ?")
        sqlite3_bind_int64(select, 1, Int64(low))
        sqlite3_bind_int64(select, 2, Int64(high))
        sqlite3_bind_int64(select, 3, Int64(limit))
        var checksum = 0
        var count = 0
        while sqlite3_step(select) == SQLITE_ROW {
            // Read every column, as the object engines do.
            _ = sqlite3_column_int64(select, 0)
            _ = sqlite3_column_text(select, 1)
            _ = sqlite3_column_text(select, 3)
            checksum &+= Int(sqlite3_column_int64(select, 2)) &+ Int(sqlite3_column_int64(select, 4))
            count += 1
        }
        return (count, checksum)
    }

    func countNameRange(_ low: String, _ high: String) throws -> Int {
        try count("SELECT COUNT(*) FROM c WHERE name >= ? AND name < ?") {
            sqlite3_bind_text($0, 1, low, -1, SQLiteEngine.transient)
            sqlite3_bind_text($0, 2, high, -1, SQLiteEngine.transient)
        }
    }

    /// The first `limit` rows of `order`, every column read, as the object engines do.
    private func first(_ order: String, limit: Int) throws -> (count: Int, checksum: Int) {
        let select = try statement("SELECT * FROM c ORDER BY \(order) LIMIT ?")
        sqlite3_bind_int64(select, 1, Int64(limit))
        var count = 0
        var checksum = 0
        while sqlite3_step(select) == SQLITE_ROW {
            _ = sqlite3_column_text(select, 1)
            _ = sqlite3_column_int64(select, 2)
            _ = sqlite3_column_text(select, 3)
            _ = sqlite3_column_int64(select, 4)
            count += 1
            checksum &+= count &* Int(sqlite3_column_int64(select, 0))
        }
        return (count, checksum)
    }

    func firstByScore(limit: Int) throws -> (count: Int, checksum: Int) {
        try first("score, id", limit: limit)
    }

    func firstByCityAndScore(limit: Int) throws -> (count: Int, checksum: Int) {
        try first("city, score DESC, id", limit: limit)
    }

    func firstByNameAndScore(limit: Int) throws -> (count: Int, checksum: Int) {
        try first("name, score DESC, id", limit: limit)
    }

    func firstByScoreAndCity(limit: Int) throws -> (count: Int, checksum: Int) {
        try first("score DESC, city, id", limit: limit)
    }

    func insertMemos(_ rows: [RowMemo]) throws {
        let insert = try statement("INSERT INTO memo VALUES (?, ?)")
        try transaction {
            for row in rows {
                sqlite3_bind_int64(insert, 1, Int64(row.id))
                sqlite3_bind_text(insert, 2, row.memo, -1, SQLiteEngine.transient)
                try step(insert)
                sqlite3_reset(insert)
            }
        }
    }

    // MARK: The scale run's shape (`trove-bench --scale`)

    /// Stores `items` (the scale run's objects: an indexed name, a memo, a
    /// list of tags in a side table) in one transaction.
    func insertScaleItems(_ items: [ScaleRow]) throws {
        try execute(
            "CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, memo TEXT, date REAL)")
        try execute("CREATE INDEX IF NOT EXISTS item_name ON item(name)")
        try execute(
            "CREATE TABLE IF NOT EXISTS item_tags (owner INTEGER, position INTEGER, tag TEXT, PRIMARY KEY (owner, position)) WITHOUT ROWID"
        )
        let insert = try statement("INSERT INTO item VALUES (?, ?, ?, ?, ?, ?)")
        let tag = try statement("INSERT INTO item_tags VALUES (?, ?, ?)")
        try transaction {
            for item in items {
                sqlite3_bind_int64(insert, 1, Int64(item.id))
                sqlite3_bind_text(insert, 2, item.name, -1, SQLiteEngine.transient)
                sqlite3_bind_int64(insert, 3, Int64(item.age))
                sqlite3_bind_double(insert, 4, item.score)
                sqlite3_bind_text(insert, 5, item.memo, -1, SQLiteEngine.transient)
                sqlite3_bind_double(insert, 6, item.date)
                try step(insert)
                sqlite3_reset(insert)
                for (position, name) in item.tags.enumerated() {
                    sqlite3_bind_int64(tag, 1, Int64(item.id))
                    sqlite3_bind_int64(tag, 2, Int64(position))
                    sqlite3_bind_text(tag, 3, name, -1, SQLiteEngine.transient)
                    try step(tag)
                    sqlite3_reset(tag)
                }
            }
        }
    }

    /// Calls `body` with each of `ids`, `batch` per transaction.
    private func inBatches(_ ids: ArraySlice<Int>, of batch: Int, _ body: (Int) throws -> Void) throws {
        for start in stride(from: ids.startIndex, to: ids.endIndex, by: batch) {
            try transaction { for id in ids[start..<min(start + batch, ids.endIndex)] { try body(id) } }
        }
    }

    /// Adds one to the age of each of `ids`, `batch` per transaction.
    func updateScaleItems(_ ids: ArraySlice<Int>, batch: Int) throws {
        let update = try statement("UPDATE item SET age = age + 1 WHERE id = ?")
        try inBatches(ids, of: batch) { id in
            sqlite3_bind_int64(update, 1, Int64(id))
            try step(update)
            sqlite3_reset(update)
        }
    }

    /// Replaces the memo of each of `ids` with its characters reversed, `batch` per transaction.
    func reverseScaleMemos(_ ids: ArraySlice<Int>, batch: Int) throws {
        let read = try statement("SELECT memo FROM item WHERE id = ?")
        let update = try statement("UPDATE item SET memo = ? WHERE id = ?")
        try inBatches(ids, of: batch) { id in
            sqlite3_bind_int64(read, 1, Int64(id))
            guard sqlite3_step(read) == SQLITE_ROW else { throw failure("memo \(id)") }
            let memo = String(String(cString: sqlite3_column_text(read, 0)).reversed())
            sqlite3_reset(read)
            sqlite3_bind_text(update, 1, memo, -1, SQLiteEngine.transient)
            sqlite3_bind_int64(update, 2, Int64(id))
            try step(update)
            sqlite3_reset(update)
        }
    }

    /// Deletes each of `ids` with its tags, `batch` per transaction.
    func deleteScaleItems(_ ids: ArraySlice<Int>, batch: Int) throws {
        let delete = try statement("DELETE FROM item WHERE id = ?")
        let tags = try statement("DELETE FROM item_tags WHERE owner = ?")
        try inBatches(ids, of: batch) { id in
            for statement in [tags, delete] {
                sqlite3_bind_int64(statement, 1, Int64(id))
                try step(statement)
                sqlite3_reset(statement)
            }
        }
    }

    /// The number of items and the sum of their ages.
    func countScaleItems() throws -> (count: Int, ages: Int) {
        let query = try statement("SELECT COUNT(*), TOTAL(age) FROM item")
        guard sqlite3_step(query) == SQLITE_ROW else { throw failure("count") }
        defer { sqlite3_reset(query) }
        return (Int(sqlite3_column_int64(query, 0)), Int(sqlite3_column_double(query, 1)))
    }

    /// The database file and its write-ahead log, checkpointed first (pages freed by deletes are reused, not returned).
    func checkpointedSize() throws -> Int {
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return fileSize()
    }

    /// `LIKE '%…%'` (SQLite folds ASCII case) or `instr(…) > 0` (exact).
    func countMemos(containing needle: String, caseInsensitive: Bool) throws -> Int {
        if caseInsensitive {
            return try count("SELECT COUNT(*) FROM memo WHERE memo LIKE ?") {
                sqlite3_bind_text($0, 1, "%\(needle)%", -1, SQLiteEngine.transient)
            }
        }
        return try count("SELECT COUNT(*) FROM memo WHERE instr(memo, ?) > 0") {
            sqlite3_bind_text($0, 1, needle, -1, SQLiteEngine.transient)
        }
    }

    static func readersAndWriter(directory: URL, readers: Int, seconds: Double, count: Int) throws
        -> (reads: Int, latencies: [Double])
    {
        try runReadersAndWriter(
            readers: readers, seconds: seconds,
            reader: { index, results in
                let engine = try SQLiteEngine(directory: directory, durability: .full)
                var random = SeededGenerator(seed: UInt64(100 + index))
                var reads = 0
                while reads % 256 != 0 || !results.isStopped {
                    _ = try engine.lookupB([Int.random(in: 1...count, using: &random)])
                    reads += 1
                }
                return reads
            },
            writer: { results in
                let engine = try SQLiteEngine(directory: directory, durability: .full)
                var random = SeededGenerator(seed: 99)
                var latencies: [Double] = []
                while !results.isStopped {
                    let id = Int.random(in: 1...count, using: &random)
                    latencies.append(try measure { try engine.updateB([id], batch: 1) })
                }
                return latencies
            })
    }
}
