extension Decimal128 {
    /// An unsigned integer of any size, used only for the exact value of a
    /// `Double` (at most about 2,600 bits).
    struct BigUInt {
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
}
