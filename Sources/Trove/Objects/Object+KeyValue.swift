import Foundation

/// Properties read and written by name (Realm's `object["memo"]`,
/// `value(forKey:)` and `setValue(_:forKey:)`), managed or not.
extension Object {
    /// The property named `key`: read as its Swift value (a link as its
    /// object, a collection as the `List`, `MutableSet` or `Map`, nil for
    /// an empty optional, an integer as an `NSNumber` that casts to any
    /// integer type); set like the property itself — inside a write
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

    /// The property, or the path through links, a key path of this class
    /// reads (`\Dog.owner?.name` is "owner.name"), or nil when it reads none.
    ///
    /// ```swift
    /// let name = Dog.propertyPath(of: \Dog.age)   // "age"
    /// ```
    public static func propertyPath(of keyPath: AnyKeyPath) -> String? {
        ModelInfo.of(self).path(of: keyPath)
    }

    /// The property path `read` reads of an object of this class (what a
    /// projection's key path reads through it), or nil when it reads none.
    package static func propertyPath(readBy read: (Object) -> Any?) -> String? {
        ModelInfo.of(self).path(readBy: read)
    }

    /// The value of the property named `key` (see ``subscript(_:)``); `"self"`
    /// is the object itself, as in key-value coding.
    ///
    /// ```swift
    /// let memo = photo.value(forKey: "memo") as? String
    /// ```
    public func value(forKey key: String) -> Any? {
        if key == "self" { return self }
        return Object.bridgingIntegers(_readProperty(namedProperty(key)))
    }

    /// An integer as an `NSNumber`, which casts to any integer width
    /// (`object["age"] as? Int64` of an `Int` property), as Realm's
    /// key-value reads give them; anything else as it is.
    static func bridgingIntegers(_ value: Any?) -> Any? {
        switch value {
        case let number as Int: return NSNumber(value: number)
        case let number as Int8: return NSNumber(value: number)
        case let number as Int16: return NSNumber(value: number)
        case let number as Int32: return NSNumber(value: number)
        case let number as Int64: return NSNumber(value: number)
        default: return value
        }
    }

    /// Sets the property named `key` (see ``subscript(_:)``): a list or set
    /// also takes an array, a map a dictionary, and a link an object or the
    /// values of a new one, as ``init(value:)`` does. A value of another type
    /// traps, saying which type the property has.
    ///
    /// ```swift
    /// try db.write { photo.setValue(["cat", "sofa"], forKey: "tags") }
    /// ```
    public func setValue(_ value: Any?, forKey key: String) {
        let property = namedProperty(key)
        guard property.schema.collection != .linkingObjects else {
            preconditionFailure("Trove: \(storedTypeName).\(key) is an inverse link; it is read-only")
        }
        do {
            try assign(value, to: property, database: database, update: .error)
        } catch {
            preconditionFailure("Trove: \((error as? TroveError)?.message ?? "\(error)")")
        }
    }

    /// The value at a path of property names through links (key-value
    /// coding's `value(forKeyPath:)`): `"owner.name"`; nil where a link on
    /// the way is nil.
    ///
    /// ```swift
    /// let city = dog.value(forKeyPath: "owner.address.city") as? String
    /// ```
    public func value(forKeyPath keyPath: String) -> Any? {
        var current: Any? = self
        for key in keyPath.split(separator: ".") {
            guard let object = current.flatMap(flattenOptional) as? Object else { return nil }
            current = object.value(forKey: String(key))
        }
        return current
    }

    /// Sets the property at the end of a path through links (key-value
    /// coding's `setValue(_:forKeyPath:)`): `"owner.name"` sets the name of
    /// the dog's owner. A nil link on the way traps, naming it.
    ///
    /// ```swift
    /// try db.write { dog.setValue("Min", forKeyPath: "owner.name") }
    /// ```
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        var names = keyPath.split(separator: ".").map(String.init)
        let last = names.removeLast()
        var target: Object = self
        for name in names {
            guard let next = target.value(forKey: name).flatMap(flattenOptional) as? Object else {
                preconditionFailure("Trove: cannot set '\(keyPath)': \(target.storedTypeName).\(name) is nil")
            }
            target = next
        }
        target.setValue(value, forKey: last)
    }

    /// The property named `key`; a name the type does not have traps, naming its properties.
    func namedProperty(_ key: String) -> NamedProperty {
        guard let property = _namedProperty(key) else {
            preconditionFailure(
                "Trove: \(storedTypeName) has no property '\(key)'; its properties are \(objectSchema.properties.map(\.name).joined(separator: ", "))"
            )
        }
        return property
    }

    /// The column a managed object's field reads (stamped when it was bound).
    fileprivate func column(of field: ModelInfo.Field) -> Int {
        // A legacy field has no column slot: its column by name.
        if field.legacy != nil { return _table!.columnIndex[field.schema.name]! }
        return withBaseAddress { $0.load(fromByteOffset: field.columnOffset, as: Int.self) }
    }
}

