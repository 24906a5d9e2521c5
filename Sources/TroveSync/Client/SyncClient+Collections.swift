import Foundation
import Trove
import TroveStorage

/// Lists, sets, maps and embedded objects in synced types. A list syncs as
/// one value (its elements as a JSON array, last writer wins as a whole), an
/// embedded object too (a JSON object of its values); a set per member
/// and a map per key, each with its own clock and a flag for removed, so
/// that two devices adding different members both keep theirs. The ledger
/// keeps a set's or map's entries as properties named
/// ``entryName(_:_:)``, with hash 0 for a removed one.
extension SyncClient {
    /// What a pull writes once every object of it exists.
    enum Deferred {
        /// A link: the target's primary key (nil: none).
        case link(String?)
        /// A list: its JSON array of element texts (nil: empty).
        case list(String?)
        /// A set's members or a map's entries, as they now are: key → element text.
        case entries([String: String?])
        /// An embedded object: its JSON object of values (nil: none).
        case embedded(String?)
    }

    /// An embedded object as the JSON object the server stores (nil: none).
    func embeddedText(_ value: StoredValue, _ property: PropertySchema, of type: SyncedType) throws -> String? {
        guard let object = try embeddedObject(value, property, of: type) else { return nil }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// An embedded object's values by name, as texts (nil: none).
    func embeddedObject(_ value: StoredValue, _ property: PropertySchema, of type: SyncedType) throws -> [String: Any]? {
        guard case .int(let key) = value, let name = property.objectType, let schema = embeddedSchemas[name],
            let values = try database.storedValues(objectKey: UInt64(bitPattern: key), ofType: name)
        else { return nil }
        var object: [String: Any] = [:]
        for (index, field) in schema.properties.enumerated() where field.collection != .linkingObjects {
            object[field.name] =
                try ValueText.elementText(values[index], of: field, in: "\(type.name).\(property.name)") as Any? ?? NSNull()
        }
        return object
    }

    /// Values by name from a JSON object of ``embeddedObject(_:_:of:)`` (a
    /// value the sender's model lacks keeps its default).
    func embeddedValues(_ object: [String: Any], _ property: PropertySchema, of type: SyncedType) throws
        -> [String: StoredValue]
    {
        guard let schema = embeddedSchemas[property.objectType ?? ""] else { return [:] }
        var read: [String: StoredValue] = [:]
        for field in schema.properties where field.collection != .linkingObjects {
            guard let item = object[field.name] else { continue }
            read[field.name] = try ValueText.elementValue(item as? String, of: field, in: "\(type.name).\(property.name)")
        }
        return read
    }

    /// One set member or map entry the server's state wins for.
    struct TakenEntry {
        let key: String
        let alive: Bool
        let text: String?
        let clock: PropertyClock
    }

    /// The ledger's name of a set member or map key of `property`.
    static func entryName(_ property: String, _ key: String) -> String { entryPrefix(property) + key }

    static func entryPrefix(_ property: String) -> String { property + "\u{1}" }

    /// A present entry's hash, never 0 (which marks a removed one).
    static func entryHash(_ text: String?) -> UInt64 { max(1, ValueText.hash(text)) }

    /// The elements of one collection as texts: a list's in order (key ""),
    /// a set's members (the key is the member's text), a map's entries by
    /// key; a link as the target's primary key.
    func collectionTexts(_ objectKey: UInt64, _ property: PropertySchema, of type: SyncedType) throws
        -> [(key: String, text: String?)]
    {
        try database.storedCollection(objectKey: objectKey, ofType: type.name, property: property.name).map { entry in
            let text =
                property.type == .link
                ? try self.text(entry.value, property, of: type).0
                : try ValueText.elementText(entry.value, of: property, in: type.name)
            switch property.collection {
            case .set:
                guard let text else {
                    throw TroveError(
                        .invalidValue,
                        "\(type.name).\(property.name) holds nil as a member, which does not sync yet: the change was not saved; remove nil from the set"
                    )
                }
                return (text, nil)
            case .map:
                guard !entry.key.utf8.contains(0) else {
                    throw TroveError(
                        .invalidValue,
                        "\(type.name).\(property.name) has a key with a NUL character, which the sync server's PostgreSQL cannot store: the change was not saved"
                    )
                }
                return (entry.key, text)
            default:
                return ("", text)
            }
        }
    }

    /// A list's elements as the JSON array the server stores.
    func listText(_ objectKey: UInt64, _ property: PropertySchema, of type: SyncedType) throws -> String {
        if property.ownsTargets == true {
            // A list of embedded objects: an array of their JSON objects.
            let objects = try database.storedCollection(objectKey: objectKey, ofType: type.name, property: property.name)
                .compactMap { try embeddedObject($0.value, property, of: type) }
            return String(decoding: try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]), as: UTF8.self)
        }
        let texts = try collectionTexts(objectKey, property, of: type).map { $0.text as Any? ?? NSNull() }
        return String(decoding: try JSONSerialization.data(withJSONObject: texts), as: UTF8.self)
    }

    /// Records which members or entries of a set or map changed since the
    /// ledger last saw them; true when any did.
    func captureEntries(
        _ entries: [(key: String, text: String?)], _ property: PropertySchema, _ state: inout ObjectState, newLife: Bool,
        _ clock: inout HybridClock
    ) -> Bool {
        let prefix = Self.entryPrefix(property.name)
        var changed = false
        var present = Set<String>()
        for (key, text) in entries {
            present.insert(key)
            let hash = Self.entryHash(text)
            guard newLife || state.properties[prefix + key]?.hash != hash else { continue }
            state.properties[prefix + key] = (PropertyClock(hlc: clock.next(), device: device), hash)
            changed = true
        }
        for (name, entry) in state.properties
        where name.hasPrefix(prefix) && entry.hash != 0 && !present.contains(String(name.dropFirst(prefix.count))) {
            state.properties[name] = (PropertyClock(hlc: clock.next(), device: device), 0)
            changed = true
        }
        return changed
    }

    /// The change of a set or map this device sends: its own entries, each
    /// `[text, hlc, alive]`; nil when it wrote none.
    func entriesChange(
        _ objectKey: UInt64, _ property: PropertySchema, of type: SyncedType, _ state: ObjectState,
        isMine: (PropertyClock) -> Bool
    ) throws -> [String: Any]? {
        let prefix = Self.entryPrefix(property.name)
        let mine = state.properties.filter { $0.key.hasPrefix(prefix) && isMine($0.value.clock) }
        guard !mine.isEmpty else { return nil }
        let current = Dictionary(try collectionTexts(objectKey, property, of: type).map { ($0.key, $0.text) }) { a, _ in a }
        var entries: [String: Any] = [:]
        for (name, entry) in mine {
            let key = String(name.dropFirst(prefix.count))
            let alive = entry.hash != 0
            entries[key] = [alive ? ((current[key] ?? nil) as Any? ?? NSNull()) : NSNull(), String(entry.clock.hlc), alive]
        }
        return ["e": entries]
    }

    /// The entries of the server's state of a set or map (its clock column:
    /// key → [clock, alive, text]) that win over what the ledger holds.
    func takenEntries(_ stateText: String, _ property: PropertySchema, _ state: ObjectState, newLife: Bool) throws
        -> [TakenEntry]
    {
        guard let server = try JSONSerialization.jsonObject(with: Data(stateText.utf8)) as? [String: [Any]] else {
            throw TroveError(.syncServer, "the sync server sent a state of \(property.name) that is not an object of entries")
        }
        var taken: [TakenEntry] = []
        for (key, entry) in server {
            guard entry.count == 3, let clockText = entry[0] as? String, let clock = PropertyClock(text: clockText),
                let alive = entry[1] as? Bool
            else { throw TroveError(.syncServer, "the sync server sent an entry of \(property.name) it cannot read") }
            if !newLife, let mine = state.properties[Self.entryName(property.name, key)]?.clock, !(mine < clock) { continue }
            taken.append(TakenEntry(key: key, alive: alive, text: entry[2] as? String, clock: clock))
        }
        return taken
    }

    /// Writes what a pull deferred to one object, once every object exists.
    func writeDeferred(_ deferred: Deferred, _ property: PropertySchema, objectKey: UInt64, of type: SyncedType) throws {
        func element(_ text: String?) throws -> StoredValue? {
            guard property.type == .link else { return try ValueText.elementValue(text, of: property, in: type.name) }
            guard let text, let target = try targetKey(text, property) else { return nil }  // not here (yet): left out
            return .int(Int64(bitPattern: target))
        }
        switch deferred {
        case .link(let target):
            var value = StoredValue.null
            if let target, let key = try targetKey(target, property) { value = .int(Int64(bitPattern: key)) }
            try setValue(value, property, objectKey: objectKey, of: type)
        case .list(let text) where property.ownsTargets == true:
            var objects: [[String: StoredValue]] = []
            if let text {
                guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] else {
                    throw TroveError(.syncServer, "the sync server sent \(type.name).\(property.name) as a list it cannot read")
                }
                objects = try array.map { try embeddedValues($0, property, of: type) }
            }
            try database.replaceEmbeddedList(objects, forProperty: property.name, objectKey: objectKey, ofType: type.name)
        case .list(let text):
            var elements: [(key: String, value: StoredValue)] = []
            if let text {
                guard let array = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else {
                    throw TroveError(.syncServer, "the sync server sent \(type.name).\(property.name) as a list it cannot read")
                }
                for item in array {
                    if let value = try element(item as? String) { elements.append(("", value)) }
                }
            }
            try database.replaceCollection(elements, objectKey: objectKey, ofType: type.name, property: property.name)
        case .embedded(let text):
            var values: [String: StoredValue]?
            if let text {
                guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                    throw TroveError(
                        .syncServer, "the sync server sent \(type.name).\(property.name) as an object it cannot read")
                }
                values = try embeddedValues(object, property, of: type)
            }
            try database.replaceEmbedded(values, forProperty: property.name, objectKey: objectKey, ofType: type.name)
        case .entries(let entries):
            var elements: [(key: String, value: StoredValue)] = []
            for (key, text) in entries.sorted(by: { $0.key < $1.key }) {
                if let value = try element(property.collection == .set ? key : text) { elements.append((key, value)) }
            }
            try database.replaceCollection(elements, objectKey: objectKey, ofType: type.name, property: property.name)
        }
    }

    /// The object key of the object a link names by primary key; nil when it is not here.
    private func targetKey(_ primaryKey: String, _ property: PropertySchema) throws -> UInt64? {
        guard let targetType = types[property.objectType ?? ""] else { return nil }
        return try database.objectKey(
            forPrimaryKey: ValueText.value(
                primaryKey, of: targetType.schema.properties[targetType.primaryKeyIndex], in: targetType.name),
            ofType: targetType.name)
    }

    /// Records the entries of a set or map as they now read (hash 0 for one
    /// the ledger knows that is gone), keeping their clocks.
    func recordEntries(_ objectKey: UInt64, _ property: PropertySchema, of type: SyncedType, _ state: inout ObjectState)
        throws
    {
        let prefix = Self.entryPrefix(property.name)
        var present = Set<String>()
        for (key, text) in try collectionTexts(objectKey, property, of: type) {
            present.insert(key)
            state.properties[prefix + key] = (state.properties[prefix + key]?.clock ?? Self.unwritten, Self.entryHash(text))
        }
        for (name, entry) in state.properties
        where name.hasPrefix(prefix) && entry.hash != 0 && !present.contains(String(name.dropFirst(prefix.count))) {
            state.properties[name] = (entry.clock, 0)
        }
    }
}
