import Foundation

/// Objects made from values, as Realm makes them: a dictionary by property
/// name, an array in property order, or another object with properties of
/// the same names — with nested values for links, lists, sets and maps.
extension Object {
    /// An unmanaged object filled from `value` (Realm's `Object(value:)`):
    /// a `[String: Any]` by property name, an `[Any]` in property order, or
    /// another object whose properties have the same names. Links take an
    /// object or nested values; lists and sets take arrays; maps take
    /// dictionaries. Properties not given keep their defaults. A value of
    /// the wrong type traps, naming the property and its type, as Realm's does.
    ///
    /// ```swift
    /// let room = ChatRoom(value: ["id": "r1", "partner": ["id": "u2", "name": "Bo"], "tags": ["friends"]])
    /// ```
    public convenience init(value: Any) {
        self.init()
        do {
            try _populate(from: value, database: nil, update: .error)
        } catch let error as TroveError {
            preconditionFailure("Trove: cannot make a \(type(of: self)) from the value given: \(error.message)")
        } catch {
            preconditionFailure("Trove: cannot make a \(type(of: self)) from the value given: \(error)")
        }
    }

    /// Sets the properties `value` gives (all of them for an array or an
    /// object; the keys present for a dictionary). `database` is set for a
    /// managed object inside a write: linked objects are added to it with `update`.
    func _populate(from value: Any, database: Database?, update: UpdatePolicy) throws {
        let info = ModelInfo.of(type(of: self))
        let fields = info.fields.filter { $0.schema.collection != .linkingObjects }
        // A stored object keeps its primary key (the value names it).
        let skipsPrimaryKey = self.database != nil
        switch value {
        case let dictionary as [String: Any]:
            for key in dictionary.keys where !fields.contains(where: { $0.schema.name == key }) {
                throw TroveError(
                    .invalidProperty,
                    "\(info.typeName) has no property '\(key)'; its properties are \(fields.map(\.schema.name).joined(separator: ", "))"
                )
            }
            for field in fields where !(skipsPrimaryKey && field.schema.isPrimaryKey) {
                guard let raw = dictionary[field.schema.name] else { continue }
                try assign(raw, to: field, typeName: info.typeName, database: database, update: update)
            }
        case let array as [Any]:
            guard array.count <= fields.count else {
                throw TroveError(
                    .invalidValue, "\(array.count) values were given for \(info.typeName), which has \(fields.count) properties")
            }
            for (field, raw) in zip(fields, array) where !(skipsPrimaryKey && field.schema.isPrimaryKey) {
                try assign(raw, to: field, typeName: info.typeName, database: database, update: update)
            }
        case let source as Object:
            let sourceNames = Set(ModelInfo.of(type(of: source)).fields.map(\.schema.name))
            for field in fields
            where sourceNames.contains(field.schema.name) && !(skipsPrimaryKey && field.schema.isPrimaryKey) {
                try assign(
                    source.value(forKey: field.schema.name) as Any, to: field, typeName: info.typeName, database: database,
                    update: update)
            }
        default:
            throw TroveError(
                .invalidValue,
                "a \(info.typeName) is made from a dictionary, an array in property order or another object, not a \(type(of: value))"
            )
        }
    }

    private func assign(_ raw: Any, to field: ModelInfo.Field, typeName: String, database: Database?, update: UpdatePolicy)
        throws
    {
        let property = field.schema
        func invalid(_ given: Any) -> TroveError {
            TroveError(
                .invalidValue,
                "Invalid value '\(given)' of type '\(type(of: given))' for '\(property.typeDescription)' property '\(typeName).\(property.name)'"
            )
        }
        let isNull = flattenOptional(raw).flatMap { $0 is NSNull ? nil : $0 } == nil
        switch property.collection {
        case .list, .set:
            guard let storage = value(forKey: property.name) as? any _TroveListStorage else { return }
            let elements: [Any]
            if isNull {
                elements = []
            } else if let array = sequenceElements(raw) {
                elements = array
            } else {
                throw invalid(raw)
            }
            storage.removeAll()
            let target = type(of: storage)._elementLinkTarget
            for element in elements {
                let converted =
                    try target.map { try linkedObject(element, of: $0, database: database, update: update) } ?? element
                guard storage._appendAny(converted) else { throw invalid(element) }
            }
        case .map:
            guard let storage = value(forKey: property.name) as? any _TroveMapStorage else { return }
            let entries: [String: Any]
            if isNull {
                entries = [:]
            } else if let dictionary = flattenOptional(raw) as? [String: Any] {
                entries = dictionary
            } else if let map = flattenOptional(raw) as? any _TroveMapStorage {
                entries = Dictionary(map._unmanagedEntries.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
            } else {
                throw invalid(raw)
            }
            storage.removeAll()
            let target = type(of: storage)._valueLinkTarget
            for (key, element) in entries.sorted(by: { $0.key < $1.key }) {
                let converted =
                    try target.map { try linkedObject(element, of: $0, database: database, update: update) } ?? element
                guard storage._setAny(converted, forKey: key) else { throw invalid(element) }
            }
        case .linkingObjects:
            return
        case nil:
            var converted: Any? = isNull ? nil : raw
            if let target = field.linkTarget, !isNull {
                converted = try linkedObject(raw, of: target, database: database, update: update)
            }
            guard field.storable._troveAnySet(converted, self, field: field) else { throw invalid(raw) }
        }
    }

    /// `raw` as an object of `target`: itself when it is one, otherwise a new
    /// one made from it (and, for a managed owner, added with `update`).
    private func linkedObject(_ raw: Any, of target: Object.Type, database: Database?, update: UpdatePolicy) throws -> Any {
        if let object = raw as? Object, isKind(type(of: object), of: target) {
            if let database, object.database == nil, !(object is EmbeddedObject) { try database.add(object, update: update) }
            return object
        }
        let made = target.init()
        try made._populate(from: raw, database: nil, update: update)
        if let database, !(made is EmbeddedObject) { try database.add(made, update: update) }
        return made
    }
}

/// The elements of a value given for a list or set: an array, or any other
/// sequence (a `List`, a `MutableSet`, `Results`...), but not a string or data.
private func sequenceElements(_ raw: Any) -> [Any]? {
    guard let value = flattenOptional(raw), !(value is String), !(value is Data) else { return nil }
    if let array = value as? [Any] { return array }
    guard let sequence = value as? any Sequence else { return nil }
    func elements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
    return elements(sequence)
}

/// Whether `type` is `target` or one of its subclasses.
private func isKind(_ type: AnyClass, of target: AnyClass) -> Bool {
    var current: AnyClass? = type
    while let candidate = current {
        if candidate == target { return true }
        current = _getSuperclass(candidate)
    }
    return false
}
