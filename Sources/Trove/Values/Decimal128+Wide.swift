extension Decimal128 {
    /// A 256-bit unsigned integer: enough for every exact intermediate of
    /// decimal128 arithmetic (a product of two 113-bit coefficients, or a
    /// 34-digit coefficient scaled by 10^42).
    struct Wide: Comparable {
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
}
