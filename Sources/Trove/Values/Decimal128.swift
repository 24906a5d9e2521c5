/// An exact 128-bit decimal floating-point number: IEEE 754-2008 decimal128 in
/// the BID (binary integer decimal) encoding, the same bits Realm and MongoDB
/// store.
///
/// A `Decimal128` holds up to 34 significant decimal digits and an exponent
/// from -6176 to 6111, so amounts such as `0.1` are exact. Arithmetic rounds
/// to 34 digits, ties to even, and follows realm-core's `Decimal128` result
/// for result (which is the IEEE 754 result, including the exponent kept).
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let total = price * 3
/// print(total)                       // 59.97
/// print(total == "59.970")           // true: equality is numeric
/// ```
///
/// Behaviour shared with Realm:
/// - Equality is numeric: `1.0 == 1.00` and `0 == -0`, and equal values hash
///   alike. A NaN equals only a NaN with the same bits.
/// - Ordering is total: every NaN sorts before every number (NaNs among
///   themselves by their bits), then numbers in numeric order.
/// - Converting from `Double` (including float literals) keeps 15
///   significant digits, so `Decimal128(0.1)` is exactly 0.1.
/// - ``min`` and ``max`` are negative and positive infinity.
public struct Decimal128: Sendable {
    // The two 64-bit halves of the BID encoding. `high` holds the sign, the
    // combination field (exponent, or the NaN/infinity markers) and the top
    // 49 bits of the coefficient; `low` holds the coefficient's low 64 bits.
    private let low: UInt64
    private let high: UInt64

    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a zero (`0E0`), as Realm's `Decimal128()` does.
    ///
    /// ```swift
    /// Decimal128() == 0  // true
    /// ```
    public init() {
        self.init(high: UInt64(Encoding.bias) << 49, low: 0)
    }

    /// Rebuilds a value from its 16-byte BID encoding, as ``bid`` returns it.
    ///
    /// Every bit pattern is accepted. Patterns IEEE 754 calls non-canonical
    /// (a coefficient above 10^34 - 1) count as zero in arithmetic and
    /// comparisons, as they do in realm-core.
    ///
    /// ```swift
    /// let stored = Decimal128("12.5").bid
    /// Decimal128(bid: stored) == "12.5"  // true
    /// ```
    public init(bid: (low: UInt64, high: UInt64)) {
        self.init(high: bid.high, low: bid.low)
    }

    /// The 16-byte BID encoding: `low` is the first 8 bytes of realm-core's
    /// in-memory layout on a little-endian machine, `high` the last 8.
    ///
    /// ```swift
    /// let one: Decimal128 = 1
    /// one.bid.high == 0x3040_0000_0000_0000  // true
    /// one.bid.low == 1                        // true
    /// ```
    public var bid: (low: UInt64, high: UInt64) {
        (low, high)
    }
}

// MARK: - Constants and classification

extension Decimal128 {
    /// Zero, `0E0`.
    ///
    /// ```swift
    /// Decimal128.zero + 1 == 1  // true
    /// ```
    public static var zero: Decimal128 { Decimal128() }

    /// A quiet NaN, the value `Decimal128(string: "NaN")` parses to.
    ///
    /// ```swift
    /// Decimal128.nan.isNaN  // true
    /// ```
    public static var nan: Decimal128 { Decimal128(high: Encoding.nan, low: 0) }

    /// A signaling NaN, the value `Decimal128(string: "sNaN")` parses to.
    ///
    /// Arithmetic on it returns a quiet NaN.
    ///
    /// ```swift
    /// Decimal128.signalingNaN.isSignalingNaN  // true
    /// ```
    public static var signalingNaN: Decimal128 { Decimal128(high: Encoding.signalingNaN, low: 0) }

    /// Positive infinity.
    ///
    /// ```swift
    /// Decimal128(1) / 0 == .infinity  // true
    /// ```
    public static var infinity: Decimal128 { Decimal128(high: Encoding.infinity, low: 0) }

    /// The largest finite value, 9999999999999999999999999999999999E6111.
    ///
    /// ```swift
    /// Decimal128.greatestFiniteMagnitude < .infinity  // true
    /// ```
    public static var greatestFiniteMagnitude: Decimal128 {
        pack(negative: false, exponent: Encoding.maxExponent, coefficient: Wide.maxCoefficient)
    }

    /// The smallest positive value, 1E-6176.
    ///
    /// ```swift
    /// Decimal128.leastNonzeroMagnitude / 2 == 0  // true: rounds to even
    /// ```
    public static var leastNonzeroMagnitude: Decimal128 {
        Decimal128(high: 0, low: 1)
    }

    /// The least value in the ordering of numbers: negative infinity, as in
    /// Realm (`Decimal128.min`).
    ///
    /// ```swift
    /// Decimal128.min == -Decimal128.infinity  // true
    /// ```
    public static var min: Decimal128 { Decimal128(high: Encoding.infinity | Encoding.signBit, low: 0) }

    /// The greatest value in the ordering of numbers: positive infinity, as
    /// in Realm (`Decimal128.max`).
    ///
    /// ```swift
    /// Decimal128.max == .infinity  // true
    /// ```
    public static var max: Decimal128 { infinity }

    /// Whether the value is a NaN, quiet or signaling.
    ///
    /// ```swift
    /// (Decimal128.infinity - .infinity).isNaN  // true
    /// ```
    public var isNaN: Bool { high & Encoding.nan == Encoding.nan }

    /// Whether the value is a signaling NaN.
    ///
    /// Unlike Realm Swift's `isSignaling`, which reports every NaN, this is
    /// the IEEE 754 meaning: only the `sNaN` encoding.
    ///
    /// ```swift
    /// Decimal128.nan.isSignalingNaN           // false
    /// try Decimal128(string: "sNaN").isSignalingNaN  // true
    /// ```
    public var isSignalingNaN: Bool { high & Encoding.signalingNaN == Encoding.signalingNaN }

    /// Whether the value is positive or negative infinity.
    ///
    /// ```swift
    /// Decimal128.greatestFiniteMagnitude.isInfinite  // false
    /// ```
    public var isInfinite: Bool { high & Encoding.nan == Encoding.infinity }

    /// Whether the value is neither infinite nor NaN.
    ///
    /// ```swift
    /// Decimal128(2.5).isFinite  // true
    /// ```
    public var isFinite: Bool { high & Encoding.infinity != Encoding.infinity }

    /// Whether the value is zero of either sign and any exponent.
    ///
    /// ```swift
    /// Decimal128("-0.000").isZero  // true
    /// ```
    public var isZero: Bool { isFinite && finiteParts.coefficient.isZero }

