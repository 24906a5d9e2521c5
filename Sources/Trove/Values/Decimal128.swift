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
    let low: UInt64
    let high: UInt64

    init(high: UInt64, low: UInt64) {
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

    static func decimalDigits<T: BinaryInteger>(of value: T) -> [UInt8] {
        String(value).utf8.map { $0 &- UInt8(ascii: "0") }
    }

    init(int64 value: Int64) {
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
