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
    static func compare(_ x: Decimal128, _ y: Decimal128) -> Int {
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
    static func compareMagnitudes(_ c1: Wide, _ e1: Int, _ c2: Wide, _ e2: Int) -> Int {
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

    static func add(_ x: Decimal128, _ y: Decimal128, negatingRight: Bool) -> Decimal128 {
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

    static func multiply(_ x: Decimal128, _ y: Decimal128) -> Decimal128 {
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

    static func divide(_ x: Decimal128, _ y: Decimal128) -> Decimal128 {
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