    /// The sign bit: `.minus` for negative numbers, negative zero and NaNs
    /// with the sign bit set.
    ///
    /// ```swift
    /// Decimal128(-3).sign == .minus  // true
    /// ```
    public var sign: FloatingPointSign { high & Encoding.signBit != 0 ? .minus : .plus }

    /// The absolute value: the same encoding with the sign bit cleared.
    ///
    /// Exact for every value (Realm Swift goes through `Double` here).
    ///
    /// ```swift
    /// Decimal128("-123.321").magnitude == "123.321"  // true
    /// ```
    public var magnitude: Decimal128 { Decimal128(high: high & ~Encoding.signBit, low: low) }
}

// MARK: - Conversions

extension Decimal128 {
    /// Converts a binary integer; exact when it has at most 34 digits,
    /// otherwise rounded to 34 significant digits, ties to even.
    ///
    /// ```swift
    /// Decimal128(Int64.min).description  // "-9223372036854775808"
    /// ```
    public init<T: BinaryInteger>(_ value: T) {
        if let small = Int64(exactly: value) {
            self.init(int64: small)
        } else if let small = UInt64(exactly: value) {
            self = Decimal128.pack(negative: false, exponent: 0, coefficient: Wide(small))
        } else {
            let digits = Decimal128.decimalDigits(of: value.magnitude)
            self = Decimal128.rounded(negative: value < 0, digits: digits[...], exponent: 0)
        }
    }

    /// Converts a binary integer if it can be represented without rounding.
    ///
    /// ```swift
    /// Decimal128(exactly: 5) == 5                     // true
    /// Decimal128(exactly: Int64.max) != nil           // true: 19 digits
    /// ```
    public init?<T: BinaryInteger>(exactly source: T) {
        if let small = Int64(exactly: source) {
            self.init(int64: small)
            return
        }
        let digits = Decimal128.decimalDigits(of: source.magnitude)
        guard digits.dropFirst(Encoding.digits).allSatisfy({ $0 == 0 }) else { return nil }
        let value = Decimal128.rounded(negative: source < 0, digits: digits[...], exponent: 0)
        guard value.isFinite else { return nil }
        self = value
    }

    private static func decimalDigits<T: BinaryInteger>(of value: T) -> [UInt8] {
        String(value).utf8.map { $0 &- UInt8(ascii: "0") }
    }

    private init(int64 value: Int64) {
        self = Decimal128.pack(negative: value < 0, exponent: 0, coefficient: Wide(value.magnitude))
    }

    /// Converts a `Double` the way realm-core does: the double's exact value
    /// is rounded to 34 digits, then to 15 significant digits, ties to even.
    ///
    /// The 15-digit step makes `string → Double → Decimal128 → string` give
    /// back the digits that were typed. Infinities and NaNs carry over.
    ///
    /// ```swift
    /// Decimal128(0.1) == "0.1"                 // true
    /// Decimal128(3.141592653589793).description  // "3.14159265358979"
    /// ```
    public init(_ value: Double) {
        self = Decimal128.converting(value, significantDigits: 15)
    }

    /// Converts a `Float` the way realm-core does, keeping 7 significant
    /// digits.
    ///
    /// ```swift
    /// Decimal128(Float(7.6)).description  // "7.6"
    /// ```
    public init(_ value: Float) {
        self = Decimal128.converting(Double(value), significantDigits: 7)
    }

    /// The nearest `Double`, correctly rounded (ties to even).
    ///
    /// Out-of-range values become infinities or zeros; NaNs become NaN.
    ///
    /// ```swift
    /// Decimal128("0.1").doubleValue == 0.1  // true
    /// ```
    public var doubleValue: Double {
        let negative = high & Encoding.signBit != 0
        if isNaN { return negative ? -Double.nan : Double.nan }
        if isInfinite { return negative ? -Double.infinity : Double.infinity }
        let parts = finiteParts
        if parts.coefficient.isZero { return negative ? -0.0 : 0.0 }
        // The standard library's parser rounds correctly, so spelling the
        // exact value out is the simplest correct conversion.
        let text = (negative ? "-" : "") + parts.coefficient.decimalString + "e" + String(parts.exponent)
        return Double(text) ?? .nan
    }
}

// MARK: - Parsing

extension Decimal128 {
    /// Why a string is not a ``Decimal128``.
    ///
    /// ```swift
    /// do { _ = try Decimal128(string: "1.5x") } catch let error as Decimal128.ParseError {
    ///     print(error)  // '1.5x' is not a Decimal128: expected a digit or an exponent at offset 3, found 'x'
    /// }
    /// ```
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that failed to parse.
        public let input: String
        /// The position of the first character that could not be used,
        /// counted in Unicode scalars from the start of ``input``; equal to
        /// the scalar count when the text ended too soon.
        public let offset: Int
        /// What the parser needed at ``offset``.
        public let expected: String

