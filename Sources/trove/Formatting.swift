import Foundation
import Trove

/// How stored values look in each output format.
enum Formatting {
    static func plain(_ value: StoredValue) -> String {
        switch value {
        case .null: return ""
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .float(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return v
        case .data(let v): return v.base64EncodedString()
        case .date(let v): return isoDate(v)
        case .uuid(let v): return v.uuidString
        case .decimal(let v): return v.description
        case .objectId(let v): return v.stringValue
        case .decimal128(let v): return v.description
        case .object(let typeName, let key): return "\(typeName)#\(key)"
        case .list, .dictionary: return value.description
        }
    }

    /// ISO 8601 in UTC, with the fraction a date needs to read back exactly (``DateText``).
    static func isoDate(_ date: Date) -> String {
        if let text = DateText.format(date) { return text }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// For the table: short, one line; Data as its size and first bytes.
    static func cell(_ value: StoredValue, width: Int) -> String {
        var text: String
        switch value {
        case .null: text = "nil"
        case .data(let v):
            text =
                "<\(v.count) B" + (v.isEmpty ? "" : " " + v.prefix(4).map { String(format: "%02x", $0) }.joined())
                + (v.count > 4 ? "…>" : ">")
        default: text = plain(value)
        }
        text = text.replacingOccurrences(of: "\n", with: "↵")
        if displayWidth(text) > width {
            var cut = ""
            for character in text {
                if displayWidth(cut) + displayWidth(String(character)) > width - 1 { break }
                cut.append(character)
            }
            text = cut + "…"
        }
        return text
    }

    /// Terminal columns a string takes: East Asian wide characters and most
    /// emoji take two, combining marks none.
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            let value = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark {
                return width
            }
            let wide =
                (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
                || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
                || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1F64F).contains(value) || (0x1F900...0x1F9FF).contains(value)
                || (0x20000...0x3FFFD).contains(value)
            return width + (wide ? 2 : 1)
        }
    }

    static func pad(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - displayWidth(text)))
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A table that fits the terminal: each column as wide as its content, shortened when needed.
    static func table(_ objects: [Row], schema: ObjectSchema, terminalWidth: Int) -> String {
        let names = schema.properties.map(\.name)
        let budget = max(16, (terminalWidth - 3 * names.count) / max(1, names.count))
        let rows = objects.map { object in object.values.map { cell($0, width: budget) } }
        var widths = names.map(displayWidth)
        for row in rows { for (index, text) in row.enumerated() { widths[index] = max(widths[index], displayWidth(text)) } }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { pad($0, to: $1) }.joined(separator: " │ ")
        }
        var lines = [line(names), widths.map { String(repeating: "─", count: $0) }.joined(separator: "─┼─")]
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }

    static var terminalWidth: Int {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 20 { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 120
    }

    /// A value typed on the command line, read as the property's type.
    static func parse(_ text: String, as property: PropertySchema) throws -> StoredValue {
        if property.isOptional, text == "nil" || text == "null" { return .null }
        func fail() -> TroveError {
            TroveError(.invalidValue, "'\(text)' is not a value of type \(property.typeDescription) (property \(property.name))")
        }
        switch property.type {
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw fail()
            }
        case .int, .int8, .int16, .int32, .link:
            guard let value = Int64(text) else { throw fail() }
            return .int(value)
        case .float:
            guard let value = Float(text) else { throw fail() }
            return .float(value)
        case .double:
            guard let value = Double(text) else { throw fail() }
            return .double(value)
        case .string: return .string(text)
        case .data:
            guard let value = Data(base64Encoded: text) else { throw fail() }
            return .data(value)
        case .date:
            if let date = DateText.parse(text) { return .date(date) }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) { return .date(date) }
            if let seconds = Double(text) { return .date(Date(timeIntervalSince1970: seconds)) }
            throw fail()
        case .uuid:
            guard let value = UUID(uuidString: text) else { throw fail() }
            return .uuid(value)
        case .decimal:
            guard let value = Decimal(string: text) else { throw fail() }
            return .decimal(value)
        case .objectId:
            guard let value = try? ObjectId(string: text) else { throw fail() }
            return .objectId(value)
        case .decimal128:
            guard let value = try? Decimal128(string: text) else { throw fail() }
            return .decimal128(value)
        case .mixed:
            // A number, a Boolean, or else the text itself.
            if let value = Int64(text) { return .int(value) }
            if let value = Double(text) { return .double(value) }
            if ["true", "false"].contains(text.lowercased()) { return .bool(text.lowercased() == "true") }
            return .string(text)
        }
    }
}
