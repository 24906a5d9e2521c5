import Foundation
import Testing

@testable import Trove

/// The cluster layout answers filters with loops over columns
/// (``ClusterFilter``); the record layout tests each record. Both must give
/// the same answers, nil values and negations included.
@Suite("Column filters agree with record filters")
struct ClusterFilterTests {
    static let intColumns = ["int", "int8", "int16", "int32", "optInt", "optInt8", "optInt32", "priority"]

    /// The same random objects in a file of each layout.
    static func makePair(_ name: String = #function) throws -> (rows: Database, clusters: Database) {
        let rows = try makeDatabase(name + "rows")
        let clusters = try makeDatabase(name + "clusters") { $0.storesNewTypesInClusters = true }
        var random = SystemRandomNumberGenerator()
        let doubles = [-1.5, 0, 2.25, 3]
        var objects: [[String: Any?]] = []
        for id in 0..<1_300 {
            func maybe<T>(_ value: T) -> T? { Int.random(in: 0..<4, using: &random) == 0 ? nil : value }
            objects.append([
                "id": id, "int": Int.random(in: -5...5, using: &random), "int8": Int8.random(in: -3...3, using: &random),
                "int16": Int16.random(in: -3...3, using: &random), "int32": Int32.random(in: -3...3, using: &random),
                "optInt": maybe(Int.random(in: -3...3, using: &random)),
                "optInt8": maybe(Int8.random(in: -3...3, using: &random)),
                "optInt32": maybe(Int32.random(in: -3...3, using: &random)),
                "double": doubles.randomElement(using: &random)!, "optDouble": maybe(doubles.randomElement(using: &random)!),
                "bool": Bool.random(using: &random), "optBool": maybe(Bool.random(using: &random)),
                "string": ["a", "b", "c"].randomElement(using: &random)!,
                "priority": [Priority.low, .normal, .high].randomElement(using: &random)!,
            ])
        }
        for db in [rows, clusters] {
            try db.write {
                for values in objects {
                    let object = AllTypes()
                    object.id = values["id"] as! Int
                    object.int = values["int"] as! Int
                    object.int8 = values["int8"] as! Int8
                    object.int16 = values["int16"] as! Int16
                    object.int32 = values["int32"] as! Int32
                    object.optInt = values["optInt"] as? Int
                    object.optInt8 = values["optInt8"] as? Int8
                    object.optInt32 = values["optInt32"] as? Int32
                    object.double = values["double"] as! Double
                    object.optDouble = values["optDouble"] as? Double
                    object.bool = values["bool"] as! Bool
                    object.optBool = values["optBool"] as? Bool
                    object.string = values["string"] as! String
                    object.priority = values["priority"] as! Priority
                    try db.add(object)
                }
            }
        }
        return (rows, clusters)
    }

