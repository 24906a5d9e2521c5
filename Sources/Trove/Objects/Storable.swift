import Foundation

/// A type a `@Persisted` property (or a ``Persistable`` struct field) can
/// have: Bool, Int, Int8/16/32/64, Float, Double, String, Data, Date, UUID,
/// Decimal, an optional of one of them, or a ``PersistableEnum``.
///
/// The requirements are Trove's plumbing; you do not implement them.
public protocol _TroveStorable {
    /// The stored type.
    static var _troveType: PropertyType { get }
    /// Whether `nil` is a valid value.
    static var _troveIsOptional: Bool { get }
    /// Whether `nil` is a valid element of a list or set of this type (a
    /// type stored as a link may be nil as a property, not as an element).
    static var _troveElementIsOptional: Bool { get }
    /// The value of a property declared without an initial value.
    static var _troveDefault: Self { get }
    /// Converts from the stored form (which has the stored type, or null).
    static func _troveFromStored(_ value: StoredValue) -> Self
    /// The stored form.
    var _troveStored: StoredValue { get }

    /// For a link or a collection of links: the type linked to.
    static var _troveLinkTarget: Object.Type? { get }
    /// For a collection: its kind.
    static var _troveCollection: CollectionKind? { get }
    /// Converts from the stored form read from `database` (a link becomes its object).
    static func _troveResolve(_ value: StoredValue, in database: Database) -> Self
    /// A managed object's property read.
    static func _troveManagedGet(_ object: Object, column: Int) -> Self
    /// A managed object's property read through its `@Persisted` field, which
    /// holds `held`: a collection hands out the instance the field holds, so
    /// that every read gives the same one (as Realm's do).
    static func _troveManagedGet(_ object: Object, column: Int, held: Self) -> Self
    /// A managed object's property write.
    static func _troveManagedSet(_ value: Self, _ object: Object, column: Int)
    /// A key path probe's property read (see `ObjectBinding.column(forKeyPath:)`):
    /// records the column; a link hands out a probe of its target.
    static func _troveProbeGet(_ object: Object, column: Int) -> Self
}

/// A stored type made from its stored form by an initializer: every one but
/// the Objective-C classes (`NSString`, `NSDate`, `NSData`), which cannot
/// declare a required initializer in an extension. Trove's plumbing.
public protocol _TroveStoredInitializable: _TroveStorable {
    /// Converts from the stored form (which has the stored type, or null).
    init(_troveStored: StoredValue)
}

extension _TroveStorable {
    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int, held: Self) -> Self {
        _troveManagedGet(object, column: column)
    }
}

extension _TroveStoredInitializable {
    @inlinable
    public static func _troveFromStored(_ value: StoredValue) -> Self { Self(_troveStored: value) }
}

extension _TroveStorable {
    public static var _troveElementIsOptional: Bool { _troveIsOptional }
    public static var _troveIsOptional: Bool { false }
    public static var _troveLinkTarget: Object.Type? { nil }
    @inlinable public static var _troveCollection: CollectionKind? { nil }

    @inlinable
    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Self { Self._troveFromStored(value) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Self {
        Self._troveFromStored(object._readManaged(column: column))
    }

    @inlinable
    public static func _troveManagedSet(_ value: Self, _ object: Object, column: Int) {
        object._writeColumn(column, value._troveStored)
    }

    public static func _troveProbeGet(_ object: Object, column: Int) -> Self {
        Self._troveFromStored(object._readColumn(column))
    }

    /// The value of an unmanaged object's field, boxed (links and collections).
    static func _troveLoadAny(from pointer: UnsafeRawPointer) -> Any {
        pointer.assumingMemoryBound(to: Self.self).pointee
    }

    /// Reads a value of this type from memory (a field of an unmanaged object).
    static func _troveLoad(from pointer: UnsafeRawPointer) -> StoredValue {
        pointer.assumingMemoryBound(to: Self.self).pointee._troveStored
    }
}

extension Bool: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .bool }
    public static var _troveDefault: Bool { false }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .bool(let v) = value { self = v } else { self = false }
    }
    @inlinable public var _troveStored: StoredValue { .bool(self) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Bool {
        guard let slot = object._managedSlot(column: column, of: .bool) else {
            return Bool(_troveStored: object._readManaged(column: column))
        }
        return slot.load(as: UInt8.self) != 0
    }
}

/// A stored type that wraps its value (TroveRealm's `RealmProperty`): key-value
/// access reads the value inside. Trove's plumbing; you do not implement it.
public protocol _TroveWrappedValue {
    /// The value inside, nil for an empty optional.
    var _troveWrappedValue: Any? { get }
    /// A wrapper holding `value` (converted as key-value access converts it),
    /// or nil when the wrapped type cannot hold it.
    static func _troveWrapping(_ value: Any?) -> Self?
}