        /// A message naming the input, the position and what was found there.
        public var description: String {
            let scalars = Array(input.unicodeScalars)
            let found = offset < scalars.count ? "'\(Character(scalars[offset]))'" : "the end of the text"
            return "'\(input)' is not a Decimal128: expected \(expected) at offset \(offset), found \(found)"
        }
    }

    /// Parses a decimal number: optional spaces or tabs, an optional sign,
    /// digits with an optional decimal point, and an optional exponent
    /// (`e` or `E`, optional sign, digits); or, ignoring case, `Inf`,
    /// `Infinity`, `NaN` or `sNaN` after an optional sign.
    ///
    /// Every string accepted gives exactly the value realm-core's parser
    /// gives: digits beyond 34 round half-even, too-large exponents give
    /// infinity, too-small ones zero, and trailing zeros are kept
    /// (`"1.00"` stays `100E-2`). Strings realm-core would silently turn into
    /// NaN (`"abc"`, `"1,5"`, `""`) throw instead.
    ///
    /// ```swift
    /// try Decimal128(string: "123e4").description  // "1.23E6"
    /// try Decimal128(string: "-1.5") < 0            // true
    /// try Decimal128(string: "+Inf") == .infinity   // true
    /// ```
    ///
    /// - Throws: ``ParseError`` naming the offending character.
    public init(string: String) throws {
        self = try Decimal128.parse(string).get()
    }

    private static func parse(_ text: String) -> Result<Decimal128, ParseError> {
        let scalars = Array(text.unicodeScalars)
        func failure(_ offset: Int, _ expected: String) -> Result<Decimal128, ParseError> {
            .failure(ParseError(input: text, offset: offset, expected: expected))
        }
        func digit(_ index: Int) -> UInt8? {
            guard index < scalars.count, ("0"..."9").contains(scalars[index]) else { return nil }
            return UInt8(scalars[index].value - 48)
        }

        var index = 0
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        guard index < scalars.count else { return failure(index, "a number") }
        var negative = false
        if scalars[index] == "+" || scalars[index] == "-" {
            negative = scalars[index] == "-"
            index += 1
        }

        if index < scalars.count, scalars[index].properties.isAlphabetic {
            // ASCII-only case folding: no other letters may spell these words.
            let word = String(
                String.UnicodeScalarView(
                    scalars[index...].map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
            let sign = negative ? Encoding.signBit : 0
            switch word {
            case "inf", "infinity": return .success(Decimal128(high: Encoding.infinity | sign, low: 0))
            case "nan": return .success(Decimal128(high: Encoding.nan | sign, low: 0))
            case "snan": return .success(Decimal128(high: Encoding.signalingNaN | sign, low: 0))
            default: break
            }
        }

        var digits: [UInt8] = []
        var fractionDigits = 0
        var sawPoint = false
        var sawDigit = false
        while index < scalars.count {
            if let value = digit(index) {
                sawDigit = true
                if value != 0 || !digits.isEmpty { digits.append(value) }
                if sawPoint { fractionDigits += 1 }
            } else if scalars[index] == ".", !sawPoint {
                sawPoint = true
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { return failure(index, "a digit") }

        var exponent = 0
        if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            index += 1
            var negativeExponent = false
            if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" {
                negativeExponent = scalars[index] == "-"
                index += 1
            }
            guard digit(index) != nil else { return failure(index, "an exponent digit") }
            while let value = digit(index) {
                // Any exponent this large already means infinity or zero.
                exponent = Swift.min(exponent * 10 + Int(value), 999_999_999)
                index += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        guard index == scalars.count else {
            return failure(index, sawPoint ? "a digit or an exponent" : "a digit, a decimal point or an exponent")
        }
        return .success(rounded(negative: negative, digits: digits[...], exponent: exponent - fractionDigits))
    }
}

// MARK: - Text

extension Decimal128: CustomStringConvertible {
    /// The value as Realm Swift prints it: realm-core's `to_string`, with
    /// zeros at the end of a fraction removed.
    ///
    /// Coefficients below 2^64 print in plain or scientific notation with a
    /// capital `E` (`"2.5"`, `"1.23E6"`, `"1E-3"`, `"-0"`, `"Inf"`, `"NaN"`);
    /// larger ones print as the whole coefficient with a signed exponent
    /// (`"+1234567890123456789012345678901234E+4"`). Parsing the text gives
    /// back an equal number; NaN payloads are not kept, and realm-core's null
    /// marker (a NaN with payload 0xaa) prints as `"NULL"`.
    ///
    /// ```swift
    /// Decimal128("1.234567") + "9.876543"  // prints 11.11111
    /// Decimal128("10e2").description       // "1E3"
    /// ```
    public var description: String {
        var text = coreDescription
        guard let point = text.firstIndex(of: ".") else { return text }
        let end = text[point...].firstIndex(of: "E") ?? text.endIndex
        var last = text.index(before: end)
        while text[last] == "0" { last = text.index(before: last) }
        if last == point { last = text.index(before: point) }
        text.removeSubrange(text.index(after: last)..<end)
        return text
    }

    /// The same text as ``description``, under Realm's name.
    ///
    /// ```swift
    /// Decimal128(2.5).stringValue  // "2.5"
    /// ```
    public var stringValue: String { description }

    /// realm-core's `Decimal128::to_string`, untrimmed: `"1.00"` for `100E-2`.
    var coreDescription: String {
        if isRealmNullMarker { return "NULL" }
        if high & Encoding.coefficientHighMask != 0 { return intelDescription }
        let sign = high & Encoding.signBit != 0 ? "-" : ""
        if high & Encoding.infinity == Encoding.infinity {
            return sign + (high & Encoding.nan == Encoding.nan ? "NaN" : "Inf")
        }
        // realm-core reads the exponent field directly here, even for the
        // (non-canonical) large-coefficient form.
        let digits = String(low)
        var exponent = Int((high >> 49) & 0x3fff) - Encoding.bias
        var before = digits.count
        while before > 1 && exponent != 0 {
            before -= 1
            exponent += 1
        }
        var text = sign + digits.prefix(before)
        if before < digits.count { text += "." + digits.dropFirst(before) }
        if exponent != 0 { text += "E" + String(exponent) }
        return text
    }

    /// The Intel library's `bid128_to_string`, which realm-core uses when the
    /// coefficient does not fit in 64 bits.
    private var intelDescription: String {
        let sign = high & Encoding.signBit != 0 ? "-" : "+"
        if high & Encoding.infinity == Encoding.infinity {
            if high & Encoding.signalingNaN == Encoding.signalingNaN { return sign + "SNaN" }
            return sign + (high & Encoding.nan == Encoding.nan ? "NaN" : "Inf")
        }
        let parts = finiteParts
        let exponent = parts.exponent
        return sign + (parts.coefficient.isZero ? "0" : parts.coefficient.decimalString) + "E"
            + (exponent < 0 ? "-" : "+") + String(exponent.magnitude)
    }
}

// MARK: - Literals and Codable

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// Creates the integer exactly, with exponent 0.
    ///
    /// ```swift
    /// let count: Decimal128 = 123
    /// ```
    public init(integerLiteral value: Int64) {
        self.init(int64: value)
    }

    /// Converts the literal as a `Double`, keeping 15 significant digits like
    /// ``init(_:)-(Double)``.
    ///
    /// ```swift
    /// let rate: Decimal128 = 3.14159
    /// rate == "3.14159"  // true
    /// ```
    public init(floatLiteral value: Double) {
        self.init(value)
    }

    /// Parses the literal with ``init(string:)``; stops the program if it is
    /// not a number, which is a mistake in the source.
    ///
    /// ```swift
    /// let price: Decimal128 = "9.876543"
    /// ```
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            fatalError(String(describing: error))
        }
    }
}

