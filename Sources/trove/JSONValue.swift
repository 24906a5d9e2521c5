/// A JSON value as `trove import` reads it. Numbers keep their text unless
/// they are integers that fit 64 bits, so a decimal keeps every digit and a
/// float is read as a float, not through a double.
enum JSONValue {
    case null
    case bool(Bool)
    /// An integer literal that fits `Int64`.
    case integer(Int64)
    /// Any other number, as written.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in the order written.
    case object([JSONMember])

    /// A short description for messages: the value itself when short.
    var summary: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .integer(let value): return String(value)
        case .number(let text): return text
        case .string(let text): return "'" + (text.count > 40 ? text.prefix(40) + "…" : text) + "'"
        case .array(let items): return "an array of \(items.count)"
        case .object: return "a JSON object"
        }
    }

    /// Parses one whole JSON value from `text` (surrounding white space allowed).
    static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse($0) }
    }

    /// Parses one whole JSON value from UTF-8 bytes; a string that is not
    /// valid UTF-8 is an error, not repaired.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = JSONParser(bytes, isComplete: true)
        let value = try parser.value()
        try parser.expectEnd()
        return value
    }
}

/// One member of a JSON object (a struct, not a tuple: arrays of it need no
/// type metadata made at run time).
struct JSONMember {
    let key: String
    let value: JSONValue
}

/// Why JSON input could not be read.
struct JSONError: Error {
    let message: String
    /// Where, in bytes from the start of the text parsed.
    let offset: Int
}

/// A JSON parser over bytes in memory (RFC 8259; at most 512 levels deep).
///
/// When the bytes are a chunk of a longer input (`isComplete` false), running
/// out in the middle of a value throws ``truncated``: the caller reads more
/// and parses the value again from its start.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let isComplete: Bool
    /// The next byte to read.
    private(set) var position = 0

    /// The input ended inside a value that may continue past the chunk.
    static let truncated = JSONError(message: "the input ends inside a value", offset: -1)
    private static let maximumDepth = 512

    init(_ bytes: UnsafeBufferPointer<UInt8>, isComplete: Bool) {
        self.bytes = bytes
        self.isComplete = isComplete
    }

    /// Skips white space; returns the next byte without taking it, or nil at the end.
    mutating func peek() throws -> UInt8? {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return bytes[position]
            }
        }
        if !isComplete { throw Self.truncated }
        return nil
    }

    /// Fails unless only white space is left.
    mutating func expectEnd() throws {
        if let byte = try peek() { throw error("unexpected \(describe(byte)) after the value") }
    }

    /// Reads one value.
    mutating func value() throws -> JSONValue {
        try value(depth: 0)
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard let byte = try peek() else { throw error("the input ends where a value should be") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw error("values nest more than \(Self.maximumDepth) deep") }
            position += 1
            var members: [JSONMember] = []
            var names: Set<String> = []  // the names, once there are many to look through
            if try peek() == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                guard try peek() == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let keyStart = position
                let key = try string()
                if members.count < 16 ? members.contains(where: { $0.key == key }) : !names.insert(key).inserted {
                    position = keyStart
                    throw error("the member name \"\(key)\" appears twice in an object")
                }
                if members.count == 15 { names = Set(members.map(\.key) + [key]) }
                guard try peek() == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
                position += 1
                members.append(JSONMember(key: key, value: try value(depth: depth + 1)))
                switch try peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .object(members)
                default: throw error("expected ',' or '}' in an object")
                }
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw error("values nest more than \(Self.maximumDepth) deep") }
            position += 1
            var items: [JSONValue] = []
            if try peek() == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                switch try peek() {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return .array(items)
                default: throw error("expected ',' or ']' in an array")
                }
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected \(describe(byte))")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else {
            if !isComplete { throw Self.truncated }
            throw error("unexpected end of input")
        }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw error("unexpected \(describe(bytes[position]))")
        }
        position += count
    }

    private mutating func number() throws -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits() throws -> Int {
            let first = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                position += 1
            }
            if position == bytes.count, !isComplete { throw Self.truncated }
            return position - first
        }
        guard try digits() > 0 else { throw error("a number needs digits") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            isInteger = false
            guard try digits() > 0 else { throw error("a number needs digits after '.'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            isInteger = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard try digits() > 0 else { throw error("a number needs digits in its exponent") }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if isInteger {
            var value: Int64 = 0
            var overflow = false
            let negative = text[0] == UInt8(ascii: "-")
            for byte in text.dropFirst(negative ? 1 : 0) {
                let digit = Int64(byte - UInt8(ascii: "0"))
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                if o1 || o2 {
                    overflow = true
                    break
                }
                value = next
            }
            if !overflow { return .integer(value) }
        }
        return .number(String(decoding: text, as: UTF8.self))
    }

    /// A string at `position` (its opening quote).
    mutating func string() throws -> String {
        position += 1
        let start = position
        // The common case: no escapes, the bytes are the string.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                guard let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                else { throw invalidUTF8(from: start) }
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character (U+\(hex(byte))) inside a string must be escaped") }
            position += 1
        }
        var decoded = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else { throw invalidUTF8(from: start) }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try hexScalar()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A surrogate pair: the low half follows as another \u escape.
                        guard position + 1 < bytes.count || isComplete else { throw Self.truncated }
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw error("a lone surrogate \\u\(String(scalar, radix: 16)) in a string") }
                        position += 2
                        let low = try hexScalar()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("a lone surrogate \\u\(String(scalar, radix: 16)) in a string")
                        }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("a lone surrogate \\u\(String(scalar, radix: 16)) in a string")
                    }
                    decoded.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default: throw error("unknown escape \\\(describe(escape)) in a string")
                }
                continue
            default:
                if byte < 0x20 { throw error("a control character (U+\(hex(byte))) inside a string must be escaped") }
                decoded.append(byte)
                continue
            }
            break
        }
        if !isComplete { throw Self.truncated }
        throw error("a string is not closed")
    }

    private mutating func hexScalar() throws -> UInt32 {
        guard position + 4 <= bytes.count else {
            if !isComplete { throw Self.truncated }
            throw error("\\u needs four hex digits")
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Invalid UTF-8 in the string starting at `start`, at its first bad byte.
    private func invalidUTF8(from start: Int) -> JSONError {
        var offset = start
        var iterator = UnsafeBufferPointer(rebasing: bytes[start..<position]).makeIterator()
        var decoder = UTF8()
        var scalarStart = start
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                scalarStart += UTF8.width(scalar)
            case .emptyInput:
                break decoding
            case .error:
                offset = scalarStart
                break decoding
            }
        }
        return JSONError(message: "a string holds bytes that are not valid UTF-8", offset: offset)
    }

    private func error(_ message: String) -> JSONError {
        JSONError(message: message, offset: position)
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
    }

    private func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}