/// A type a model may also declare without `@Persisted`, as Realm's legacy
/// models do (`let tags = List<String>()`, `let age = RealmOptional<Int>()`):
/// ``List``, ``MutableSet``, ``Map``, ``LinkingObjects`` and TroveRealm's
/// `RealmProperty`. Such a field is stored like a `@Persisted` one; when its
/// object is bound to a database, the instance in the field is attached to
/// the stored property. Trove's plumbing; you do not implement it.
public protocol _TroveDeclaredWithPersisted {
    /// Attaches the value in a legacy field (at `field`) to `object`'s `column`.
    static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int)
}

extension List: _TroveDeclaredWithPersisted {
    public static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int) {
        field.assumingMemoryBound(to: List.self).pointee.attach(to: object, column: column)
    }
}

extension MutableSet: _TroveDeclaredWithPersisted {
    public static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int) {
        field.assumingMemoryBound(to: MutableSet.self).pointee.attach(to: object, column: column)
    }
}

extension Map: _TroveDeclaredWithPersisted {
    public static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int) {
        field.assumingMemoryBound(to: Map.self).pointee.attach(to: object, column: column)
    }
}

extension LinkingObjects: _TroveDeclaredWithPersisted {
    public static func _troveAttachLegacy(at field: UnsafeMutableRawPointer, to object: Object, column: Int) {
        // A value: the field takes the managed one (it holds no reference to the object).
        field.assumingMemoryBound(to: LinkingObjects.self).pointee = _troveManagedGet(object, column: column)
    }
}

/// A value that stands for a linked object (TroveRealm's `CustomPersistable`
/// whose persisted type is an object): adding its owner links the object
/// it carries. Trove's plumbing; you do not implement it.
public protocol _TroveLinkCarrier {
    /// The object the value stands for, if its persisted type is an object.
    var _troveCarriedObject: Object? { get }
}

/// A type stored as another one (TroveRealm's custom types): a value of the
/// stored type given for it (`Object(value:)`, key-value coding) is made into it.
public protocol _TroveMadeFromStored {
    static func _troveMaking(from value: Any) -> Self?
}

extension Optional: _TroveMadeFromStored where Wrapped: _TroveMadeFromStored {
    public static func _troveMaking(from value: Any) -> Self? { Wrapped._troveMaking(from: value).map { .some($0) } }
}

/// Integers share one conversion; only the stored width differs.
public protocol _TroveInteger: _TroveStoredInitializable, FixedWidthInteger {}

extension _TroveInteger {
    public static var _troveDefault: Self { 0 }
    @inlinable public init(_troveStored value: StoredValue) {
        switch value {
        case .int(let v): self = Self(truncatingIfNeeded: v)
        case .double(let v): self = Self(exactly: v.rounded(.towardZero)) ?? 0
        default: self = 0
        }
    }
    @inlinable public var _troveStored: StoredValue { .int(Int64(truncatingIfNeeded: self)) }

    /// Loaded straight from the record: each width is stored as itself, little-endian.
    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Self {
        guard let slot = object._managedSlot(column: column, of: Self._troveType) else {
            return Self._troveFromStored(object._readManaged(column: column))
        }
        return Self(littleEndian: slot.loadUnaligned(as: Self.self))
    }
}

extension Int: _TroveInteger { public static var _troveType: PropertyType { .int } }
extension Int64: _TroveInteger { public static var _troveType: PropertyType { .int } }
extension Int32: _TroveInteger { public static var _troveType: PropertyType { .int32 } }
extension Int16: _TroveInteger { public static var _troveType: PropertyType { .int16 } }
extension Int8: _TroveInteger { public static var _troveType: PropertyType { .int8 } }

extension Float: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .float }
    public static var _troveDefault: Float { 0 }
    @inlinable public init(_troveStored value: StoredValue) { self = Float(value.numeric ?? 0) }
    @inlinable public var _troveStored: StoredValue { .float(self) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Float {
        guard let slot = object._managedSlot(column: column, of: .float) else {
            return Float(_troveStored: object._readManaged(column: column))
        }
        return Float(bitPattern: UInt32(littleEndian: slot.loadUnaligned(as: UInt32.self)))
    }
}

extension Double: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .double }
    public static var _troveDefault: Double { 0 }
    @inlinable public init(_troveStored value: StoredValue) { self = value.numeric ?? 0 }
    @inlinable public var _troveStored: StoredValue { .double(self) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Double {
        guard let slot = object._managedSlot(column: column, of: .double) else {
            return Double(_troveStored: object._readManaged(column: column))
        }
        return Double(bitPattern: UInt64(littleEndian: slot.loadUnaligned(as: UInt64.self)))
    }
}

