import Foundation

/// A collection that describes itself as Realm does, to a depth: what
/// ``RealmStyleDescription`` asks of the collections it meets inside objects
/// and other collections.
package protocol _RealmStyleDescribable {
    /// The collection in Realm's format, `depth` levels deep.
    func _realmStyleDescription(depth: Int) -> String
}

/// Objects, collections and values as text, in Realm's format, so that
/// `print(dog)` reads as it did with Realm:
///
/// ```
/// Dog {
///     name = Rex;
///     owner = Person {
///         name = Ann;
///     };
///     toys = List<Toy> <0x600000c04000> (
///         [0] Toy {
///             name = ball;
///         }
///     );
/// }
/// ```
///
/// (indented by tabs.) Nested objects and collections stop five levels down
/// (`<Maximum depth exceeded>`), and a collection lists its first 100 elements.
package enum RealmStyleDescription {
    /// How many levels of objects and collections a description shows.
    package static let maxDepth = 5
    private static let exceeded = "<Maximum depth exceeded>"

    /// An object: its stored type name and each persisted property (not
    /// linking objects), or `[invalid object]` once deleted.
    static func object(_ object: Object, depth: Int, checkingValidity: Bool = true) -> String {
        if checkingValidity, object.isInvalidated { return "[invalid object]" }
        guard depth > 0 else { return exceeded }
        var text = "\(object.storedTypeName) {\n"
        for property in object.objectSchema.properties where property.collection != .linkingObjects {
            guard let named = object._namedProperty(property.name) else { continue }
            let value = unwrapped(object._readProperty(named))
            let sub: String
            if property.collection == nil, let data = value as? Data {
                sub = "<\(hex(data.prefix(24))) — \(data.count) total bytes>"
            } else {
                sub = describe(value, depth: depth - 1)
            }
            text += "\t\(property.name) = \(indented(sub));\n"
        }
        return text + "}"
    }

    /// A list, set, results or linking objects: `List<Dog> <0x…> (`, then
    /// `[i] element` on a line each, then `)`.
    package static func collection(
        _ name: String, of elementName: String, identity: AnyObject?, count: Int, elements: some Sequence<Any?>,
        depth: Int
    ) -> String {
        guard depth > 0 else { return exceeded }
        let lines = elements.enumerated().lazy.map { "\t[\($0.offset)] \(indented(describe($0.element, depth: depth - 1)))" }
        return framed("\(name)<\(elementName)> <\(address(identity))> (", count: count, lines: lines)
    }

    /// A map: `Map<string, Dog> <0x…> (`, then `[key]: value` on a line each, then `)`.
    package static func map(
        of valueName: String, identity: AnyObject?, count: Int, entries: some Sequence<(String, Any?)>, depth: Int
    ) -> String {
        guard depth > 0 else { return exceeded }
        // Realm indents an entry's later lines, not its first.
        let lines = entries.lazy.map { indented("[\($0.0)]: \(describe($0.1, depth: depth - 1))") }
        return framed("Map<string, \(valueName)> <\(address(identity))> (", count: count, lines: lines)
    }

    /// `header`, then the first 100 `lines` separated by commas, a note of
    /// how many of `count` were left out, and `)`.
    private static func framed(_ header: String, count: Int, lines: some Sequence<String>) -> String {
        let shown = Array(lines.prefix(100))
        var text = header + "\n" + shown.joined(separator: ",\n")
        if count > shown.count { text += "\n\t... \(count - shown.count) objects skipped." }
        return text + "\n)"
    }

    /// The name Realm gives the elements of a collection of `E`: the stored
    /// name of a class, else the stored type's (`int`, `string`, `object id`…).
    package static func elementName<E: _TroveStorable>(_: E.Type) -> String {
        if let target = E._troveLinkTarget { return ModelInfo.storedName(of: target) }
        return typeName(E._troveType)
    }

    /// Realm's name of a stored type: every integer width is `int`.
    package static func typeName(_ type: PropertyType) -> String {
        switch type {
        case .bool: return "bool"
        case .int, .int8, .int16, .int32: return "int"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .uuid: return "uuid"
        case .decimal, .decimal128: return "decimal128"
        case .objectId: return "object id"
        case .mixed: return "mixed"
        case .link: return "object"
        }
    }

    /// One value: nil as `(null)`, Booleans as 0 and 1 (Realm's numbers),
    /// enums and custom types as what they are stored as, objects and
    /// collections as above.
    package static func describe(_ value: Any?, depth: Int) -> String {
        guard let value = unwrapped(value) else { return "(null)" }
        switch value {
        case let object as Object: return Self.object(object, depth: depth)
        case let collection as any _RealmStyleDescribable: return collection._realmStyleDescription(depth: depth)
        case let mixed as Mixed: return describe(mixed.boxedValue, depth: depth)
        case let storable as any _TroveStorable: return stored(storable._troveStored)
        default: return "\(value)"
        }
    }

    private static func stored(_ value: StoredValue) -> String {
        switch value {
        case .null: return "(null)"
        case .bool(let flag): return flag ? "1" : "0"
        case .int(let number): return "\(number)"
        case .float(let number): return String(format: "%.7g", Double(number))
        case .double(let number): return String(format: "%.16g", number)
        case .string(let string): return string
        case .data(let data): return "<\(hex(data))>"
        case .uuid(let uuid): return uuid.uuidString
        case .date(let date): return date.description
        default: return value.description
        }
    }

    /// `value`, or nil when it is nil however deeply it is wrapped in optionals.
    private static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return unwrapped(mirror.children.first?.value)
    }

    /// Bytes in hex, four to a group, as Foundation's `NSData` printed them.
    private static func hex(_ data: some Collection<UInt8>) -> String {
        var text = ""
        for (offset, byte) in data.enumerated() {
            if offset > 0, offset % 4 == 0 { text += " " }
            text += String(format: "%02x", byte)
        }
        return text
    }

    private static func address(_ identity: AnyObject?) -> String {
        guard let identity else { return "0x0" }
        return "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(identity).toOpaque()), radix: 16)
    }

    private static func indented(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: "\n\t") }
}

