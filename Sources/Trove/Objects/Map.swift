/// The key type of a ``Map``: strings, as in Realm.
public protocol _TroveMapKey: Hashable, Comparable, Sendable {
    init(_troveMapKey: String)
    var _troveMapKey: String { get }
}

extension String: _TroveMapKey {
    public init(_troveMapKey: String) { self = _troveMapKey }
    public var _troveMapKey: String { self }
}

/// A dictionary property of an ``Object``: string keys to values (or objects).
///
/// ```swift
/// final class Profile: Object {
///     @Persisted var links = Map<String, String>()
/// }
/// try db.write {
///     profile.links["blog"] = "https://example.com"
///     profile.links["old"] = nil                   // removes it
/// }
/// profile.links["blog"]    // one lookup, whatever the size
/// ```
///
/// A managed map iterates its keys in UTF-8 byte order. Keys are at most
/// 400 bytes of UTF-8. Deleting an object that a map holds removes its entries.
public final class Map<Key: _TroveMapKey, Value: _TroveStorable>: Sequence, CustomStringConvertible {
    private var unmanaged: [(key: Key, value: Value)] = []
    private var ownership: CollectionOwnership
    private var owner: Object? { ownership.owner }
    private var column: Int { ownership.column }
    /// Set for a dictionary nested in a stored mixed value (then `Value` is ``Mixed``, `Key` `String`).
    private(set) var nested: NestedCollectionPlace?
    /// On a key-path probe's map: what every key reads.
    private var probe: Value?

    /// An empty, unmanaged map.
    public init() {
        ownership = CollectionOwnership()
    }

    init(owner: Object, column: Int) {
        ownership = CollectionOwnership(owner: owner, column: column)
    }

    init(nested: NestedCollectionPlace) {
        ownership = CollectionOwnership()
        self.nested = nested
    }

    private var place: CollectionPlace? { ownership.place }

    /// Makes this map, held in a legacy field of `object`, the managed
    /// map of its `column` (what it held unmanaged was stored already).
    func attach(to object: Object, column: Int) {
        unmanaged = .init()
        ownership.attach(to: object, column: column)
    }
    var managedOwner: Object? { owner }
    var managedColumn: Int { column }

    /// Whether the map belongs to a stored object.
    public var isManaged: Bool { ownership.isManaged || nested != nil }

    /// The number of entries. A managed map reads every entry to count them.
    public var count: Int {
        if let nested { return nested.entries().count }
        guard let place else { return unmanaged.count }
        return place.read { try place.database.collectionEntries(owner: place.key, column: column, table: place.table, $0).count }
    }

    /// Whether the map has no entries; as costly as ``count``.
    public var isEmpty: Bool { count == 0 }

    /// The value for a key; setting nil removes the entry.
    public subscript(key: Key) -> Value? {
        get {
            if let nested {
                let name = key._troveMapKey
                return nested.entries()[name].map { nested.mixed(at: .key(name), $0) as! Value }
            }
            guard let place else { return unmanaged.first { $0.key == key }?.value ?? probe }
            let stored = place.read {
                try place.database.mapValue(forKey: key._troveMapKey, owner: place.key, column: column, table: place.table, $0)
            }
            return stored.map { place.resolve([$0], as: Value.self)[0] }
        }
        set {
            if let nested {
                return nested.changeDictionary(newValue == nil ? "remove a value of" : "set a value of") { entries in
                    entries[key._troveMapKey] = try newValue.map { try nested.stored($0 as! Mixed) }
                }
            }
            guard let place else {
                unmanaged.removeAll { $0.key == key }
                if let newValue { unmanaged.append((key, newValue)) }
                return
            }
            place.change("set a value of") { state in
                try place.database.mapSet(
                    newValue.map { try place.stored($0) }, forKey: key._troveMapKey, owner: place.key, column: column,
                    table: place.table, state)
            }
        }
    }

