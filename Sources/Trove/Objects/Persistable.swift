@_spi(Reflection) import Swift

/// A Codable value type stored as a table, like an ``Object`` class, and
/// read back as values — the seed's struct pattern without a mapping layer.
///
/// ```swift
/// struct Person: Persistable {
///     static var primaryKey: KeyPath<Person, Int> { \.id }
///     static let autoIncrementsPrimaryKey = true   // add with id 0: the next id is assigned
///     var id = 0
///     var firstName: String
///     var age: Int?
///     var photo: Data?
/// }
///
/// try db.write { try db.add(Person(firstName: "Ann", age: 30)) }
/// let adults = try db.values(Person.self).filter("age > 20").array()
/// ```
///
/// Stored properties may have any type an `@Persisted` property may have,
/// optionals included; enums must conform to ``PersistableEnum``. The schema
/// comes from the Codable shape (the coding keys, in declaration order).
public protocol Persistable: Codable, Sendable {
    associatedtype PrimaryKeyValue: _TroveStorable
    /// The property that identifies a value; unique in the table.
    static var primaryKey: KeyPath<Self, PrimaryKeyValue> { get }
    /// When true, adding a value whose integer primary key is 0 assigns the
    /// next unused key (one more than the largest ever stored).
    static var autoIncrementsPrimaryKey: Bool { get }
    /// Properties to keep a secondary index on (by coding key name).
    static var indexedProperties: [String] { get }
    /// String properties to keep a full-text index on (by coding key name),
    /// searched with the `TEXT` operator.
    static var fullTextIndexedProperties: [String] { get }
}

extension Persistable {
    /// `false` by default: a primary key is stored as given.
    public static var autoIncrementsPrimaryKey: Bool { false }
    /// No secondary indexes by default.
    public static var indexedProperties: [String] { [] }
    /// No full-text indexes by default.
    public static var fullTextIndexedProperties: [String] { [] }
}

/// The schema of a Persistable type, derived once from its Codable shape.
enum ValueModel {
    private static let cache = Locked<[ObjectIdentifier: ObjectSchema]>([:])

    static func schema<T: Persistable>(of type: T.Type) throws -> ObjectSchema {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let probe = SchemaProbe()
        do {
            _ = try T(from: SchemaProbeDecoder(probe: probe))
        } catch let error as TroveError {
            throw error
        } catch {
            throw TroveError(.invalidModel, "cannot derive a schema for \(T.self) from its Codable implementation: \(error)")
        }
        let name = ModelInfo.storedName(of: type)
        guard let primaryKey = propertyName(of: T.primaryKey, in: type) else {
            throw TroveError(
                .invalidModel, "\(name).primaryKey must be a key path to a stored property, like \\\(name).id")
        }
        var properties = probe.properties
        guard let keyIndex = properties.firstIndex(where: { $0.name == primaryKey }) else {
            throw TroveError(
                .invalidModel,
                "\(name).primaryKey names '\(primaryKey)', which is not encoded by \(name)'s Codable implementation")
        }
        properties[keyIndex].isPrimaryKey = true
        properties[keyIndex].isIndexed = true
        properties[keyIndex].isAutoIncrement = T.autoIncrementsPrimaryKey
        for indexed in T.indexedProperties {
            guard let index = properties.firstIndex(where: { $0.name == indexed }) else {
                throw TroveError(.invalidModel, "\(name).indexedProperties names '\(indexed)', which \(name) does not have")
            }
            properties[index].isIndexed = true
        }
        for indexed in T.fullTextIndexedProperties {
            guard let index = properties.firstIndex(where: { $0.name == indexed }),
                properties[index].type == .string, properties[index].collection == nil
            else {
                throw TroveError(
                    .invalidModel,
                    "\(name).fullTextIndexedProperties names '\(indexed)', which is not a String property of \(name)")
            }
            properties[index].isFullTextIndexed = true
        }
        let schema = ObjectSchema(name: name, properties: properties)
        cache.withLock { $0[ObjectIdentifier(type)] = schema }
        return schema
    }

    /// The name of the stored property a key path points at (struct fields
    /// only: matched by memory offset).
    static func propertyName<T>(of keyPath: PartialKeyPath<T>, in type: T.Type) -> String? {
        guard let offset = MemoryLayout<T>.offset(of: keyPath) else { return nil }
        var name: String?
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 0)) { fieldName, fieldOffset, _, _ in
            if fieldOffset == offset, name == nil {
                name = String(cString: fieldName)
            }
            return true
        }
        return name
    }
}

extension Database {
    func valueBinding<T: Persistable>(for type: T.Type) throws -> ValueBinding {
        if let known = valueBindings[ObjectIdentifier(type)], !known.table.isRetired { return known }
        let schema = try ValueModel.schema(of: type)
        let table = try register(schema)
        let binding = ValueBinding(
            table: table, schema: schema, columns: schema.properties.map { table.columnIndex[$0.name]! },
            fields: StructFields.of(type, schema: schema))
        valueBindings[ObjectIdentifier(type)] = binding
        return binding
    }

    func valueBindingOrTrap<T: Persistable>(for type: T.Type) -> ValueBinding {
        do {
            return try valueBinding(for: type)
        } catch {
            fatalError(
                "Trove: cannot use \(type) with \(path): \(error). List the type in Configuration.valueTypes to get this as an error thrown when the database opens."
            )
        }
    }