extension List: _RealmStyleDescribable {
    package func _realmStyleDescription(depth: Int) -> String {
        let elements = array()
        return RealmStyleDescription.collection(
            "List", of: RealmStyleDescription.elementName(Element.self), identity: self, count: elements.count,
            elements: elements.lazy.map { $0 as Any? }, depth: depth)
    }
}

extension MutableSet: _RealmStyleDescribable {
    package func _realmStyleDescription(depth: Int) -> String {
        let elements = array()
        return RealmStyleDescription.collection(
            "MutableSet", of: RealmStyleDescription.elementName(Element.self), identity: self, count: elements.count,
            elements: elements.lazy.map { $0 as Any? }, depth: depth)
    }
}

extension Map: _RealmStyleDescribable {
    package func _realmStyleDescription(depth: Int) -> String {
        let entries = entries()
        return RealmStyleDescription.map(
            of: RealmStyleDescription.elementName(Value.self), identity: self, count: entries.count,
            entries: entries.lazy.map { ("\($0.key)", $0.value as Any?) }, depth: depth)
    }
}

extension Results: CustomStringConvertible, _RealmStyleDescribable {
    /// The results as text, as Realm prints them:
    /// `Results<Dog> <0x…> (\n\t[0] Dog {\n\t\tname = Rex;\n\t}\n)`.
    public var description: String { _realmStyleDescription(depth: RealmStyleDescription.maxDepth) }

    package func _realmStyleDescription(depth: Int) -> String {
        let elements = Array(prefix(100))
        return RealmStyleDescription.collection(
            "Results", of: source.table.name, identity: cacheIdentity, count: count, elements: elements.lazy.map { $0 as Any? },
            depth: depth)
    }
}

extension LinkingObjects: CustomStringConvertible, _RealmStyleDescribable {
    /// The linking objects as text, as Realm prints them:
    /// `LinkingObjects<Person> <0x…> (\n\t[0] Person {\n\t\tname = Ann;\n\t}\n)`.
    public var description: String { _realmStyleDescription(depth: RealmStyleDescription.maxDepth) }

    package func _realmStyleDescription(depth: Int) -> String {
        let elements = Array(prefix(100))
        return RealmStyleDescription.collection(
            "LinkingObjects", of: RealmStyleDescription.elementName(Element.self), identity: results?.cacheIdentity,
            count: count, elements: elements.lazy.map { $0 as Any? }, depth: depth)
    }
}

extension ObjectSchema: CustomStringConvertible {
    /// The type and each property, as Realm prints an object schema (linking
    /// objects last):
    ///
    /// ```
    /// Dog {
    ///     name {
    ///         type = string;
    ///         columnName = name;
    ///         indexed = NO;
    ///         …
    ///     }
    /// }
    /// ```
    public var description: String {
        let stored = properties.filter { $0.collection != .linkingObjects }
        let computed = properties.filter { $0.collection == .linkingObjects }
        let lines = (stored + computed).map { "\t" + $0.description.replacingOccurrences(of: "\n", with: "\n\t") + "\n" }
        return "\(name) {\n" + lines.joined() + "}"
    }
}

extension PropertySchema: CustomStringConvertible {
    /// The property as Realm prints one: its type in Realm's words (every
    /// integer width is `int`), its target class and origin for links, and
    /// its flags as `YES`/`NO`.
    public var description: String {
        let isInverse = collection == .linkingObjects
        var text = "\(name) {\n\ttype = \(isInverse ? "linking objects" : RealmStyleDescription.typeName(type));\n"
        if type == .link {
            text += "\tobjectClassName = \(objectType ?? "(null)");\n"
            text += "\tlinkOriginPropertyName = \(originProperty ?? "(null)");\n"
        }
        let yes = { (flag: Bool) in flag ? "YES" : "NO" }
        // Realm's links, and maps of objects, hold nil; it calls a mixed value not optional.
        let optional = (isOptional && type != .mixed) || (type == .link && (collection == nil || collection == .map))
        text += "\tcolumnName = \(columnName);\n\tindexed = \(yes(isIndexed || isPrimaryKey));\n"
        text += "\tisPrimary = \(yes(isPrimaryKey));\n\tarray = \(yes(collection == .list));\n"
        text += "\tset = \(yes(collection == .set));\n\tdictionary = \(yes(collection == .map));\n"
        return text + "\toptional = \(yes(optional && !isInverse));\n}"
    }
}
