/// A stored property reached through `.value`, as Realm's legacy models
/// declared optional numbers and mixed values: `let age = RealmProperty<Int?>()`
/// (stored as Realm stores it), or `@Persisted var age = RealmProperty<Int?>()`.
/// Reads and writes of `.value` are those of a `@Persisted` property of type `Value`.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var age = RealmProperty<Int?>()
/// }
/// person.age.value = 30
/// try realm.write { realm.add(person) }
/// let adults = realm.objects(Person.self).filter("age >= 18")
/// ```
public final class RealmProperty<Value: _TroveStorable>: CustomStringConvertible {
    private var unmanaged: Value
    /// The managed object the property belongs to: held strongly, or weakly
    /// when the object's own legacy field holds the property (a cycle otherwise).
    private var heldOwner: Object?
    private weak var legacyOwner: Object?
    private var isAttached = false
    private var column: Int

    /// Where the legacy owner's row is, to read it through another handle
    /// on the row once that instance is gone (the property outlives it, as
    /// Realm's does).
    private var ownerRow: ObjectRow?

    private var owner: Object? {
        if let heldOwner { return heldOwner }
        guard isAttached else { return nil }
        if let legacyOwner { return legacyOwner }
        guard let row = ownerRow?.object() else { return nil }
        heldOwner = row
        return row
    }

    /// An unmanaged property holding its type's default (`nil` for an optional).
    public init() {
        unmanaged = Value._troveDefault
        heldOwner = nil
        column = -1
    }

    /// An unmanaged property holding `value`.
    ///
    /// ```swift
    /// let age = RealmOptional<Int>(30)
    /// ```
    public convenience init(_ value: Value) {
        self.init()
        unmanaged = value
    }

    init(owner: Object, column: Int) {
        unmanaged = Value._troveDefault
        heldOwner = owner
        self.column = column
    }

    /// Makes this property, held in a legacy field of `object`, read and
    /// write `object`'s stored `column`.
    fileprivate func attach(to object: Object, column: Int) {
        unmanaged = Value._troveDefault
        heldOwner = nil
        legacyOwner = object
        isAttached = true
        self.column = column
        ownerRow = ObjectRow(object)
    }

    /// The property's value: the stored one when its object is managed.
    /// Setting it on a managed object needs a write transaction.
    public var value: Value {
        get {
            guard let owner else { return unmanaged }
            return Value._troveManagedGet(owner, column: column)
        }
        set {
            guard let owner else {
                unmanaged = newValue
                return
            }
            Value._troveManagedSet(newValue, owner, column: column)
        }
    }

    /// The value, described as Swift describes it.
    public var description: String { String(describing: value) }
}

extension RealmProperty: _TroveDeclaredWithPersisted {
    public static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int) {
        field.assumingMemoryBound(to: RealmProperty.self).pointee.attach(to: object, column: column)
    }
}

extension RealmProperty: _TroveWrappedValue {
    /// A property holding `value` converted to `Value`, or nil when it cannot hold it.
    public static func _troveWrapping(_ value: Any?) -> RealmProperty? {
        Value._troveConvert(value).map { RealmProperty($0) }
    }

    /// The value, nil for an empty optional: what `object["age"]` reads.
    public var _troveWrappedValue: Any? {
        let boxed: Any = value
        if case Optional<Any>.none = boxed as Any? { return nil }
        let mirror = Mirror(reflecting: boxed)
        guard mirror.displayStyle == .optional else { return boxed }
        return mirror.children.first?.value
    }
}

extension RealmProperty: _TroveStoredInitializable {
    public static var _troveType: PropertyType { Value._troveType }
    public static var _troveIsOptional: Bool { Value._troveIsOptional }
    public static var _troveDefault: RealmProperty { RealmProperty() }
    public convenience init(_troveStored value: StoredValue) { self.init(Value._troveFromStored(value)) }
    public var _troveStored: StoredValue { value._troveStored }

    public static func _troveManagedGet(_ object: Object, column: Int) -> RealmProperty {
        RealmProperty(owner: object, column: column)
    }

    public static func _troveManagedSet(_ value: RealmProperty, _ object: Object, column: Int) {
        Value._troveManagedSet(value.value, object, column: column)
    }
}

/// Realm's legacy optional number property: `RealmOptional<Int>` is a
/// ``RealmProperty`` whose value is `Int?`.
public typealias RealmOptional<Wrapped: _TroveStorable> = RealmProperty<Wrapped?>

/// Realm's protocol for enums stored by raw value: Trove's
/// ``Trove/PersistableEnum``. `enum Kind: Int, RealmEnum { case a, b }`.
public typealias RealmEnum = PersistableEnum

#if !canImport(ObjectiveC)
    /// Runs `body`. Linux has no autorelease pools; Realm code that wraps
    /// background work in `autoreleasepool { }` builds unchanged.
    ///
    /// ```swift
    /// autoreleasepool { let realm = try! Realm(); ... }
    /// ```
    public func autoreleasepool<Result>(invoking body: () throws -> Result) rethrows -> Result {
        try body()
    }
#endif

extension RealmProperty: Decodable where Value: Decodable {
    /// An unmanaged property holding the decoded value (JSON `null` is nil
    /// for an optional `Value`), as Realm decodes `RealmProperty` and
    /// `RealmOptional`.
    ///
    /// ```swift
    /// final class Dog: Object, Codable { let age = RealmProperty<Int?>() }
    /// let dog = try JSONDecoder().decode(Dog.self, from: Data(#"{"age": 3}"#.utf8))
    /// ```
    public convenience init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if Value._troveIsOptional, container.decodeNil() {
            self.init()
        } else {
            self.init(try container.decode(Value.self))
        }
    }
}

extension RealmProperty: Encodable where Value: Encodable {
    /// The value, read from the database when the owner is managed.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(dog.age)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension RealmProperty: Equatable {
    /// The same instance, as Realm's (an `NSObject` that does not override
    /// `isEqual`) are: an object's property compared with itself.
    public static func == (lhs: RealmProperty, rhs: RealmProperty) -> Bool { lhs === rhs }
}
