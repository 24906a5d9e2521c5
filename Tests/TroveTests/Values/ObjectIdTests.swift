import Foundation
import XCTest

@testable import Trove

/// Expectations come from realm-core's test/test_object_id.cpp and
/// realm-swift's ObjectIdTests.swift.
final class ObjectIdTests: XCTestCase {
    private let sample = "000123450000ffbeef91906c"

    func testStringRoundTrip() throws {
        let id = try ObjectId(string: sample)
        XCTAssertEqual(id.stringValue, sample)
        XCTAssertEqual(id.description, sample)
        XCTAssertEqual(try ObjectId(string: sample.uppercased()), id)
        XCTAssertEqual(try ObjectId(string: sample.uppercased()).stringValue, sample)
        XCTAssertEqual(ObjectId(sample as String), id)
    }

    func testZeroValue() throws {
        XCTAssertEqual(ObjectId(), try ObjectId(string: "000000000000000000000000"))
        XCTAssertEqual(ObjectId().bytes, Array(repeating: 0, count: 12))
    }

    func testLiteralInitializerIsNotOptional() {
        let id = ObjectId("000123450000ffbeef91906c")
        XCTAssertEqual(id.stringValue, sample)
    }

    func testLayoutFromTimestampMachineAndProcess() {
        let id1 = ObjectId(timestamp: Date(timeIntervalSince1970: 0x12345), machineId: 0xff0000, processId: 0xefbe)
        XCTAssertEqual(String(id1.stringValue.prefix(18)), String(sample.prefix(18)))
        XCTAssertEqual(id1.timestamp, Date(timeIntervalSince1970: 0x12345))
        let id2 = ObjectId(timestamp: Date(timeIntervalSince1970: 0x54321), machineId: 0, processId: 0)
        XCTAssertGreaterThan(id2, id1)
        XCTAssertLessThan(id1, id2)
        XCTAssertEqual(ObjectId(bytes: id1.bytes), id1)
    }

    func testTimestampIsWholeSeconds() {
        let now = Date()
        let id = ObjectId(timestamp: now, machineId: 10, processId: 20)
        XCTAssertEqual(Int(now.timeIntervalSince1970), Int(id.timestamp.timeIntervalSince1970))
        let fractional = ObjectId(timestamp: Date(timeIntervalSince1970: 1.9), machineId: 0, processId: 0)
        XCTAssertEqual(fractional.timestamp, Date(timeIntervalSince1970: 1))
    }

    func testOrderingIsBytewise() throws {
        let a = try ObjectId(string: "000123450000ffbeef91906c")
        let b = try ObjectId(string: "000123450000ffbeef91906d")
        let c = try ObjectId(string: "000123450000ffbeef91906c")
        XCTAssertTrue(a != b)
        XCTAssertTrue(a == c)
        XCTAssertTrue(b > a)
        XCTAssertFalse(a > c)
        XCTAssertTrue(b >= a)
        XCTAssertTrue(a >= c)
        XCTAssertTrue(a < b)
        XCTAssertFalse(a < c)
        XCTAssertTrue(a <= b)
        XCTAssertTrue(a <= c)
        // The first differing byte decides, whatever follows.
        XCTAssertLessThan(try ObjectId(string: "7fffffffffffffffffffffff"), try ObjectId(string: "800000000000000000000000"))
        XCTAssertLessThan(try ObjectId(string: "00000000000000ffffffffff"), try ObjectId(string: "000000000000010000000000"))
        XCTAssertLessThan(try ObjectId(string: "0000000000000000ffffffff"), try ObjectId(string: "000000000000000100000000"))
    }

    func testBytes() {
        let bytes: [UInt8] = Array(0..<12)
        let id = ObjectId(bytes: bytes)
        XCTAssertEqual(id.bytes, bytes)
        XCTAssertEqual(id.stringValue, "000102030405060708090a0b")
    }

    func testGeneratedIdentifiers() {
        let before = Date()
        let first = ObjectId.generate()
        let second = ObjectId.generate()
        let after = Date()
        XCTAssertNotEqual(first, second)
        // Same five process bytes, consecutive counters.
        XCTAssertEqual(first.bytes[4..<9], second.bytes[4..<9])
        let counter = { (id: ObjectId) in id.bytes[9..<12].reduce(0) { $0 << 8 | UInt32($1) } }
        XCTAssertEqual((counter(first) + 1) & 0xff_ffff, counter(second))
        XCTAssertGreaterThanOrEqual(first.timestamp.timeIntervalSince1970, before.timeIntervalSince1970.rounded(.down))
        XCTAssertLessThanOrEqual(second.timestamp.timeIntervalSince1970, after.timeIntervalSince1970)
    }

    func testConcurrentGenerationIsUnique() async {
        let ids = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<1_000).map { _ in ObjectId.generate() } }
            }
            var all: [ObjectId] = []
            for await batch in group { all += batch }
            return all
        }
        XCTAssertEqual(Set(ids).count, 8_000)
    }

    func testRejectsInvalidStrings() {
        let cases: [(String, Int?)] = [
            ("", nil), ("abc", nil), ("000123450000ffbeef91906", nil), ("000123450000ffbeef91906c0", nil),
            ("0001234500x0ffbeef91906c", 10), ("g00123450000ffbeef91906c", 0), (" 000123450000ffbeef91906c", 0),
            ("000123450000ffbeef91906ü", 23),
        ]
        for (input, offset) in cases {
            XCTAssertThrowsError(try ObjectId(string: input), input) { error in
                guard let error = error as? ObjectId.ParseError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.input, input)
                XCTAssertEqual(error.offset, offset, input)
                XCTAssertTrue(error.description.contains("'\(input)'"), error.description)
            }
            XCTAssertNil(ObjectId(input), input)
        }
        do {
            _ = try ObjectId(string: "0001234500x0ffbeef91906c")
            XCTFail("parsed")
        } catch {
            XCTAssertEqual(
                "\(error)", "'0001234500x0ffbeef91906c' is not an ObjectId: 'x' at offset 10 is not a hexadecimal digit")
        }
    }

    func testHashable() throws {
        let set: Set<ObjectId> = [try ObjectId(string: sample), try ObjectId(string: sample.uppercased()), ObjectId()]
        XCTAssertEqual(set.count, 2)
    }

    func testCodableUsesTheHexString() throws {
        let ids = [try ObjectId(string: sample), ObjectId()]
        let data = try JSONEncoder().encode(ids)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["\#(sample)","000000000000000000000000"]"#)
        XCTAssertEqual(try JSONDecoder().decode([ObjectId].self, from: data), ids)
        XCTAssertThrowsError(try JSONDecoder().decode([ObjectId].self, from: Data(#"["xyz"]"#.utf8))) { error in
            guard case DecodingError.dataCorrupted = error else { return XCTFail("\(error)") }
        }
    }
}
