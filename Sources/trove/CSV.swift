/// RFC 4180 CSV, read a record at a time from bytes: quoted fields may hold
/// commas, quotes (doubled: `""`) and line breaks, kept byte for byte.
enum CSV {
    struct Field {
        var text: String
        /// Whether the field was quoted: `""` is an empty string, an empty
        /// unquoted field is null.
        var isQuoted: Bool
    }

    struct Record {
        var fields: [Field]
        /// Bytes the record takes, its line break included.
        var length: Int
        /// Line breaks it takes (inside quoted fields and at its end).
        var lineBreaks: Int

        /// The first field (counted from 1) whose bytes are not valid UTF-8:
        /// its text holds U+FFFD in their place, and the record is refused.
        var invalidUTF8Field: Int?

        /// A blank line.
        var isBlank: Bool { fields.count == 1 && fields[0].text.isEmpty && !fields[0].isQuoted }
    }

    /// The text of a field's bytes; notes the field when they are not UTF-8.
    private static func text(_ bytes: some Collection<UInt8>, field: Int, invalid: inout Int?) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        if invalid == nil { invalid = field }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The record at the start of `bytes`, or nil when there is none: no
    /// bytes, or (when more input may follow, `isComplete` false) bytes that
    /// end inside the record: read more and try again.
    static func record(in bytes: UnsafeBufferPointer<UInt8>, isComplete: Bool) -> Record? {
        guard !bytes.isEmpty else { return nil }
        let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""), newline: UInt8 = 0x0A, carriageReturn: UInt8 = 0x0D
        var fields: [Field] = []
        var position = 0
        var lineBreaks = 0
        var invalid: Int?
        while true {
            if position < bytes.count, bytes[position] == quote {
                position += 1
                var text: [UInt8] = []
                var run = position
                while true {
                    guard position < bytes.count else {
                        if !isComplete { return nil }
                        text += bytes[run..<position]  // a quote never closed: the rest of the input
                        break
                    }
                    let byte = bytes[position]
                    if byte == quote {
                        guard position + 1 < bytes.count else {
                            if !isComplete { return nil }
                            text += bytes[run..<position]
                            position += 1
                            break
                        }
                        if bytes[position + 1] == quote {
                            text += bytes[run...position]
                            position += 2
                            run = position
                            continue
                        }
                        text += bytes[run..<position]
                        position += 1
                        break
                    }
                    if byte == newline { lineBreaks += 1 }
                    position += 1
                }
                // Anything between the closing quote and the separator is kept (lenient).
                let rest = position
                while position < bytes.count, bytes[position] != comma, bytes[position] != newline,
                    bytes[position] != carriageReturn
                {
                    position += 1
                }
                text += bytes[rest..<position]
                fields.append(Field(text: CSV.text(text, field: fields.count + 1, invalid: &invalid), isQuoted: true))
            } else {
                let start = position
                while position < bytes.count, bytes[position] != comma, bytes[position] != newline,
                    bytes[position] != carriageReturn
                {
                    position += 1
                }
                fields.append(
                    Field(
                        text: CSV.text(
                            UnsafeBufferPointer(rebasing: bytes[start..<position]), field: fields.count + 1, invalid: &invalid),
                        isQuoted: false))
            }
            guard position < bytes.count else {
                return isComplete
                    ? Record(fields: fields, length: position, lineBreaks: lineBreaks, invalidUTF8Field: invalid) : nil
            }
            let separator = bytes[position]
            position += 1
            if separator == comma { continue }
            if separator == carriageReturn {
                if position == bytes.count, !isComplete { return nil }  // a \n may follow
                if position < bytes.count, bytes[position] == newline { position += 1 }
            }
            return Record(fields: fields, length: position, lineBreaks: lineBreaks + 1, invalidUTF8Field: invalid)
        }
    }
}
