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
        }
    }

    static func isoDate(_ date: Date) -> String {
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
        if text.count > width { text = String(text.prefix(max(1, width - 1))) + "…" }
        return text
    }

    static func json(_ value: StoredValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .float(let v): return v.isFinite ? String(v) : "null"
        case .double(let v): return v.isFinite ? String(v) : "null"
        case .decimal(let v): return v.description
        default: return jsonString(plain(value))
        }
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

    static func jsonObject(_ object: DynamicObject) -> String {
        "{" + zip(object.schema.properties, object.values).map { "\(jsonString($0.name)):\(json($1))" }.joined(separator: ",")
            + "}"
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A table that fits the terminal: each column as wide as its content, shortened when needed.
    static func table(_ objects: [DynamicObject], schema: ObjectSchema, terminalWidth: Int) -> String {
        let names = schema.properties.map(\.name)
        let budget = max(8, (terminalWidth - 3 * names.count) / max(1, names.count))
        let rows = objects.map { object in object.values.map { cell($0, width: max(budget, 12)) } }
        var widths = names.map(\.count)
        for row in rows { for (index, text) in row.enumerated() { widths[index] = max(widths[index], text.count) } }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " │ ")
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
}