extension Decimal128: Codable {
    /// Decodes a string such as `"12.5"`, as Realm encodes it; integers and
    /// floating-point numbers are accepted too.
    ///
    /// ```swift
    /// let value = try JSONDecoder().decode([Decimal128].self, from: Data(#"["12.5", 3]"#.utf8))
    /// ```
    ///
    /// - Throws: `DecodingError.dataCorrupted` for text that is not a number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            switch Decimal128.parse(text) {
            case .success(let value): self = value
            case .failure(let error):
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
            }
        } else if let integer = try? container.decode(Int64.self) {
            self.init(int64: integer)
        } else if let double = try? container.decode(Double.self) {
            self.init(double)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Expected a Decimal128 as a string or a number")
        }
    }

    /// Encodes the value as its ``description`` string, as Realm does
    /// (realm-core's null marker, which prints as `"NULL"`, encodes as
    /// `"NaN"` so that it decodes).
    ///
    /// ```swift
    /// String(decoding: try JSONEncoder().encode(Decimal128("2.50")), as: UTF8.self)  // "\"2.5\""
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(isRealmNullMarker ? "NaN" : description)
    }
}

// MARK: - Equality, hashing and ordering

extension Decimal128: Hashable, Comparable {
    /// Numeric equality: `1.0 == 1.00`, `0 == -0`; a NaN equals only a NaN
    /// with identical bits (realm-core's `operator==`).
    ///
    /// ```swift
    /// Decimal128("1.0") == Decimal128("1.00")  // true
    /// Decimal128.nan == .nan                   // true: same bits
    /// ```
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        (lhs.high == rhs.high && lhs.low == rhs.low) || compare(lhs, rhs) == 0
    }

    /// realm-core's order (`Decimal128::compare`): NaNs first, ordered among
    /// themselves by their bits as unsigned integers (high half first), then
    /// numbers in numeric order with `-0 == 0`.
    ///
    /// ```swift
    /// Decimal128("-1000.5") < Decimal128("20.25")  // true
    /// Decimal128.nan < -Decimal128.infinity       // true
    /// ```
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the numeric value, so that equal values in different cohorts
    /// (`1.0`, `1.00`) hash alike.
    public func hash(into hasher: inout Hasher) {
        if isNaN {
            hasher.combine(0 as UInt8)
            hasher.combine(high)
            hasher.combine(low)
            return
        }
        let negative = high & Encoding.signBit != 0
        if isInfinite {
            hasher.combine(1 as UInt8)
            hasher.combine(negative)
            return
        }
        var (_, exponent, coefficient) = finiteParts
        if coefficient.isZero {
            hasher.combine(2 as UInt8)
            return
        }
        while true {
            let (quotient, remainder) = coefficient.quotientAndRemainder(dividingBy: 10)
            if remainder != 0 { break }
            coefficient = quotient
            exponent += 1
        }
        hasher.combine(3 as UInt8)
        hasher.combine(negative)
        hasher.combine(exponent)
        hasher.combine(coefficient.w0)
        hasher.combine(coefficient.w1)
    }

    /// -1, 0 or 1 as in realm-core's `Decimal128::compare`.
    private static func compare(_ x: Decimal128, _ y: Decimal128) -> Int {
        let xNaN = x.isNaN
        let yNaN = y.isNaN
        if xNaN || yNaN {
            guard xNaN && yNaN else { return xNaN ? -1 : 1 }
            if x.high != y.high { return x.high < y.high ? -1 : 1 }
            return x.low == y.low ? 0 : (x.low < y.low ? -1 : 1)
        }
        let xNegative = x.high & Encoding.signBit != 0
        let yNegative = y.high & Encoding.signBit != 0
        if x.isInfinite || y.isInfinite {
            let xRank = x.isInfinite ? (xNegative ? -1 : 1) : 0
            let yRank = y.isInfinite ? (yNegative ? -1 : 1) : 0
            return xRank == yRank ? 0 : (xRank < yRank ? -1 : 1)
        }
        let a = x.finiteParts
        let b = y.finiteParts
        let aZero = a.coefficient.isZero
        let bZero = b.coefficient.isZero
        if aZero && bZero { return 0 }
        if aZero { return yNegative ? 1 : -1 }
        if bZero { return xNegative ? -1 : 1 }
        if xNegative != yNegative { return xNegative ? -1 : 1 }
        let order = compareMagnitudes(a.coefficient, a.exponent, b.coefficient, b.exponent)
        return xNegative ? -order : order
    }

    /// Compares two nonzero magnitudes given as coefficient × 10^exponent.
    private static func compareMagnitudes(_ c1: Wide, _ e1: Int, _ c2: Wide, _ e2: Int) -> Int {
        // The position of the leading digit decides unless it is the same;
        // then both fit in 34 digits at the smaller exponent.
        let top1 = e1 + c1.digitCount
        let top2 = e2 + c2.digitCount
        if top1 != top2 { return top1 < top2 ? -1 : 1 }
        var a = c1
        var b = c2
        if e1 > e2 { a = a.multiplied(by: Wide.powerOfTen(e1 - e2))! }
        if e2 > e1 { b = b.multiplied(by: Wide.powerOfTen(e2 - e1))! }
        return a == b ? 0 : (a < b ? -1 : 1)
    }
}

// MARK: - Arithmetic

extension Decimal128: SignedNumeric, Strideable {
    /// Integer literals are `Int64`, as in Realm.
    public typealias IntegerLiteralType = Int64
    /// Float literals go through `Double`, as in Realm.
    public typealias FloatLiteralType = Double
    /// The magnitude of a `Decimal128` is a `Decimal128`.
    public typealias Magnitude = Decimal128
    /// Distances between values are `Decimal128`s.
    public typealias Stride = Decimal128

