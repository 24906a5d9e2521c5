import Foundation
import Trove

/// A JSON export of a whole Realm file as Realm Studio writes it (File >
/// Save Data > JSON): every type that is not embedded, as an array of its
/// objects by type name, each object a JSON object of its properties, with
/// linked and embedded objects nested in place.
///
/// Two encodings are read:
/// - **Flatted** (Realm Studio 13 and later): the graph flattened into one
///   array. Its first element is the root; every string and every object or
///   array in a value is written as the decimal index (itself a string) of
///   the element holding it, so an object reached many times while writing
///   one type's objects (or reached from itself) is written once.
/// - **Plain JSON** (earlier versions, for files without cycles): linked
///   objects are written as copies in place.
///
/// The versions between marked repeated objects with `$refId`; such an
/// export is refused with a message saying to save it again from Studio 13.
struct StudioExport {
    /// An object of the export: its members as written (values still to be
    /// read with ``value(_:)``), and what tells it apart from other objects.
    struct Node {
        let members: [JSONMember]
        /// The element index (Flatted); nil in plain JSON.
        let identity: String?
    }

    /// One value of the export.
    enum Value {
        /// Null, a Boolean, a number or a string.
        case scalar(JSONValue)
        case object(Node)
        /// Elements as written (read each with ``value(_:)``).
        case array([JSONValue])
    }

    /// The objects of each type, in the order written.
    private(set) var types: [(name: String, objects: [Node])] = []
    /// Flatted's elements; nil for plain JSON.
    private let elements: [JSONValue]?

    /// Reads an export from its bytes. Throws `TroveError.Kind.invalidValue`
    /// for input that is not JSON or not shaped as an export.
    init(bytes: UnsafeBufferPointer<UInt8>) throws {
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch let error as JSONError {
            let line = bytes.prefix(max(0, error.offset)).reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            throw TroveError(.invalidValue, "line \(line): not valid JSON: \(error.message)")
        }
        let rootValue: Value
        switch json {
        case .array(let items):
            guard case .object(let root)? = items.first else {
                throw TroveError(
                    .invalidValue,
                    "a JSON array that is not a Realm Studio export: Studio's (Flatted) begins with an object of the types")
            }
            elements = items
            rootValue = .object(Node(members: root, identity: "0"))
        case .object(let root):
            elements = nil
            rootValue = .object(Node(members: root, identity: nil))
            if Self.marksReferences(json) {
                throw TroveError(
                    .invalidValue,
                    "this export marks repeated objects with $refId, as Realm Studio 11 and 12 wrote files with cycles: open the Realm file in Realm Studio 13 or later and save it as JSON again"
                )
            }
        default:
            throw TroveError(
                .invalidValue, "a Realm Studio export is a JSON object of types (or Flatted's array), not \(json.summary)")
        }
        guard case .object(let root) = rootValue else { return }
        for member in root.members {
            guard case .array(let items) = try value(member.value) else {
                throw TroveError(.invalidValue, "\"\(member.key)\" in the export must hold an array of objects")
            }
            var objects: [Node] = []
            objects.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                guard case .object(let node) = try value(item) else {
                    throw TroveError(.invalidValue, "\(member.key)[\(index)] in the export is not an object")
                }
                objects.append(node)
            }
            types.append((member.key, objects))
        }
    }

    /// The value that a member or element written as `raw` stands for.
    func value(_ raw: JSONValue) throws -> Value {
        if let elements {
            switch raw {
            case .string(let text):
                guard let index = Int(text), index >= 0, index < elements.count else {
                    throw TroveError(
                        .invalidValue,
                        "the export refers to element \(text), which it does not have (it has \(elements.count)); the file was cut short or changed"
                    )
                }
                switch elements[index] {
                case .object(let members): return .object(Node(members: members, identity: text))
                case .array(let items): return .array(items)
                case let scalar: return .scalar(scalar)
                }
            case .object, .array:
                throw TroveError(.invalidValue, "the export holds an object in place, where Flatted refers to elements by index")
            default: return .scalar(raw)
            }
        }
        switch raw {
        case .object(let members): return .object(Node(members: members, identity: nil))
        case .array(let items): return .array(items)
        default: return .scalar(raw)
        }
    }

    /// Whether any object of plain JSON has a `$refId` member.
    private static func marksReferences(_ json: JSONValue) -> Bool {
        switch json {
        case .object(let members): return members.contains { $0.key == "$refId" || marksReferences($0.value) }
        case .array(let items): return items.contains { marksReferences($0) }
        default: return false
        }
    }

    /// A node's content as text, for telling copies apart.
    static func content(of members: [JSONMember]) -> String {
        var bytes: [UInt8] = []
        write(.object(members), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func write(_ json: JSONValue, to bytes: inout [UInt8]) {
        switch json {
        case .null: bytes += "null".utf8
        case .bool(let value): bytes += (value ? "true" : "false").utf8
        case .integer(let value): bytes += String(value).utf8
        case .number(let value): bytes += value.utf8
        case .string(let value):
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(.string(member.key), to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                write(member.value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
