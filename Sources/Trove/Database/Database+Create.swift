import Foundation

extension Database {
    /// Makes an object from values and adds it, inside a write (Realm's
    /// `realm.create(_:value:update:)`). `value` is what ``Object/init(value:)``
    /// takes: a dictionary, an array in property order, or another object,
    /// with nested values for links and collections.
    ///
    /// With `update: .modified` or `.all`, an object whose primary key is
    /// already stored is updated in place — only the properties a dictionary
    /// gives, all of them for an array or an object — and returned; linked
    /// objects with primary keys are upserted the same way.
    ///
    /// ```swift
    /// try db.write {
    ///     try db.create(PhotoData.self, value: ["id": "p1", "date": "2024-05-01", "memo": "walk"])
    ///     try db.create(PhotoData.self, value: ["id": "p1", "memo": "edited"], update: .modified)  // date stays
    /// }
    /// ```
    ///
    /// Throws `TroveError.Kind.invalidValue` for a value of the wrong type
    /// (naming the property), `TroveError.Kind.invalidProperty` for a name
    /// the type does not have, and `TroveError.Kind.primaryKeyExists` with
    /// `.error` for a stored primary key.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) throws -> T {
        _ = try requireWrite("create(_:value:update:)")
        if update != .error, let existing = try storedObject(type, identifiedBy: value) {
            try existing._populate(from: value, database: self, update: update, copyingFor: self)
            return existing
        }
        // The class the metatype names at run time: `create(type(of: photo), …)` with
        // a static type of `Object` makes a photo.
        let object = type.init()
        try object._populate(from: value, database: nil, update: update, copyingFor: self)
        try add(object, update: update)
        return object
    }

    /// The stored object whose primary key `value` gives, if any.
    private func storedObject<T: Object>(_ type: T.Type, identifiedBy value: Any) throws -> T? {
        let info = ModelInfo.of(type)
        guard let key = try Database.primaryKey(in: value, among: info.namedProperties, of: info.typeName) else { return nil }
        return object(ofType: type, forPrimaryKey: key)
    }

    /// The primary key `value` gives for a type with `properties` — by name in
    /// a dictionary, in property order in an array, from an object — as the
    /// key's type; nil when the type has none or `value` gives none. A key of
    /// another type throws `TroveError.Kind.invalidValue`.
    static func primaryKey(in value: Any, among properties: [NamedProperty], of typeName: String) throws
        -> (any _TroveStorable)?
    {
        let properties = properties.filter { $0.schema.collection != .linkingObjects }
        guard let index = properties.firstIndex(where: { $0.schema.isPrimaryKey }) else { return nil }
        let property = properties[index]
        let raw: Any?
        switch value {
        case let dictionary as [String: Any]: raw = dictionary[property.schema.name]
        case let array as [Any]: raw = index < array.count ? array[index] : nil
        case let object as Object: raw = object.objectSchema[property.schema.name] != nil ? object[property.schema.name] : nil
        default: raw = nil
        }
        guard let raw else { return nil }
        guard let key = property.storable._troveConvertAny(raw) else { throw property.invalidValue(raw, in: typeName) }
        return key
    }
}

extension _TroveStorable {
    /// ``_troveConvert(_:)`` as an existential, for a key whose type is known only at run time.
    static func _troveConvertAny(_ value: Any) -> (any _TroveStorable)? { _troveConvert(value) }
}