    /// The sum, rounded to 34 digits, ties to even.
    ///
    /// Exact sums keep the smaller exponent: `"1.234567" + "9.876543"` is
    /// `11.111110`.
    ///
    /// ```swift
    /// Decimal128("0.1") + "0.2" == "0.3"  // true
    /// ```
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negatingRight: false)
    }

    /// The difference, rounded to 34 digits, ties to even.
    ///
    /// ```swift
    /// Decimal128("2.5") - "3.5" == -1  // true
    /// ```
    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negatingRight: true)
    }

    /// The product, rounded to 34 digits, ties to even.
    ///
    /// ```swift
    /// Decimal128("0.21") * "0.7" == "0.147"  // true
    /// ```
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        multiply(lhs, rhs)
    }

    /// The quotient, rounded to 34 digits, ties to even. Dividing a nonzero
    /// number by zero gives an infinity; `0 / 0` gives NaN.
    ///
    /// ```swift
    /// Decimal128(1) / 3  // 0.3333333333333333333333333333333333
    /// Decimal128(10) / 4 == "2.5"  // true
    /// ```
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        divide(lhs, rhs)
    }

    /// Adds `rhs` to `lhs`.
    ///
    /// ```swift
    /// var total: Decimal128 = 0
    /// total += "0.1"
    /// ```
    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }

    /// Subtracts `rhs` from `lhs`.
    ///
    /// ```swift
    /// var balance: Decimal128 = 10
    /// balance -= "2.5"
    /// ```
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }

    /// Multiplies `lhs` by `rhs`.
    ///
    /// ```swift
    /// var amount: Decimal128 = 20
    /// amount *= 10  // 200
    /// ```
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }

    /// Divides `lhs` by `rhs`.
    ///
    /// ```swift
    /// var share: Decimal128 = 20
    /// share /= 10  // 2
    /// ```
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }

    /// The value with its sign flipped, exactly (NaNs and zeros included).
    ///
    /// ```swift
    /// -Decimal128("456.321") == "-456.321"  // true
    /// ```
    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(high: operand.high ^ Encoding.signBit, low: operand.low)
    }

    /// Flips the sign in place.
    ///
    /// ```swift
    /// var value: Decimal128 = "-123.321"
    /// value.negate()  // 123.321
    /// ```
    public mutating func negate() {
        self = -self
    }

    /// `other - self`.
    ///
    /// ```swift
    /// Decimal128(10).distance(to: 15) == 5  // true
    /// ```
    public func distance(to other: Decimal128) -> Decimal128 {
        other - self
    }

    /// `self + n`.
    ///
    /// ```swift
    /// Decimal128(-150).advanced(by: 300) == 150  // true
    /// ```
    public func advanced(by n: Decimal128) -> Decimal128 {
        self + n
    }

    private static func add(_ x: Decimal128, _ y: Decimal128, negatingRight: Bool) -> Decimal128 {
        if x.isNaN { return x.quieted }
        if y.isNaN { return y.quieted }
        let xNegative = x.high & Encoding.signBit != 0
        let yNegative = (y.high & Encoding.signBit != 0) != negatingRight
        if x.isInfinite {
            if y.isInfinite && xNegative != yNegative { return .nan }
            return infinity(negative: xNegative)
        }
        if y.isInfinite { return infinity(negative: yNegative) }

        let a = x.finiteParts
        let b = y.finiteParts
        let preferred = Swift.min(a.exponent, b.exponent)
        if a.coefficient.isZero && b.coefficient.isZero {
            return zero(negative: xNegative && yNegative, exponent: preferred)
        }
        if a.coefficient.isZero {
            return make(negative: yNegative, coefficient: b.coefficient, exponent: b.exponent, preferred: preferred)
        }
        if b.coefficient.isZero {
            return make(negative: xNegative, coefficient: a.coefficient, exponent: a.exponent, preferred: preferred)
        }

        // `big` is the operand with the larger exponent.
        var (bigNegative, bigCoefficient, bigExponent) = (xNegative, a.coefficient, a.exponent)
        var (smallNegative, smallCoefficient, smallExponent) = (yNegative, b.coefficient, b.exponent)
        if bigExponent < smallExponent {
            swap(&bigNegative, &smallNegative)
            swap(&bigCoefficient, &smallCoefficient)
            swap(&bigExponent, &smallExponent)
        }
        let exactLimit = 42  // 10^34 × 10^42 still fits in 256 bits
        if bigExponent - smallExponent > exactLimit {
            // Scaling `big` up to 34 digits changes nothing about its value.
            let shift = Swift.min(34 - bigCoefficient.digitCount, bigExponent - smallExponent)
            bigCoefficient = bigCoefficient.multiplied(by: Wide.powerOfTen(shift))!
            bigExponent -= shift
        }
        if bigExponent - smallExponent > exactLimit {
            // `small` is less than a hundredth of a unit in the last place of
            // `big`, so only its sign matters: stand in 1 at that position.
            var coefficient = bigCoefficient.multiplied(by: 100)!
            coefficient = bigNegative == smallNegative ? coefficient + Wide(1) : coefficient - Wide(1)
            return make(
                negative: bigNegative, coefficient: coefficient, exponent: bigExponent - 2, preferred: preferred)
        }
        let scaled = bigCoefficient.multiplied(by: Wide.powerOfTen(bigExponent - smallExponent))!
        if bigNegative == smallNegative {
            return make(
                negative: bigNegative, coefficient: scaled + smallCoefficient, exponent: smallExponent,
                preferred: preferred)
        }
        if scaled == smallCoefficient { return zero(negative: false, exponent: preferred) }
        if scaled < smallCoefficient {
            return make(
                negative: smallNegative, coefficient: smallCoefficient - scaled, exponent: smallExponent,
                preferred: preferred)
        }
        return make(
            negative: bigNegative, coefficient: scaled - smallCoefficient, exponent: smallExponent,
            preferred: preferred)
    }

    private static func multiply(_ x: Decimal128, _ y: Decimal128) -> Decimal128 {
        if x.isNaN { return x.quieted }
        if y.isNaN { return y.quieted }
        let negative = (x.high ^ y.high) & Encoding.signBit != 0
        if x.isInfinite || y.isInfinite {
            if (x.isFinite && x.finiteParts.coefficient.isZero) || (y.isFinite && y.finiteParts.coefficient.isZero) {
                return .nan
            }
            return infinity(negative: negative)
        }
        let a = x.finiteParts
        let b = y.finiteParts
        let exponent = a.exponent + b.exponent
        if a.coefficient.isZero || b.coefficient.isZero { return zero(negative: negative, exponent: exponent) }
        let product = a.coefficient.multiplied(by: b.coefficient)!
        return make(negative: negative, coefficient: product, exponent: exponent, preferred: exponent)
    }

    private static func divide(_ x: Decimal128, _ y: Decimal128) -> Decimal128 {
        if x.isNaN { return x.quieted }
        if y.isNaN { return y.quieted }
        let negative = (x.high ^ y.high) & Encoding.signBit != 0
        if x.isInfinite {
            return y.isInfinite ? .nan : infinity(negative: negative)
        }
        if y.isInfinite { return zero(negative: negative, exponent: Encoding.minExponent) }
        let a = x.finiteParts
        let b = y.finiteParts
        if b.coefficient.isZero {
            return a.coefficient.isZero ? .nan : infinity(negative: negative)
        }
        let preferred = a.exponent - b.exponent
        if a.coefficient.isZero { return zero(negative: negative, exponent: preferred) }
        // Scale the dividend so the quotient has at least 35 digits; the
        // scaled dividend stays below 10^69.
        let scale = 35 + b.coefficient.digitCount - a.coefficient.digitCount
        let dividend = a.coefficient.multiplied(by: Wide.powerOfTen(scale))!
        let (quotient, remainder) = dividend.quotientAndRemainder(dividingBy: b.coefficient)
        if remainder.isZero {
            return make(
                negative: negative, coefficient: quotient, exponent: preferred - scale, preferred: preferred)
        }
        // An appended nonzero digit stands in for the nonzero remainder: it
        // can never make a tie, and rounding discards it.
        let sticky = quotient.multiplied(by: 10)! + Wide(1)
        return make(negative: negative, coefficient: sticky, exponent: preferred - scale - 1, preferred: preferred)
    }
}

