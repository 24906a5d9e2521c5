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

    static func parse(_ text: String) -> Result<Decimal128, ParseError> {
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
    var intelDescription: String {
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
