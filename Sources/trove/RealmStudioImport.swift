import Foundation
import Trove

/// `trove import FILE EXPORT --format realm-studio`: a whole Realm file, as
/// Realm Studio saves it as JSON (``StudioExport``), into a Trove file whose
/// models the app declares.
///
/// Every object of every type goes in one write transaction: if any object
/// cannot be stored, nothing is written, and every such object is reported.
/// The objects are stored first without their links, then the links are
/// made, so links may point forwards, backwards and around cycles.
///
/// Realm Studio writes each type's objects with their own copy of the
/// objects of other types they link to; such a copy names its object by its
/// primary key or, for a type without one, by its content (its values and
/// those of the objects it links to).
final class RealmStudioImport {
    private let db: Database
    private let path: String
    private let export: StudioExport
    private let text: PortableText
    private let schemas: [String: ObjectSchema]
    private let policy: UpdatePolicy

    private typealias Stored = (type: String, key: UInt64)
    /// Objects stored, by the export's identity of the node they came from.
    private var byIdentity: [String: Stored] = [:]
    /// Objects of types with a primary key, by type and the key as written.
    private var byPrimaryKey: [String: [String: UInt64]] = [:]
    /// Objects of types without a primary key, by type, in the order stored;
    /// indexed by content (``contentIndex(_:)``) only when a copy must be matched.
    private var unkeyed: [String: [(node: StudioExport.Node, key: UInt64)]] = [:]
    private var byContent: [String: [String: [UInt64]]] = [:]
    /// Objects whose nodes hold links, to make once every object is stored.
    private var linking: [(stored: Stored, node: StudioExport.Node, location: String)] = []
    private var errors: [String] = []
    /// Per property: values the export does not hold (Studio writes binary data as `{}`).
    private var lostData: [String: Int] = [:]
    /// Links to an object of a type without a primary key that several stored objects equal.
    private var ambiguousLinks = 0
    private var counts: [(type: String, count: Int)] = []

