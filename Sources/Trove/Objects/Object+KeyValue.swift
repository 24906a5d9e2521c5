import Foundation

/// Properties read and written by name (Realm's `object["memo"]`,
/// `value(forKey:)` and `setValue(_:forKey:)`), managed or not.
extension Object {
    /// The property named `key`: read as its Swift value (a link as its
    /// object, a collection as the `List`, `MutableSet` or `Map`, nil for
    /// an empty optional); set like the property itself — inside a write
    /// for a managed object. A name the type does not have traps, naming
    /// its properties, as Realm's does.
    ///
    /// ```swift
    /// let memo = photo["memo"] as? String
    /// try db.write { photo["memo"] = "edited" }
    /// ```
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// The name the type is stored under: its Swift name without the module
    /// (what queries, migrations and the `trove` tool call it).
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: PhotoData.objectTypeName) { old, new in … }
    /// ```
    public static var objectTypeName: String { ModelInfo.storedName(of: self) }

    /// The schema of this object's type, as its class declares it (Realm's `objectSchema`).
    ///
    /// ```swift
    /// for property in photo.objectSchema.properties { print(property.name, property.type) }
    /// ```
    public var objectSchema: ObjectSchema { ModelInfo.of(type(of: self)).schema }

    /// The value of the property named `key` (see ``subscript(_:)``); `"self"`
    /// is the object itself, as in key-value coding.
    public func value(forKey key: String) -> Any? {
        if key == "self" { return self }
        let field = persistedField(named: key)
        return field.storable._troveAnyGet(self, field: field)
    }

    /// Sets the property named `key`; a value of another type traps, saying
    /// which type the property has (see ``subscript(_:)``).
    public func setValue(_ value: Any?, forKey key: String) {
        let field = persistedField(named: key)
        guard field.schema.collection != .linkingObjects else {
            preconditionFailure("Trove: \(type(of: self)).\(key) is an inverse link; it is read-only")
        }
        if field.storable._troveAnySet(value, self, field: field) { return }
        guard field.schema.collection != nil else {
            preconditionFailure(
                "Trove: \(type(of: self)).\(key) holds \(field.schema.typeDescription)\(field.schema.isOptional ? "?" : ""); \(value.map { "a \(type(of: $0))" } ?? "nil") cannot be stored in it"
            )
        }
        // A list, set or map takes the elements of any collection (an array,
        // another list, a set, results), as `Object(value:)` does.
        do {
            try _populate(from: [key: value ?? NSNull()], database: _database, update: .modified)
        } catch {
            preconditionFailure("Trove: cannot set \(type(of: self)).\(key): \((error as? TroveError)?.message ?? "\(error)")")
        }
    }

    private func persistedField(named key: String) -> ModelInfo.Field {
        let info = ModelInfo.of(type(of: self))
        guard let field = info.fields.first(where: { $0.schema.name == key }) else {
            preconditionFailure(
                "Trove: \(type(of: self)) has no persisted property '\(key)'; its properties are \(info.fields.map(\.schema.name).joined(separator: ", "))"
            )
        }
        return field
    }

    /// The column a managed object's field reads (stamped when it was bound).
    fileprivate func column(of field: ModelInfo.Field) -> Int {
        withBaseAddress { $0.load(fromByteOffset: field.columnOffset, as: Int.self) }
    }
}

extension _TroveStorable {
    /// The field's value through the object, boxed; an empty optional is nil.
    static func _troveAnyGet(_ object: Object, field: ModelInfo.Field) -> Any? {
        let value: Self =
            object._database != nil
            ? _troveManagedGet(object, column: object.column(of: field))
            : object.withBaseAddress { $0.advanced(by: field.valueOffset).assumingMemoryBound(to: Self.self).pointee }
        return flattenOptional(value)
    }

    /// Stores `value` into the field when it has the field's type (or is nil
    /// for an optional); false otherwise.
    static func _troveAnySet(_ value: Any?, _ object: Object, field: ModelInfo.Field) -> Bool {
        guard let typed = _troveConvert(value) else { return false }
        if object._database != nil {
            _troveManagedSet(typed, object, column: object.column(of: field))
        } else {
            object.withBaseAddress { $0.advanced(by: field.valueOffset).assumingMemoryBound(to: Self.self).pointee = typed }
        }
        return true
    }
}

extension _TroveStorable {
    /// `value` as this type: the same type, nil (or NSNull) for an optional,
    /// or a number, string or date that converts without loss (an Int for an
    /// Int16, say); nil when it does not fit.
    static func _troveConvert(_ value: Any?) -> Self? {
        let value = value.flatMap(flattenOptional).flatMap { $0 is NSNull ? nil : $0 }
        if let value, let same = value as? Self { return same }
        if _troveType == .mixed, let object = value as? Object { return Mixed.object(object) as? Self }
        if value == nil { return _troveIsOptional ? Self(_troveStored: .null) : nil }
        if let value, _troveCollection == nil, _troveLinkTarget == nil, let given = StoredValue(any: value), given != .null {
            // Another number type is converted as Realm converts it (a Double into a Float property, an Int into a Double one).
            if given.fits(_troveType) { return Self(_troveStored: given) }
            if let converted = given.converted(to: _troveType), converted.fits(_troveType) {
                return Self(_troveStored: converted)
            }
        }
        return nil
    }
}

/// `value` boxed, with an empty optional turned into nil (and a full one unwrapped).
func flattenOptional(_ value: Any) -> Any? {
    if let optional = value as? any _OptionalBox { return optional._unwrapped }
    return value
}

private protocol _OptionalBox {
    var _unwrapped: Any? { get }
}

extension Optional: _OptionalBox {
    fileprivate var _unwrapped: Any? { self.flatMap { flattenOptional($0) } }
}

extension StoredValue {
    /// Whether the value already has the stored kind of `type` (so that
    /// converting it loses nothing).
    fileprivate func fits(_ type: PropertyType) -> Bool {
        switch (self, type) {
        case (_, .mixed): return true
        case (.int(let value), .int): return value >= Int64(Int.min) && value <= Int64(Int.max)
        case (.int(let value), .int8): return Int8(exactly: value) != nil
        case (.int(let value), .int16): return Int16(exactly: value) != nil
        case (.int(let value), .int32): return Int32(exactly: value) != nil
        case (.double, .double), (.float, .float), (.string, .string), (.data, .data), (.date, .date),
            (.uuid, .uuid), (.decimal, .decimal), (.bool, .bool), (.objectId, .objectId), (.decimal128, .decimal128):
            return true
        default: return false
        }
    }
}
