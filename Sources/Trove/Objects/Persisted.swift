/// Marks a property of an ``Object`` subclass as stored.
///
/// ```swift
/// final class PhotoData: Object {
///     @Persisted(primaryKey: true) var id = UUID().uuidString
///     @Persisted(indexed: true) var date = ""
///     @Persisted var image: Data?
///     var thumbnail: Data?            // not @Persisted: never stored
/// }
/// ```
///
/// On an object that is not yet added, the property holds its value like any
/// other. Once the object is managed (added, or read from a ``Results``), a
/// read returns the value in the database and a write changes the database,
/// which is allowed only inside ``Database/write(_:)``.
@propertyWrapper
public struct Persisted<Value: _TroveStorable> {
    @usableFromInline
    enum Storage {
        case unmanaged(Value)
        case managed(column: Int)
    }

    @usableFromInline var storage: Storage
    @usableFromInline let options: PersistedOptions

    /// A stored property with an initial value.
    ///
    /// - Parameters:
    ///   - primaryKey: The property identifies the object; its values are unique.
    ///   - indexed: Keep a secondary index, so equality and range queries and
    ///     sorting on this property do not scan the table.
    ///   - autoIncrement: For an integer primary key: an object added with 0
    ///     gets the next unused value (the largest ever stored, plus one).
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool = false, indexed: Bool = false, autoIncrement: Bool = false) {
        storage = .unmanaged(wrappedValue)
        options = PersistedOptions(primaryKey: primaryKey, indexed: indexed, autoIncrement: autoIncrement)
    }

    /// A stored property starting at its type's default (0, "", nil, false...).
    @inlinable
    public init(primaryKey: Bool = false, indexed: Bool = false, autoIncrement: Bool = false) {
        self.init(wrappedValue: Value._troveDefault, primaryKey: primaryKey, indexed: indexed, autoIncrement: autoIncrement)
    }

    @available(*, unavailable, message: "@Persisted can only be used on properties of a subclass of Object")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            if let binding = object._binding {
                return Value(_troveStored: object._readColumn(binding.column(for: storageKeyPath)))
            }
            switch object[keyPath: storageKeyPath].storage {
            case .unmanaged(let value): return value
            case .managed(let column): return Value(_troveStored: object._readColumn(column))
            }
        }
        set {
            if let binding = object._binding {
                object._writeColumn(binding.column(for: storageKeyPath), newValue._troveStored)
                return
            }
            switch object[keyPath: storageKeyPath].storage {
            case .unmanaged: object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
            case .managed(let column): object._writeColumn(column, newValue._troveStored)
            }
        }
    }
}

@usableFromInline
struct PersistedOptions: Sendable {
    @usableFromInline var primaryKey: Bool
    @usableFromInline var indexed: Bool
    @usableFromInline var autoIncrement: Bool

    @usableFromInline
    init(primaryKey: Bool, indexed: Bool, autoIncrement: Bool) {
        self.primaryKey = primaryKey
        self.indexed = indexed
        self.autoIncrement = autoIncrement
    }
}

/// What reflection needs from a `Persisted<Value>` field whose `Value` is
/// known only at run time: its type, its options, its value, and a way to
/// switch it to reading from the database.
protocol PersistedField {
    /// The column of a storage bound by ``Object/bindProbe(table:columns:info:)``.
    var boundColumn: Int? { get }
    static var valueType: PropertyType { get }
    static var isOptional: Bool { get }
    static func options(at field: UnsafeRawPointer) -> PersistedOptions
    static func storedValue(at field: UnsafeRawPointer) -> StoredValue
    static func bind(at field: UnsafeMutableRawPointer, column: Int)
}

extension Persisted: PersistedField {
    var boundColumn: Int? {
        if case .managed(let column) = storage { return column }
        return nil
    }

    static var valueType: PropertyType { Value._troveType }
    static var isOptional: Bool { Value._troveIsOptional }

    static func options(at field: UnsafeRawPointer) -> PersistedOptions {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.options
    }

    static func storedValue(at field: UnsafeRawPointer) -> StoredValue {
        switch field.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage {
        case .unmanaged(let value): return value._troveStored
        case .managed: preconditionFailure("Trove: reading the unmanaged value of a managed property")
        }
    }

    static func bind(at field: UnsafeMutableRawPointer, column: Int) {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .managed(column: column)
    }
}
