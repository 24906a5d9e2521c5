import Foundation

/// A 12-byte identifier in the BSON ObjectId layout, the same bytes, text and
/// order as Realm's and MongoDB's `ObjectId`.
///
/// The bytes are a 4-byte big-endian timestamp in seconds since 1970, 5
/// bytes chosen at random once per process, and a 3-byte big-endian counter
/// that starts at a random value. Identifiers from ``generate()`` therefore
/// sort by creation time, and are unique without coordination.
///
/// ```swift
/// let id = ObjectId.generate()
/// let same = try ObjectId(string: id.stringValue)
/// same == id                          // true
/// ObjectId.generate() > id            // true within this process
/// ```
///
/// Values compare byte by byte, as realm-core compares them; the text form
/// is 24 lowercase hexadecimal digits.
public struct ObjectId: Sendable {
    // Bytes 0–7 and 8–11 as big-endian integers, so that comparing the
    // integers compares the bytes.
    private let head: UInt64
    private let tail: UInt32

    /// Creates the all-zero identifier, `000000000000000000000000`, as
    /// Realm's `ObjectId()` does.
    ///
    /// ```swift
    /// ObjectId().stringValue  // "000000000000000000000000"
    /// ```
    public init() {
        head = 0
        tail = 0
    }

    /// Creates an identifier from its 12 bytes.
    ///
    /// ```swift
    /// let id = ObjectId(bytes: Array(repeating: 0xff, count: 12))
    /// id.stringValue  // "ffffffffffffffffffffffff"
    /// ```
    ///
    /// - Precondition: `bytes.count == 12`.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 12, "An ObjectId is 12 bytes, not \(bytes.count)")
        head = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        tail = bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The 12 bytes: timestamp, process-unique bytes, counter.
    ///
    /// ```swift
    /// ObjectId(bytes: Array(0..<12)).bytes == Array(0..<12)  // true
    /// ```
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: head >> (56 - 8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: tail >> (24 - 8 * $0)) }
    }

    /// Creates a new identifier from the current time, this process's
    /// random bytes and the next counter value.
    ///
    /// ```swift
    /// let first = ObjectId.generate()
    /// let second = ObjectId.generate()
    /// first < second  // true, unless the counter wrapped around
    /// ```
    public static func generate() -> ObjectId {
        ObjectId(seconds: seconds(since1970: Date()), unique: processUnique, counter: nextCounter())
    }

    /// Creates an identifier from a time, a machine identifier and a process
    /// identifier, followed by the next counter value, laid out as
    /// realm-core does.
    ///
    /// The timestamp is whole seconds since 1970 (earlier fractional
    /// seconds round toward 1970), kept modulo 2^32. Bytes 4–6 are the low 24
    /// bits of `machineId` and bytes 7–8 the low 16 bits of `processId`, both
    /// least significant byte first.
    ///
    /// ```swift
    /// let date = Date(timeIntervalSince1970: 0x12345)
    /// let id = ObjectId(timestamp: date, machineId: 0xff0000, processId: 0xefbe)
    /// id.stringValue.hasPrefix("000123450000ffbeef")  // true
    /// id.timestamp == date                            // true
    /// ```
    public init(timestamp: Date, machineId: Int, processId: Int) {
        let machine = UInt64(truncatingIfNeeded: machineId)
        let process = UInt64(truncatingIfNeeded: processId)
        let unique =
            (machine & 0xff) << 32 | (machine >> 8 & 0xff) << 24 | (machine >> 16 & 0xff) << 16
            | (process & 0xff) << 8 | process >> 8 & 0xff
        self.init(seconds: ObjectId.seconds(since1970: timestamp), unique: unique, counter: ObjectId.nextCounter())
    }

    private init(seconds: UInt32, unique: UInt64, counter: UInt32) {
        head = UInt64(seconds) << 32 | unique >> 8
        tail = UInt32(truncatingIfNeeded: unique & 0xff) << 24 | counter & 0xff_ffff
    }

    /// The creation time stored in the first four bytes, to the second.
    ///
    /// ```swift
    /// try ObjectId(string: "000000010000000000000000").timestamp
    ///     == Date(timeIntervalSince1970: 1)  // true
    /// ```
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(head >> 32))
    }

    /// The identifier as 24 lowercase hexadecimal digits.
    ///
    /// ```swift
    /// try ObjectId(string: "000123450000FFBEEF91906C").stringValue  // "000123450000ffbeef91906c"
    /// ```
    public var stringValue: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(24)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

// MARK: - Parsing and text

extension ObjectId: CustomStringConvertible, LosslessStringConvertible {
    /// Why a string is not an ``ObjectId``.
    ///
    /// ```swift
    /// do { _ = try ObjectId(string: "0001234500x0ffbeef91906c") } catch {
    ///     print(error)  // '0001234500x0ffbeef91906c' is not an ObjectId: 'x' at offset 10 is not a hexadecimal digit
    /// }
    /// ```
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that failed to parse.
        public let input: String
        /// The position of the first character that is not a hexadecimal
        /// digit, counted in Unicode scalars; `nil` when every character is a
        /// hexadecimal digit but there are not 24 of them.
        public let offset: Int?