// MARK: - Encoding internals

extension Decimal128 {
    private enum Encoding {
        static let signBit: UInt64 = 1 << 63
        static let infinity: UInt64 = 0x7800_0000_0000_0000
        static let nan: UInt64 = 0x7c00_0000_0000_0000
        static let signalingNaN: UInt64 = 0x7e00_0000_0000_0000
        /// Combination bits 11 after the sign: the exponent moves two bits
        /// down and the implied coefficient exceeds 10^34, so it reads as 0.
        static let largeForm: UInt64 = 0x6000_0000_0000_0000
        static let coefficientHighMask: UInt64 = (1 << 49) - 1
        static let bias = 6176
        static let minExponent = -6176
        static let maxExponent = 6111
        static let digits = 34
    }

    /// The NaN realm-core uses for a null `Decimal128` column value.
    private var isRealmNullMarker: Bool { high == Encoding.nan && low == 0xaa }

    /// Sign, exponent and coefficient of a finite value; a non-canonical
    /// coefficient reads as zero, as in the Intel library.
    private var finiteParts: (negative: Bool, exponent: Int, coefficient: Wide) {
        let negative = high & Encoding.signBit != 0
        if high & Encoding.largeForm == Encoding.largeForm {
            return (negative, Int((high >> 47) & 0x3fff) - Encoding.bias, Wide())
        }
        let coefficient = Wide(high: high & Encoding.coefficientHighMask, low: low)
        return (
            negative, Int((high >> 49) & 0x3fff) - Encoding.bias,
            coefficient > Wide.maxCoefficient ? Wide() : coefficient
        )
    }

    /// The NaN an arithmetic operation returns for this NaN operand: quiet,
    /// same sign, payload kept if canonical (below 10^33) and dropped if not.
    private var quieted: Decimal128 {
        let payload = Wide(high: high & 0x3fff_ffff_ffff, low: low)
        if payload > Wide.maxPayload {
            return Decimal128(high: high & 0xfc00_0000_0000_0000, low: 0)
        }
        return Decimal128(high: high & 0xfc00_3fff_ffff_ffff, low: low)
    }

    private static func pack(negative: Bool, exponent: Int, coefficient: Wide) -> Decimal128 {
        let sign = negative ? Encoding.signBit : 0
        return Decimal128(
            high: sign | UInt64(exponent + Encoding.bias) << 49 | coefficient.w1, low: coefficient.w0)
    }

    private static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(high: Encoding.infinity | (negative ? Encoding.signBit : 0), low: 0)
    }

    private static func zero(negative: Bool, exponent: Int) -> Decimal128 {
        let clamped = Swift.max(Encoding.minExponent, Swift.min(Encoding.maxExponent, exponent))
        return pack(negative: negative, exponent: clamped, coefficient: Wide())
    }

    /// The decimal128 for the exact value ±coefficient × 10^exponent:
    /// rounded half-even to 34 digits (fewer below the smallest exponent),
    /// infinity on overflow. An exact result takes the exponent nearest to
    /// `preferred`, as IEEE 754 prescribes.
    private static func make(negative: Bool, coefficient: Wide, exponent: Int, preferred: Int) -> Decimal128 {
        if coefficient.isZero { return zero(negative: negative, exponent: preferred) }
        var coefficient = coefficient
        var exponent = exponent
        var exact = true
        let digitCount = coefficient.digitCount
        let target = Swift.max(exponent + Swift.max(digitCount - Encoding.digits, 0), Encoding.minExponent)
        if target > exponent {
            (coefficient, exact) = coefficient.roundedHalfEven(droppingDigits: target - exponent, of: digitCount)
            exponent = target
            if coefficient == Wide.powerOfTen(Encoding.digits) {
                coefficient = Wide.powerOfTen(Encoding.digits - 1)
                exponent += 1
            }
            if coefficient.isZero { return zero(negative: negative, exponent: exponent) }
        }
        if exact {
            while exponent < preferred {
                let (quotient, remainder) = coefficient.quotientAndRemainder(dividingBy: 10)
                if remainder != 0 { break }
                coefficient = quotient
                exponent += 1
            }
            let floor = Swift.max(preferred, Encoding.minExponent)
            while exponent > floor && coefficient < Wide.powerOfTen(Encoding.digits - 1) {
                coefficient = coefficient.multiplied(by: 10)!
                exponent -= 1
            }
        }
        if exponent > Encoding.maxExponent {
            while exponent > Encoding.maxExponent && coefficient < Wide.powerOfTen(Encoding.digits - 1) {
                coefficient = coefficient.multiplied(by: 10)!
                exponent -= 1
            }
            if exponent > Encoding.maxExponent { return infinity(negative: negative) }
        }
        return pack(negative: negative, exponent: exponent, coefficient: coefficient)
    }

    /// The decimal128 nearest to ±digits × 10^exponent, where `digits` are
    /// decimal digit values without leading zeros: the value keeps
    /// `exponent` when the digits fit, and otherwise has 34 digits, as in
    /// realm-core's parser.
    private static func rounded(negative: Bool, digits: ArraySlice<UInt8>, exponent: Int) -> Decimal128 {
        if digits.count <= Encoding.digits {
            return make(
                negative: negative, coefficient: Wide(digits: digits), exponent: exponent, preferred: exponent)
        }
        // Keep 34 digits, the 35th, and one more that is nonzero when
        // anything nonzero follows: enough to round exactly.
        let start = digits.startIndex
        let kept = Wide(digits: digits[start..<start + Encoding.digits + 1])
        let sticky: UInt64 = digits[(start + Encoding.digits + 1)...].contains { $0 != 0 } ? 1 : 0
        let coefficient = kept.multiplied(by: 10)! + Wide(sticky)
        let scaledExponent = exponent + digits.count - Encoding.digits - 2
        return make(negative: negative, coefficient: coefficient, exponent: scaledExponent, preferred: scaledExponent)
    }

    /// realm-core's `Decimal128(double)`: the double's exact value rounded to
    /// 34 digits (integers below 10^34 and short fractions stay exact), then,
    /// when that has more than `significantDigits` digits, quantized to
    /// `significantDigits` digits.
    private static func converting(_ value: Double, significantDigits: Int) -> Decimal128 {
        let negative = value.sign == .minus
        let sign = negative ? Encoding.signBit : 0
        if value.isNaN {
            // The payload is the double's, minus its quiet bit, moved up 46 bits.
            let payload = value.bitPattern << 13
            let candidate = Wide(high: payload >> 18, low: payload << 46)
            if candidate > Wide.maxPayload { return Decimal128(high: Encoding.nan | sign, low: 0) }
            return Decimal128(high: Encoding.nan | sign | candidate.w1, low: candidate.w0)
        }
        if value.isInfinite { return infinity(negative: negative) }
        if value == 0 { return pack(negative: negative, exponent: 0, coefficient: Wide()) }

        var mantissa = value.significandBitPattern | (value.isNormal ? 1 << 52 : 0)
        var binaryExponent = value.isNormal ? Int(value.exponentBitPattern) - 1075 : -1074
        let trailing = mantissa.trailingZeroBitCount
        mantissa >>= trailing
        binaryExponent += trailing
        var exact = BigUInt(mantissa)
        if binaryExponent >= 0 {
            exact.shiftLeft(by: binaryExponent)
        } else {
            // m / 2^k == m × 5^k / 10^k
            var remaining = -binaryExponent
            while remaining > 0 {
                let step = Swift.min(remaining, 27)  // 5^27 < 2^64
                exact.multiply(by: Wide.uint64PowerOfFive(step))
                remaining -= step
            }
        }
        let digits = exact.decimalDigits
        let converted = rounded(
            negative: negative, digits: digits[...], exponent: Swift.min(binaryExponent, 0))

        let largest = Wide(Wide.uint64PowerOfTen(significantDigits) - 1)
        if converted.finiteParts.coefficient <= largest { return converted }
        // frexp's exponent, turned into a lower bound for the decimal one the
        // way realm-core does it (30103 / 100000 approximating log10(2)).
        let binary = Int(value.exponent)
        var decimal = (binary * 30103) / 100_000
        if binary < 0 { decimal -= 1 }
        let first = converted.quantized(toExponent: decimal - (significantDigits - 1))
        if first.finiteParts.coefficient <= largest { return first }
        return converted.quantized(toExponent: decimal - (significantDigits - 2))
    }

    /// The value rounded half-even to `exponent`, which must not be below
    /// the current exponent.
    private func quantized(toExponent target: Int) -> Decimal128 {
        let parts = finiteParts
        let drop = target - parts.exponent
        guard drop > 0 else { return self }
        let (coefficient, _) = parts.coefficient.roundedHalfEven(
            droppingDigits: drop, of: parts.coefficient.digitCount)
        return Decimal128.pack(negative: parts.negative, exponent: target, coefficient: coefficient)
    }
}

