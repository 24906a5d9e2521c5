import Foundation
import Trove
import TroveStorage

/// Values as the server's columns take them: PostgreSQL's text input of
/// each kind (``SyncedType``). Every conversion is exact both ways, or the
/// value is refused with a message naming the property: a value never
/// arrives changed.
enum ValueText {
    /// The text of a property's value (nil for NULL); links are handled by the caller.
    static func text(_ value: StoredValue, of property: PropertySchema, in type: String) throws -> String? {
        switch value {
        case .null: return nil
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .float(let v): return floatText(Double(v), description: v.description)
        case .double(let v): return floatText(v, description: v.description)
        case .string(let v):
            guard !v.utf8.contains(0) else {
                throw TroveError(
                    .invalidValue,
                    "\(type).\(property.name) holds a NUL character, which the sync server's PostgreSQL cannot store: the change was not saved; remove the NUL (or use Data)"
                )
            }
            return v
        case .data(let v): return "\\x" + v.map { String(format: "%02x", $0) }.joined()
        case .date(let v): return microsecondText(v)
        case .uuid(let v): return v.uuidString.lowercased()
        case .decimal(let v): return v.description
        case .decimal128(let v): return v.description
        case .objectId(let v): return v.stringValue
        case .object:
            throw TroveError(.invalidValue, "\(type).\(property.name) holds a link in a mixed value, which does not sync yet")
        case .list, .dictionary:
            return try mixedText(value, of: property, in: type)
        }
    }