    private init(db: Database, path: String, export: StudioExport, policy: UpdatePolicy) throws {
        self.db = db
        self.path = path
        self.export = export
        self.policy = policy
        let schemas = try db.storedSchemas()
        text = PortableText(schemas: schemas)
        self.schemas = Dictionary(schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func run(path: String, inputPath: String, update: Bool) throws {
        let data: Data
        if inputPath == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: inputPath) else {
                throw TroveError(.fileAccess, "cannot read \(inputPath)", path: inputPath)
            }
            data = contents
        }
        let export = try data.withUnsafeBytes { try StudioExport(bytes: $0.bindMemory(to: UInt8.self)) }
        let db = try Commands.open(path, readOnly: false)
        let session = try RealmStudioImport(db: db, path: path, export: export, policy: update ? .modified : .error)
        try session.checkTypes()
        try db.beginWrite()
        do {
            try session.storeObjects()
            if session.errors.isEmpty { try session.makeLinks() }
        } catch {
            db.cancelWrite()
            throw error
        }
        guard session.errors.isEmpty else {
            db.cancelWrite()
            for error in session.errors.prefix(100) { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
            if session.errors.count > 100 {
                FileHandle.standardError.write(Data("… and \(session.errors.count - 100) more\n".utf8))
            }
            FileHandle.standardError.write(
                Data(
                    "trove: \(Commands.count(session.errors.count, "object")) could not be imported; nothing was written to \(path)\n"
                        .utf8))
            exit(1)
        }
        try db.commitWrite()
        session.report()
    }

    // MARK: Types

    /// The export's types must all be in the file (an empty type may be
    /// missing), and none of them embedded: nothing in the export is left out.
    private func checkTypes() throws {
        var missing: [String] = []
        for (name, objects) in export.types where !objects.isEmpty {
            guard schemas[name] != nil else {
                missing.append("\(name) (\(Commands.count(objects.count, "object")))")
                continue
            }
            if let owner = owner(of: name) {
                throw TroveError(
                    .invalidObject,
                    "the export has \(name) objects of their own, but \(path) embeds \(name) in \(owner): declare \(name) as an Object, not an EmbeddedObject, to import them",
                    path: path)
            }
        }
        if !missing.isEmpty {
            throw TroveError(
                .invalidModel,
                "\(path) has no type for the export's \(missing.joined(separator: ", ")): declare \(missing.count == 1 ? "it" : "them") in the app's models and run the app once to add \(missing.count == 1 ? "it" : "them") to the file; nothing was written",
                path: path)
        }
    }

    /// A type and property that embed objects of `typeName`, or nil.
    private func owner(of typeName: String) -> String? {
        for schema in schemas.values {
            if let property = schema.properties.first(where: { $0.objectType == typeName && $0.ownsTargets == true }) {
                return "\(schema.name).\(property.name)"
            }
        }
        return nil
    }

    // MARK: Objects

    /// Stores every object without its links.
    private func storeObjects() throws {
        for (name, objects) in export.types where !objects.isEmpty {
            let importer = try ObjectImporter(database: db, typeName: name)
            let layout = try text.layout(name)
            let schema = layout.schema
            var stored = 0
            for (index, node) in objects.enumerated() {
                let location = "\(name)[\(index)]"
                do {
                    let (json, hasLinks) = try portable(node, layout, location: location)
                    let values = try text.values(fromJSON: json, layout)
                    let key = try importer.add(values, update: policy, line: index + 1)
                    stored += 1
                    let entry = (name, key)
                    if let identity = node.identity { byIdentity[identity] = entry }
                    if let primaryKey = schema.primaryKey {
                        if let text = try primaryKeyText(node, primaryKey.name) { byPrimaryKey[name, default: [:]][text] = key }
                    } else {
                        unkeyed[name, default: []].append((node, key))
                    }
                    if hasLinks { linking.append((entry, node, location)) }
                } catch let error as TroveError {
                    errors.append(
                        error.kind == .primaryKeyExists
                            ? "\(location): a \(name) with this primary key is already stored (add --update to overwrite it)"
                            : located(error, location))
                }
            }
            counts.append((name, stored))
        }
    }

    /// An object of the export as ``PortableText`` reads it, without its links
    /// (a map of links keeps its keys, with no link); `hasLinks` when it has
    /// any to make.
    private func portable(_ node: StudioExport.Node, _ layout: PortableText.Layout, location: String) throws -> (
        json: JSONValue, hasLinks: Bool
    ) {
        var members: [JSONMember] = []
        var hasLinks = false
        for (position, member) in node.members.enumerated() {
            guard let field = layout.field(named: member.key, expectedAt: position) else {
                if layout.computed.contains(member.key) { continue }
                throw TroveError(
                    .invalidProperty,
                    "the export has a property '\(member.key)' that \(layout.schema.name) in \(path) does not have: add it to the model, so nothing is left out"
                )
            }
            let place = "\(location).\(member.key)"
            let value = try export.value(member.value)
            let collection = field.property.collection
            switch field.link {
            case .key?:
                switch value {
                case .scalar(.null): members.append(JSONMember(key: member.key, value: .null))
                case .object(let target) where collection == .map:
                    members.append(
                        JSONMember(key: member.key, value: .object(target.members.map { JSONMember(key: $0.key, value: .null) })))
                    hasLinks = hasLinks || !target.members.isEmpty
                case .object where collection == nil, .scalar where collection == nil: hasLinks = true
                case .array(let items) where collection == .list || collection == .set: hasLinks = hasLinks || !items.isEmpty
                default: throw shapeError(value, field, place)
                }
            case .embedded(let typeName)?:
                let embedded = try text.layout(typeName)
                func nested(_ value: StudioExport.Value, _ place: String) throws -> JSONValue {
                    switch value {
                    case .scalar(.null): return .null
                    case .object(let child):
                        let (json, links) = try portable(child, embedded, location: place)
                        hasLinks = hasLinks || links
                        return json
                    default: throw shapeError(value, field, place)
                    }
                }
                switch (collection, value) {
                case (_, .scalar(.null)): members.append(JSONMember(key: member.key, value: .null))
                case (nil, _): members.append(JSONMember(key: member.key, value: try nested(value, place)))
                case (.list?, .array(let items)), (.set?, .array(let items)):
                    let elements = try items.enumerated().map { try nested(try export.value($1), "\(place)[\($0)]") }
                    members.append(JSONMember(key: member.key, value: .array(elements)))
                case (.map?, .object(let entries)):
                    let converted = try entries.members.map {
                        JSONMember(key: $0.key, value: try nested(try export.value($0.value), "\(place)[\($0.key)]"))
                    }
                    members.append(JSONMember(key: member.key, value: .object(converted)))
                default: throw shapeError(value, field, place)
                }
            case nil:
                func one(_ value: StudioExport.Value) throws -> JSONValue {
                    if field.isMixed {
                        let (json, isLink) = try mixed(value, field, place)
                        hasLinks = hasLinks || isLink
                        return json
                    }
                    return try scalar(value, field, place)
                }
                switch (collection, value) {
                case (_, .scalar(.null)): members.append(JSONMember(key: member.key, value: .null))
                case (nil, _): members.append(JSONMember(key: member.key, value: try one(value)))
                case (.list?, .array(let items)), (.set?, .array(let items)):
                    members.append(JSONMember(key: member.key, value: .array(try items.map { try one(try export.value($0)) })))
                case (.map?, .object(let entries)):
                    let converted = try entries.members.map {
                        JSONMember(key: $0.key, value: try one(try export.value($0.value)))
                    }
                    members.append(JSONMember(key: member.key, value: .object(converted)))
                default: throw shapeError(value, field, place)
                }
            }
        }
        return (.object(members), hasLinks)
    }

    /// A typed value as ``PortableText`` reads it: realm-js writes a
    /// Decimal128 as `{"$numberDecimal": "…"}` and (Studio 13 on) binary
    /// data as `{}`, its bytes lost.
    private func scalar(_ value: StudioExport.Value, _ field: PortableText.Field, _ place: String) throws -> JSONValue {
        switch value {
        case .scalar(.string(let text)) where field.element.type == .uuid && text.count == 32:
            let hex = Array(text)
            return .string(
                [hex[0..<8], hex[8..<12], hex[12..<16], hex[16..<20], hex[20..<32]].map { String($0) }.joined(separator: "-"))
        case .scalar(let json): return json
        case .object(let node):
            if let decimal = try decimalText(node) { return .string(decimal) }
            if node.members.isEmpty, field.element.type == .data {
                lostData[propertyPath(place), default: 0] += 1
                return field.property.isOptional || field.isCollection ? .null : .string("")
            }
            throw shapeError(value, field, place)
        case .array: throw shapeError(value, field, place)
        }
    }

    /// A mixed value as ``PortableText`` reads it, or a link to make later (null for now).
    private func mixed(_ value: StudioExport.Value, _ field: PortableText.Field, _ place: String) throws -> (
        json: JSONValue, isLink: Bool
    ) {
        switch value {
        case .scalar(let json): return (json, false)
        case .object(let node):
            if let decimal = try decimalText(node) {
                return (.object([JSONMember(key: "$decimal128", value: .string(decimal))]), false)
            }
            if node.members.isEmpty {
                lostData[propertyPath(place), default: 0] += 1
                return (.null, false)
            }
            return (.null, true)
        case .array:
            throw TroveError(
                .invalidValue,
                "\(place) holds a list inside a mixed value, which Trove's Mixed cannot hold: make it a List property of its own")
        }
    }

    /// The text of realm-js's `{"$numberDecimal": "…"}`, or nil for another object.
    private func decimalText(_ node: StudioExport.Node) throws -> String? {
        guard node.members.count == 1, node.members[0].key == "$numberDecimal" else { return nil }
        guard case .scalar(.string(let text)) = try export.value(node.members[0].value) else { return nil }
        return text
    }

    /// The property a place is a value of (`Photo[3].tags[0]` → `Photo.tags`).
    private func propertyPath(_ place: String) -> String {
        var path = ""
        var depth = 0
        for character in place {
            if character == "[" {
                depth += 1
            } else if character == "]" {
                depth -= 1
            } else if depth == 0 {
                path.append(character)
            }
        }
        return path
    }

    private func shapeError(_ value: StudioExport.Value, _ field: PortableText.Field, _ place: String) -> TroveError {
        let shape: String
        switch value {
        case .scalar(let json): shape = json.summary
        case .object: shape = "an object"
        case .array(let items): shape = "an array of \(items.count)"
        }
        let expected: String
        switch (field.link, field.property.collection) {
        case (_, .list?), (_, .set?): expected = "an array"
        case (_, .map?): expected = "an object of entries"
        case (.some, nil): expected = "an object or null"
        default: expected = "\(field.element.typeDescription)"
        }
        return TroveError(.invalidValue, "\(place) needs \(expected), not \(shape)")
    }

    // MARK: Links

    /// Makes the links of every object stored (and of the objects it embeds).
    private func makeLinks() throws {
        for (stored, node, location) in linking {
            guard let object = try db.dynamicObject(ofType: stored.type, objectKey: stored.key) else { continue }
            do {
                try link(object, node, try text.layout(stored.type), location: location)
            } catch let error as TroveError {
                errors.append(located(error, location))
            }
        }
    }

    private func link(_ object: DynamicObject, _ node: StudioExport.Node, _ layout: PortableText.Layout, location: String) throws
    {
        for (position, member) in node.members.enumerated() {
            guard let field = layout.field(named: member.key, expectedAt: position) else { continue }
            let name = member.key
            let place = "\(location).\(name)"
            let value = try export.value(member.value)
            switch (field.link, field.property.collection) {
            case (.key?, nil):
                if let target = try target(value, field.property.objectType, place) { object[name] = target }
            case (.key?, .list?), (.key?, .set?):
                guard case .array(let items) = value else { continue }
                let targets = try items.enumerated().map { index, item -> DynamicObject in
                    guard let target = try target(try export.value(item), field.property.objectType, "\(place)[\(index)]") else {
                        throw TroveError(.invalidValue, "\(place)[\(index)] is null: a list of objects holds objects only")
                    }
                    return target
                }
                if field.property.collection == .list {
                    object.dynamicList(name).append(objectsIn: targets)
                } else {
                    object.dynamicMutableSet(name).insert(objectsIn: targets)
                }
            case (.key?, .map?):
                guard case .object(let entries) = value else { continue }
                let map: Map<String, DynamicObject?> = object.dynamicMap(name)
                for entry in entries.members {
                    guard
                        let target = try target(
                            try export.value(entry.value), field.property.objectType, "\(place)[\(entry.key)]")
                    else { continue }
                    map[entry.key] = target
                }
            case (.embedded(let typeName)?, let collection):
                let embedded = try text.layout(typeName)
                switch (collection, value) {
                case (nil, .object(let child)):
                    if let held = object[name] as? DynamicObject { try link(held, child, embedded, location: place) }
                case (.list?, .array(let items)), (.set?, .array(let items)):
                    let list = object.dynamicList(name)
                    for (index, item) in items.enumerated() {
                        guard case .object(let child) = try export.value(item), index < list.count else { continue }
                        try link(list[index], child, embedded, location: "\(place)[\(index)]")
                    }
                case (.map?, .object(let entries)):
                    let map: Map<String, DynamicObject?> = object.dynamicMap(name)
                    for entry in entries.members {
                        guard case .object(let child) = try export.value(entry.value), let held = map[entry.key] ?? nil else {
                            continue
                        }
                        try link(held, child, embedded, location: "\(place)[\(entry.key)]")
                    }
                default: continue
                }
            case (nil, let collection) where field.isMixed:
                func target(_ value: StudioExport.Value, _ place: String) throws -> Mixed? {
                    guard case .object(let node) = value, !node.members.isEmpty, try decimalText(node) == nil else { return nil }
                    return try self.target(value, nil, place).map { .object($0) }
                }
                switch (collection, value) {
                case (nil, _):
                    if let mixed = try target(value, place) { object[name] = mixed }
                case (.list?, .array(let items)):
                    guard let list = object[name] as? List<Mixed> else { continue }
                    for (index, item) in items.enumerated() {
                        if let mixed = try target(try export.value(item), "\(place)[\(index)]") { list[index] = mixed }
                    }
                case (.set?, .array(let items)):
                    guard let set = object[name] as? MutableSet<Mixed> else { continue }
                    for (index, item) in items.enumerated() {
                        if let mixed = try target(try export.value(item), "\(place)[\(index)]") { set.insert(mixed) }
                    }
                case (.map?, .object(let entries)):
                    guard let map = object[name] as? Map<String, Mixed> else { continue }
                    for entry in entries.members {
                        if let mixed = try target(try export.value(entry.value), "\(place)[\(entry.key)]") {
                            map[entry.key] = mixed
                        }
                    }
                default: continue
                }
            default: continue
            }
        }
    }

    /// An error's message, said of the object at `location` (unless it says where already).
    private func located(_ error: TroveError, _ location: String) -> String {
        error.message.hasPrefix(location) ? error.message : "\(location): \(error.message)"
    }

    /// The stored object a link's value names, or nil for null: an object
    /// by its identity when the export kept it, else by primary key, else by
    /// content; a scalar is a primary key (as Studio before version 10 wrote
    /// links). `typeName` is the type the property links to; nil for a mixed
    /// value, whose object says nothing of its type (the types whose
    /// properties it has are tried).
    private func target(_ value: StudioExport.Value, _ typeName: String?, _ place: String) throws -> DynamicObject? {
        let node: StudioExport.Node
        switch value {
        case .scalar(.null): return nil
        case .object(let object): node = object
        case .scalar(let key):
            guard let typeName, schemas[typeName]?.primaryKey != nil else {
                throw TroveError(.invalidValue, "\(place) needs an object or null, not \(key.summary)")
            }
            guard let stored = byPrimaryKey[typeName]?[keyText(key)] else {
                throw TroveError(
                    .invalidValue,
                    "\(place) links to the \(typeName) with primary key \(key.summary), which the export does not have")
            }
            return try db.dynamicObject(ofType: typeName, objectKey: stored)
        case .array(let items):
            throw TroveError(.invalidValue, "\(place) needs an object or null, not an array of \(items.count)")
        }
        if let identity = node.identity, let stored = byIdentity[identity], typeName == nil || stored.type == typeName {
            return try db.dynamicObject(ofType: stored.type, objectKey: stored.key)!
        }
        let names = Set(node.members.map(\.key))
        let candidates =
            typeName.map { [$0] }
            ?? export.types.map(\.name).filter { name in
                guard let layout = try? text.layout(name) else { return false }
                return names.isSubset(of: Set(layout.fields.map(\.property.name)).union(layout.computed))
            }
        var nodeContent: String?
        for candidate in candidates {
            guard let schema = schemas[candidate] else { continue }
            if let primaryKey = schema.primaryKey {
                if let text = try primaryKeyText(node, primaryKey.name), let key = byPrimaryKey[candidate]?[text] {
                    return try db.dynamicObject(ofType: candidate, objectKey: key)!
                }
                continue
            }
            if nodeContent == nil { nodeContent = try content(node, depth: 1) }
            if let keys = try contentIndex(candidate)[nodeContent!], let key = keys.first {
                if keys.count > 1 { ambiguousLinks += 1 }
                return try db.dynamicObject(ofType: candidate, objectKey: key)!
            }
        }
        guard let typeName else {
            throw TroveError(
                .invalidValue,
                "\(place) holds an object that is none of the export's objects (a mixed value holds a link, never a dictionary)")
        }
        throw TroveError(.invalidValue, "\(place) links to a \(typeName) that is not among the export's \(typeName) objects")
    }

    /// The primary key of a node as written (nil when it has none).
    private func primaryKeyText(_ node: StudioExport.Node, _ name: String) throws -> String? {
        guard let member = node.members.first(where: { $0.key == name }) else { return nil }
        guard case .scalar(let json) = try export.value(member.value) else { return nil }
        return keyText(json)
    }

    /// A primary key as written, as the key of ``byPrimaryKey``.
    private func keyText(_ key: JSONValue) -> String {
        StudioExport.content(of: [JSONMember(key: "", value: key)])
    }

    /// The stored objects of a type without a primary key, by content: made
    /// the first time a copy of one must be matched (most exports link such
    /// objects only from their own type, by identity).
    private func contentIndex(_ typeName: String) throws -> [String: [UInt64]] {
        if let known = byContent[typeName] { return known }
        var index: [String: [UInt64]] = [:]
        for (node, key) in unkeyed[typeName] ?? [] { index[try content(node, depth: 1), default: []].append(key) }
        byContent[typeName] = index
        return index
    }

    /// A node's values and, `depth` links deep, those of the objects it
    /// links to: the same for every copy of one object.
    private func content(_ node: StudioExport.Node, depth: Int) throws -> String {
        var members: [JSONMember] = []
        for member in node.members {
            members.append(JSONMember(key: member.key, value: try unrolled(try export.value(member.value), depth: depth)))
        }
        return StudioExport.content(of: members)
    }

    private func unrolled(_ value: StudioExport.Value, depth: Int) throws -> JSONValue {
        switch value {
        case .scalar(let json): return json
        case .array(let items): return .array(try items.map { try unrolled(try export.value($0), depth: depth) })
        case .object(let node):
            guard depth > 0 else { return .string("…") }
            return .string(try content(node, depth: depth - 1))
        }
    }

    // MARK: Report

    private func report() {
        let total = counts.reduce(0) { $0 + $1.count }
        let byType = counts.map { "\($0.type) \($0.count)" }.joined(separator: ", ")
        print("imported \(Commands.count(total, "object")) into \(path)" + (byType.isEmpty ? "" : " (\(byType))"))
        for (property, count) in lostData.sorted(by: { $0.key < $1.key }) {
            print(
                "note: \(property): \(Commands.count(count, "value")) of binary data written by Realm Studio as {} (its JSON export does not keep the bytes); stored as no data"
            )
        }
        if ambiguousLinks > 0 {
            print(
                "note: \(Commands.count(ambiguousLinks, "link")) named an object without a primary key that several equal objects match; each went to the first of them"
            )
        }
    }
}
