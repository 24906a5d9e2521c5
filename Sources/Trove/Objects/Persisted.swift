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
    /// The value of an unmanaged object. A managed object reads the database
    /// instead (the column stamped into this field says where) and leaves this alone.
    @usableFromInline var _value: Value
    /// The column in a managed object (see ``Object/bind(to:objectKey:binding:)``)
    /// and in the probe objects that turn key paths into columns; in an
    /// unmanaged object -1, or `-2 - offset` once its setters know where the
    /// field sits (see `Object._markFieldOffsets()`).
    @usableFromInline var _column: Int
    @usableFromInline var options: PersistedOptions

    /// A stored property with an initial value.
    ///
    /// - Parameters:
    ///   - wrappedValue: The property's default: what a new object holds until it is set.
    ///   - primaryKey: The property identifies the object; its values are unique.
    ///   - indexed: Keep a secondary index, so equality and range queries and
    ///     sorting on this property do not scan the table.
    ///   - autoIncrement: For an integer primary key: an object added with 0
    ///     gets the next unused value (the largest ever stored, plus one).
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool = false, indexed: Bool = false, autoIncrement: Bool = false) {
        _value = wrappedValue
        _column = -1
        options = PersistedOptions(primaryKey: primaryKey, indexed: indexed, autoIncrement: autoIncrement)
    }

    /// A link or a list of links with a rule for what deleting this object
    /// does to its targets.
    ///
    /// ```swift
    /// @Persisted(deleteRule: .cascade) var messages = List<ChatMessage>()
    /// ```
    @inlinable
    public init(wrappedValue: Value, deleteRule: DeleteRule) {
        self.init(wrappedValue: wrappedValue)
        options.deleteRule = deleteRule
    }

    /// A link with a delete rule, starting at nil: `@Persisted(deleteRule: .cascade) var photo: Photo?`.
    @inlinable
    public init(deleteRule: DeleteRule) {
        self.init(wrappedValue: Value._troveDefault, deleteRule: deleteRule)
    }

    /// A stored property starting at its type's default (0, "", nil, false...).
    @inlinable
    public init(primaryKey: Bool = false, indexed: Bool = false, autoIncrement: Bool = false) {
        self.init(wrappedValue: Value._troveDefault, primaryKey: primaryKey, indexed: indexed, autoIncrement: autoIncrement)
    }

    /// A stored property with an index of the given kind; `.fullText` keeps
    /// a full-text index on a `String` property, which the `TEXT` operator
    /// searches and ``Results/search(_:in:)-(_,String)`` ranks.
    ///
    /// ```swift
    /// final class Memo: Object {
    ///     @Persisted(indexed: .fullText) var text = ""
    /// }
    /// let hits = try db.objects(Memo.self).filter("text TEXT %@", "산책 공원")
    /// ```
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool = false, indexed: PropertyIndex, autoIncrement: Bool = false) {
        self.init(
            wrappedValue: wrappedValue, primaryKey: primaryKey, indexed: indexed == .general, autoIncrement: autoIncrement)
        options.fullText = indexed == .fullText
    }

    /// A stored property with an index of the given kind, starting at its type's default.
    @inlinable
    public init(primaryKey: Bool = false, indexed: PropertyIndex, autoIncrement: Bool = false) {
        self.init(wrappedValue: Value._troveDefault, primaryKey: primaryKey, indexed: indexed, autoIncrement: autoIncrement)
    }

    /// Unavailable: `@Persisted` stores properties only in a subclass of
    /// ``Object``, whose reads and writes go through the enclosing-instance
    /// subscript instead. Anywhere else it does not compile.
    ///
    /// ```swift
    /// final class Note: Object { @Persisted var text = "" }   // stored
    /// struct Draft { @Persisted var text = "" }                // error: only on a subclass of Object
    /// ```
    @available(*, unavailable, message: "@Persisted can only be used on properties of a subclass of Object")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// The property's value as Swift reads and writes it through the object:
    /// the value in the database when the object is managed, the value held in
    /// the field otherwise. Swift calls it; your code never does. Setting a
    /// managed object's property outside a write transaction traps.
    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        // Always inlined, so the key paths are literals where the accessor
        // lands and their reads fold into plain loads of the field.
        @inline(__always) get {
            // A managed object's fields hold their columns (stamped when it was
            // bound); reading one through the literal key path is a plain load.
            if object._database != nil {
                // Only a collection hands out what its field holds: another type reads
                // the column alone (a copy of the field copied its value, a String's
                // retain and release per read).
                if Value._troveCollection == nil {
                    return Value._troveManagedGet(object, column: object[keyPath: storageKeyPath]._column)
                }
                let storage = object[keyPath: storageKeyPath]
                return Value._troveManagedGet(object, column: storage._column, held: storage._value)
            }
            let storage = object[keyPath: storageKeyPath]
            if storage._column >= 0 { return Value._troveProbeGet(object, column: storage._column) }
            return storage._value
        }
        @inline(__always) set {
            if object._database != nil {
                Value._troveManagedSet(newValue, object, column: object[keyPath: storageKeyPath]._column)
                return
            }
            // Unmanaged: write the field where its mark says it sits (see
            // `Object._markFieldOffsets()`); probes and unmarked fields go
            // through the key path.
            var mark = object[keyPath: storageKeyPath]._column
            if mark == -1, object._markFieldOffsets() { mark = object[keyPath: storageKeyPath]._column }
            if mark <= -2 {
                Unmanaged.passUnretained(object).toOpaque().advanced(by: -2 - mark)
                    .assumingMemoryBound(to: Persisted<Value>.self).pointee._value = newValue
            } else {
                object[keyPath: storageKeyPath]._value = newValue
            }
        }
    }
}