// MARK: - Wide integers

/// A 256-bit unsigned integer: enough for every exact intermediate of
/// decimal128 arithmetic (a product of two 113-bit coefficients, or a
/// 34-digit coefficient scaled by 10^42).
private struct Wide: Comparable {
    // Limbs, least significant first.
    var w0: UInt64 = 0
    var w1: UInt64 = 0
    var w2: UInt64 = 0
    var w3: UInt64 = 0

    init() {}

    init(_ value: UInt64) {
        w0 = value
    }

    init(high: UInt64, low: UInt64) {
        w0 = low
        w1 = high
    }

    /// The number spelled by decimal digit values, most significant first.
    init(digits: ArraySlice<UInt8>) {
        var value = Wide()
        var index = digits.startIndex
        while index < digits.endIndex {
            let end = Swift.min(index + 19, digits.endIndex)
            var chunk: UInt64 = 0
            for digit in digits[index..<end] { chunk = chunk * 10 + UInt64(digit) }
            value = value.multiplied(by: Wide.uint64PowerOfTen(end - index))! + Wide(chunk)
            index = end
        }
        self = value
    }

    subscript(index: Int) -> UInt64 {
        get {
            switch index {
            case 0: return w0
            case 1: return w1
            case 2: return w2
            default: return w3
            }
        }
        set {
            switch index {
            case 0: w0 = newValue
            case 1: w1 = newValue
            case 2: w2 = newValue
            default: w3 = newValue
            }
        }
    }

    var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

    var isOdd: Bool { w0 & 1 == 1 }

    var bitLength: Int {
        for index in stride(from: 3, through: 0, by: -1) where self[index] != 0 {
            return index * 64 + 64 - self[index].leadingZeroBitCount
        }
        return 0
    }

    /// The number of decimal digits; 0 for zero.
    var digitCount: Int {
        let bits = bitLength
        guard bits > 0 else { return 0 }
        // 1233 / 4096 is just under log10(2), so this never overshoots.
        var count = ((bits - 1) * 1233) >> 12
        while count < Wide.powersOfTen.count && self >= Wide.powersOfTen[count] { count += 1 }
        return count
    }

