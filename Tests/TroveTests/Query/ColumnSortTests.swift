import Foundation
import Testing

@testable import Trove

/// A sort with a limit (`prefix`, `first`) in the cluster layout keeps its
/// first rows while it reads the sort columns, comparing each object with
/// the last row kept from the column bytes. Its rows must be the full sort's
/// first rows: nils, ties (by object key), both directions, every kind of
/// sort value, filters, deleted objects and a write's own changes included.
@Suite("First rows of a sort read from the columns")
struct ColumnSortTests {
    static let sortable = [
        "int", "int8", "int16", "optInt", "optInt32", "double", "optDouble", "float", "bool", "optBool", "string",
        "optString", "date", "optDate", "priority", "uuid", "decimal", "optDecimal",
    ]

    /// Objects with few distinct values per property (ties everywhere) and nils.
    static func fill(_ db: Database, count: Int, startingAt first: Int = 0) throws {
        var random = SystemRandomNumberGenerator()
        func maybe<T>(_ value: T) -> T? { Int.random(in: 0..<4, using: &random) == 0 ? nil : value }
        let strings = ["", "a", "ab", "b", "Seoul", "서울", "부산", "z\u{0}"]
        let uuids = (0..<3).map { _ in UUID() }
        try db.write {
            for id in first..<(first + count) {
                let object = AllTypes()
                object.id = id
                object.int = Int.random(in: -3...3, using: &random)
                object.int8 = Int8.random(in: -2...2, using: &random)
                object.int16 = Int16.random(in: -2...2, using: &random)
                object.optInt = maybe(Int.random(in: -3...3, using: &random))
                object.optInt32 = maybe(Int32.random(in: -3...3, using: &random))
                object.double = [-1.5, 0, 2.25].randomElement(using: &random)!
                object.optDouble = maybe([-1.5, 0, 2.25].randomElement(using: &random)!)
                object.float = [-1, 0.5, 2].randomElement(using: &random)!
                object.bool = Bool.random(using: &random)
                object.optBool = maybe(Bool.random(using: &random))
                object.string = strings.randomElement(using: &random)!
                object.optString = maybe(strings.randomElement(using: &random)!)
                object.date = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &random)))
                object.optDate = maybe(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...3, using: &random))))
                object.priority = [Priority.low, .normal, .high].randomElement(using: &random)!
                object.uuid = uuids.randomElement(using: &random)!
                object.decimal = Decimal(Int.random(in: -2...2, using: &random))
                object.optDecimal = maybe(Decimal(Int.random(in: -2...2, using: &random)) / 4)
                try db.add(object)
            }
        }
    }

    /// The ids of the first `limit` of `results` through the first-rows path, and through the full sort.
    static func firstAndFull(_ results: Results<AllTypes>, limit: Int) -> (first: [Int], full: [Int]) {
        (results.prefix(limit).map(\.id), Array(results.map(\.id).prefix(limit)))
    }

    static func randomSort(_ random: inout SystemRandomNumberGenerator) -> [Trove.SortDescriptor] {
        (0..<Int.random(in: 1...3, using: &random)).map { _ in
            Trove.SortDescriptor(keyPath: sortable.randomElement(using: &random)!, ascending: Bool.random(using: &random))
        }
    }

    @Test("random sorts, limits and filters give the full sort's first rows, in both layouts")
    func randomSortsAgree() throws {
        let clusters = try makeDatabase(#function + "clusters") { $0.storesNewTypesInClusters = true }
        let rows = try makeDatabase(#function + "rows") { $0.storesNewTypesInClusters = false }
        try Self.fill(clusters, count: 1_400)
        // The same objects in the record layout.
        try rows.write {
            for object in clusters.objects(AllTypes.self) { try rows.add(AllTypes(value: object)) }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let sort = Self.randomSort(&random)
            let limit = [1, 3, 10, 100, 700, 1_399].randomElement(using: &random)!
            let filter = Int.random(in: 0..<3, using: &random) == 0 ? nil : ClusterFilterTests.predicate(&random)
            let describe = "\(sort.map { "\($0.keyPath) \($0.ascending ? "asc" : "desc")" }) limit \(limit) \(filter ?? "")"
            func results(_ db: Database) throws -> Results<AllTypes> {
                let all = db.objects(AllTypes.self)
                return try (filter.map { try all.filter($0) } ?? all).sorted(by: sort)
            }
            let (first, full) = Self.firstAndFull(try results(clusters), limit: limit)
            #expect(first == full, "\(describe)")
            #expect(first == Array(try results(rows).map(\.id).prefix(limit)), "\(describe): the record layout")
            #expect(try results(clusters).first?.id == full.first, "\(describe): first")
        }
    }

    @Test("inside a write, the first rows see the write's deletions and changes")
    func aWritesOwnChangesAreSorted() throws {
        let db = try makeDatabase { $0.storesNewTypesInClusters = true }
        try Self.fill(db, count: 1_200)
        var random = SystemRandomNumberGenerator()
        try db.write {
            // Every third object deleted (slots marked, not removed), some values changed in the write's columns.
            for id in stride(from: 0, to: 1_200, by: 3) { try db.delete(db.object(ofType: AllTypes.self, forPrimaryKey: id)!) }
            for id in stride(from: 1, to: 1_200, by: 7) where id % 3 != 0 {
                let object = db.object(ofType: AllTypes.self, forPrimaryKey: id)!
                object.int = 100 + id % 5
                object.optString = id % 2 == 0 ? nil : "zz\(id % 4)"
            }
            try db.add(
                (2_000..<2_040).map { id in
                    let object = AllTypes()
                    object.id = id
                    object.int = -100
                    object.string = "서울"
                    return object
                })
            for _ in 0..<40 {
                let sort = Self.randomSort(&random)
                let limit = [1, 5, 50, 300].randomElement(using: &random)!
                let (first, full) = Self.firstAndFull(db.objects(AllTypes.self).sorted(by: sort), limit: limit)
                #expect(first == full, "\(sort.map(\.keyPath)) limit \(limit)")
            }
            let lowest = db.objects(AllTypes.self).sorted(by: [Trove.SortDescriptor(keyPath: "int")]).prefix(40).map(\.id)
            #expect(lowest == Array(2_000..<2_040))
            let highest = db.objects(AllTypes.self).sorted(by: \.int, ascending: false).prefix(3).map(\.int)
            #expect(highest.allSatisfy { $0 >= 100 })
        }
    }

    @Test("a NaN among the sort values gives the full sort's answer")
    func notANumberSortsAsTheFullSort() throws {
        let db = try makeDatabase { $0.storesNewTypesInClusters = true }
        try Self.fill(db, count: 900)
        try db.write {
            for id in [5, 600] { db.object(ofType: AllTypes.self, forPrimaryKey: id)!.double = .nan }
        }
        for ascending in [true, false] {
            for limit in [1, 10, 400] {
                let sort = [Trove.SortDescriptor(keyPath: "double", ascending: ascending), Trove.SortDescriptor(keyPath: "int")]
                let (first, full) = Self.firstAndFull(db.objects(AllTypes.self).sorted(by: sort), limit: limit)
                #expect(first == full, "ascending \(ascending) limit \(limit)")
            }
        }
    }

    @Test("a whole sort by one Float, Double or Date orders as the numbers do", arguments: [true, false])
    func wholeSortsByFloatingPointOrderAsTheNumbers(clusters: Bool) throws {
        let db = try makeDatabase(#function + "\(clusters)") { $0.storesNewTypesInClusters = clusters }
        let numbers: [Double] = [
            -.infinity, -1e300, -2.5, -1, -.leastNonzeroMagnitude, -0.0, 0, .leastNonzeroMagnitude, 1e-300, 1, 2.5,
            1e300, .infinity,
        ]
        var random = SystemRandomNumberGenerator()
        var expected: [(id: Int, number: Double, double: Double?, float: Float?, date: Date?)] = []
        try db.write {
            for id in 0..<600 {
                let object = AllTypes()
                object.id = id
                let number = numbers.randomElement(using: &random)!
                object.double = number
                object.optDouble = id % 5 == 0 ? nil : number
                object.optFloat = id % 7 == 0 ? nil : Float(numbers.randomElement(using: &random)!)
                object.optDate = id % 3 == 0 ? nil : Date(timeIntervalSinceReferenceDate: number / 1e290)
                expected.append((id, number, object.optDouble, object.optFloat, object.optDate))
                try db.add(object)
            }
        }
        /// Ids by `value`, nil first ascending and last descending, ties in the order the objects were added.
        func reference<T: Comparable>(_ value: (Int) -> T?, ascending: Bool) -> [Int] {
            expected.map(\.id).sorted { a, b in
                switch (value(a), value(b)) {
                case (nil, nil): return a < b
                case (nil, _): return ascending
                case (_, nil): return !ascending
                case (let x?, let y?): return x == y ? a < b : (x < y) == ascending
                }
            }
        }
        for ascending in [true, false] {
            let all = db.objects(AllTypes.self)
            /// The sort by `property` against the reference sort of `value`.
            func expectOrder<T: Comparable>(_ property: String, _ value: (Int) -> T?) {
                #expect(
                    all.sorted(byKeyPath: property, ascending: ascending).map(\.id)
                        == reference(value, ascending: ascending), "\(property) ascending \(ascending)")
            }
            expectOrder("double") { expected[$0].number }
            expectOrder("optDouble") { expected[$0].double }
            expectOrder("optFloat") { expected[$0].float }
            expectOrder("optDate") { expected[$0].date }
            // Filtered, and with a limit past the first rows' path.
            let small = try all.filter("id < 300").sorted(by: \.optDouble, ascending: ascending)
            #expect(small.map(\.id) == reference({ expected[$0].double }, ascending: ascending).filter { $0 < 300 })
        }
        // A NaN leaves the numbers without a total order: every object is still there.
        try db.write { db.object(ofType: AllTypes.self, forPrimaryKey: 10)!.optDouble = .nan }
        #expect(Set(db.objects(AllTypes.self).sorted(by: \.optDouble).map(\.id)) == Set(0..<600))
    }

    @Test("objects stored before a sort property was added sort by its default")
    func clustersOlderThanAPropertySortByItsDefault() throws {
        let url = makeTemporaryDirectory(#function).appendingPathComponent("test.trove")
        func configuration(_ version: UInt64, _ type: Object.Type) -> Configuration {
            var configuration = Configuration(fileURL: url, schemaVersion: version, objectTypes: [type])
            configuration.encryptionKey = suiteEncryptionKey
            configuration.storesNewTypesInClusters = true
            return configuration
        }
        do {
            let db = try Database(configuration: configuration(1, RankV1.Entry.self))
            try db.write {
                for id in 0..<1_000 {
                    let entry = RankV1.Entry()
                    entry.id = id
                    entry.city = ["Oslo", "Lima", "Baku"][id % 3]
                    try db.add(entry)
                }
            }
        }
        let db = try Database(configuration: configuration(2, RankV2.Entry.self))
        try db.write {
            // New objects after the old ones: clusters with the column and clusters without it.
            for id in 1_000..<1_600 {
                let entry = RankV2.Entry()
                entry.id = id
                entry.city = ["Oslo", "Lima", "Baku"][id % 3]
                entry.rank = id % 2 == 0 ? nil : id % 11
                try db.add(entry)
            }
        }
        for sort in [
            [Trove.SortDescriptor(keyPath: "rank"), Trove.SortDescriptor(keyPath: "city")],
            [Trove.SortDescriptor(keyPath: "city", ascending: false), Trove.SortDescriptor(keyPath: "rank", ascending: false)],
            [Trove.SortDescriptor(keyPath: "rank", ascending: false)],
        ] {
            for limit in [1, 20, 700] {
                let results = db.objects(RankV2.Entry.self).sorted(by: sort)
                #expect(
                    results.prefix(limit).map(\.id) == Array(results.map(\.id).prefix(limit)),
                    "\(sort.map(\.keyPath)) limit \(limit)")
            }
        }
        // The old objects read the new property's default: nil sorts first.
        let first = db.objects(RankV2.Entry.self).sorted(by: [Trove.SortDescriptor(keyPath: "rank")]).prefix(3).map(\.id)
        #expect(first == [0, 1, 2])
    }
}

/// A model before and after an optional property is added (stored as "Entry").
enum RankV1 {
    final class Entry: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var city = ""
    }
}

enum RankV2 {
    final class Entry: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var city = ""
        @Persisted var rank: Int?
    }
}
