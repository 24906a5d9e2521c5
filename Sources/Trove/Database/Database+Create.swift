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
            try existing._populate(from: value, database: self, update: update)
            return existing
        }
        let object = T()
        try object._populate(from: value, database: nil, update: update)
        try add(object, update: update)
        return object
    }

    /// The stored object whose primary key `value` gives, if any.
    private func storedObject<T: Object>(_ type: T.Type, identifiedBy value: Any) throws -> T? {
        let info = ModelInfo.of(type)
        let fields = info.fields.filter { $0.schema.collection != .linkingObjects }
        guard let index = fields.firstIndex(where: { $0.schema.isPrimaryKey }) else { return nil }
        let field = fields[index]
        let raw: Any?
        switch value {
        case let dictionary as [String: Any]: raw = dictionary[field.schema.name]
        case let array as [Any]: raw = index < array.count ? array[index] : nil
        case let object as Object: raw = object.value(forKey: field.schema.name)
        default: raw = nil
        }
        guard let raw, let key = field.storable._troveConvertAny(raw) else { return nil }
        return object(ofType: type, forPrimaryKey: key)
    }
}

extension _TroveStorable {
    /// ``_troveConvert(_:)`` as an existential, for a key whose type is known only at run time.
    static func _troveConvertAny(_ value: Any) -> (any _TroveStorable)? { _troveConvert(value) }
}