        /// A message naming the input and what is wrong with it.
        public var description: String {
            let scalars = Array(input.unicodeScalars)
            if let offset {
                return "'\(input)' is not an ObjectId: '\(Character(scalars[offset]))' at offset \(offset)"
                    + " is not a hexadecimal digit"
            }
            return "'\(input)' is not an ObjectId: it has \(scalars.count) hexadecimal digits, not 24"
        }
    }

    /// Parses 24 hexadecimal digits, in either case.
    ///
    /// ```swift
    /// let id = try ObjectId(string: "000123450000ffbeef91906c")
    /// ```
    ///
    /// - Throws: ``ParseError`` for any other text.
    public init(string: String) throws {
        var head: UInt64 = 0
        var tail: UInt32 = 0
        var count = 0
        for scalar in string.unicodeScalars {
            let value: UInt32
            switch scalar {
            case "0"..."9": value = scalar.value - 48
            case "a"..."f": value = scalar.value - 87
            case "A"..."F": value = scalar.value - 55
            default: throw ParseError(input: string, offset: count)
            }
            if count < 16 {
                head = head << 4 | UInt64(value)
            } else if count < 24 {
                tail = tail << 4 | value
            }
            count += 1
        }
        guard count == 24 else { throw ParseError(input: string, offset: nil) }
        self.head = head
        self.tail = tail
    }

    /// Parses 24 hexadecimal digits, or returns `nil`.
    ///
    /// A string literal argument picks ``init(_:)-(StaticString)`` instead,
    /// so `ObjectId("…")` is not optional, as in Realm.
    ///
    /// ```swift
    /// let text = "000123450000ffbeef91906c"
    /// ObjectId(text) != nil         // true
    /// ObjectId("not an id" as String) == nil  // true
    /// ```
    @_disfavoredOverload
    public init?(_ description: String) {
        guard let value = try? ObjectId(string: description) else { return nil }
        self = value
    }

    /// Parses a literal of 24 hexadecimal digits; stops the program if it is
    /// not one, which is a mistake in the source. Mirrors Realm's
    /// `ObjectId("…")`.
    ///
    /// ```swift
    /// let id = ObjectId("000123450000ffbeef91906c" as StaticString)
    /// ```
    public init(_ string: StaticString) {
        do {
            try self.init(string: string.description)
        } catch {
            fatalError(String(describing: error))
        }
    }

    /// The 24 lowercase hexadecimal digits, as ``stringValue``.
    ///
    /// ```swift
    /// print(ObjectId())  // 000000000000000000000000
    /// ```
    public var description: String { stringValue }
}

// MARK: - Equality, ordering and Codable

extension ObjectId: Hashable, Comparable {
    /// Orders identifiers byte by byte, as realm-core does; generated ones
    /// therefore sort by creation time.
    ///
    /// ```swift
    /// try ObjectId(string: "000123450000ffbeef91906c") < ObjectId(string: "000123450000ffbeef91906d")  // true
    /// ```
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        (lhs.head, lhs.tail) < (rhs.head, rhs.tail)
    }
}

extension ObjectId: Codable {
    /// Decodes the 24-digit hexadecimal string Realm encodes.
    ///
    /// ```swift
    /// let id = try JSONDecoder().decode([ObjectId].self, from: Data(#"["000123450000ffbeef91906c"]"#.utf8))
    /// ```
    ///
    /// - Throws: `DecodingError.dataCorrupted` for any other text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(string: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: String(describing: error))
        }
    }

    /// Encodes the identifier as its ``stringValue``.
    ///
    /// ```swift
    /// try JSONEncoder().encode(ObjectId())  // "\"000000000000000000000000\""
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

// MARK: - Generation state

extension ObjectId {
    /// Five random bytes, fixed for the life of the process.
    private static let processUnique = UInt64.random(in: 0..<(1 << 40))

    /// The counter shared by every identifier made in this process.
    private static let counter = Locked(UInt32.random(in: 0...UInt32.max))

    private static func nextCounter() -> UInt32 {
        counter.withLock { value in
            defer { value &+= 1 }
            return value
        }
    }

    /// Whole seconds since 1970, modulo 2^32, computed as Realm Swift turns
    /// a `Date` into a realm-core timestamp: truncated toward 2001, shifted to
    /// 1970, and moved down one second when the remaining fraction is
    /// negative for a date after 1970.
    private static func seconds(since1970 date: Date) -> UInt32 {
        let offset1970: Int64 = 978_307_200
        let interval = date.timeIntervalSinceReferenceDate
        guard !interval.isNaN else { return 0 }
        var seconds: Int64
        if interval >= Double(Int64.max) - Double(offset1970) {
            seconds = .max
        } else if interval - Double(offset1970) < Double(Int64.min) {
            seconds = .min
        } else {
            let whole = Int64(interval)
            let nanoseconds = Int32((interval - Double(whole)) * 1_000_000_000)
            seconds = whole + offset1970
            if nanoseconds < 0 && seconds > 0 { seconds -= 1 }
        }
        return UInt32(truncatingIfNeeded: seconds)
    }
}
