import Foundation
import Trove

/// How objects look in JSON and in CSV, both ways: what `trove export`
/// writes is what `trove import` reads.
///
/// - An object is a JSON object of its properties in schema order (linking
///   objects are left out: they are computed from the links that point here).
/// - A list or set is an array, a map an object; in CSV, a cell holds the JSON
///   text of the array or object.
/// - A link is the linked object's primary key (its object key when its type
///   has none, which names the same object only in this file and its copies);
///   an embedded object is the nested object of its values (in CSV, its JSON text).
/// - Dates are ISO 8601 in UTC with as many fraction digits as they need to
///   read back exactly; data is base64; UUIDs, ObjectIds and Decimal128s are
///   strings; non-finite doubles are the strings `nan`, `inf`, `-inf`.
/// - A mixed value is a JSON null, Boolean, integer, number with a fraction
///   or exponent (a double) or string as itself; any other type as a tagged
///   object: `{"$date": "…"}`, `{"$data": "base64"}`, `{"$uuid": "…"}`,
///   `{"$oid": "…"}`, `{"$decimal128": "…"}`, `{"$decimal": "…"}`,
///   `{"$float": 1.5}`, `{"$double": "inf"}`, and a link
///   `{"$link": "Type", "key": primary key}`. In CSV, a mixed cell holds that
///   JSON text (text that is not JSON reads as a string).
/// - In CSV, an empty unquoted cell is null (no value, no link, an empty
///   collection); an empty string is written quoted (`""`).
final class PortableText {
    /// One property of a type, as it is written and read (a class: passed
    /// around for every value, it is not copied).
    final class Field {
        let column: Int
        let property: PropertySchema
        /// One value of the property (one element of a collection), never optional:
        /// how text is read into it.
        let element: PropertySchema
        /// `"name":`, ready to write.
        let jsonKey: [UInt8]
        let link: Link?
        let isMixed: Bool
        let isCollection: Bool

        init(column: Int, property: PropertySchema, element: PropertySchema, jsonKey: [UInt8], link: Link?) {
            self.column = column
            self.property = property
            self.element = element
            self.jsonKey = jsonKey
            self.link = link
            isMixed = property.type == .mixed
            isCollection = property.collection != nil
        }
    }

    enum Link {
        /// Objects of an embedded type: written in full, nested.
        case embedded(String)
        /// Objects named by a key of this type: the target's primary key, or
        /// (for a type without one) its object key.
        case key(PropertySchema)
    }

    /// How one type is written and read.
    final class Layout {
        let schema: ObjectSchema
        /// Stored properties (not linking objects), in schema order.
        let fields: [Field]
        let fieldsByName: [String: Int]
        /// Linking objects: names import accepts and ignores.
        let computed: Set<String>

        init(schema: ObjectSchema, fields: [Field], computed: Set<String>) {
            self.schema = schema
            self.fields = fields
            fieldsByName = Dictionary(uniqueKeysWithValues: fields.enumerated().map { ($1.property.name, $0) })
            self.computed = computed
        }

        /// The field named `name`; `position` is where it is expected (objects
        /// usually list their properties in schema order), checked first.
        @inline(__always)
        func field(named name: String, expectedAt position: Int) -> Field? {
            if position < fields.count, fields[position].property.name == name { return fields[position] }
            return fieldsByName[name].map { fields[$0] }
        }
    }

    private let schemas: [String: ObjectSchema]
    private var layouts: [String: Layout] = [:]
    /// For CSV cells that hold JSON text.
    private let scratch = OutputBuffer(descriptor: nil)

