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
///
/// A mixed value can also hold a list or a dictionary of mixed values, nested
/// as deep as the data is (JSON from a server, say). On a stored object the
/// nested collections are live: changing them in a write changes the stored value.
///
/// ```swift
/// setting.value = .fromDictionary(["theme": .string("dark"), "sizes": .fromArray([.int(12), .int(14)])])
/// try db.write { stored.value.dictionaryValue?["sizes"]?.listValue?.append(.int(16)) }
/// ```
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
    /// A list of mixed values (Realm's nested collection in an `AnyRealmValue`).
    case list(List<Mixed>)
    /// A dictionary of mixed values by string key.
    case dictionary(Map<String, Mixed>)

    /// A list holding `elements` (unmanaged until the value is stored).
    ///
    /// ```swift
    /// let sizes = Mixed.fromArray([.int(12), .int(14)])
    /// ```
    public static func fromArray(_ elements: [Mixed]) -> Mixed { .list(List(elements)) }

    /// A dictionary holding `entries` (unmanaged until the value is stored).
    ///
    /// ```swift
    /// let profile = Mixed.fromDictionary(["name": .string("Min"), "age": .int(31)])
    /// ```
    public static func fromDictionary(_ entries: [String: Mixed]) -> Mixed {
        let map = Map<String, Mixed>()
        for (key, value) in entries { map[key] = value }
        return .dictionary(map)
    }

    /// A Swift array or dictionary (of mixed values, or of anything a mixed
    /// value holds) as a nested collection; nil for anything else or an
    /// element that does not convert.
    static func nestedCollection(_ value: Any) -> Mixed? {
        if value is Data || value is String { return nil }
        if let array = value as? [Any] {
            var elements: [Mixed] = []
            for element in array {
                guard let converted = Mixed._troveConvert(element) else { return nil }
                elements.append(converted)
            }
            return .fromArray(elements)
        }
        if let dictionary = value as? [String: Any] {
            var entries: [String: Mixed] = [:]
            for (key, element) in dictionary {
                guard let converted = Mixed._troveConvert(element) else { return nil }
                entries[key] = converted
            }
            return .fromDictionary(entries)
        }
        return nil
    }

    /// The list held, or nil. On a stored object it is live: in a write,
    /// changing it changes the stored value.
    public var listValue: List<Mixed>? {
        if case .list(let value) = self { return value }
        return nil
    }

    /// The dictionary held, or nil; live on a stored object, as ``listValue`` is.
    public var dictionaryValue: Map<String, Mixed>? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

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
    package var boxedValue: Any? {
        switch self {
        case .int(let value): return value  // an Int, where the stored form reads as Int64
        case .object(let value): return value
        case .list(let value): return value
        case .dictionary(let value): return value
        default: return _troveStored.swiftValue
        }
    }

    /// The value as text: `.int(3)` is `3`, a string is quoted, an object is described.
    public var description: String {
        switch self {
        case .none: return "none"
        case .object(let object): return object.description
        case .list(let list): return list.description
        case .dictionary(let map): return map.description
        default: return (_troveStored.swiftValue.map { "\($0)" } ?? "none")
        }
    }

    /// Values of the same case and equal; nested collections of stored objects
    /// are equal when they are the same collection (as Realm's are), unmanaged
    /// ones when their elements are.
    public static func == (lhs: Mixed, rhs: Mixed) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): return true
        case (.int(let a), .int(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.float(let a), .float(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        case (.objectId(let a), .objectId(let b)): return a == b
        case (.decimal128(let a), .decimal128(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.list(let a), .list(let b)):
            guard !a.isManaged, !b.isManaged else { return a == b }
            return a.array() == b.array()
        case (.dictionary(let a), .dictionary(let b)):
            guard !a.isManaged, !b.isManaged else { return a == b }
            let (x, y) = (a.entries(), b.entries())
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// Hashes the value held (a collection by its count, which equal ones share).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .none: hasher.combine(0)
        case .int(let v): hasher.combine(v)
        case .bool(let v): hasher.combine(v)
        case .float(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .data(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v)
        case .object(let v): hasher.combine(v)
        case .objectId(let v): hasher.combine(v)
        case .decimal128(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        // Equal collections have equal counts; their elements may be equal by identity only.
        case .list(let v): hasher.combine(v.count)
        case .dictionary(let v): hasher.combine(v.count)
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
        case .list(let elements): self = .fromArray(elements.map(Mixed.init(_troveStored:)))
        case .dictionary(let entries): self = .fromDictionary(entries.mapValues(Mixed.init(_troveStored:)))
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
        case .list(let list): return .list(list.array().map(\._troveStored))
        case .dictionary(let map):
            return .dictionary(Dictionary(uniqueKeysWithValues: map.entries().map { ($0.key, $0.value._troveStored) }))
        }
    }

    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Mixed {
        guard case .object(let typeName, let key) = value else { return Mixed(_troveStored: value) }
        return database.mixedObject(typeName: typeName, key: key).map { .object($0) } ?? .none
    }

    public static func _troveManagedGet(_ object: Object, column: Int) -> Mixed {
        let stored = object._readManaged(column: column)
        switch stored {
        case .list, .dictionary: return NestedCollectionPlace(owner: object, column: column, path: []).mixed(stored)
        default: return _troveResolve(stored, in: object._database!)
        }
    }

    public static func _troveManagedSet(_ value: Mixed, _ object: Object, column: Int) {
        switch value {
        case .object, .list, .dictionary: break
        default:
            object._writeColumn(column, value._troveStored)
            return
        }
        let database = object._database!
        guard let state = database.writeState else {
            preconditionFailure(
                "Trove: cannot change \(type(of: object)) outside a write transaction; wrap the change in `try db.write { ... }`")
        }
        do {
            object._writeColumn(column, try database.storedMixed(value))
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

    /// The stored form of a mixed value: an unmanaged object it holds (in
    /// nested collections too) is added first.
    func storedMixed(_ value: Mixed, depth: Int = 0) throws -> StoredValue {
        switch value {
        case .object(let target): return try mixedLink(to: target)
        case .list, .dictionary:
            guard depth < MixedEncoding.maxDepth else {
                throw TroveError(
                    .invalidValue, "collections in a mixed value nest deeper than \(MixedEncoding.maxDepth) levels", path: path)
            }
            if case .list(let list) = value {
                return .list(try list.array().map { try storedMixed($0, depth: depth + 1) })
            }
            guard case .dictionary(let map) = value else { return .null }
            var entries: [String: StoredValue] = [:]
            for (key, element) in map.entries() { entries[key] = try storedMixed(element, depth: depth + 1) }
            return .dictionary(entries)
        default: return value._troveStored
        }
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