    /// Stores a value; returns it as stored (with an assigned primary key).
    ///
    /// ```swift
    /// let saved = try db.add(Person(firstName: "Ann"))   // saved.id is assigned
    /// try db.add(changed, update: .modified)             // upsert by primary key
    /// ```
    @discardableResult
    public func add<T: Persistable>(_ value: T, update: UpdatePolicy = .error) throws -> T {
        let state = try requireWrite("add(_:)")
        let binding = try valueBinding(for: T.self)
        var values: [StoredValue]
        if let fields = binding.fields {
            values = binding.table.layout.fallbacks
            fields.store(value, into: &values, columns: binding.columns)
        } else {
            values = try StoredValueEncoder.encode(
                value, columns: binding.valueColumns, defaults: binding.table.layout.fallbacks)
        }
        let stored = try storeRecord(values, in: binding.table, policy: update, state)
        if let column = binding.table.primaryKeyColumn, stored.values[column] != values[column] {
            return try decodeValue(T.self, from: stored.values, binding: binding)
        }
        return value
    }

    /// Stores every value of a sequence; see ``add(_:update:)-(T,_)``.
    public func add<S: Sequence>(_ values: S, update: UpdatePolicy = .error) throws where S.Element: Persistable {
        for value in values { try add(value, update: update) }
    }

    /// Every stored value of a type, as a lazy, live ``Results``.
    public func values<T: Persistable>(_ type: T.Type) -> Results<T> {
        checkIsolation()
        return Results(database: self, source: .value(valueBindingOrTrap(for: type), T.self))
    }

    /// The stored value with the given primary key, or nil.
    public func value<T: Persistable>(ofType type: T.Type, forPrimaryKey key: T.PrimaryKeyValue) -> T? {
        let binding = valueBindingOrTrap(for: type)
        guard let objectKey = try? objectKey(forPrimaryKey: key._troveStored, in: binding.table) else { return nil }
        return try? loadValue(type, objectKey: objectKey, binding: binding)
    }

    /// Deletes the stored value with the same primary key as `value`.
    /// Returns false when there was none.
    @discardableResult
    public func delete<T: Persistable>(_ value: T) throws -> Bool {
        try delete(T.self, forPrimaryKey: value[keyPath: T.primaryKey])
    }

    /// Deletes the stored value with this primary key. Returns false when there was none.
    @discardableResult
    public func delete<T: Persistable>(_ type: T.Type, forPrimaryKey key: T.PrimaryKeyValue) throws -> Bool {
        let state = try requireWrite("delete(_:)")
        let binding = try valueBinding(for: type)
        guard let objectKey = try objectKey(forPrimaryKey: key._troveStored, in: binding.table) else { return false }
        return try deleteRecord(objectKey, in: binding.table, state)
    }

    /// Deletes every value a ``Results`` selects.
    public func delete<T: Persistable>(_ results: Results<T>) throws {
        let state = try requireWrite("delete(_:)")
        try deleteMatches(table: results.table, predicate: results.predicate, state)
    }

    /// Deletes every value of a sequence.
    public func delete<S: Sequence>(_ values: S) throws where S.Element: Persistable {
        let targets = Array(values)
        for value in targets { try delete(value) }
    }

    func loadValue<T: Persistable>(_ type: T.Type, objectKey: UInt64, binding: ValueBinding) throws -> T {
        try withUnsafePointer(to: objectKey) {
            try loadValues(type, keys: UnsafeBufferPointer(start: $0, count: 1), binding: binding)[0]
        }
    }

    /// The values of `keys`, in order, read with one cursor (keys that follow
    /// each other are read without a new search); in the cluster layout
    /// outside a write, straight from the clusters' columns.
    /// (The keys are a concrete buffer: this generic code is not specialized,
    /// and a generic collection's iteration went through witness calls per key.)
    func loadValues<T: Persistable>(_ type: T.Type, keys: ArraySlice<UInt64>, binding: ValueBinding) throws -> [T] {
        try keys.withUnsafeBufferPointer { try loadValues(type, keys: $0, binding: binding) }
    }

    func loadValues<T: Persistable>(_ type: T.Type, keys: UnsafeBufferPointer<UInt64>, binding: ValueBinding) throws -> [T] {
        // Each value is built in the array's storage: appending to a `[T]` in
        // this unspecialized code looked up the array's type metadata per value.
        try [T](unsafeUninitializedCapacity: keys.count) { buffer, initialized in
            try binding.table.store.withLookupCursor(in: readTransaction()) { lookups in
                func deleted() -> TroveError {
                    TroveError(.invalidObject, "the \(binding.table.name) value was deleted", path: path)
                }
                // Outside a write, a value of plain fields reads its cluster's columns in place.
                let inPlace = binding.fields != nil && lookups.readsColumnsInPlace
                for key in keys {
                    let target = buffer.baseAddress.unsafelyUnwrapped + initialized
                    if inPlace {
                        guard let (view, slot) = try lookups.place(of: key) else { throw deleted() }
                        if try view.prepareForObjects() {
                            try binding.fields.unsafelyUnwrapped.initialize(
                                UnsafeMutableRawPointer(target), from: view, slot: slot, columns: binding.columns)
                            initialized += 1
                            continue
                        }
                    }
                    guard let bytes = try lookups.record(key) else { throw deleted() }
                    let record = RecordReader(bytes, layout: binding.table.layout)
                    if let fields = binding.fields {
                        fields.initialize(UnsafeMutableRawPointer(target), from: record, columns: binding.columns)
                    } else {
                        target.initialize(to: try StoredValueDecoder.decode(type, from: record, columns: binding.valueColumns))
                    }
                    initialized += 1
                }
            }
        }
    }

    func decodeValue<T: Persistable>(_ type: T.Type, from values: [StoredValue], binding: ValueBinding) throws -> T {
        if let fields = binding.fields { return fields.make(type) { values[binding.columns[$0]] } }
        var named: [String: StoredValue] = [:]
        for (property, column) in zip(binding.schema.properties, binding.columns) { named[property.name] = values[column] }
        return try StoredValueDecoder.decode(type, from: named)
    }
}
