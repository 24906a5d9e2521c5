import Foundation
import XCTest

@testable import Trove

/// Expectations come from realm-core's test/test_decimal128.cpp, realm-swift's
/// Decimal128Tests.swift, and plain decimal arithmetic.
final class Decimal128Tests: XCTestCase {
    private func parse(_ text: String) throws -> Decimal128 { try Decimal128(string: text) }

    private func hashOf(_ value: Decimal128) -> Int {
        var hasher = Hasher()
        hasher.combine(value)
        return hasher.finalize()
    }

    // MARK: Text, as realm-core formats it

    func testParsesAndFormatsLikeRealmCore() throws {
        let expectations: [(String, String)] = [
            ("0", "0"), ("0.000", "0E-3"), ("0E-3", "0E-3"), ("3.1416", "3.1416"),
            ("3.1416e-4", "3.1416E-4"), ("-3.1416e-4", "-3.1416E-4"), ("10e2", "1.0E3"), ("10e+2", "1.0E3"),
            ("1e-00021", "1E-21"), ("10.100e2", "1010.0"), (".00000001", "1E-8"),
            (".00000001000000000", "1.000000000E-8"), ("1.14142E27", "1.14142E27"), ("+Infinity", "Inf"),
            ("-INF", "-Inf"), ("  0", "0"), ("9.99e6144", "+9990000000000000000000000000000000E+6111"),
            ("1.701e38", "1.701E38"), ("1.797e308", "1.797E308"),
            ("3.141592653589793238", "3.141592653589793238"), ("123e4", "1.23E6"), ("-1.5", "-1.5"),
            ("1E-6176", "1E-6176"), ("NaN", "NaN"), ("-0", "-0"), ("1000.00", "1000.00"),
        ]
        for (input, output) in expectations {
            XCTAssertEqual(try parse(input).coreDescription, output, input)
        }
    }

    func testDescriptionTrimsFractionZerosLikeRealmSwift() throws {
        XCTAssertEqual(try parse("1.00").description, "1")
        XCTAssertEqual(try parse("10e2").description, "1E3")
        XCTAssertEqual(try parse("1000.00").description, "1000")
        XCTAssertEqual(try parse("2.50").description, "2.5")
        XCTAssertEqual(try parse("100").description, "100")
        XCTAssertEqual(try parse("0.000").description, "0E-3")
        XCTAssertEqual((try parse("1.234567") + parse("9.876543")).description, "11.11111")
        XCTAssertEqual((try parse("2.5") - parse("3.5")).description, "-1")
        XCTAssertEqual(Decimal128(0.1).description, "1E-1")
        XCTAssertEqual(Decimal128(0.1).stringValue, Decimal128(0.1).description)
    }

    func testTextRoundTrips() throws {
        let samples = [
            "0", "-0", "1.00", "123e4", "-1.5", "1E-6176", "9999999999999999999999999999999999E6111",
            "1234567890123456789012345678901234E-40", "0.1", "-7E300", "+Inf", "-Inf",
        ]
        for sample in samples {
            let value = try parse(sample)
            XCTAssertEqual(try parse(value.coreDescription).bid.high, value.bid.high, sample)
            XCTAssertEqual(try parse(value.coreDescription).bid.low, value.bid.low, sample)
            XCTAssertEqual(try parse(value.description), value, sample)
        }
    }

    // MARK: Parsing

    func testRoundsLongInputHalfEvenToThirtyFourDigits() throws {
        XCTAssertEqual(
            try parse("12345678901234567890123456789012345"), try parse("1234567890123456789012345678901234E1"))
        XCTAssertEqual(
            try parse("12345678901234567890123456789012335"), try parse("1234567890123456789012345678901234E1"))
        XCTAssertEqual(
            try parse("123456789012345678901234567890123451"), try parse("1234567890123456789012345678901235E2"))
        XCTAssertEqual(
            try parse("99999999999999999999999999999999995"), try parse("1E35"))
    }

    func testOutOfRangeExponentsGiveInfinityOrZero() throws {
        XCTAssertEqual(try parse("1e7000"), .infinity)
        XCTAssertEqual(try parse("-1e7000"), -.infinity)
        XCTAssertTrue(try parse("1e-7000").isZero)
        XCTAssertEqual(try parse("-1e-7000").sign, .minus)
        // 1E6144 still fits: the coefficient takes up the excess exponent.
        XCTAssertEqual(try parse("1E6144").coreDescription, "+1000000000000000000000000000000000E+6111")
        XCTAssertTrue(try parse("4E-6177").isZero)
        XCTAssertEqual(try parse("6E-6177"), .leastNonzeroMagnitude)
        XCTAssertTrue(try parse("5E-6177").isZero)  // tie to even
        XCTAssertEqual(try parse("15E-6177"), try parse("2E-6176"))
    }