    init(schemas: [ObjectSchema]) {
        self.schemas = Dictionary(schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func layout(_ typeName: String) throws -> Layout {
        if let known = layouts[typeName] { return known }
        guard let schema = schemas[typeName] else {
            throw TroveError(.invalidValue, "the file has no type named '\(typeName)'")
        }
        var fields: [Field] = []
        var computed: Set<String> = []
        for (column, property) in schema.properties.enumerated() {
            if property.collection == .linkingObjects {
                computed.insert(property.name)
                continue
            }
            var element = property
            element.collection = nil
            element.isOptional = false
            var link: Link?
            if property.type == .link, let target = property.objectType {
                if property.ownsTargets == true {
                    link = .embedded(target)
                } else {
                    var key =
                        schemas[target]?.primaryKey ?? PropertySchema(name: "object key of \(target)", type: .int)
                    key.isOptional = false
                    link = .key(key)
                }
            }
            let jsonKey = OutputBuffer(descriptor: nil)
            jsonKey.appendJSONString(property.name)
            jsonKey.append(UInt8(ascii: ":"))
            fields.append(
                Field(column: column, property: property, element: element, jsonKey: Array(jsonKey.bytes), link: link))
        }
        let layout = Layout(schema: schema, fields: fields, computed: computed)
        layouts[typeName] = layout
        return layout
    }

    // MARK: Writing JSON

    /// One object (its values by column) as a JSON object.
    func writeJSON(_ values: [PortableValue], _ layout: Layout, to out: OutputBuffer) {
        out.append(UInt8(ascii: "{"))
        for (index, field) in layout.fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            field.jsonKey.withUnsafeBufferPointer { out.append($0) }
            writeJSON(values[field.column], field, to: out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// One property's value (or one element of it) as JSON.
    private func writeJSON(_ value: PortableValue, _ field: Field, to out: OutputBuffer) {
        switch value {
        case .value(let stored):
            if field.isMixed { writeMixed(stored, to: out) } else { writeTyped(stored, to: out) }
        case .object(let values):
            guard case .embedded(let typeName) = field.link, let layout = try? layout(typeName) else {
                return out.append("null")
            }
            writeJSON(values.map { $0 ?? .null }, layout, to: out)
        case .elements(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeJSON(item, field, to: out)
            }
            out.append(UInt8(ascii: "]"))
        case .entries(let entries):
            out.append(UInt8(ascii: "{"))
            for (index, entry) in entries.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.appendJSONString(entry.key)
                out.append(UInt8(ascii: ":"))
                writeJSON(entry.value, field, to: out)
            }
            out.append(UInt8(ascii: "}"))
        case .link(let typeName, let key):
            out.append("{\"$link\":")
            out.appendJSONString(typeName)
            out.append(",\"key\":")
            writeTyped(key, to: out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A value of a typed property: its JSON number, Boolean or string.
    private func writeTyped(_ value: StoredValue, to out: OutputBuffer) {
        switch value {
        case .null, .object, .list, .dictionary: out.append("null")  // a mixed value's collections: writeMixed
        case .bool(let v): out.append(v ? "true" : "false")
        case .int(let v): out.append(v)
        case .float(let v): v.isFinite ? out.append(String(v)) : out.appendJSONString(String(v))
        case .double(let v): v.isFinite ? out.append(String(v)) : out.appendJSONString(String(v))
        case .decimal(let v): v.isNaN ? out.appendJSONString(v.description) : out.append(v.description)
        case .string(let v): out.appendJSONString(v)
        case .date(let v):
            out.append(UInt8(ascii: "\""))
            if !DateText.write(v, { out.append($0) }) { out.append(String(v.timeIntervalSince1970)) }
            out.append(UInt8(ascii: "\""))
        default: out.appendJSONString(Formatting.plain(value))
        }
    }

    /// A value of a mixed property: JSON's own types as themselves, others tagged.
    private func writeMixed(_ value: StoredValue, to out: OutputBuffer) {
        func tagged(_ tag: String, _ write: () -> Void) {
            out.append("{\"\(tag)\":")
            write()
            out.append(UInt8(ascii: "}"))
        }
        switch value {
        case .null, .bool, .int, .string: writeTyped(value, to: out)
        case .double(let v) where v.isFinite:
            let text = String(v)
            out.append(text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0")
        case .double: tagged("$double") { writeTyped(value, to: out) }
        case .float: tagged("$float") { writeTyped(value, to: out) }
        case .date: tagged("$date") { writeTyped(value, to: out) }
        case .data: tagged("$data") { writeTyped(value, to: out) }
        case .uuid: tagged("$uuid") { writeTyped(value, to: out) }
        case .objectId: tagged("$oid") { writeTyped(value, to: out) }
        case .decimal128: tagged("$decimal128") { writeTyped(value, to: out) }
        case .decimal(let v): tagged("$decimal") { out.appendJSONString(v.description) }
        case .object: out.append("null")  // the exporter gives links as .link
        case .list(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeMixed(element, to: out)
            }
            out.append(UInt8(ascii: "]"))
        case .dictionary(let entries):
            // A dictionary that reads like a tagged value or a link is tagged itself.
            let keys = entries.keys.sorted()
            let ambiguous = (keys.count == 1 && keys[0].hasPrefix("$")) || keys == ["$link", "key"]
            if ambiguous { out.append("{\"$dictionary\":") }
            out.append(UInt8(ascii: "{"))
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.appendJSONString(key)
                out.append(UInt8(ascii: ":"))
                writeMixed(entries[key]!, to: out)
            }
            out.append(UInt8(ascii: "}"))
            if ambiguous { out.append(UInt8(ascii: "}")) }
        }
    }

    // MARK: Writing CSV

    /// What comes before the objects of one type in `format`: `[` or the CSV header.
    func writeStart(_ format: String, _ layout: Layout, to out: OutputBuffer) {
        switch format {
        case "json": out.append(UInt8(ascii: "["))
        case "csv": writeCSVHeader(layout, to: out)
        default: break
        }
    }

    /// One object in `format` (`json`, `jsonl` or `csv`); `isFirst` for the
    /// first object of a JSON array.
    func writeRow(_ values: [PortableValue], _ layout: Layout, format: String, isFirst: Bool, to out: OutputBuffer) {
        switch format {
        case "json":
            out.append(isFirst ? "\n  " : ",\n  ")
            writeJSON(values, layout, to: out)
        case "jsonl":
            writeJSON(values, layout, to: out)
            out.append(UInt8(ascii: "\n"))
        default: writeCSV(values, layout, to: out)
        }
    }

    func writeCSVHeader(_ layout: Layout, to out: OutputBuffer) {
        for (index, field) in layout.fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.appendCSVField(field.property.name)
        }
        out.append("\r\n")
    }

    /// One object as a CSV record (with its line break).
    func writeCSV(_ values: [PortableValue], _ layout: Layout, to out: OutputBuffer) {
        for (index, field) in layout.fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let value = values[field.column]
            switch value {
            case .value(.null): break
            case .value(.int(let v)) where !field.isMixed: out.append(v)
            case .value(.string(let v)) where !field.isMixed: out.appendCSVField(v, quotingEmpty: true)
            case .value(let stored) where !field.isMixed && field.property.collection == nil:
                if case .date(let date) = stored, DateText.write(date, { out.append($0) }) { break }
                out.appendCSVField(Formatting.plain(stored), quotingEmpty: true)
            default:
                // Collections, embedded objects and mixed values: their JSON text.
                scratch.reset()
                writeJSON(value, field, to: scratch)
                out.appendCSVField(scratch.bytes, quotingEmpty: true)
            }
        }
        out.append("\r\n")
    }

    // MARK: Reading JSON

    /// One object's values by column (nil: not given) from a JSON object.
    func values(fromJSON json: JSONValue, _ layout: Layout) throws -> [PortableValue?] {
        guard case .object(let members) = json else { throw TroveError(.invalidValue, "not a JSON object") }
        var values = [PortableValue?](repeating: nil, count: layout.schema.properties.count)
        for (position, member) in members.enumerated() {
            let (name, value) = (member.key, member.value)
            guard let field = layout.field(named: name, expectedAt: position) else {
                if layout.computed.contains(name) { continue }
                throw TroveError(.invalidProperty, "\(layout.schema.name) has no property named '\(name)'")
            }
            values[field.column] = try portable(value, field)
        }
        return values
    }

    /// A property's value from JSON.
    private func portable(_ json: JSONValue, _ field: Field) throws -> PortableValue {
        switch (field.property.collection, json) {
        case (.list?, .null), (.set?, .null), (.map?, .null): return .null
        case (.list?, .array(let items)), (.set?, .array(let items)):
            var elements: [PortableValue] = []
            elements.reserveCapacity(items.count)
            for (index, item) in items.enumerated() { elements.append(try element(item, field, index: index)) }
            return .elements(elements)
        case (.map?, .object(let members)):
            var entries: [PortableEntry] = []
            entries.reserveCapacity(members.count)
            for member in members {
                let (key, value) = (member.key, member.value)
                entries.append(PortableEntry(key: key, value: try element(value, field, key: key)))
            }
            return .entries(entries)
        case (.list?, _), (.set?, _), (.map?, _): throw invalid(json.summary, field)
        default: return try element(json, field)
        }
    }

    /// One value, or one element of a collection, from JSON.
    private func element(_ json: JSONValue, _ field: Field, index: Int? = nil, key: String? = nil) throws -> PortableValue {
        if case .null = json { return .null }
        switch field.link {
        case .embedded(let typeName)?:
            guard case .object = json else { throw invalid(json.summary, field, index: index, key: key) }
            return .object(try values(fromJSON: json, try layout(typeName)))
        case .key(let keyProperty)?:
            // A subclass's object, named with its type: {"$link": "Me", "key": ...}.
            if case .object(let members) = json, members.contains(where: { $0.key == "$link" }) {
                return try mixed(json, field, index: index, key: key)
            }
            return .value(try typed(json, as: keyProperty, field, index: index, key: key))
        case nil:
            if field.isMixed { return try mixed(json, field, index: index, key: key) }
            return .value(try typed(json, as: field.element, field, index: index, key: key))
        }
    }

    /// A JSON number, Boolean or string as a value of `property`'s type.
    private func typed(_ json: JSONValue, as property: PropertySchema, _ field: Field, index: Int?, key: String?) throws
        -> StoredValue
    {
        let type = property.type == .link ? PropertyType.int : property.type
        switch json {
        case .null: return .null
        case .string(let text): return try parse(text, as: property, field, index: index, key: key)
        case .bool(let value): if type == .bool { return .bool(value) }
        case .integer(let value):
            switch type {
            case .int, .int8, .int16, .int32: return .int(value)
            case .float: return .float(Float(value))
            case .double: return .double(Double(value))
            case .decimal: return .decimal(Decimal(value))
            case .decimal128: return .decimal128(Decimal128(value))
            case .date: return .date(Date(timeIntervalSince1970: Double(value)))
            default: break
            }
        case .number(let text):
            switch type {
            case .float: if let value = Float(text) { return .float(value) }
            case .double: if let value = Double(text) { return .double(value) }
            case .decimal: if let value = Decimal(string: text) { return .decimal(value) }
            case .decimal128: if let value = try? Decimal128(string: text) { return .decimal128(value) }
            case .int, .int8, .int16, .int32: if let value = Double(text).flatMap(Int64.init(exactly:)) { return .int(value) }
            case .date: if let value = Double(text) { return .date(Date(timeIntervalSince1970: value)) }
            default: break
            }
        case .array, .object: break
        }
        throw invalid(json.summary, field, index: index, key: key)
    }

    /// A mixed value from JSON: JSON's own types as themselves, tagged objects as their types.
    private func mixed(_ json: JSONValue, _ field: Field, index: Int?, key: String?) throws -> PortableValue {
        switch json {
        case .null: return .null
        case .bool(let value): return .value(.bool(value))
        case .integer(let value): return .value(.int(value))
        case .number(let text):
            if let value = Double(text) { return .value(.double(value)) }
        case .string(let text): return .value(.string(text))
        case .object(let members):
            if members.count == 2, let link = members.first(where: { $0.key == "$link" }),
                let target = members.first(where: { $0.key == "key" }), case .string(let typeName) = link.value
            {
                let layout = try layout(typeName)
                let keyProperty =
                    layout.schema.primaryKey.map { property -> PropertySchema in
                        var key = property
                        key.isOptional = false
                        return key
                    } ?? PropertySchema(name: "object key of \(typeName)", type: .int)
                return .link(typeName: typeName, key: try typed(target.value, as: keyProperty, field, index: index, key: key))
            }
            if members.count == 1, members[0].key == "$dictionary", case .object(let entries) = members[0].value {
                return .value(try nestedDictionary(entries, field, index: index, key: key))
            }
            guard members.count == 1, let tag = members.first?.key, tag.hasPrefix("$"), let payload = members.first?.value
            else {
                // Any other object is a dictionary nested in the mixed value.
                return .value(try nestedDictionary(members, field, index: index, key: key))
            }
            let types: [String: PropertyType] = [
                "$date": .date, "$data": .data, "$uuid": .uuid, "$oid": .objectId, "$decimal128": .decimal128,
                "$decimal": .decimal, "$float": .float, "$double": .double,
            ]
            guard let type = types[tag] else { break }
            return .value(
                try typed(payload, as: PropertySchema(name: field.property.name, type: type), field, index: index, key: key))
        case .array(let elements):
            return .value(.list(try elements.map { try nestedValue($0, field, index: index, key: key) }))
        }
        throw invalid(json.summary, field, index: index, key: key)
    }

    /// A value inside a list or dictionary of a mixed value: no links there.
    private func nestedValue(_ json: JSONValue, _ field: Field, index: Int?, key: String?) throws -> StoredValue {
        switch try mixed(json, field, index: index, key: key) {
        case .null: return .null
        case .value(let value): return value
        default:
            throw invalid(
                json.summary + " (a link cannot be inside a list or dictionary of a mixed value)", field, index: index, key: key)
        }
    }

    private func nestedDictionary(_ members: [JSONMember], _ field: Field, index: Int?, key: String?) throws -> StoredValue {
        var entries: [String: StoredValue] = [:]
        for member in members { entries[member.key] = try nestedValue(member.value, field, index: index, key: key) }
        return .dictionary(entries)
    }

    // MARK: Reading CSV

    /// One object's values by column from a CSV record; `fields` are the
    /// header's columns (nil for a linking-objects column, ignored).
    func values(fromCSV cells: [CSV.Field], fields: [Field?], _ layout: Layout) throws -> [PortableValue?] {
        var values = [PortableValue?](repeating: nil, count: layout.schema.properties.count)
        for (cell, field) in zip(cells, fields) {
            guard let field else { continue }
            values[field.column] = try portable(cell, field)
        }
        return values
    }

    private func portable(_ cell: CSV.Field, _ field: Field) throws -> PortableValue {
        let text = cell.text
        let holdsJSON =
            field.property.collection != nil || field.isMixed
            || {
                if case .embedded = field.link { return true }
                return false
            }()
        if text.isEmpty, !cell.isQuoted, field.property.isOptional || field.link != nil || holdsJSON {
            return .null
        }
        if holdsJSON {
            let json: JSONValue
            do {
                json = try JSONValue.parse(text)
            } catch {
                // Hand-written CSV: a mixed cell that is not JSON is a string.
                if field.isMixed, field.property.collection == nil { return .value(.string(text)) }
                throw invalid("'\(text)'", field, detail: "not valid JSON")
            }
            return try portable(json, field)
        }
        if case .key(let keyProperty)? = field.link {
            // A subclass's object, named with its type as JSON: {"$link": "Me", "key": ...}.
            if text.hasPrefix("{\"$link\""), let json = try? JSONValue.parse(text) {
                return try element(json, field)
            }
            return .value(try parse(text, as: keyProperty, field, index: nil, key: nil))
        }
        // Hand-written CSV may spell null out, where it cannot be a string.
        if field.property.isOptional, text == "nil" || text == "null", field.property.type != .string,
            field.property.type != .data
        {
            return .null
        }
        return .value(try parse(text, as: field.element, field, index: nil, key: nil))
    }

    // MARK: Text

    /// Text as a value of `property`'s type (never nil: a string is a string).
    private func parse(_ text: String, as property: PropertySchema, _ field: Field, index: Int?, key: String?) throws
        -> StoredValue
    {
        switch property.type {
        case .string: return .string(text)
        case .date: if let date = DateText.parse(text) { return .date(date) }
        case .double: if let value = Double(text) { return .double(value) }
        case .int: if let value = Int64(text) { return .int(value) }
        default: break
        }
        do {
            var key = property
            key.type = property.type == .link ? .int : property.type
            return try Formatting.parse(text, as: key)
        } catch {
            throw invalid("'\(text)'", field, index: index, key: key)
        }
    }

    /// "'x' is not a value of type Int (property tags, element 2)"; for a
    /// link, the type of the key it is given by.
    private func invalid(_ given: String, _ field: Field, index: Int? = nil, key: String? = nil, detail: String? = nil)
        -> TroveError
    {
        var place = "property \(field.property.name)"
        if let index { place += ", element \(index + 1)" }
        if let key { place += ", key '\(key)'" }
        var type = field.property.typeDescription
        if case .key(let linkKey)? = field.link, let target = field.property.objectType {
            type = linkKey.typeDescription
            place +=
                schemas[target]?.primaryKey == nil
                ? ", a link to a \(target) by its object key" : ", a link to a \(target) by its \(linkKey.name)"
        }
        return TroveError(
            .invalidValue, "\(given) is not a value of type \(type) (\(place))" + (detail.map { ": \($0)" } ?? ""))
    }
}
