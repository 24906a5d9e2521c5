import Foundation

/// How hard commits work, paired across engines as BENCHMARKS.md asks:
/// SQLite `synchronous=FULL` with LMDB's default sync, and SQLite `NORMAL`
/// with `MDB_NOMETASYNC` (Trove's `.relaxed`).
enum Durability: String, CaseIterable {
    case full, relaxed
}

/// One storage engine under test. Each workload calls a few of these; every
/// read operation returns a checksum over every property it touched.
protocol Engine: AnyObject {
    static var name: String { get }
    init(directory: URL, durability: Durability) throws
    /// The size of the database files in bytes.
    func fileSize() -> Int
    /// Compacts the file (copy with compaction / VACUUM) and returns the new size.
    func compact() throws -> Int

    func insertA(_ rows: [RowA]) throws
    func scanA() throws -> (count: Int, checksum: Int64)

    func insertB(_ rows: [RowB]) throws
    /// One transaction per row; returns each commit's duration in seconds.
    func insertEachB(_ rows: [RowB]) throws -> [Double]
    /// One transaction per row setting `int64 = row.int64 + 1`.
    func updateEachB(_ rows: [RowB]) throws -> [Double]
    /// One transaction per id deleting that object (found by its id inside the transaction).
    func deleteEachB(_ ids: [Int]) throws -> [Double]
    func scanB() throws -> (count: Int, checksum: Int64)
    /// Every object read into an array first (what a list screen holds), then
    /// every property of each: Trove's `Results.array()`, SQLite's rows made
    /// into `RowB` values.
    func fetchAllB() throws -> (count: Int, checksum: Int64)
    /// Looks each id up and reads every property; per-lookup durations in seconds.
    func lookupB(_ ids: [Int]) throws -> (checksum: Int64, latencies: [Double])
    /// Sets `int64 += 1` on every object in one transaction; returns how many.
    /// Each engine's bulk form: SQL's `UPDATE`, Trove's `Results.update(_:_:)`.
    func updateAllB() throws -> Int
    /// ``updateAllB()`` the way an app loops over its objects: Trove reads
    /// and sets each object's property; the raw engines have one way only.
    func updateAllEachB() throws -> Int
    /// Sets `int64 += 1` on `ids`, `batch` objects per transaction.
    func updateB(_ ids: [Int], batch: Int) throws
    func deleteAllB() throws
    func deleteB(_ ids: [Int]) throws
    func countB() throws -> Int

    func insertC(_ rows: [RowC]) throws
    /// Objects with `age == value` (indexed Int); returns the count.
    func countAgeEquals(_ value: Int) throws -> Int
    /// Objects with `name == value` (indexed String); returns the count.
    func countNameEquals(_ value: String) throws -> Int
    /// Objects with `score == value` (unindexed).
    func countScoreEquals(_ value: Int) throws -> Int
    /// `score` in [low, high): how many and their sum (unindexed range).
    func countAndSumScore(_ low: Int, _ high: Int) throws -> (count: Int, sum: Int)
    /// `score` in [low, high) sorted by score, the first `limit`: sum of their ages and score.
    func fetchScoreRange(_ low: Int, _ high: Int, limit: Int) throws -> (count: Int, checksum: Int)
    /// W10: `name` in [low, high) (indexed String); returns the count.
    func countNameRange(_ low: String, _ high: String) throws -> Int
    /// W10: every object sorted by `score` (ties by id), the first `limit`:
    /// how many, and the sum of their ids weighted by position.
    func firstByScore(limit: Int) throws -> (count: Int, checksum: Int)
    /// W10: every object sorted by `city` ascending, then `score` descending
    /// (ties by id), the first `limit`, as ``firstByScore(limit:)``.
    func firstByCityAndScore(limit: Int) throws -> (count: Int, checksum: Int)
    /// The first `limit` by score descending, then city (ties of both by id).
    func firstByScoreAndCity(limit: Int) throws -> (count: Int, checksum: Int)
    /// The first `limit` by the indexed, nearly unique name, then score descending.
    func firstByNameAndScore(limit: Int) throws -> (count: Int, checksum: Int)
    func insertMemos(_ rows: [RowMemo]) throws
    /// W10: memos that contain `needle`; with `caseInsensitive`, ASCII
    /// letters match either case (SQLite's `LIKE`; the memos' other letters have no case).
    func countMemos(containing needle: String, caseInsensitive: Bool) throws -> Int
    /// W9: gives person `i + 1` the list of friends `friends[i]` (ids of shape-C rows).
    func linkFriends(_ friends: [[Int]]) throws
    /// W9: for each person, the sum of its friends' ages; `checksum` weighs each sum by the person's id.
    func sumFriendAges() throws -> (people: Int, checksum: Int)
    /// W9: appends `count` friends to person 1's list, one transaction each; returns its length.
    func appendFriends(_ ids: [Int]) throws -> Int
    /// W9: deletes person `id` (linked from many lists), removing it from every list.
    func deletePerson(_ id: Int) throws
    /// W9: how many list entries point at person `id`.
    func countLinks(to id: Int) throws -> Int

    /// A second handle on the same files, as another thread of the app
    /// would open (LMDB, one environment per process, shares its own).
    func anotherHandle() throws -> any Engine
    /// Moves the handle to the latest commit of any handle (Trove's
    /// `refresh()`; the raw engines' reads always start a new snapshot).
    func refresh()

    /// On a file of `count` shape-B objects: `readers` threads look up random
    /// ids while one thread commits single-object updates, for `seconds`.
    static func readersAndWriter(directory: URL, readers: Int, seconds: Double, count: Int) throws
        -> (reads: Int, latencies: [Double])
}

extension Engine {
    var name: String { Self.name }

    func updateAllEachB() throws -> Int { try updateAllB() }

    func refresh() {}
}

/// Elapsed seconds of `body`.
@inline(__always)
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try measuredSection(body)
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs the part of a workload that is measured. Never inlined, so that
/// `make bench-instructions` counts exactly these calls' instructions
/// (callgrind's `--toggle-collect=*measuredSection*`).
@inline(never)
func measuredSection<T>(_ body: () throws -> T) rethrows -> T { try body() }

@inline(__always)
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}
