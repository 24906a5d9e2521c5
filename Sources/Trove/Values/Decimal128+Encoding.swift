// MARK: - Encoding internals

extension Decimal128 {
    enum Encoding {
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
    var isRealmNullMarker: Bool { high == Encoding.nan && low == 0xaa }

    /// Sign, exponent and coefficient of a finite value; a non-canonical
    /// coefficient reads as zero, as in the Intel library.
    var finiteParts: (negative: Bool, exponent: Int, coefficient: Wide) {
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
    var quieted: Decimal128 {
        let payload = Wide(high: high & 0x3fff_ffff_ffff, low: low)
        if payload > Wide.maxPayload {
            return Decimal128(high: high & 0xfc00_0000_0000_0000, low: 0)
        }
        return Decimal128(high: high & 0xfc00_3fff_ffff_ffff, low: low)
    }

    static func pack(negative: Bool, exponent: Int, coefficient: Wide) -> Decimal128 {
        let sign = negative ? Encoding.signBit : 0
        return Decimal128(
            high: sign | UInt64(exponent + Encoding.bias) << 49 | coefficient.w1, low: coefficient.w0)
    }

    static func infinity(negative: Bool) -> Decimal128 {
        Decimal128(high: Encoding.infinity | (negative ? Encoding.signBit : 0), low: 0)
    }

    static func zero(negative: Bool, exponent: Int) -> Decimal128 {
        let clamped = Swift.max(Encoding.minExponent, Swift.min(Encoding.maxExponent, exponent))
        return pack(negative: negative, exponent: clamped, coefficient: Wide())
    }

    /// The decimal128 for the exact value ±coefficient × 10^exponent:
    /// rounded half-even to 34 digits (fewer below the smallest exponent),
    /// infinity on overflow. An exact result takes the exponent nearest to
    /// `preferred`, as IEEE 754 prescribes.
    static func make(negative: Bool, coefficient: Wide, exponent: Int, preferred: Int) -> Decimal128 {
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
    static func rounded(negative: Bool, digits: ArraySlice<UInt8>, exponent: Int) -> Decimal128 {
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
    static func converting(_ value: Double, significantDigits: Int) -> Decimal128 {
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
    func quantized(toExponent target: Int) -> Decimal128 {
        let parts = finiteParts
        let drop = target - parts.exponent
        guard drop > 0 else { return self }
        let (coefficient, _) = parts.coefficient.roundedHalfEven(
            droppingDigits: drop, of: parts.coefficient.digitCount)
        return Decimal128.pack(negative: parts.negative, exponent: target, coefficient: coefficient)
    }
}
