import Foundation

/// Dates as ISO 8601 text in UTC (`2024-05-01T09:30:00.250Z`), written and
/// read without a formatter (one per value is far too slow for an export).
///
/// The fraction has at least three digits and as many more (up to nine) as
/// the date needs to read back as exactly the same `Date`: a date written
/// and read again is equal to the original, to the nanosecond.
enum DateText {
    /// Seconds from 1970 to 2001, where `Date` counts from.
    private static let referenceOffset: Int64 = 978_307_200
    private static let powersOfTen: [Double] = (0...18).map { pow(10, Double($0)) }

    /// The text of `date`, or nil for a date too far out to write this way.
    static func format(_ date: Date) -> String? {
        var text: String?
        write(date) { text = String(decoding: $0, as: UTF8.self) }
        return text
    }

    /// Calls `body` with the UTF-8 text of `date`; false (and no call) for a
    /// date too far out to write this way.
    @discardableResult
    static func write(_ date: Date, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e14 else { return false }
        let whole = interval.rounded(.down)
        let fraction = interval - whole  // exact
        var digits = 9
        var scaled: Int64 = 0
        for candidate in 3...9 {
            let power = powersOfTen[candidate]
            let value = (fraction * power).rounded()
            if value < power, whole + value / power == interval {
                digits = candidate
                scaled = Int64(value)
                break
            }
            if candidate == 9 { scaled = min(Int64(value), 999_999_999) }
        }
        let seconds = Int64(whole) + referenceOffset
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let ofDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var count = 0
            func put(_ character: Unicode.Scalar) {
                buffer[count] = UInt8(character.value)
                count += 1
            }
            func put(_ value: Int64, width: Int) {
                var width = width
                var probe = value / 10
                var needed = 1
                while probe > 0 {
                    probe /= 10
                    needed += 1
                }
                width = max(width, needed)
                var rest = value
                for index in stride(from: count + width - 1, through: count, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                count += width
            }
            if year < 0 {
                put("-")
            } else if year > 9999 {
                put("+")
            }
            put(abs(year), width: 4)
            put("-")
            put(month, width: 2)
            put("-")
            put(day, width: 2)
            put("T")
            put(ofDay / 3600, width: 2)
            put(":")
            put(ofDay / 60 % 60, width: 2)
            put(":")
            put(ofDay % 60, width: 2)
            put(".")
            put(scaled, width: digits)
            put("Z")
            body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        return true
    }

    /// The date `text` names: `YYYY-MM-DD`, then optionally `T` (or a space)
    /// and `hh:mm`, `:ss`, a fraction, and `Z` or an offset like `+09:00`
    /// (no zone: UTC). Nil when it is not such a date.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var position = 0
        func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
        func number(_ count: Int) -> Int64? {
            guard position + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let byte = bytes[position]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                position += 1
            }
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard peek() == character else { return false }
            position += 1
            return true
        }
        var sign: Int64 = 1
        if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") {
            sign = peek() == UInt8(ascii: "-") ? -1 : 1
            position += 1
        }
        // Four or more year digits.
        var yearDigits = 0
        while position + yearDigits < bytes.count, (0x30...0x39).contains(bytes[position + yearDigits]) { yearDigits += 1 }
        guard yearDigits >= 4, yearDigits <= 9, let year = number(yearDigits), expect(UInt8(ascii: "-")),
            let month = number(2), (1...12).contains(month), expect(UInt8(ascii: "-")), let day = number(2),
            (1...daysIn(month, of: sign * year)).contains(day)
        else { return nil }
        var seconds = days(fromCivil: sign * year, month, day) * 86_400
        var scaled: Int64 = 0
        var digits = 0
        if position < bytes.count {
            guard expect(UInt8(ascii: "T")) || expect(UInt8(ascii: "t")) || expect(UInt8(ascii: " ")),
                let hour = number(2), hour < 24, expect(UInt8(ascii: ":")), let minute = number(2), minute < 60
            else { return nil }
            seconds += hour * 3600 + minute * 60
            if expect(UInt8(ascii: ":")) {
                guard let second = number(2), second < 61 else { return nil }
                seconds += second
                if expect(UInt8(ascii: ".")) || expect(UInt8(ascii: ",")) {
                    while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                        if digits < 18 {
                            scaled = scaled * 10 + Int64(byte - UInt8(ascii: "0"))
                            digits += 1
                        }
                        position += 1
                    }
                    guard digits > 0 else { return nil }
                }
            }
            if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
            } else if let byte = peek(), byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                position += 1
                guard let hours = number(2), hours < 24 else { return nil }
                _ = expect(UInt8(ascii: ":"))
                let minutes = number(2) ?? 0
                guard minutes < 60 else { return nil }
                // Local time plus the offset is UTC: subtract it.
                seconds -= (byte == UInt8(ascii: "+") ? 1 : -1) * (hours * 3600 + minutes * 60)
            }
            guard position == bytes.count else { return nil }
        }
        let whole = Double(seconds - referenceOffset)
        return Date(timeIntervalSinceReferenceDate: whole + Double(scaled) / powersOfTen[digits])
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, as ISO 8601 counts)

    /// Year, month and day of a count of days from 1970-01-01 (Howard Hinnant's algorithm).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to a date.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
