import Foundation
import Trove

final class BenchA: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var v0: Int64 = 0
    @Persisted var v1: Int64 = 0
    @Persisted var v2: Int64 = 0
    @Persisted var v3: Int64 = 0
    @Persisted var v4: Int64 = 0
    @Persisted var v5: Int64 = 0
    @Persisted var v6: Int64 = 0
    @Persisted var v7: Int64 = 0
    @Persisted var v8: Int64 = 0
    @Persisted var v9: Int64 = 0
}

final class BenchB: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var flag = false
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()

    var checksum: Int64 {
        RowB.checksum(
            id: id, flag: flag, int8: int8, int16: int16, int32: int32, int64: int64, float: float, double: double,
            stringBytes: string.utf8.count, dataBytes: data.count)
    }
}

/// Shape B as a `Persistable` struct (structs are to cost what classes do).
struct BenchBValue: Persistable {
    static var primaryKey: KeyPath<BenchBValue, Int> { \.id }
    var id = 0
    var flag = false
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var float: Float = 0
    var double: Double = 0
    var string = ""
    var data = Data()

    var checksum: Int64 {
        RowB.checksum(
            id: id, flag: flag, int8: int8, int16: int16, int32: int32, int64: int64, float: float, double: double,
            stringBytes: string.utf8.count, dataBytes: data.count)
    }
}

final class BenchC: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted(indexed: true) var city = ""
    @Persisted var score = 0
    @Persisted var friends = List<BenchC>()
}

final class BenchMemo: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var memo = ""
}

/// Trove, used the way an app uses it: model objects, write blocks, Results.
class TroveEngine: Engine {
    class var name: String { "Trove" }
    let db: Database
    let url: URL
    private let durability: Durability

    required convenience init(directory: URL, durability: Durability) throws {
        try self.init(directory: directory, durability: durability, encryptionKey: nil)
    }

    init(directory: URL, durability: Durability, encryptionKey: Data?) throws {
        url = directory.appendingPathComponent("bench.trove")
        self.durability = durability
        var configuration = Configuration(
            fileURL: url, objectTypes: [BenchA.self, BenchB.self, BenchC.self, BenchMemo.self],
            valueTypes: [BenchBValue.self], durability: durability == .full ? .full : .relaxed)
        configuration.encryptionKey = encryptionKey
        db = try Database(configuration: configuration)
    }