    /// Removes a key; returns the value it had.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let old = self[key]
        self[key] = nil
        return old
    }

    /// Sets the value for `key`, adding the entry if it is new (Realm's name
    /// for the subscript's setter).
    ///
    /// ```swift
    /// try db.write { item.prices.updateValue(1200, forKey: "krw") }
    /// ```
    public func updateValue(_ value: Value, forKey key: Key) {
        self[key] = value
    }

    /// Removes the entry for `key`, if there is one (Realm's name for ``removeValue(forKey:)``).
    ///
    /// ```swift
    /// try db.write { item.prices.removeObject(for: "usd") }
    /// ```
    public func removeObject(for key: Key) {
        self[key] = nil
    }

    /// Adds the entries of `other`; where a key is in both, `combine` gets the
    /// current and the new value and returns the one to keep.
    ///
    /// ```swift
    /// try db.write { item.prices.merge(["krw": 1200, "eur": 1]) { _, new in new } }
    /// ```
    public func merge<S: Sequence>(_ other: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (key, value) in Array(other) {
            if let current = self[key] {
                self[key] = try combine(current, value)
            } else {
                self[key] = value
            }
        }
    }

    /// Adds the entries of a dictionary, as the sequence form of `merge(_:uniquingKeysWith:)` does.
    ///
    /// ```swift
    /// try db.write { item.prices.merge(["krw": 1200]) { current, _ in current } }
    /// ```
    public func merge(_ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// Adds the entries of another map, as the sequence form of `merge(_:uniquingKeysWith:)` does.
    ///
    /// ```swift
    /// try db.write { item.prices.merge(other.prices) { _, new in new } }
    /// ```
    public func merge(_ other: Map, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.entries(), uniquingKeysWith: combine)
    }

    /// Removes every entry.
    public func removeAll() {
        if let nested { return nested.changeDictionary("remove all of") { $0.removeAll() } }
        guard let place else { return unmanaged.removeAll() }
        place.change("remove all of") { state in
            try place.database.collectionRemoveAll(owner: place.key, column: column, table: place.table, state)
        }
    }

    /// The entries, in key order.
    public func entries() -> [(key: Key, value: Value)] {
        if let nested {
            return nested.entries().sorted { $0.key < $1.key }.map {
                (Key(_troveMapKey: $0.key), nested.mixed(at: .key($0.key), $0.value) as! Value)
            }
        }
        guard let place else { return unmanaged.sorted { $0.key < $1.key } }
        let stored = place.read { try place.database.collectionEntries(owner: place.key, column: column, table: place.table, $0) }
        let values = place.resolve(stored.map(\.value), as: Value.self)
        return zip(stored, values).map { (Key(_troveMapKey: String(decoding: $0.key, as: UTF8.self)), $1) }
    }

    /// The keys, in the order of ``entries()``: an array read now, so changing
    /// the map while looping over it is safe.
    ///
    /// ```swift
    /// try db.write {
    ///     for key in profile.links.keys where key.hasPrefix("old-") { profile.links[key] = nil }
    /// }
    /// ```
    public var keys: [Key] { entries().map(\.key) }
    /// The values, in the order of their keys.
    public var values: [Value] { entries().map(\.value) }

    /// Iterates the entries as `(key, value)` pairs in key order, as they were
    /// when the loop started.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> { entries().makeIterator() }

    /// The entries as text, as Realm prints a map:
    /// `Map<string, string> <0x…> (\n[blog]: https://example.com\n)`.
    public var description: String { _realmStyleDescription(depth: RealmStyleDescription.maxDepth) }
}

/// What `add` needs of an unmanaged map whose types it does not know.
protocol _TroveMapStorage {
    var _unmanagedEntries: [(key: String, value: Any)] { get }
    /// The type of a link's target, for maps of objects.
    static var _valueLinkTarget: Object.Type? { get }
    /// Sets `value` under `key` when it has (or converts to) the value type.
    func _setAny(_ value: Any?, forKey key: String) -> Bool
    func removeAll()
}

extension Map: _TroveMapStorage {
    var _unmanagedEntries: [(key: String, value: Any)] { entries().map { ($0.key._troveMapKey, $0.value as Any) } }
    static var _valueLinkTarget: Object.Type? { Value._troveLinkTarget }

    func _setAny(_ value: Any?, forKey key: String) -> Bool {
        guard let typed = Value._troveConvert(value) else { return false }
        self[Key(_troveMapKey: key)] = typed
        return true
    }
}

extension Map: _TroveStoredInitializable {
    public static var _troveType: PropertyType { Value._troveType }
    public static var _troveIsOptional: Bool { Value._troveIsOptional }
    public static var _troveDefault: Map { Map() }
    public convenience init(_troveStored: StoredValue) { self.init() }
    public var _troveStored: StoredValue { .null }
    public static var _troveLinkTarget: Object.Type? { Value._troveLinkTarget }
    public static var _troveCollection: CollectionKind? { .map }

    public static func _troveManagedGet(_ object: Object, column: Int) -> Map {
        Map(owner: object, column: column)
    }

    /// On a key-path probe: a map holding a probe of its object type under
    /// every key, so that `\.pets[""]??.name` reads on to the value's property.
    public static func _troveProbeGet(_ object: Object, column: Int) -> Map {
        _ = object._readColumn(column)
        let map = Map()
        if let target = Value._troveLinkTarget, let probe = object.linkProbe(target, column: column) as? Value {
            map.probe = probe
        }
        return map
    }

    public static func _troveManagedSet(_ value: Map, _ object: Object, column: Int) {
        let target = _troveManagedGet(object, column: column)
        if value.owner === object && value.column == target.column { return }
        let entries = value.entries()
        target.removeAll()
        for entry in entries { target[entry.key] = entry.value }
    }
}

extension Map: ValueResultsCollection {
    /// The values as live results in `order`; nil while unmanaged.
    package func valueResults(_ order: ValueOrder) -> Any? {
        guard nested == nil, let place else { return nil }
        return place.valueResults(Value.self, order: order, of: self)
    }
}

extension Map {
    /// The map's objects (nil values left out) as live ``Results`` in key
    /// order, for a map whose values are objects; nil while unmanaged.
    package func objectResults<Wrapped: Object>(_: Wrapped.Type) -> Results<Wrapped>? {
        guard nested == nil, let place else { return nil }
        return place.results(Wrapped.self)
    }
}