extension _TroveStorable {
    /// The field's value through the object, boxed; an empty optional is nil.
    static func _troveAnyGet(_ object: Object, field: ModelInfo.Field) -> Any? {
        if object._database != nil { return _troveAnyGet(object, column: object.column(of: field)) }
        return flattenOptional(
            object.withBaseAddress { $0.advanced(by: field.valueOffset).assumingMemoryBound(to: Self.self).pointee })
    }

    /// A managed object's value at `column`, boxed; an empty optional is nil.
    static func _troveAnyGet(_ object: Object, column: Int) -> Any? {
        flattenOptional(_troveManagedGet(object, column: column))
    }

    /// A stored value as this type, boxed; an empty optional is nil.
    static func _troveAny(fromStored value: StoredValue) -> Any? {
        flattenOptional(Self._troveFromStored(value))
    }

    /// Stores `value` into the field when it has the field's type (or is nil
    /// for an optional); false otherwise.
    static func _troveAnySet(_ value: Any?, _ object: Object, field: ModelInfo.Field) -> Bool {
        if object._database != nil { return _troveAnySet(value, object, column: object.column(of: field)) }
        guard let typed = _troveConvert(value) else { return false }
        object.withBaseAddress { $0.advanced(by: field.valueOffset).assumingMemoryBound(to: Self.self).pointee = typed }
        return true
    }

    /// Stores `value` into a managed object's `column` when it has this type
    /// (or is nil for an optional); false otherwise.
    static func _troveAnySet(_ value: Any?, _ object: Object, column: Int) -> Bool {
        guard let typed = _troveConvert(value) else { return false }
        _troveManagedSet(typed, object, column: column)
        return true
    }
}

extension _TroveStorable {
    /// `value` as this type: the same type, nil (or NSNull) for an optional,
    /// or a number, string or date that converts without loss (an Int for an
    /// Int16, say); nil when it does not fit.
    package static func _troveConvert(_ value: Any?) -> Self? {
        let value = value.flatMap(flattenOptional).flatMap { $0 is NSNull ? nil : $0 }
        if let value, let same = value as? Self { return same }
        // A stored object read through another class (a DynamicObject, or the model class of its type).
        if _troveCollection == nil, let target = _troveLinkTarget, let object = value as? Object,
            let view = object.viewed(as: target)
        {
            return view as? Self
        }
        // A value of the type a custom type is stored as: the custom type made from it.
        if let made = Self.self as? any _TroveMadeFromStored.Type, let value, let converted = made._troveMaking(from: value) {
            return converted as? Self
        }
        // A value for a wrapper (TroveRealm's `RealmProperty`): the wrapped type converts it.
        if let wrapper = Self.self as? any _TroveWrappedValue.Type, !(value is any _TroveWrappedValue) {
            return wrapper._troveWrapping(value) as? Self
        }
        if _troveType == .mixed, let object = value as? Object { return Mixed.object(object) as? Self }
        // An array or a dictionary into a mixed property: a nested collection.
        if _troveType == .mixed, _troveCollection == nil, let value, let nested = Mixed.nestedCollection(value) {
            return nested as? Self
        }
        // A mixed value (`.none` too) into another type stored as one.
        if _troveType == .mixed, let mixed = value as? Mixed { return Self._troveFromStored(mixed._troveStored) }
        if value == nil { return _troveIsOptional ? Self._troveFromStored(.null) : nil }
        if let value, _troveCollection == nil, _troveLinkTarget == nil, let given = StoredValue(any: value), given != .null {
            // Another number type is converted as Realm converts it (a Double into a Float property, an Int into a Double one).
            if given.fits(_troveType) { return Self._troveFromStored(given) }
            if let converted = given.converted(to: _troveType), converted.fits(_troveType) {
                return Self._troveFromStored(converted)
            }
        }
        return nil
    }
}

/// `value` boxed, with an empty optional turned into nil (and a full one unwrapped).
package func flattenOptional(_ value: Any) -> Any? {
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