    func testSpecialValues() throws {
        XCTAssertEqual(try parse("+Inf"), .infinity)
        XCTAssertEqual(try parse("infinity"), .infinity)
        XCTAssertEqual(try parse("-Infinity"), -.infinity)
        XCTAssertTrue(try parse("NaN").isNaN)
        XCTAssertFalse(try parse("NaN").isSignalingNaN)
        XCTAssertTrue(try parse("sNaN").isSignalingNaN)
        XCTAssertEqual(try parse("-nan").sign, .minus)
        XCTAssertFalse(try parse("1").isNaN)
    }

    func testRejectsWhatIsNotANumber() {
        let cases: [(String, Int)] = [
            ("", 0), (":", 0), ("0.0.0", 3), ("0.0Q1", 3), ("0.0Eq", 4), ("1e", 2), ("1e+", 3), ("12 ", 2),
            ("1,5", 1), ("abc", 0), ("--1", 1), ("1e5x", 3), (".", 1), ("inf ", 0),
        ]
        for (input, offset) in cases {
            XCTAssertThrowsError(try Decimal128(string: input), input) { error in
                guard let error = error as? Decimal128.ParseError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.input, input)
                XCTAssertEqual(error.offset, offset, input)
                XCTAssertTrue(error.description.contains("'\(input)'"), error.description)
            }
        }
        do {
            _ = try parse("1.5x")
            XCTFail("1.5x parsed")
        } catch {
            XCTAssertEqual(
                "\(error)", "'1.5x' is not a Decimal128: expected a digit or an exponent at offset 3, found 'x'")
        }
    }

    // MARK: Conversions

    func testConvertsDoublesToFifteenDigitsLikeRealmCore() {
        XCTAssertEqual(Decimal128(10.5).coreDescription, "10.5")
        XCTAssertEqual(Decimal128(12345.6789).coreDescription, "12345.6789000000")
        XCTAssertEqual(Decimal128(9.99999999999999).coreDescription, "9.99999999999999")
        XCTAssertEqual(
            Decimal128(0.1 / 1000 / 1000 / 1000 / 1000 / 1000 / 1000).coreDescription, "1.00000000000000E-19")
        XCTAssertEqual(Decimal128(0.01 * 1000 * 1000 * 1000 * 1000 * 1000 * 1000).coreDescription, "1.00000000000000E16")
        XCTAssertEqual(Decimal128(3.141592653589793238).coreDescription, "3.14159265358979")
        XCTAssertEqual(Decimal128(Float(7.6)).coreDescription, "7.600000")
        XCTAssertEqual(Decimal128(0.1), try parse("0.1"))
        XCTAssertEqual(Decimal128(-0.0).sign, .minus)
        XCTAssertEqual(Decimal128(Double.infinity), .infinity)
        XCTAssertTrue(Decimal128(Double.nan).isNaN)
    }

    func testLiteralsMatchRealmSwift() {
        let fromFloat: Decimal128 = 3.14159
        let fromInteger: Decimal128 = 123
        let fromString: Decimal128 = "9.876543"
        XCTAssertEqual(fromFloat, Decimal128(3.14159))
        XCTAssertEqual(fromFloat, "3.14159")
        XCTAssertEqual(fromInteger, Decimal128(123 as Int))
        XCTAssertEqual(fromString.description, "9.876543")
        XCTAssertEqual(Decimal128(exactly: 0b101), 5)
    }

    func testIntegerConversions() {
        for value in [Int64.min, Int64.min + 1, -1, 0, 1, Int64.max - 1, Int64.max] {
            XCTAssertEqual(Decimal128(value).description, String(value))
            XCTAssertEqual(Decimal128(exactly: value)?.description, String(value))
        }
        XCTAssertEqual(Decimal128(UInt64.max).description, String(UInt64.max))
        XCTAssertEqual(Decimal128(Int64.min).bid.low, 1 << 63)
    }

    func testDoubleValue() throws {
        XCTAssertEqual(try parse("0.1").doubleValue, 0.1)
        XCTAssertEqual(try parse("-2.5E-3").doubleValue, -0.0025)
        XCTAssertEqual(try parse("1E400").doubleValue, .infinity)
        XCTAssertEqual(try parse("-1E-400").doubleValue.sign, .minus)
        XCTAssertEqual(try parse("-1E-400").doubleValue, 0)
        XCTAssertTrue(Decimal128.nan.doubleValue.isNaN)
        for double in [1.5, 12345.6789, 1e-300, 6.02214076e23, -9.99999999999999] {
            XCTAssertEqual(Decimal128(double).doubleValue, double)
        }
    }

    func testBIDEncodingRoundTrips() throws {
        let one: Decimal128 = 1
        XCTAssertEqual(one.bid.high, 0x3040_0000_0000_0000)
        XCTAssertEqual(one.bid.low, 1)
        let hundredths = try parse("1.00")
        XCTAssertEqual(hundredths.bid.high, 0x303c_0000_0000_0000)
        XCTAssertEqual(hundredths.bid.low, 100)
        for text in ["-12.5", "NaN", "-Inf", "1E-6176", "9999999999999999999999999999999999E6111"] {
            let value = try parse(text)
            let rebuilt = Decimal128(bid: value.bid)
            XCTAssertEqual(rebuilt.bid.high, value.bid.high, text)
            XCTAssertEqual(rebuilt.bid.low, value.bid.low, text)
        }
        // A coefficient above 10^34 - 1 is non-canonical and reads as zero.
        XCTAssertTrue(Decimal128(bid: (low: .max, high: 0x3041_ffff_ffff_ffff)).isZero)
    }

    // MARK: Equality, hashing, ordering

    func testEqualityIgnoresCohortsAndHashesAgree() throws {
        let pairs = [("1.0", "1.00"), ("0", "-0.000"), ("1E3", "1000"), ("123", "123.000000"), ("-5E-2", "-0.05")]
        for (left, right) in pairs {
            let a = try parse(left)
            let b = try parse(right)
            XCTAssertEqual(a, b)
            XCTAssertEqual(hashOf(a), hashOf(b), "\(left) \(right)")
            XCTAssertFalse(a < b)
            XCTAssertFalse(b < a)
        }
        XCTAssertEqual(Set(try ["1", "1.0", "1.00", "10E-1"].map(parse)).count, 1)
        XCTAssertNotEqual(try parse("1"), try parse("1.000000000000000000000000000000001"))
    }

    func testComparisonsFromRealm() throws {
        XCTAssertTrue(try parse("-10.5") < parse("20.25"))
        XCTAssertTrue(try parse("20.25") < parse("100"))
        XCTAssertTrue(try parse("-1000.5") < parse("20.25"))
        XCTAssertTrue(try parse("-1000.5") + parse("-1000.5") < parse("-1000.5"))
        XCTAssertTrue(Decimal128(3.14160) > Decimal128(3.14159))
        XCTAssertTrue(Decimal128(124) > "123")
        XCTAssertFalse(Decimal128(1) >= 5)
        XCTAssertTrue(Decimal128(3.14160) <= "3.1416")
        XCTAssertGreaterThan(Decimal128.max, .min)
    }

    func testNaNOrdering() throws {
        let payload = Decimal128(bid: (low: 123, high: 0x7c00_0000_0000_0000))
        XCTAssertTrue(Decimal128.nan < -.infinity)
        XCTAssertTrue(Decimal128.nan < payload)  // NaNs order by their bits
        XCTAssertTrue(payload < -Decimal128.nan)  // the sign bit is the top bit
        XCTAssertEqual(Decimal128.nan, .nan)
        XCTAssertEqual(payload, payload)
        XCTAssertNotEqual(Decimal128.nan, payload)
        XCTAssertNotEqual(Decimal128.nan, 0)
        let sorted = [Decimal128(1), .nan, -.infinity, "-0.5", .infinity].sorted()
        XCTAssertTrue(sorted[0].isNaN)
        XCTAssertEqual(Array(sorted.dropFirst()), [-.infinity, "-0.5", 1, .infinity])
    }

    func testMinMaxAreInfinitiesAsInRealm() {
        XCTAssertEqual(Decimal128.min, -.infinity)
        XCTAssertEqual(Decimal128.max, .infinity)
        XCTAssertLessThan(Decimal128.greatestFiniteMagnitude, .max)
    }

    // MARK: Arithmetic

    func testArithmeticFromRealmCore() {
        let ten: Decimal128 = 10
        XCTAssertEqual((ten + 20).coreDescription, "30")
        XCTAssertEqual((ten + -20).coreDescription, "-10")
        XCTAssertEqual((ten - 15).coreDescription, "-5")
        XCTAssertEqual((ten - -15).coreDescription, "25")
        XCTAssertEqual((ten / 4).coreDescription, "2.5")
        XCTAssertEqual((ten / -4).coreDescription, "-2.5")
        XCTAssertEqual((ten * 4).coreDescription, "40")
        XCTAssertEqual((ten * -6).coreDescription, "-60")
        var value: Decimal128 = 20
        value += ten
        XCTAssertEqual(value.coreDescription, "30")
        value -= ten
        value /= ten
        XCTAssertEqual(value.coreDescription, "2")
        value *= ten
        XCTAssertEqual(value.coreDescription, "20")
    }

    func testArithmeticFromRealmSwift() {
        XCTAssertEqual(Decimal128(3.144444) + Decimal128(3.144444), 6.288888)
        XCTAssertEqual(Decimal128(2.5) - Decimal128(3.5), -1.0)
        XCTAssertEqual(Decimal128(7) / Decimal128(3.5), 2)
        XCTAssertEqual(Decimal128("0.21") / Decimal128("0.7"), 0.3)
        XCTAssertEqual(Decimal128(7) * Decimal128(3.5), 24.5)
        XCTAssertEqual(Decimal128("0.21") * Decimal128("0.7"), 0.147)
        XCTAssertEqual(Decimal128(-123.321).magnitude, 123.321)
        XCTAssertEqual(Decimal128(-123.321).advanced(by: -123.321), -246.642)
        XCTAssertEqual(Decimal128(-150.0).advanced(by: 300.0), 150.0)
        XCTAssertEqual(Decimal128(10.0).distance(to: 5.0), -5.0)
        var negated: Decimal128 = -123.321
        negated.negate()
        XCTAssertEqual(negated, 123.321)
    }

    func testDecimalFractionsAreExact() throws {
        XCTAssertEqual(try parse("0.1") + parse("0.2"), try parse("0.3"))
        XCTAssertEqual((try parse("1.10") + parse("2.205")).coreDescription, "3.305")
        XCTAssertEqual((try parse("1.5") * parse("1.5")).coreDescription, "2.25")
        XCTAssertEqual((try parse("1.50") * parse("2")).coreDescription, "3.00")  // exponents add
        XCTAssertEqual((try parse("1.00") / parse("4")).coreDescription, "2.5E-1")  // 25E-2
        XCTAssertEqual((try parse("100") / parse("1E2")).coreDescription, "1.00")  // exponent 0 - 2
    }

    func testRoundsToThirtyFourDigitsHalfEven() throws {
        XCTAssertEqual(
            (Decimal128(1) / 3).coreDescription, "+3333333333333333333333333333333333E-34")
        XCTAssertEqual(
            (Decimal128(2) / 3).coreDescription, "+6666666666666666666666666666666667E-34")
        let big = try parse("1234567890123456789012345678901234")  // 34 digits
        XCTAssertEqual(try big + parse("0.5"), big)  // tie: stays on the even neighbour
        XCTAssertEqual(try big + parse("1.5"), big + 2)  // tie: goes up to the even neighbour
        XCTAssertEqual(try big + parse("0.50000000001"), big + 1)
        XCTAssertEqual(try big + parse("1E-100"), big)
        XCTAssertEqual((big * 10).coreDescription, "+1234567890123456789012345678901234E+1")
    }

    func testOverflowUnderflowAndDivisionByZero() throws {
        XCTAssertEqual(Decimal128.greatestFiniteMagnitude * 10, .infinity)
        XCTAssertEqual(-Decimal128.greatestFiniteMagnitude - .greatestFiniteMagnitude, -.infinity)
        XCTAssertTrue((Decimal128.leastNonzeroMagnitude / 3).isZero)
        XCTAssertEqual(Decimal128(1) / 0, .infinity)
        XCTAssertEqual(Decimal128(-1) / 0, -.infinity)
        XCTAssertTrue((Decimal128(0) / 0).isNaN)
        XCTAssertTrue((Decimal128.infinity - .infinity).isNaN)
        XCTAssertTrue((Decimal128.infinity * 0).isNaN)
        XCTAssertTrue((Decimal128.nan + 1).isNaN)
        XCTAssertFalse((Decimal128.signalingNaN + 1).isSignalingNaN)
        XCTAssertEqual(Decimal128(5) / .infinity, 0)
    }

    func testStrides() {
        let values = Array(stride(from: Decimal128(0), to: 1, by: "0.25"))
        XCTAssertEqual(values, [0, "0.25", "0.5", "0.75"])
    }

    // MARK: Codable

    func testCodableUsesRealmsStrings() throws {
        let values: [Decimal128] = ["2.50", "-1E-3", .infinity, "123456789012345678901234567890.1234"]
        let data = try JSONEncoder().encode(values)
        XCTAssertEqual(
            String(decoding: data, as: UTF8.self),
            #"["2.5","-1E-3","Inf","+1234567890123456789012345678901234E-4"]"#)
        XCTAssertEqual(try JSONDecoder().decode([Decimal128].self, from: data), values)
        let numbers = try JSONDecoder().decode([Decimal128].self, from: Data("[3, 0.1, \"7\"]".utf8))
        XCTAssertEqual(numbers, [3, "0.1", 7])
        XCTAssertThrowsError(try JSONDecoder().decode([Decimal128].self, from: Data(#"["1,5"]"#.utf8)))
        // realm-core's null marker prints as "NULL" but still round-trips as a NaN.
        let marker = Decimal128(bid: (low: 0xaa, high: 0x7c00_0000_0000_0000))
        XCTAssertEqual(marker.coreDescription, "NULL")
        XCTAssertTrue(try JSONDecoder().decode([Decimal128].self, from: JSONEncoder().encode([marker]))[0].isNaN)
    }
}
