import Foundation
import Trove

// Realm's vocabulary for the types a property or a collection holds, so
// generic code written against it (`func f<T: RealmCollectionValue>`,
// `where V.PersistedType: MinMaxType`) builds. Each is a name over what
// Trove already stores; declaring a conformance of your own does not make a
// type storable (conform to ``CustomPersistable`` for that), as in Realm.

/// A type kept in the database as another (Realm's `_HasPersistedType`):
/// `Self` for the types stored directly, the raw value for a
/// ``PersistableEnum``, the persisted type for a ``CustomPersistable``.
///
/// ```swift
/// func stored<T: _HasPersistedType>(_: T.Type) -> Any.Type { T.PersistedType.self }
/// ```
public protocol _HasPersistedType {
    /// The type the value is stored as.
    associatedtype PersistedType
}

/// A type a model's property can be declared with, telling its stored type
/// (Realm's `_RealmSchemaDiscoverable`).
///
/// ```swift
/// Int._rlmType == .int; String?._rlmOptional == true
/// ```
public protocol _RealmSchemaDiscoverable: _TroveStorable {}

extension _RealmSchemaDiscoverable {
    /// The property type the value is stored as.
    public static var _rlmType: PropertyType { _troveType }
    /// Whether a property of this type may be nil.
    public static var _rlmOptional: Bool { _troveIsOptional }
}

/// A type `@Persisted` stores (Realm's `_Persistable`).
///
/// ```swift
/// func defaultOf<T: _Persistable>(_: T.Type) -> T { T._rlmDefaultValue() }
/// ```
public protocol _Persistable: _RealmSchemaDiscoverable, _HasPersistedType
where PersistedType: _Persistable, PersistedType.PersistedType.PersistedType == PersistedType.PersistedType {}

extension _Persistable {
    /// The value of a property declared without one (0, "", nil, an empty collection).
    public static func _rlmDefaultValue() -> Self { _troveDefault }
}

/// A type `@Persisted` stores inside an `Optional` (Realm's `_PersistableInsideOptional`).
///
/// ```swift
/// func optionalOf<T: _PersistableInsideOptional>(_: T.Type) -> T?.Type { T?.self }
/// ```
public protocol _PersistableInsideOptional: _Persistable where PersistedType: _PersistableInsideOptional {}

/// A type a `List`, `MutableSet`, `Map` or `Results` can hold (Realm's `RealmCollectionValue`).
///
/// ```swift
/// func count<T: RealmCollectionValue>(_ list: List<T>, of value: T) -> Int { list.filter { $0 == value }.count }
/// ```
public protocol RealmCollectionValue: Hashable, _Persistable where PersistedType: RealmCollectionValue {}

/// A type a collection can hold inside an `Optional` (Realm's `_RealmCollectionValueInsideOptional`).
///
/// ```swift
/// func optionals<T: _RealmCollectionValueInsideOptional>(_ list: List<T?>) -> Int { list.count }
/// ```
public protocol _RealmCollectionValueInsideOptional: RealmCollectionValue, _PersistableInsideOptional
where PersistedType: _RealmCollectionValueInsideOptional {}

/// The types `min` and `max` work on (Realm's `MinMaxType`): numbers, dates,
/// `Decimal128`, `AnyRealmValue`, and optionals of them.
///
/// ```swift
/// func lowest<T: RealmCollectionValue>(_ list: List<T>) -> T? where T.PersistedType: MinMaxType { list.min() }
/// ```
@_marker public protocol MinMaxType {}

/// The types `sum` and `average` work on (Realm's `AddableType`): numbers,
/// `Decimal128`, `AnyRealmValue`, and optionals of them.
///
/// ```swift
/// func total<T: RealmCollectionValue>(_ list: List<T>) -> T where T.PersistedType: AddableType { list.sum() }
/// ```
@_marker public protocol AddableType {}

/// The types a collection of values sorts and distincts by themselves
/// (Realm's `SortableType`): numbers, strings, data, dates, `Decimal128`,
/// `AnyRealmValue`, and optionals of them.
///
/// ```swift
/// func ordered<T: RealmCollectionValue>(_ list: List<T>) -> [T] where T.PersistedType: SortableType {
///     Array(list.sorted(ascending: true))
/// }
/// ```
@_marker public protocol SortableType {}

