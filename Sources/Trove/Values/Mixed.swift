import Foundation

/// A value of any stored type, chosen per object: a mixed property (Realm's
/// `AnyRealmValue`).
///
/// ```swift
/// final class Setting: Object {
///     @Persisted(primaryKey: true) var name = ""
///     @Persisted var value: Mixed = .none
/// }
/// try db.write {
///     setting.value = .int(3)
///     other.value = .string("dark")
///     link.value = .object(photo)       // a link to any stored object
/// }
/// let numbers = try db.objects(Setting.self).filter("value > 2")
/// ```
///
/// Numbers compare across their types in queries (`.int(3) == .double(3)`),
/// strings with strings, and so on; a link compares by the object it points
/// at. A link to an object that is deleted later reads as `.none`.
public enum Mixed: Hashable, CustomStringConvertible {
    /// No value (stored as null).
    case none
    /// An integer.
    case int(Int)
    /// A Boolean.
    case bool(Bool)
    /// A single-precision number.
    case float(Float)
    /// A double-precision number.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A point in time.
    case date(Date)
    /// A stored object, of any model type.
    case object(Object)
    /// An ObjectId.
    case objectId(ObjectId)
    /// A Decimal128.
    case decimal128(Decimal128)
    /// A UUID.
    case uuid(UUID)

    /// `.none`, as Realm's `AnyRealmValue()` is.
    ///
    /// ```swift
    /// let empty = Mixed()   // .none
    /// ```
    public init() { self = .none }

    /// The integer held, or nil.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The Boolean held, or nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The Float held, or nil.
    public var floatValue: Float? {
        if case .float(let value) = self { return value }
        return nil
    }

    /// The Double held, or nil.
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The string held, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The bytes held, or nil.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The date held, or nil.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The ObjectId held, or nil.
    public var objectIdValue: ObjectId? {
        if case .objectId(let value) = self { return value }
        return nil
    }

    /// The Decimal128 held, or nil.
    public var decimal128Value: Decimal128? {
        if case .decimal128(let value) = self { return value }
        return nil
    }

    /// The UUID held, or nil.
    public var uuidValue: UUID? {
        if case .uuid(let value) = self { return value }
        return nil
    }

    /// The object held, when it is a `T`; nil otherwise.
    ///
    /// ```swift
    /// let photo = setting.value.object(Photo.self)
    /// ```
    public func object<T: Object>(_ type: T.Type) -> T? {
        if case .object(let value) = self { return value as? T }
        return nil
    }

    /// The value held, boxed as its own type (an `Int`, a `String`, the
    /// object…); nil for `.none`. What a dynamic read of a mixed property gives.
    var boxedValue: Any? {
        switch self {
        case .int(let value): return value  // an Int, where the stored form reads as Int64
        case .object(let value): return value
        default: return _troveStored.swiftValue
        }
    }

    /// The value as text: `.int(3)` is `3`, a string is quoted, an object is described.
    public var description: String {
        switch self {
        case .none: return "none"
        case .object(let object): return object.description
        default: return (_troveStored.swiftValue.map { "\($0)" } ?? "none")
        }
    }
}

extension Mixed: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .mixed }
    /// A mixed property stores `.none` as null.
    public static var _troveIsOptional: Bool { true }
    public static var _troveDefault: Mixed { .none }

    /// The value of a stored form; a link needs a database (see `_troveResolve(_:in:)`) and reads as `.none` here.
    public init(_troveStored value: StoredValue) {
        switch value {
        case .null, .object: self = .none
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(Int(truncatingIfNeeded: v))
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal(let v): self = .decimal128((try? Decimal128(string: v.description)) ?? Decimal128())
        case .objectId(let v): self = .objectId(v)
        case .decimal128(let v): self = .decimal128(v)
        }
    }

    /// The stored form. An object is stored as a link to it; one that is not
    /// stored yet is added by the write that stores the value.
    public var _troveStored: StoredValue {
        switch self {
        case .none: return .null
        case .int(let v): return .int(Int64(v))
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .data(let v): return .data(v)
        case .date(let v): return .date(v)
        case .objectId(let v): return .objectId(v)
        case .decimal128(let v): return .decimal128(v)
        case .uuid(let v): return .uuid(v)
        case .object(let object):
            guard object._database != nil, let table = object._table else { return .null }
            return .object(typeName: table.name, key: object._objectKey)
        }
    }

    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Mixed {
        guard case .object(let typeName, let key) = value else { return Mixed(_troveStored: value) }
        return database.mixedObject(typeName: typeName, key: key).map { .object($0) } ?? .none
    }

    public static func _troveManagedGet(_ object: Object, column: Int) -> Mixed {
        _troveResolve(object._readManaged(column: column), in: object._database!)
    }

    public static func _troveManagedSet(_ value: Mixed, _ object: Object, column: Int) {
        guard case .object(let target) = value else {
            object._writeColumn(column, value._troveStored)
            return
        }
        let database = object._database!
        guard let state = database.writeState else {
            preconditionFailure(
                "Trove: cannot change \(type(of: object)) outside a write transaction; wrap the change in `try db.write { ... }`")
        }
        do {
            object._writeColumn(column, try database.mixedLink(to: target))
        } catch {
            if state.deferredError == nil { state.deferredError = error }
        }
    }
}

extension Database {
    /// The model class this handle reads objects of a stored type as: one it
    /// reads already, else one its configuration names, else any class of that
    /// name the process has (two modules may each have a `Photo`).
    func modelClass(storedAs typeName: String) -> Object.Type? {
        if let own = objectBindings.values.first(where: { $0.info.typeName == typeName && !$0.table.isRetired }) {
            return own.info.type
        }
        return configuration.objectTypes.first { ModelInfo.storedName(of: $0) == typeName }
            ?? ModelInfo.knownType(named: typeName)
    }

    /// The stored form of a link held in a mixed value; an unmanaged object is added first.
    func mixedLink(to target: Object) throws -> StoredValue {
        if target._database == nil {
            try add(target, update: .error, owned: target is EmbeddedObject)
        } else if target._database !== self {
            throw TroveError(
                .invalidObject,
                "this \(type(of: target)) belongs to another Database handle; a mixed value can only hold an object of this handle",
                path: path)
        } else if target.isInvalidated {
            throw TroveError(.invalidObject, "this \(type(of: target)) was deleted; it cannot be stored", path: path)
        }
        guard let table = target._table else { return .null }
        return .object(typeName: table.name, key: target._objectKey)
    }

    /// The object a mixed value links to, or nil when it is gone or its type is not known to this process.
    func mixedObject(typeName: String, key: UInt64) -> Object? {
        guard let type = modelClass(storedAs: typeName), let binding = try? objectBinding(for: type),
            contains(objectKey: key, in: binding.table)
        else { return nil }
        let object = binding.info.type.init()
        object.bind(to: self, objectKey: key, binding: binding)
        return object
    }
}