    /// A random predicate over the columns the loops handle, now and then with a part they do not.
    static func predicate(depth: Int = 0, _ random: inout SystemRandomNumberGenerator) -> String {
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        if depth < 2, Int.random(in: 0..<3, using: &random) == 0 {
            let left = predicate(depth: depth + 1, &random)
            let right = predicate(depth: depth + 1, &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return "(\(left) AND \(right))"
            case 1: return "(\(left) OR \(right))"
            default: return "NOT (\(left))"
            }
        }
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            let column = intColumns.randomElement(using: &random)!
            if Int.random(in: 0..<6, using: &random) == 0 { return "\(column) BETWEEN {-1, 2}" }
            let constant =
                column == "priority" ? [1, 5, 9].randomElement(using: &random)! : Int.random(in: -3...3, using: &random)
            return "\(column) \(ops.randomElement(using: &random)!) \(constant)"
        case 5, 6:
            let column = ["double", "optDouble"].randomElement(using: &random)!
            return "\(column) \(ops.randomElement(using: &random)!) \([-1.5, 0.0, 2.25, 2.5].randomElement(using: &random)!)"
        case 7, 8:
            let column = ["bool", "optBool"].randomElement(using: &random)!
            return "\(column) \(["==", "!="].randomElement(using: &random)!) \(Bool.random(using: &random))"
        default:
            // No column loop for strings yet: the whole predicate runs on records.
            return "string == 'b'"
        }
    }

    @Test("random filters, counts, sums, extremes and sorted prefixes agree between the layouts")
    func randomFiltersAgree() throws {
        let (rows, clusters) = try Self.makePair()
        var random = SystemRandomNumberGenerator()
        for _ in 0..<150 {
            let text = Self.predicate(&random)
            let expected = try rows.objects(AllTypes.self).filter(text)
            let found = try clusters.objects(AllTypes.self).filter(text)
            #expect(found.map(\.id) == expected.map(\.id), "\(text)")
            #expect(found.count == expected.count, "\(text): count")
            #expect(found.sum(of: \.int) == expected.sum(of: \.int), "\(text): sum of int")
            #expect(found.sum(of: \.double) == expected.sum(of: \.double), "\(text): sum of double")
            #expect(found.sum(of: \.optInt) == expected.sum(of: \.optInt), "\(text): sum of optInt")
            #expect(found.max(of: \.int32) == expected.max(of: \.int32), "\(text): max of int32")
            #expect(found.average(of: \.int8) == expected.average(of: \.int8), "\(text): average of int8")
            #expect(
                found.sorted(by: \.int).prefix(5).map(\.int) == expected.sorted(by: \.int).prefix(5).map(\.int),
                "\(text): sorted prefix")
            // Counted first: the count's match flags then serve the sum and the keys.
            let fresh = try clusters.objects(AllTypes.self).filter(text)
            #expect(fresh.count == expected.count, "\(text): count before the keys")
            #expect(fresh.sum(of: \.int) == expected.sum(of: \.int), "\(text): sum after the count")
            #expect(fresh.map(\.id) == expected.map(\.id), "\(text): keys after the count")
        }
    }

    @Test("sums of integers too large to add eight at a time agree with the record layout")
    func largeIntegerSums() throws {
        let rows = try makeDatabase("largeSums-rows")
        let clusters = try makeDatabase("largeSums-clusters") { $0.storesNewTypesInClusters = true }
        var random = SystemRandomNumberGenerator()
        // Three clusters; large values (above 2^53) only in the second, so the others take the eight-wide path.
        let values = (0..<1_300).map { index in
            index / 509 == 1 && index % 7 == 0
                ? Int.random(in: (1 << 54)...(1 << 55), using: &random) * (index % 2 == 0 ? 1 : -1)
                : Int.random(in: -1_000_000...1_000_000, using: &random)
        }
        for db in [rows, clusters] {
            try db.write {
                for (index, value) in values.enumerated() {
                    let object = AllTypes()
                    object.id = index
                    object.int = value
                    try db.add(object)
                }
            }
        }
        for text in ["id >= 0", "id < 509", "id >= 509 AND id < 1018", "id % 3 == 0", "int > 0", "int < 0"] {
            guard let expected = try? rows.objects(AllTypes.self).filter(text) else { continue }
            let found = try clusters.objects(AllTypes.self).filter(text)
            #expect(found.count == expected.count, "\(text): count")
            #expect(found.sum(of: \.int) == expected.sum(of: \.int), "\(text): sum")
            #expect(found.sum(of: \.int) == expected.map(\.int).reduce(0, +), "\(text): the exact sum")
        }
    }

    @Test("inside a write, filters and sums see the write's own changes")
    func filtersSeeTheirWrite() throws {
        let (rows, clusters) = try Self.makePair()
        for db in [rows, clusters] {
            try db.write {
                for object in try db.objects(AllTypes.self).filter("id < 50") { object.int = 100 }
                let late = AllTypes()
                late.id = 10_000
                late.int = 100
                try db.add(late)
                if let gone = db.object(ofType: AllTypes.self, forPrimaryKey: 60) { try db.delete(gone) }
                let changed = try db.objects(AllTypes.self).filter("int == 100")
                #expect(changed.map(\.id) == Array(0..<50) + [10_000])
                #expect(changed.sum(of: \.int) == 5_100)
                #expect(try db.objects(AllTypes.self).filter("id BETWEEN {59, 61}").map(\.id) == [59, 61])
            }
        }
    }
}
