import Foundation
import Testing

@testable import Trove

@Suite("Cluster columns")
struct ClusterColumnTests {
    /// Sample values of every column type, nil among them.
    static let samples: [(PropertyType, [StoredValue])] = [
        (.bool, [.bool(true), .null, .bool(false)]),
        (.int8, [.int(-128), .int(127), .null]),
        (.int16, [.int(-30_000), .null, .int(1)]),
        (.int32, [.int(Int64(Int32.min)), .int(7), .null]),
        (.int, [.int(.min), .int(.max), .null, .int(0)]),
        (.link, [.int(42), .null]),
        (.float, [.float(-1.5), .null, .float(.infinity)]),
        (.double, [.double(.pi), .double(-0.0), .null]),
        (.date, [.date(Date(timeIntervalSinceReferenceDate: 12_345.5)), .null]),
        (.uuid, [.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .null]),
        (.objectId, [.objectId(try! ObjectId(string: "507f1f77bcf86cd799439011")), .null]),
        (.decimal128, [.decimal128(try! Decimal128(string: "-12.345")), .null]),
        (.string, [.string("산책"), .string(""), .null, .string(String(repeating: "x", count: 3_000))]),
        (.data, [.data(Data([0, 255, 7])), .null, .data(Data())]),
        (.decimal, [.decimal(Decimal(string: "1.25")!), .null]),
        (.mixed, [.int(3), .string("mixed"), .null, .double(2.5), .bool(true)]),
    ]

    @Test("a cluster's keys written directly are the Int column the general encoder makes")
    func keyColumn() throws {
        for keys in [[], [1], [3, 4, 9, 1 << 40, .max - 1]] as [[UInt64]] {
            let direct = ClusterColumn.encodeKeys(keys)
            #expect(direct == ClusterColumn.encode(keys.map { .int(Int64(bitPattern: $0)) }, type: .int))
            try direct.withUnsafeBytes { bytes in
                let column = try #require(ClusterColumn(bytes, type: .int))
                #expect((0..<column.count).map { UInt64(bitPattern: column.int($0) ?? -1) } == keys)
            }
        }
    }

    @Test("a column without its deleted slots, made in one pass, is the bytes a buffer makes and holds the values kept")
    func removingSlots() throws {
        var random = SystemRandomNumberGenerator()
        for (type, samples) in Self.samples {
            // Many values, so runs of kept and deleted slots of every length occur; a nil only among the deleted in some masks.
            let values = (0..<300).map { samples[($0 * 7 + $0 / 5) % samples.count] }
            let masks: [[Bool]] =
                [
                    Array(repeating: false, count: 300), Array(repeating: true, count: 300),
                    Array(repeating: true, count: 299) + [false],
                    (0..<300).map { $0 < 150 }, (0..<300).map { values[$0].isNull },
                ] + (0..<6).map { _ in (0..<300).map { _ in Int.random(in: 0..<10, using: &random) < 3 } }
            let encoded = ClusterColumn.encode(values, type: type)
            for mask in masks {
                let kept = values.indices.filter { !mask[$0] }.map { values[$0] }
                let buffer = try encoded.withUnsafeBytes { ColumnBuffer(try #require(ClusterColumn($0, type: type))) }
                buffer.removeAll(marked: mask)
                let direct = try encoded.withUnsafeBytes { bytes in
                    let removed = try #require(ClusterColumn(bytes, type: type)).encoded(
                        keeping: ClusterTable.Cluster.runs(keeping: mask), kept: kept.count)
                    defer { removed.deallocate() }
                    return Array(removed)
                }
                #expect(direct == buffer.encoded(), "\(type)")
                #expect(direct == ClusterColumn.encode(kept, type: type), "\(type)")
                try direct.withUnsafeBytes { bytes in
                    let column = try #require(ClusterColumn(bytes, type: type))
                    #expect((0..<column.count).map { column.value($0) } == kept, "\(type)")
                    #expect(ClusterColumn.problem(in: bytes, type: type, count: kept.count) == nil)
                }
            }
        }
    }

    @Test("every type round-trips through a column, nil included, and integers read without building values")
    func roundTrip() throws {
        for (type, values) in Self.samples {
            let encoded = ClusterColumn.encode(values, type: type)
            try encoded.withUnsafeBytes { bytes in
                let column = try #require(ClusterColumn(bytes, type: type), "\(type)")
                #expect(column.count == values.count)
                for (slot, value) in values.enumerated() {
                    #expect(column.value(slot) == value, "\(type) slot \(slot)")
                    #expect(column.isNull(slot) == value.isNull)
                    if type.isInteger || type == .link, case .int(let integer) = value {
                        #expect(column.int(slot) == integer)
                    }
                }
            }
        }
    }

    @Test("509 integers without nil fill one 4 KiB overflow page; a nil adds the bitmap")
    func sizeOfAFullCluster() {
        let full = ClusterColumn.encode((0..<509).map { .int(Int64($0)) }, type: .int)
        // One LMDB overflow page holds 4,080 bytes after its 16-byte header.
        #expect(full.count == 2 + 509 * 8)
        #expect(full.count <= 4_096 - 16)
        let withNil = ClusterColumn.encode([.null] + (1..<509).map { .int(Int64($0)) }, type: .int)
        #expect(withNil.count == 2 + 64 + 509 * 8)
    }

    @Test("a damaged column is refused, or found by the check verify() runs, instead of read out of bounds")
    func damaged() {
        var encoded = ClusterColumn.encode([.string("abc"), .string("defg")], type: .string)
        encoded.withUnsafeBytes { #expect(ClusterColumn.problem(in: $0, type: .string, count: 2) == nil) }
        encoded.withUnsafeBytes { #expect(ClusterColumn.problem(in: $0, type: .string, count: 3) != nil) }
        // An offset past the end (no nils: the offsets follow the count): checked on read, and by verify().
        encoded[2 + 4 * 2] = 200
        encoded.withUnsafeBytes { #expect(ClusterColumn.problem(in: $0, type: .string, count: 2) != nil) }
        // Bytes that are not UTF-8 in a string column.
        var invalid = ClusterColumn.encode([.string("ab")], type: .string)
        invalid[invalid.count - 1] = 0xFF
        invalid.withUnsafeBytes { #expect(ClusterColumn.problem(in: $0, type: .string, count: 1) != nil) }
        // Shorter than its count of fixed slots.
        let cut = Array(ClusterColumn.encode([.int(1), .int(2)], type: .int).dropLast())
        cut.withUnsafeBytes { #expect(ClusterColumn($0, type: .int) == nil) }
        [UInt8]([1]).withUnsafeBytes { #expect(ClusterColumn($0, type: .int) == nil) }
    }
}