extension Int: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Int`.
    public typealias PersistedType = Int
}
extension Int8: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Int8`.
    public typealias PersistedType = Int8
}
extension Int16: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Int16`.
    public typealias PersistedType = Int16
}
extension Int32: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Int32`.
    public typealias PersistedType = Int32
}
extension Int64: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Int64`.
    public typealias PersistedType = Int64
}
extension Float: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Float`.
    public typealias PersistedType = Float
}
extension Double: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Double`.
    public typealias PersistedType = Double
}
extension Decimal128: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Decimal128`.
    public typealias PersistedType = Decimal128
}
extension Decimal: _RealmCollectionValueInsideOptional, MinMaxType, AddableType, SortableType {
    /// Stored as `Decimal`.
    public typealias PersistedType = Decimal
}
extension Date: _RealmCollectionValueInsideOptional, MinMaxType, SortableType {
    /// Stored as `Date`.
    public typealias PersistedType = Date
}
extension String: _RealmCollectionValueInsideOptional, SortableType {
    /// Stored as `String`.
    public typealias PersistedType = String
}
extension Data: _RealmCollectionValueInsideOptional, SortableType {
    /// Stored as `Data`.
    public typealias PersistedType = Data
}
extension Bool: _RealmCollectionValueInsideOptional {
    /// Stored as `Bool`.
    public typealias PersistedType = Bool
}
extension ObjectId: _RealmCollectionValueInsideOptional {
    /// Stored as `ObjectId`.
    public typealias PersistedType = ObjectId
}
extension UUID: _RealmCollectionValueInsideOptional {
    /// Stored as `UUID`.
    public typealias PersistedType = UUID
}
extension Mixed: RealmCollectionValue, MinMaxType, AddableType, SortableType {
    /// Stored as `Mixed`.
    public typealias PersistedType = Mixed
}

extension Object: _RealmCollectionValueInsideOptional {
    /// Stored as `Object`.
    public typealias PersistedType = Object
}

extension Optional: _HasPersistedType where Wrapped: _HasPersistedType {
    /// Stored as `Wrapped.PersistedType?`.
    public typealias PersistedType = Wrapped.PersistedType?
}
extension Optional: _RealmSchemaDiscoverable where Wrapped: _RealmSchemaDiscoverable {}
extension Optional: _Persistable where Wrapped: _PersistableInsideOptional {}
extension Optional: RealmCollectionValue where Wrapped: _RealmCollectionValueInsideOptional {}
extension Optional: MinMaxType where Wrapped: MinMaxType {}
extension Optional: AddableType where Wrapped: AddableType {}
extension Optional: SortableType where Wrapped: SortableType {}

extension List: _RealmSchemaDiscoverable, _HasPersistedType, _Persistable {
    /// Stored as `List`.
    public typealias PersistedType = List
}
extension MutableSet: _RealmSchemaDiscoverable, _HasPersistedType, _Persistable {
    /// Stored as `MutableSet`.
    public typealias PersistedType = MutableSet
}
extension Map: _RealmSchemaDiscoverable, _HasPersistedType, _Persistable {
    /// Stored as `Map`.
    public typealias PersistedType = Map
}

/// An enum stored as its raw value (Realm's `PersistableEnum`): Trove's
/// ``Trove/PersistableEnum`` that is also a collection value, compared by
/// its raw value.
///
/// ```swift
/// enum Mood: Int, PersistableEnum { case happy, sad }
/// final class Entry: Object {
///     @Persisted var mood: Mood = .happy
///     @Persisted var moods: List<Mood>
/// }
/// ```
public protocol PersistableEnum: Trove.PersistableEnum, _RealmCollectionValueInsideOptional, MinMaxType, Comparable
where RawValue: _RealmCollectionValueInsideOptional & Comparable, PersistedType == RawValue {}

extension PersistableEnum {
    /// Orders the cases by their raw values.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A type `RealmOptional` holds (Realm's `RealmOptionalType`): the integer
/// types, `Float`, `Double` and `Bool`, so generic code over them builds.
///
/// ```swift
/// func read<T: RealmOptionalType>(_ value: RealmOptional<T>) -> T? { value.value }
/// ```
public protocol RealmOptionalType: _RealmSchemaDiscoverable {}

extension Int: RealmOptionalType {}
extension Int8: RealmOptionalType {}
extension Int16: RealmOptionalType {}
extension Int32: RealmOptionalType {}
extension Int64: RealmOptionalType {}
extension Float: RealmOptionalType {}
extension Double: RealmOptionalType {}
extension Bool: RealmOptionalType {}
