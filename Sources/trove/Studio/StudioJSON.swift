import Foundation
import Trove

/// How the studio's API writes stored values as JSON (the form the OpenAPI
/// file documents as `Value`): JSON's own types as themselves, every other
/// type tagged as `trove export` tags values in a mixed property
/// (`{"$date": "…"}`), links as `{"$link": "Type", "key": "…"}` with the
/// target's primary key as a label, collections as their size.
enum StudioJSON {
    /// Strings longer than this many characters are cut in pages of
    /// objects or entries (``value(_:cutting:)``): a 20 MB memo must not
    /// travel whole to a grid that shows a line of it.
    static let stringCut = 1_000

    /// A stored value of a single-value property (or an element of a
    /// collection). With `cutting`, a string over ``stringCut`` characters is
    /// `{"$string": its length in characters, "text": its first characters}`;
    /// the object's own endpoint has it whole.
    static func value(_ value: StoredValue, cutting: Bool = false) -> String {
        if cutting, case .string(let text) = value, text.utf8.count > stringCut {
            let length = text.count
            if length > stringCut {
                return "{\"$string\":\(length),\"text\":\(Formatting.jsonString(String(text.prefix(stringCut))))}"
            }
        }
        switch value {
        case .null: return "null"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return String(v)
        case .float(let v): return v.isFinite ? String(v) : "{\"$float\":\"\(v)\"}"
        case .double(let v): return v.isFinite ? String(v) : "{\"$double\":\"\(v)\"}"
        case .string(let v): return Formatting.jsonString(v)
        case .data(let v): return data(v)
        case .date(let v): return "{\"$date\":\(Formatting.jsonString(Formatting.isoDate(v)))}"
        case .uuid(let v): return "{\"$uuid\":\"\(v.uuidString)\"}"
        case .decimal(let v): return "{\"$decimal\":\"\(v.description)\"}"
        case .objectId(let v): return "{\"$oid\":\"\(v.stringValue)\"}"
        case .decimal128(let v): return "{\"$decimal128\":\"\(v.description)\"}"
        case .object(let typeName, let key): return link(typeName, key: key, label: nil)
        case .list(let elements): return "[" + elements.map { Self.value($0, cutting: cutting) }.joined(separator: ",") + "]"
        case .dictionary(let entries):
            return "{\"$dictionary\":{"
                + entries.sorted { $0.key < $1.key }.map {
                    Formatting.jsonString($0.key) + ":" + Self.value($0.value, cutting: cutting)
                }
                .joined(separator: ",") + "}}"
        }
    }

    /// `{"$link": "Type", "key": "12", "label": …}`: keys as strings, as
    /// JavaScript's numbers lose digits past 2^53.
    static func link(_ typeName: String, key: UInt64, label: String?) -> String {
        "{\"$link\":\(Formatting.jsonString(typeName)),\"key\":\"\(key)\""
            + (label.map { ",\"label\":\(Formatting.jsonString($0))" } ?? "") + "}"
    }

    /// Data as its size, its first bytes in hex and, for an image, its media
    /// type (the page then shows it from the data endpoint).
    static func data(_ bytes: Data) -> String {
        let hex = bytes.prefix(32).map { String(format: "%02x", $0) }.joined()
        let image = imageType(bytes).map { ",\"image\":\"\($0)\"" } ?? ""
        return "{\"$data\":\(bytes.count),\"hex\":\"\(hex)\"\(image)}"
    }

    /// The media type of an image format browsers show, by its first bytes.
    static func imageType(_ bytes: Data) -> String? {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        return nil
    }

    /// A property's schema as the API describes it.
    static func property(_ property: PropertySchema) -> String {
        var members = [
            "\"name\":\(Formatting.jsonString(property.name))",
            "\"type\":\"\(property.type.rawValue)\"",
            "\"typeDescription\":\(Formatting.jsonString(property.typeDescription))",
            "\"optional\":\(property.isOptional)",
            "\"primaryKey\":\(property.isPrimaryKey)",
            "\"indexed\":\(property.isIndexed)",
            "\"fullText\":\(property.isFullTextIndexed)",
        ]
        if let collection = property.collection { members.append("\"collection\":\"\(collection.rawValue)\"") }
        if let target = property.objectType { members.append("\"objectType\":\(Formatting.jsonString(target))") }
        if let origin = property.originProperty { members.append("\"originProperty\":\(Formatting.jsonString(origin))") }
        if property.ownsTargets == true { members.append("\"embedded\":true") }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// An error as every endpoint reports it: `{"error": {"kind", "message", "position"?}}`.
    static func error(kind: String, message: String, position: Int? = nil) -> String {
        "{\"error\":{\"kind\":\(Formatting.jsonString(kind)),\"message\":\(Formatting.jsonString(message))"
            + (position.map { ",\"position\":\($0)" } ?? "") + "}}"
    }
}