extension String: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .string }
    public static var _troveDefault: String { "" }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .string(let v) = value { self = v } else { self = "" }
    }
    @inlinable public var _troveStored: StoredValue { .string(self) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> String {
        guard let bytes = object._managedBytes(column: column, of: .string) else {
            return String(_troveStored: object._readManaged(column: column))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Data: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .data }
    public static var _troveDefault: Data { Data() }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .data(let v) = value { self = v } else { self = Data() }
    }
    @inlinable public var _troveStored: StoredValue { .data(self) }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Data {
        guard let bytes = object._managedBytes(column: column, of: .data) else {
            return Data(_troveStored: object._readManaged(column: column))
        }
        return Data(bytes)
    }
}

extension Date: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .date }
    // The moment the object is made, as Realm gives a date property declared without a value.
    public static var _troveDefault: Date { Date() }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .date(let v) = value { self = v } else { self = Date(timeIntervalSinceReferenceDate: 0) }
    }
    @inlinable public var _troveStored: StoredValue { .date(self) }
}

extension UUID: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .uuid }
    // A new identifier each time, as Realm gives a property declared without a value.
    public static var _troveDefault: UUID { UUID() }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .uuid(let v) = value { self = v } else { self = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    }
    @inlinable public var _troveStored: StoredValue { .uuid(self) }
}

extension ObjectId: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .objectId }
    // A new identifier each time, as Realm gives a property declared without a value (so two new objects keyed by one differ).
    public static var _troveDefault: ObjectId { ObjectId.generate() }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .objectId(let v) = value { self = v } else { self = ObjectId() }
    }
    @inlinable public var _troveStored: StoredValue { .objectId(self) }
}

extension Decimal128: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .decimal128 }
    public static var _troveDefault: Decimal128 { Decimal128() }
    @inlinable public init(_troveStored value: StoredValue) { self = value.decimal128Value ?? Decimal128() }
    @inlinable public var _troveStored: StoredValue { .decimal128(self) }
}

extension Decimal: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .decimal }
    public static var _troveDefault: Decimal { 0 }
    @inlinable public init(_troveStored value: StoredValue) {
        switch value {
        case .decimal(let v): self = v
        case .int(let v): self = Decimal(v)
        case .double(let v): self = Decimal(v)
        default: self = 0
        }
    }
    @inlinable public var _troveStored: StoredValue { .decimal(self) }
}

extension Optional: _TroveStorable, _TroveStoredInitializable where Wrapped: _TroveStorable {
    public static var _troveType: PropertyType { Wrapped._troveType }
    public static var _troveIsOptional: Bool { true }
    public static var _troveDefault: Wrapped? { nil }
    @inlinable public init(_troveStored value: StoredValue) {
        if case .null = value { self = nil } else { self = Wrapped._troveFromStored(value) }
    }
    @inlinable public var _troveStored: StoredValue { self.map(\._troveStored) ?? .null }

    public static var _troveLinkTarget: Object.Type? { Wrapped._troveLinkTarget }

    @inlinable
    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Self {
        if case .null = value { return nil }
        return Wrapped._troveResolve(value, in: database)
    }

    @inlinable
    public static func _troveManagedGet(_ object: Object, column: Int) -> Self {
        let stored = object._readManaged(column: column)
        if case .null = stored { return nil }
        return Wrapped._troveResolve(stored, in: object._database.unsafelyUnwrapped)
    }

    public static func _troveProbeGet(_ object: Object, column: Int) -> Self {
        if Wrapped._troveLinkTarget != nil, Wrapped._troveCollection == nil {
            return Wrapped._troveProbeGet(object, column: column)
        }
        return Self._troveFromStored(object._readColumn(column))
    }

    @inlinable
    public static func _troveManagedSet(_ value: Self, _ object: Object, column: Int) {
        let column = column
        if Wrapped._troveLinkTarget != nil {
            object._writeLink(column, value.map { $0 as! Object })
        } else {
            object._writeColumn(column, value._troveStored)
        }
    }
}

/// An enum stored by its raw value (an integer or a string).
///
/// ```swift
/// enum Mood: String, PersistableEnum { case happy, sad }
///
/// final class Entry: Object {
///     @Persisted var mood: Mood = .happy
/// }
/// let sad = try db.objects(Entry.self).filter("mood == %@", Mood.sad)
/// ```
///
/// A stored raw value that no case matches reads as the first case.
public protocol PersistableEnum: _TroveStoredInitializable, RawRepresentable, CaseIterable, Codable
where RawValue: _TroveStorable & Codable {}

extension PersistableEnum {
    public static var _troveType: PropertyType { RawValue._troveType }
    public static var _troveDefault: Self { allCases.first! }
    @inlinable public init(_troveStored value: StoredValue) {
        self = Self(rawValue: RawValue._troveFromStored(value)) ?? Self.allCases.first!
    }
    @inlinable public var _troveStored: StoredValue { rawValue._troveStored }
}
