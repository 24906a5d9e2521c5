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
    /// object; the keys present for a dictionary, other keys ignored). `database` is set for a
    /// managed object inside a write: linked objects are added to it with `update`.
    /// With `copyingFor`, as `create(_:value:update:)` does, an object given
    /// in `value` that is not a stored object of that handle is copied rather
    /// than linked (an unmanaged one stays unmanaged, as in Realm).
    func _populate(from value: Any, database: Database?, update: UpdatePolicy, copyingFor: Database? = nil) throws {
        let properties = _namedProperties.filter { $0.schema.collection != .linkingObjects }
        let typeName = storedTypeName
        // A stored object keeps its primary key (the value names it).
        let skipsPrimaryKey = self.database != nil
        switch value {
        case let dictionary as [String: Any]:
            // Keys the model lacks are ignored, as Realm ignores them (a JSON
            // payload may carry more than the model stores).
            for property in properties where !(skipsPrimaryKey && property.schema.isPrimaryKey) {
                guard let raw = dictionary[property.schema.name] else { continue }
                try assign(raw, to: property, database: database, update: update, copyingFor: copyingFor)
            }
        case let array as [Any]:
            // An array made from `objectSchema.properties` has a place for each
            // linking-objects property too (the schema lists them): skipped.
            let places = array.count > properties.count && array.count == _namedProperties.count ? _namedProperties : properties
            guard array.count <= places.count else {
                throw TroveError(
                    .invalidValue, "\(array.count) values were given for \(typeName), which has \(properties.count) properties")
            }
            for (property, raw) in zip(places, array)
            where property.schema.collection != .linkingObjects && !(skipsPrimaryKey && property.schema.isPrimaryKey) {
                try assign(raw, to: property, database: database, update: update, copyingFor: copyingFor)
            }
        case let source as Object:
            let sourceNames = Set(source.objectSchema.properties.map(\.name))
            for property in properties
            where sourceNames.contains(property.schema.name) && !(skipsPrimaryKey && property.schema.isPrimaryKey) {
                // Read as the source holds it: `value(forKey:)` hands integers out as
                // NSNumbers, which a mixed property would take as a Double.
                try assign(
                    source._readProperty(source.namedProperty(property.schema.name)), to: property, database: database,
                    update: update, copyingFor: copyingFor)
            }
        default:
            throw TroveError(
                .invalidValue,
                "a \(typeName) is made from a dictionary, an array in property order or another object, not a \(type(of: value))"
            )
        }
    }

    /// Sets one property from a value as `Object(value:)` and key-value access
    /// take it: the property's type (or a number, string or date that converts
    /// to it without loss), nil or `NSNull` for an optional or to empty a
    /// collection, an array (or list or set) for a list or set, a dictionary
    /// (or map) for a map, and an object or its values for a link.
    func assign(
        _ raw: Any?, to named: NamedProperty, database: Database?, update: UpdatePolicy, copyingFor: Database? = nil
    ) throws {
        let property = named.schema
        let typeName = storedTypeName
        func invalid(_ given: Any?) -> TroveError { named.invalidValue(given, in: typeName) }
        let value = raw.flatMap(flattenOptional).flatMap { $0 is NSNull ? nil : $0 }
        let link = named.linkTarget.map { (target: $0, typeName: property.objectType ?? "") }
        func element(_ given: Any) throws -> Any {
            // A value of a type stored as an object (TroveRealm's custom types) is stored as it is; so is nil.
            guard let link, let unwrapped = flattenOptional(given), !(unwrapped is NSNull),
                !(unwrapped is any _TroveLinkCarrier)
            else { return given }
            return try linkedObject(
                unwrapped, of: link.target, named: link.typeName, database: database, update: update,
                copyingFor: copyingFor)
        }
        switch property.collection {
        case .list, .set:
            guard let storage = _readProperty(named) as? any _TroveListStorage else { return }
            let elements: [Any]
            switch value {
            case nil: elements = []
            case let collection as any _TroveListStorage: elements = collection._unmanagedElements
            default:
                // An array, or any other sequence (results, say), but not a string or data.
                guard let value, let array = sequenceElements(value) else { throw invalid(value) }
                elements = array
            }
            // Converted before the collection empties: `value` may be this very collection.
            let converted = try elements.map(element)
            storage.removeAll()
            for (given, element) in zip(elements, converted) {
                guard storage._appendAny(element) else { throw invalid(given) }
            }
        case .map:
            guard let storage = _readProperty(named) as? any _TroveMapStorage else { return }
            let entries: [(key: String, value: Any)]
            switch value {
            case nil: entries = []
            case let dictionary as [String: Any]: entries = dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            case let map as any _TroveMapStorage: entries = map._unmanagedEntries
            default: throw invalid(value)
            }
            let converted = try entries.map { try element($0.value) }
            storage.removeAll()
            for (entry, element) in zip(entries, converted) {
                guard storage._setAny(element, forKey: entry.key) else { throw invalid(entry.value) }
            }
        case .linkingObjects:
            return
        case nil:
            let converted = try value.map(element)
            guard _storeProperty(converted, in: named) else { throw invalid(value) }
        }
    }

    /// `raw` as an object of the stored type `typeName` (held in properties of
    /// class `target`): itself when it is an object of that class or type,
    /// otherwise a new one made from it (and, for a managed owner, added with `update`).
    private func linkedObject(
        _ raw: Any, of target: Object.Type, named typeName: String, database: Database?, update: UpdatePolicy,
        copyingFor: Database?
    )
        throws -> Any
    {
        if let object = raw as? Object, isKind(type(of: object), of: target) || object.storedTypeName == typeName,
            copyingFor == nil || (object.database === copyingFor && !(object is EmbeddedObject))
        {
            if let database, object.database == nil, !(object is EmbeddedObject) { try database.add(object, update: update) }
            return object
        }
        if target == DynamicObject.self {
            guard let database else {
                throw TroveError(
                    .invalidObject, "a \(typeName) object is made from values only in a write, as a link of a stored object")
            }
            return try database.create(typeName, value: raw, update: update, owned: true)
        }
        let made = target.init()
        try made._populate(from: raw, database: nil, update: update, copyingFor: copyingFor)
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