    func fileSize() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? 0
    }

    func anotherHandle() throws -> any Engine {
        try type(of: self).init(directory: url.deletingLastPathComponent(), durability: durability)
    }

    func refresh() { db.refresh() }

    func compact() throws -> Int {
        let target = url.deletingLastPathComponent().appendingPathComponent("compacted.trove")
        try db.writeCopy(to: target)
        return ((try? FileManager.default.attributesOfItem(atPath: target.path)[.size]) as? Int) ?? 0
    }

    func insertA(_ rows: [RowA]) throws {
        try db.write {
            for row in rows {
                let object = BenchA()
                object.id = row.id
                object.v0 = row.values[0]
                object.v1 = row.values[1]
                object.v2 = row.values[2]
                object.v3 = row.values[3]
                object.v4 = row.values[4]
                object.v5 = row.values[5]
                object.v6 = row.values[6]
                object.v7 = row.values[7]
                object.v8 = row.values[8]
                object.v9 = row.values[9]
                try db.add(object)
            }
        }
    }

    func scanA() throws -> (count: Int, checksum: Int64) {
        var count = 0
        var sum: Int64 = 0
        for object in db.objects(BenchA.self) {
            count += 1
            sum = sum &+ Int64(object.id) &+ object.v0 &+ object.v1 &+ object.v2 &+ object.v3 &+ object.v4 &+ object.v5
            sum = sum &+ object.v6 &+ object.v7 &+ object.v8 &+ object.v9
        }
        return (count, sum)
    }

    private func make(_ row: RowB) -> BenchB {
        let object = BenchB()
        object.id = row.id
        object.flag = row.flag
        object.int8 = row.int8
        object.int16 = row.int16
        object.int32 = row.int32
        object.int64 = row.int64
        object.float = row.float
        object.double = row.double
        object.string = row.string
        object.data = Data(row.data)
        return object
    }

    func insertB(_ rows: [RowB]) throws {
        try db.write {
            for row in rows { try db.add(make(row)) }
        }
    }

    func insertEachB(_ rows: [RowB]) throws -> [Double] {
        try rows.map { row in
            let object = make(row)
            return try measure { try db.write { try db.add(object) } }
        }
    }

    func updateEachB(_ rows: [RowB]) throws -> [Double] {
        try rows.map { row in
            try measure {
                try db.write {
                    guard let object = db.object(ofType: BenchB.self, forPrimaryKey: row.id) else {
                        throw BenchmarkFailure(description: "Trove: object \(row.id) missing")
                    }
                    object.int64 = row.int64 &+ 1
                }
            }
        }
    }

    func deleteEachB(_ ids: [Int]) throws -> [Double] {
        try ids.map { id in
            try measure {
                try db.write {
                    guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                        throw BenchmarkFailure(description: "Trove: object \(id) missing")
                    }
                    try db.delete(object)
                }
            }
        }
    }

    func scanB() throws -> (count: Int, checksum: Int64) {
        var count = 0
        var sum: Int64 = 0
        for object in db.objects(BenchB.self) {
            count += 1
            sum = sum &+ object.checksum
        }
        return (count, sum)
    }

    func fetchAllB() throws -> (count: Int, checksum: Int64) {
        let objects = db.objects(BenchB.self).array()
        return (objects.count, objects.reduce(0) { $0 &+ $1.checksum })
    }

    func lookupB(_ ids: [Int]) throws -> (checksum: Int64, latencies: [Double]) {
        var sum: Int64 = 0
        var latencies: [Double] = []
        latencies.reserveCapacity(ids.count)
        for id in ids {
            let start = now()
            guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                throw BenchmarkFailure(description: "Trove: object \(id) missing")
            }
            sum = sum &+ object.checksum
            latencies.append(Double(now() - start) / 1e9)
        }
        return (sum, latencies)
    }

    func updateAllB() throws -> Int {
        try db.write { try db.objects(BenchB.self).update(\.int64) { $0 &+ 1 } }
    }

    func updateAllEachB() throws -> Int {
        var count = 0
        try db.write {
            for object in db.objects(BenchB.self) {
                object.int64 = object.int64 &+ 1
                count += 1
            }
        }
        return count
    }

    func updateB(_ ids: [Int], batch: Int) throws {
        for start in stride(from: 0, to: ids.count, by: batch) {
            try db.write {
                for id in ids[start..<min(start + batch, ids.count)] {
                    guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                        throw BenchmarkFailure(description: "Trove: object \(id) missing")
                    }
                    object.int64 = object.int64 &+ 1
                }
            }
        }
    }

    func deleteAllB() throws {
        try db.write { try db.delete(db.objects(BenchB.self)) }
    }

    func deleteB(_ ids: [Int]) throws {
        try db.write {
            for id in ids {
                guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                    throw BenchmarkFailure(description: "Trove: object \(id) missing")
                }
                try db.delete(object)
            }
        }
    }

    func countB() throws -> Int { db.objects(BenchB.self).count }

    func insertC(_ rows: [RowC]) throws {
        try db.write {
            for row in rows {
                let object = BenchC()
                object.id = row.id
                object.name = row.name
                object.age = row.age
                object.city = row.city
                object.score = row.score
                try db.add(object)
            }
        }
    }

    func linkFriends(_ friends: [[Int]]) throws {
        let people = db.objects(BenchC.self).array()  // in id order: person i + 1 is people[i]
        try db.write {
            for (index, list) in friends.enumerated() {
                people[index].friends.append(contentsOf: list.map { people[$0 - 1] })
            }
        }
    }

    func appendFriends(_ ids: [Int]) throws -> Int {
        let person = db.object(ofType: BenchC.self, forPrimaryKey: 1)!
        for id in ids {
            let friend = db.object(ofType: BenchC.self, forPrimaryKey: id)!
            try db.write { person.friends.append(friend) }
        }
        return person.friends.count
    }

    func deletePerson(_ id: Int) throws {
        let person = db.object(ofType: BenchC.self, forPrimaryKey: id)!
        try db.write { try db.delete(person) }
    }

    func countLinks(to id: Int) throws -> Int {
        try db.objects(BenchC.self).filter("ANY friends.id == %@", id).reduce(0) { total, person in
            total + person.friends.filter { $0.id == id }.count
        }
    }

    func sumFriendAges() throws -> (people: Int, checksum: Int) {
        var people = 0
        var checksum = 0
        for person in db.objects(BenchC.self) {
            let sum = person.friends.sum(of: \.age)
            people += 1
            checksum &+= person.id &* sum
        }
        return (people, checksum)
    }

    func countAgeEquals(_ value: Int) throws -> Int {
        try db.objects(BenchC.self).filter("age == %@", value).count
    }

    func countNameEquals(_ value: String) throws -> Int {
        try db.objects(BenchC.self).filter("name == %@", value).count
    }

    func countScoreEquals(_ value: Int) throws -> Int {
        try db.objects(BenchC.self).filter("score == %@", value).count
    }

    func countAndSumScore(_ low: Int, _ high: Int) throws -> (count: Int, sum: Int) {
        let range = try db.objects(BenchC.self).filter("score >= %@ AND score < %@", low, high)
        return (range.count, range.sum(of: \.score))
    }

    func fetchScoreRange(_ low: Int, _ high: Int, limit: Int) throws -> (count: Int, checksum: Int) {
        let range = try db.objects(BenchC.self).filter("score >= %@ AND score < %@", low, high).sorted(by: \.score)
        var checksum = 0
        var count = 0
        for object in range.prefix(limit) {
            checksum &+= object.age &+ object.score
            count += 1
        }
        return (count, checksum)
    }

    func countNameRange(_ low: String, _ high: String) throws -> Int {
        try db.objects(BenchC.self).filter("name >= %@ AND name < %@", low, high).count
    }

    private func checksum(_ objects: some Sequence<BenchC>) -> (count: Int, checksum: Int) {
        var count = 0
        var checksum = 0
        for object in objects {
            count += 1
            checksum &+= count &* object.id
        }
        return (count, checksum)
    }

    func firstByScore(limit: Int) throws -> (count: Int, checksum: Int) {
        checksum(db.objects(BenchC.self).sorted(by: \.score).prefix(limit))
    }

    func firstByCityAndScore(limit: Int) throws -> (count: Int, checksum: Int) {
        let sort = [SortDescriptor(keyPath: "city"), SortDescriptor(keyPath: "score", ascending: false)]
        return checksum(db.objects(BenchC.self).sorted(by: sort).prefix(limit))
    }

    func firstByScoreAndCity(limit: Int) throws -> (count: Int, checksum: Int) {
        let sort = [SortDescriptor(keyPath: "score", ascending: false), SortDescriptor(keyPath: "city")]
        return checksum(db.objects(BenchC.self).sorted(by: sort).prefix(limit))
    }

    func firstByNameAndScore(limit: Int) throws -> (count: Int, checksum: Int) {
        let sort = [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "score", ascending: false)]
        return checksum(db.objects(BenchC.self).sorted(by: sort).prefix(limit))
    }

    func insertMemos(_ rows: [RowMemo]) throws {
        try db.write {
            for row in rows {
                let object = BenchMemo()
                object.id = row.id
                object.memo = row.memo
                try db.add(object)
            }
        }
    }

    func countMemos(containing needle: String, caseInsensitive: Bool) throws -> Int {
        try db.objects(BenchMemo.self).filter(caseInsensitive ? "memo CONTAINS[c] %@" : "memo CONTAINS %@", needle).count
    }

    static func readersAndWriter(directory: URL, readers: Int, seconds: Double, count: Int) throws
        -> (reads: Int, latencies: [Double])
    {
        let url = directory.appendingPathComponent("bench.trove")
        return try runReadersAndWriter(
            readers: readers, seconds: seconds,
            reader: { index, results in
                let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [BenchB.self]))
                var random = SeededGenerator(seed: UInt64(100 + index))
                var reads = 0
                var sum: Int64 = 0
                while reads % 256 != 0 || !results.isStopped {
                    let id = Int.random(in: 1...count, using: &random)
                    guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                        throw BenchmarkFailure(description: "Trove: object \(id) missing")
                    }
                    sum = sum &+ object.checksum
                    reads += 1
                    if reads % 256 == 0 { db.refresh() }
                }
                return sum == 42 ? reads + 1 : reads
            },
            writer: { results in
                let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [BenchB.self]))
                var random = SeededGenerator(seed: 99)
                var latencies: [Double] = []
                while !results.isStopped {
                    let id = Int.random(in: 1...count, using: &random)
                    latencies.append(
                        try measure {
                            try db.write {
                                guard let object = db.object(ofType: BenchB.self, forPrimaryKey: id) else {
                                    throw BenchmarkFailure(description: "Trove: object \(id) missing")
                                }
                                object.int64 = object.int64 &+ 1
                            }
                        })
                }
                return latencies
            })
    }
}