    private static func floatText(_ value: Double, description: String) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return description
    }

    /// A date in PostgreSQL's ISO form, to the microsecond (its precision).
    static func microsecondText(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = (micros / 1_000_000).rounded(.down)
        let fraction = Int64(micros - seconds * 1_000_000)
        let whole = Date(timeIntervalSince1970: seconds)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
            fraction)
    }

    /// The exact bits of a date, for the companion value that carries what
    /// microseconds lose (`<property>:exact`).
    static func exactDateText(_ date: Date) -> String {
        String(date.timeIntervalSinceReferenceDate.bitPattern, radix: 16)
    }

    /// A date from the server's text (microseconds), or from its exact bits.
    static func date(fromText text: String, exact: String?) -> Date? {
        if let exact, let bits = UInt64(exact, radix: 16) {
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
        }
        // "2026-12-03 23:45:52.123456+00", fraction and zone optional.
        let scanner = Scanner(string: text)
        guard let year = scanner.scanInt(), scanner.scanString("-") != nil, let month = scanner.scanInt(),
            scanner.scanString("-") != nil, let day = scanner.scanInt(), let hour = scanner.scanInt(),
            scanner.scanString(":") != nil, let minute = scanner.scanInt(), scanner.scanString(":") != nil,
            let second = scanner.scanInt()
        else { return nil }
        var micros = 0.0
        if scanner.scanString(".") != nil, let digits = scanner.scanCharacters(from: .decimalDigits) {
            micros = Double(digits.prefix(6).padding(toLength: 6, withPad: "0", startingAt: 0)) ?? 0
        }
        var offset = 0
        if let sign = scanner.scanCharacters(from: CharacterSet(charactersIn: "+-")), let hours = scanner.scanInt() {
            var minutes = 0
            if scanner.scanString(":") != nil { minutes = scanner.scanInt() ?? 0 }
            offset = (sign == "-" ? -1 : 1) * (abs(hours) * 3600 + minutes * 60)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard
            let whole = calendar.date(
                from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
        else { return nil }
        let seconds = whole.timeIntervalSince1970 - Double(offset)
        return Date(timeIntervalSince1970: (seconds * 1_000_000 + micros) / 1_000_000)
    }

    /// The value of a property from the server's text (links are handled by the caller).
    static func value(_ text: String?, of property: PropertySchema, in type: String, exact: String? = nil) throws
        -> StoredValue
    {
        guard let text else { return .null }
        func refused() -> TroveError {
            TroveError(
                .syncServer,
                "the sync server sent \(type).\(property.name) as \(text.prefix(80).debugDescription), which is not a \(property.typeDescription)"
            )
        }
        switch property.type {
        case .bool:
            guard text == "true" || text == "false" else { throw refused() }
            return .bool(text == "true")
        case .int, .int8, .int16, .int32:
            guard let v = Int64(text) else { throw refused() }
            return .int(v)
        case .float:
            guard let v = Float(postgres: text) else { throw refused() }
            return .float(v)
        case .double:
            guard let v = Double(postgres: text) else { throw refused() }
            return .double(v)
        case .string: return .string(text)
        case .data:
            guard text.hasPrefix("\\x"), text.count % 2 == 0 else { throw refused() }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.count / 2 - 1)
            var index = text.index(text.startIndex, offsetBy: 2)
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                guard let byte = UInt8(text[index..<next], radix: 16) else { throw refused() }
                bytes.append(byte)
                index = next
            }
            return .data(Data(bytes))
        case .date:
            guard let date = date(fromText: text, exact: exact) else { throw refused() }
            return .date(date)
        case .uuid:
            guard let v = UUID(uuidString: text) else { throw refused() }
            return .uuid(v)
        case .decimal:
            guard let v = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw refused() }
            return .decimal(v)
        case .decimal128:
            guard let v = try? Decimal128(string: text) else { throw refused() }
            return .decimal128(v)
        case .objectId:
            guard let v = ObjectId(text) else { throw refused() }
            return .objectId(v)
        case .link, .mixed:
            throw refused()
        }
    }

    /// The text of one element of a list, set or map (inside JSON, so a
    /// date's bits beyond microseconds follow a `#` when it has any).
    static func elementText(_ value: StoredValue, of property: PropertySchema, in type: String) throws -> String? {
        guard case .date(let date) = value else { return try text(value, of: property, in: type) }
        let text = microsecondText(date)
        return ValueText.date(fromText: text, exact: nil) == date ? text : text + "#" + exactDateText(date)
    }

    /// An element from ``elementText(_:of:in:)``.
    static func elementValue(_ text: String?, of property: PropertySchema, in type: String) throws -> StoredValue {
        guard property.type == .date, let text, let mark = text.firstIndex(of: "#") else {
            return try value(text, of: property, in: type)
        }
        return try value(String(text[..<mark]), of: property, in: type, exact: String(text[text.index(after: mark)...]))
    }

    /// A mixed value as the JSON the server stores, `{"t": type, "v": text}`
    /// (nil for nil); a nested list's `v` is an array and a dictionary's an
    /// object of such values (null for a nil element). A link in a mixed
    /// value is refused.
    static func mixedText(_ value: StoredValue, of property: PropertySchema, in type: String) throws -> String? {
        if value == .null { return nil }
        let object = try mixedJSON(value, of: property, in: type)
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    private static func mixedJSON(_ value: StoredValue, of property: PropertySchema, in type: String) throws -> Any {
        let tag: PropertyType
        switch value {
        case .null: return NSNull()
        case .list(let elements):
            return ["t": "list", "v": try elements.map { try mixedJSON($0, of: property, in: type) }]
        case .dictionary(let entries):
            return ["t": "dictionary", "v": try entries.mapValues { try mixedJSON($0, of: property, in: type) }]
        case .bool: tag = .bool
        case .int: tag = .int
        case .float: tag = .float
        case .double: tag = .double
        case .string: tag = .string
        case .data: tag = .data
        case .date: tag = .date
        case .uuid: tag = .uuid
        case .decimal: tag = .decimal
        case .decimal128: tag = .decimal128
        case .objectId: tag = .objectId
        case .object:
            throw TroveError(
                .invalidValue,
                "\(type).\(property.name) holds a link to an object, which a mixed value cannot sync yet: the change was not saved"
            )
        }
        return ["t": tag.rawValue, "v": try elementText(value, of: property, in: type) as Any? ?? NSNull()]
    }

    /// A mixed value from ``mixedText(_:of:in:)``.
    static func mixedValue(_ text: String?, of property: PropertySchema, in type: String) throws -> StoredValue {
        guard let text else { return .null }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let value = try mixedValue(json: object, of: property, in: type, depth: 0)
        else {
            throw TroveError(
                .syncServer,
                "the sync server sent \(type).\(property.name) as \(text.prefix(80).debugDescription), which is not a mixed value"
            )
        }
        return value
    }

    private static func mixedValue(json: Any, of property: PropertySchema, in type: String, depth: Int) throws
        -> StoredValue?
    {
        if json is NSNull { return .null }
        guard depth < 100, let object = json as? [String: Any], let tag = object["t"] as? String else { return nil }
        switch tag {
        case "list":
            guard let elements = object["v"] as? [Any] else { return nil }
            var values: [StoredValue] = []
            for element in elements {
                guard let value = try mixedValue(json: element, of: property, in: type, depth: depth + 1) else { return nil }
                values.append(value)
            }
            return .list(values)
        case "dictionary":
            guard let entries = object["v"] as? [String: Any] else { return nil }
            var values: [String: StoredValue] = [:]
            for (key, element) in entries {
                guard let value = try mixedValue(json: element, of: property, in: type, depth: depth + 1) else { return nil }
                values[key] = value
            }
            return .dictionary(values)
        default:
            guard let kind = PropertyType(rawValue: tag), kind != .mixed, kind != .link else { return nil }
            return try elementValue(
                object["v"] as? String, of: PropertySchema(name: property.name, type: kind, isOptional: true), in: type)
        }
    }

    /// FNV-1a over a value's text: what capture compares to tell a changed value.
    static func hash(_ text: String?, exact: String? = nil) -> UInt64 {
        guard let text else { return 0x6e75_6c6c }  // "null"
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        for byte in (exact ?? "").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}

extension Double {
    /// PostgreSQL's text of a double precision value.
    init?(postgres text: String) {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let v = Double(text) else { return nil }
            self = v
        }
    }
}

extension Float {
    /// PostgreSQL's text of a real value.
    init?(postgres text: String) {
        guard let v = Double(postgres: text) else { return nil }
        if v.isNaN || v.isInfinite {
            self = Float(v)
        } else {
            guard let exact = Float(text) else { return nil }
            self = exact
        }
    }
}