    var decimalString: String {
        if w1 == 0 && w2 == 0 && w3 == 0 { return String(w0) }
        var chunks: [UInt64] = []
        var rest = self
        while !rest.isZero {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: Wide.uint64PowerOfTen(19))
            chunks.append(remainder)
            rest = quotient
        }
        var text = String(chunks.removeLast())
        for chunk in chunks.reversed() {
            let part = String(chunk)
            text += String(repeating: "0", count: 19 - part.count) + part
        }
        return text
    }

    static func < (lhs: Wide, rhs: Wide) -> Bool {
        if lhs.w3 != rhs.w3 { return lhs.w3 < rhs.w3 }
        if lhs.w2 != rhs.w2 { return lhs.w2 < rhs.w2 }
        if lhs.w1 != rhs.w1 { return lhs.w1 < rhs.w1 }
        return lhs.w0 < rhs.w0
    }

    /// Sum; the callers' operands never carry out of 256 bits.
    static func + (lhs: Wide, rhs: Wide) -> Wide {
        var result = Wide()
        var carry: UInt64 = 0
        for index in 0..<4 {
            let (partial, overflow1) = lhs[index].addingReportingOverflow(rhs[index])
            let (sum, overflow2) = partial.addingReportingOverflow(carry)
            result[index] = sum
            carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
        assert(carry == 0, "Wide addition overflowed")
        return result
    }

    /// Difference; requires `lhs >= rhs`.
    static func - (lhs: Wide, rhs: Wide) -> Wide {
        var result = Wide()
        var borrow: UInt64 = 0
        for index in 0..<4 {
            let (partial, overflow1) = lhs[index].subtractingReportingOverflow(rhs[index])
            let (difference, overflow2) = partial.subtractingReportingOverflow(borrow)
            result[index] = difference
            borrow = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
        assert(borrow == 0, "Wide subtraction underflowed")
        return result
    }

    /// The product, or nil if it does not fit in 256 bits.
    func multiplied(by factor: UInt64) -> Wide? {
        var result = Wide()
        var carry: UInt64 = 0
        for index in 0..<4 {
            let (high, low) = self[index].multipliedFullWidth(by: factor)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            result[index] = sum
            carry = high &+ (overflow ? 1 : 0)
        }
        return carry == 0 ? result : nil
    }

    /// The product, or nil if it does not fit in 256 bits.
    func multiplied(by other: Wide) -> Wide? {
        var result = Wide()
        for j in 0..<4 where other[j] != 0 {
            var carry: UInt64 = 0
            for i in 0..<4 {
                let (high, low) = self[i].multipliedFullWidth(by: other[j])
                if i + j > 3 {
                    if high != 0 || low != 0 || carry != 0 { return nil }
                    continue
                }
                let (partial, overflow1) = result[i + j].addingReportingOverflow(low)
                let (sum, overflow2) = partial.addingReportingOverflow(carry)
                result[i + j] = sum
                // a × b + c + d < 2^128, so this cannot wrap.
                carry = high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0)
            }
            if carry != 0 { return nil }
        }
        return result
    }

    func quotientAndRemainder(dividingBy divisor: UInt64) -> (quotient: Wide, remainder: UInt64) {
        var quotient = Wide()
        var remainder: UInt64 = 0
        for index in stride(from: 3, through: 0, by: -1) {
            (quotient[index], remainder) = divisor.dividingFullWidth((high: remainder, low: self[index]))
        }
        return (quotient, remainder)
    }

    /// Long division, one bit at a time; `divisor` must be below 2^255.
    func quotientAndRemainder(dividingBy divisor: Wide) -> (quotient: Wide, remainder: Wide) {
        if divisor.w1 == 0 && divisor.w2 == 0 && divisor.w3 == 0 {
            let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor.w0)
            return (quotient, Wide(remainder))
        }
        var quotient = Wide()
        var remainder = Wide()
        for bit in stride(from: bitLength - 1, through: 0, by: -1) {
            remainder = Wide(
                w0: remainder.w0 << 1 | (self[bit / 64] >> UInt64(bit % 64)) & 1,
                w1: remainder.w1 << 1 | remainder.w0 >> 63,
                w2: remainder.w2 << 1 | remainder.w1 >> 63,
                w3: remainder.w3 << 1 | remainder.w2 >> 63)
            if remainder >= divisor {
                remainder = remainder - divisor
                quotient[bit / 64] |= 1 << UInt64(bit % 64)
            }
        }
        return (quotient, remainder)
    }

    private init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
    }

    /// Drops the last `count` of this number's `digitCount` digits, rounding
    /// half-even; `exact` tells whether the dropped digits were all zero.
    func roundedHalfEven(droppingDigits count: Int, of digitCount: Int) -> (value: Wide, exact: Bool) {
        if count > digitCount { return (Wide(), isZero) }
        // Divide by 10^(count-1) remembering whether anything nonzero was
        // dropped, then look at the last dropped digit.
        var rest = self
        var sticky = false
        var remaining = count - 1
        while remaining > 0 {
            let step = Swift.min(remaining, 19)
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: Wide.uint64PowerOfTen(step))
            sticky = sticky || remainder != 0
            rest = quotient
            remaining -= step
        }
        let (kept, lastDigit) = rest.quotientAndRemainder(dividingBy: 10)
        let roundUp = lastDigit > 5 || (lastDigit == 5 && (sticky || kept.isOdd))
        return (roundUp ? kept + Wide(1) : kept, lastDigit == 0 && !sticky)
    }

    static let powersOfTen: [Wide] = {
        var table = [Wide(1)]
        while let next = table[table.count - 1].multiplied(by: 10) { table.append(next) }
        return table
    }()

    static func powerOfTen(_ exponent: Int) -> Wide { powersOfTen[exponent] }

    static func uint64PowerOfTen(_ exponent: Int) -> UInt64 { powersOfTen[exponent].w0 }

    static func uint64PowerOfFive(_ exponent: Int) -> UInt64 {
        var result: UInt64 = 1
        for _ in 0..<exponent { result *= 5 }
        return result
    }

    /// 10^34 - 1, the largest canonical coefficient.
    static let maxCoefficient = powersOfTen[34] - Wide(1)

    /// 10^33 - 1, the largest canonical NaN payload.
    static let maxPayload = powersOfTen[33] - Wide(1)
}

/// An unsigned integer of any size, used only for the exact value of a
/// `Double` (at most about 2,600 bits).
private struct BigUInt {
    // Limbs, least significant first.
    private var limbs: [UInt64]

    init(_ value: UInt64) {
        limbs = [value]
    }

    mutating func multiply(by factor: UInt64) {
        var carry: UInt64 = 0
        for index in limbs.indices {
            let (high, low) = limbs[index].multipliedFullWidth(by: factor)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            limbs[index] = sum
            carry = high &+ (overflow ? 1 : 0)
        }
        if carry != 0 { limbs.append(carry) }
    }

    mutating func shiftLeft(by bits: Int) {
        let part = bits % 64
        if part > 0 {
            var carry: UInt64 = 0
            for index in limbs.indices {
                let limb = limbs[index]
                limbs[index] = limb << part | carry
                carry = limb >> (64 - part)
            }
            if carry != 0 { limbs.append(carry) }
        }
        limbs.insert(contentsOf: repeatElement(0, count: bits / 64), at: 0)
    }

    /// Decimal digit values, most significant first, no leading zeros.
    var decimalDigits: [UInt8] {
        let chunkSize: UInt64 = 10_000_000_000_000_000_000
        var rest = limbs
        var chunks: [UInt64] = []
        while let top = rest.last {
            if top == 0 {
                rest.removeLast()
                continue
            }
            var remainder: UInt64 = 0
            for index in rest.indices.reversed() {
                (rest[index], remainder) = chunkSize.dividingFullWidth((high: remainder, low: rest[index]))
            }
            chunks.append(remainder)
        }
        var digits: [UInt8] = []
        for (position, chunk) in chunks.reversed().enumerated() {
            let text = String(chunk)
            if position > 0 { digits += repeatElement(0, count: 19 - text.utf8.count) }
            digits += text.utf8.map { $0 - UInt8(ascii: "0") }
        }
        return digits
    }
}