@usableFromInline
struct PersistedOptions: Sendable {
    @usableFromInline var primaryKey: Bool
    @usableFromInline var indexed: Bool
    @usableFromInline var autoIncrement: Bool
    @usableFromInline var deleteRule: DeleteRule = .nullify
    @usableFromInline var fullText = false

    @usableFromInline
    init(primaryKey: Bool, indexed: Bool, autoIncrement: Bool) {
        self.primaryKey = primaryKey
        self.indexed = indexed
        self.autoIncrement = autoIncrement
    }
}

/// The kind of index `@Persisted(indexed:)` keeps on a property.
///
/// ```swift
/// @Persisted(indexed: .general) var date = ""     // the same as indexed: true
/// @Persisted(indexed: .fullText) var memo = ""    // searched with TEXT
/// ```
public enum PropertyIndex: Sendable, Equatable {
    /// The ordinary index: equality, `IN`, ranges, prefixes and sorting
    /// read it instead of scanning (`indexed: true`).
    case general
    /// A full-text index of a `String` property: the words in it (and, for
    /// Hangul, Han and Kana, its pairs of adjacent characters), searched by
    /// the `TEXT` operator and ranked by ``Results/search(_:in:)-(_,String)``.
    case fullText
}

/// What reflection needs from a `Persisted<Value>` field whose `Value` is
/// known only at run time: its type, its options, where its value sits, and
/// a way to make it a key path probe.
protocol PersistedField {
    static var valueType: PropertyType { get }
    static var linkTarget: Object.Type? { get }
    static var collection: CollectionKind? { get }
    static var isOptional: Bool { get }
    static var storableType: any _TroveStorable.Type { get }
    /// Where the value sits inside the wrapper.
    static var valueOffset: Int { get }
    /// Where the column sits inside the wrapper.
    static var columnOffset: Int { get }
    static func options(at field: UnsafeRawPointer) -> PersistedOptions
    static func bindProbe(at field: UnsafeMutableRawPointer, column: Int)
    /// Drops what the field held while its object was unmanaged, once it is
    /// stored: a collection instance someone else holds becomes the managed
    /// collection of the object's column (the one the property hands out from
    /// then on); another value gives way to the type's default.
    static func releaseUnmanaged(at field: UnsafeMutableRawPointer, of object: Object)
}

extension Persisted: PersistedField {
    static var valueType: PropertyType { Value._troveType }
    static var isOptional: Bool { Value._troveIsOptional }
    static var linkTarget: Object.Type? { Value._troveLinkTarget }
    static var collection: CollectionKind? { Value._troveCollection }
    static var storableType: any _TroveStorable.Type { Value.self }
    static var valueOffset: Int { MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>._value)! }
    static var columnOffset: Int { MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>._column)! }

    static func options(at field: UnsafeRawPointer) -> PersistedOptions {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee.options
    }

    static func bindProbe(at field: UnsafeMutableRawPointer, column: Int) {
        field.assumingMemoryBound(to: Persisted<Value>.self).pointee._column = column
    }

    static func releaseUnmanaged(at field: UnsafeMutableRawPointer, of object: Object) {
        let storage = field.assumingMemoryBound(to: Persisted<Value>.self)
        if Value._troveCollection != nil, let collection = Value.self as? any ManagedCollection.Type {
            collection.releaseField(at: field + valueOffset, of: object, column: storage.pointee._column)
        } else {
            storage.pointee._value = Value._troveDefault
        }
    }
}
