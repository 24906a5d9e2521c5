import Trove

/// A type of your own stored as a type Trove stores (Realm's
/// `CustomPersistable`, which is `Hashable` too): `init(persistedValue:)`
/// makes it from the stored value, `persistableValue` gives the value to
/// store. Properties, lists, sets, maps and queries of it work as those of
/// its persisted type; a persisted type that is an embedded object is stored
/// as a link to it.
///
/// `PersistedType` (the stored type the value is kept as) is a type Trove stores.
///
/// ```swift
/// struct Celsius: CustomPersistable {   // Hashable, synthesized
///     typealias PersistedType = Double
///     var degrees: Double
///     init(persistedValue: Double) { degrees = persistedValue }
///     var persistableValue: Double { degrees }
/// }
///
/// final class Reading: Object {
///     @Persisted var temperature: Celsius
///     @Persisted var history: List<Celsius>
/// }
/// ```
public protocol CustomPersistable: _TroveStoredInitializable, _TroveLinkCarrier, _TroveMadeFromStored,
    _RealmCollectionValueInsideOptional
where PersistedType: _TroveStoredInitializable {
    /// The value made from its stored form.
    init(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

// A persisted type that is an object (an embedded object, usually) is
// stored as a link that may be nil: a nil link reads as the value made from
// a new object of that type, as Realm reads it.
extension CustomPersistable {
    public static var _troveType: PropertyType { PersistedType._troveType }
    public static var _troveIsOptional: Bool { PersistedType._troveLinkTarget != nil || PersistedType._troveIsOptional }
    public static var _troveElementIsOptional: Bool { PersistedType._troveIsOptional }
    public static var _troveDefault: Self { Self(persistedValue: defaultPersisted) }
    public static var _troveLinkTarget: Object.Type? { PersistedType._troveLinkTarget }
    public init(_troveStored value: StoredValue) {
        if PersistedType._troveLinkTarget != nil, value.isNull {
            self.init(persistedValue: Self.defaultPersisted)
        } else {
            self.init(persistedValue: PersistedType(_troveStored: value))
        }
    }
    public var _troveStored: StoredValue { persistableValue._troveStored }
    public var _troveCarriedObject: Object? { persistableValue as? Object }

    /// A value of the persisted type (or one that converts to it) made into this type.
    public static func _troveMaking(from value: Any) -> Self? {
        PersistedType._troveConvert(value).map { Self(persistedValue: $0) }
    }

    /// The persisted value of a property declared without one: a new object for an object type.
    private static var defaultPersisted: PersistedType {
        if let target = PersistedType._troveLinkTarget, let made = target.init() as? PersistedType { return made }
        return PersistedType._troveDefault
    }

    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Self {
        if PersistedType._troveLinkTarget != nil, value.isNull { return _troveDefault }
        return Self(persistedValue: PersistedType._troveResolve(value, in: database))
    }
    public static func _troveManagedGet(_ object: Object, column: Int) -> Self {
        guard PersistedType._troveLinkTarget != nil else {
            return Self(persistedValue: PersistedType._troveManagedGet(object, column: column))
        }
        return Self(persistedValue: Optional<PersistedType>._troveManagedGet(object, column: column) ?? defaultPersisted)
    }
    public static func _troveManagedSet(_ value: Self, _ object: Object, column: Int) {
        PersistedType._troveManagedSet(value.persistableValue, object, column: column)
    }
}

/// A ``CustomPersistable`` whose initializer can refuse a stored value
/// (Realm's `FailableCustomPersistable`, `Hashable` too). Reading a value it refuses traps,
/// saying which type refused it, as Realm's read throws. A property of it
/// declared without a default, when the type refuses its persisted type's
/// default (0, ""), registers as Realm's does; making an object of that model
/// traps, saying to give the property a default or make it optional.
///
/// ```swift
/// struct Percent: FailableCustomPersistable {
///     typealias PersistedType = Int
///     let persistableValue: Int
///     init?(persistedValue: Int) {
///         guard (0...100).contains(persistedValue) else { return nil }
///         self.persistableValue = persistedValue
///     }
/// }
/// ```
public protocol FailableCustomPersistable: _TroveStoredInitializable, _RealmCollectionValueInsideOptional
where PersistedType: _TroveStoredInitializable {
    /// The value made from its stored form, or nil when the stored form is not a valid one.
    init?(persistedValue: PersistedType)
    /// The stored form of the value.
    var persistableValue: PersistedType { get }
}

extension FailableCustomPersistable {
    public static var _troveType: PropertyType { PersistedType._troveType }
    public static var _troveDefault: Self {
        if let value = Self(persistedValue: PersistedType._troveDefault) { return value }
        // Registering the model makes one instance to read its declarations
        // from; Realm refuses such a model only when an object of it is made.
        if _TroveSchemaProbe.isMaking, _isPOD(Self.self) {
            return withUnsafeTemporaryAllocation(of: Self.self, capacity: 1) { buffer in
                let raw = UnsafeMutableRawPointer(buffer.baseAddress!)
                raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Self>.size)
                return raw.load(as: Self.self)
            }
        }
        preconditionFailure(
            "TroveRealm: failed to default construct a \(Self.self) using the default value for persisted type "
                + "\(PersistedType.self). This conversion must either succeed, the property must be optional, or you "
                + "must explicitly specify a default value for the property (`@Persisted var value = \(Self.self)(...)`).")
    }
    public static var _troveLinkTarget: Object.Type? { PersistedType._troveLinkTarget }
    public init(_troveStored value: StoredValue) { self.init(made: PersistedType(_troveStored: value)) }
    public var _troveStored: StoredValue { persistableValue._troveStored }

    private init(made stored: PersistedType) {
        guard let value = Self(persistedValue: stored) else {
            preconditionFailure(
                "TroveRealm: the stored value \(stored) is not a valid \(Self.self) (its init?(persistedValue:) returned nil)")
        }
        self = value
    }
}