/// Trove with shape B as a `Persistable` struct instead of an `Object`
/// class, reported in the Trove column of its own rows ("STRUCT").
final class StructTroveEngine: TroveEngine {
    required convenience init(directory: URL, durability: Durability) throws {
        try self.init(directory: directory, durability: durability, encryptionKey: nil)
    }

    override func insertB(_ rows: [RowB]) throws {
        try db.write {
            for row in rows {
                try db.add(
                    BenchBValue(
                        id: row.id, flag: row.flag, int8: row.int8, int16: row.int16, int32: row.int32, int64: row.int64,
                        float: row.float, double: row.double, string: row.string, data: Data(row.data)))
            }
        }
    }

    override func insertEachB(_ rows: [RowB]) throws -> [Double] {
        try rows.map { row in
            let value = BenchBValue(
                id: row.id, flag: row.flag, int8: row.int8, int16: row.int16, int32: row.int32, int64: row.int64,
                float: row.float, double: row.double, string: row.string, data: Data(row.data))
            return try measure { try db.write { try db.add(value) } }
        }
    }

    override func countB() throws -> Int { db.values(BenchBValue.self).count }

    override func fetchAllB() throws -> (count: Int, checksum: Int64) {
        let values = db.values(BenchBValue.self).array()
        return (values.count, values.reduce(0) { $0 &+ $1.checksum })
    }

    override func scanB() throws -> (count: Int, checksum: Int64) {
        var count = 0
        var sum: Int64 = 0
        for value in db.values(BenchBValue.self) {
            count += 1
            sum = sum &+ value.checksum
        }
        return (count, sum)
    }
}

/// The class engine under another name, taking turns with the struct engine in the STRUCT rows.
final class ClassTroveEngine: TroveEngine {
    override class var name: String { "TroveClass" }
}

/// Trove with an encryption key: the same work, every value sealed with
/// AES-256-GCM. Reported in the Trove column of its own rows ("ENC").
final class EncryptedTroveEngine: TroveEngine {
    required convenience init(directory: URL, durability: Durability) throws {
        try self.init(directory: directory, durability: durability, encryptionKey: Data((0..<64).map { UInt8($0) }))
    }
}
