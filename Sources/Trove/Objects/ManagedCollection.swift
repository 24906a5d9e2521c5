/// What ``List``, ``MutableSet`` and ``Map`` share as properties of an
/// object: the object and column they belong to while it is managed.
protocol ManagedCollection: AnyObject {
    var managedOwner: Object? { get }
    var managedColumn: Int { get }
    /// The elements (a map's as key-value pairs) while unmanaged.
    var unmanagedElements: [Any] { get }
    /// Makes the collection, held in a field of `object`, the managed one of its `column`.
    func attach(to object: Object, column: Int)
    /// An empty, unmanaged collection.
    init()
    /// Whether the collection belongs to a stored object.
    var isManaged: Bool { get }
    /// Once `object` is stored: the collection in its `@Persisted` field at
    /// `field` becomes the managed one of `column` when someone else holds it
    /// (so it stays the same instance, as in Realm); else the field takes a
    /// new empty one (attaching costs a weak reference to the object).
    static func releaseField(at field: UnsafeMutableRawPointer, of object: Object, column: Int)
}

extension ManagedCollection {
    static func releaseField(at field: UnsafeMutableRawPointer, of object: Object, column: Int) {
        let slot = field.assumingMemoryBound(to: Self.self)
        if isKnownUniquelyReferenced(&slot.pointee) {
            slot.pointee = Self()
        } else {
            slot.pointee.attach(to: object, column: column)
        }
    }
}

extension ManagedCollection {
    /// The handle of the owning object, or nil while unmanaged.
    var owningDatabase: Database? { managedOwner?.database }

    /// Whether the owning object was deleted, so the collection cannot be read.
    var ownerIsInvalidated: Bool { managedOwner?.isInvalidated ?? false }

    /// The same collection: the same instance, the same property of the same
    /// stored object, or two unmanaged collections holding the same elements
    /// (objects by identity), as Realm compares them.
    func isSameCollection(as other: any ManagedCollection) -> Bool {
        if self === other { return true }
        guard let owner = managedOwner, let otherOwner = other.managedOwner else {
            guard managedOwner == nil, other.managedOwner == nil else { return false }
            return Self.sameElements(unmanagedElements, other.unmanagedElements)
        }
        return owner.isSameStoredObject(as: otherOwner) && managedColumn == other.managedColumn
    }

    private static func sameElements(_ a: [Any], _ b: [Any]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            if let x = x as? Object, let y = y as? Object { return x === y }
            guard let x = StoredValue(any: x), let y = StoredValue(any: y) else { return false }
            return x == y
        }
    }
}

extension List: ManagedCollection, Equatable {
    var unmanagedElements: [Any] { _unmanagedElements }

    /// The database handle of the object that owns the list; nil while unmanaged.
    ///
    /// ```swift
    /// let db = room.messages.database
    /// ```
    public var database: Database? { nested?.database ?? owningDatabase }

    /// True once the object owning the list was deleted; the list can then no longer be read.
    ///
    /// ```swift
    /// if !room.messages.isInvalidated { print(room.messages.count) }
    /// ```
    public var isInvalidated: Bool { nested.map { !$0.isValid } ?? ownerIsInvalidated }

    /// Two lists are equal when they are the same instance, or the same
    /// property of the same stored object (not when their elements are equal;
    /// compare `Array(a) == Array(b)` for that).
    public static func == (lhs: List, rhs: List) -> Bool {
        if lhs.nested != nil || rhs.nested != nil { return lhs.nested == rhs.nested }
        return lhs.isSameCollection(as: rhs)
    }
}

extension MutableSet: ManagedCollection, Equatable {
    /// In a set's order of its stored forms, so two sets of the same members compare equal.
    var unmanagedElements: [Any] {
        _unmanagedElements.sorted { "\(StoredValue(any: $0) ?? .null)" < "\(StoredValue(any: $1) ?? .null)" }
    }

    /// The database handle of the object that owns the set; nil while unmanaged.
    ///
    /// ```swift
    /// let db = photo.tags.database
    /// ```
    public var database: Database? { owningDatabase }

    /// True once the object owning the set was deleted.
    ///
    /// ```swift
    /// if !photo.tags.isInvalidated { print(photo.tags.count) }
    /// ```
    public var isInvalidated: Bool { ownerIsInvalidated }

    /// Two sets are equal when they are the same instance, or the same
    /// property of the same stored object.
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool { lhs.isSameCollection(as: rhs) }
}

extension Map: ManagedCollection, Equatable {
    var unmanagedElements: [Any] { _unmanagedEntries.sorted { $0.key < $1.key }.flatMap { [$0.key as Any, $0.value] } }

    /// The database handle of the object that owns the map; nil while unmanaged.
    ///
    /// ```swift
    /// let db = item.prices.database
    /// ```
    public var database: Database? { nested?.database ?? owningDatabase }

    /// True once the object owning the map was deleted.
    ///
    /// ```swift
    /// if !item.prices.isInvalidated { print(item.prices.count) }
    /// ```
    public var isInvalidated: Bool { nested.map { !$0.isValid } ?? ownerIsInvalidated }

    /// Two maps are equal when they are the same instance, or the same
    /// property of the same stored object.
    public static func == (lhs: Map, rhs: Map) -> Bool {
        if lhs.nested != nil || rhs.nested != nil { return lhs.nested == rhs.nested }
        return lhs.isSameCollection(as: rhs)
    }
}

extension List {
    /// The list the field holds when it was attached there as its object was
    /// added; else (a fetched object, or another object's list the field was
    /// given) a list of the object's column. A fetched object does not keep
    /// the list it hands out: holding it would need a weak reference back to
    /// the object, which costs a side allocation per object read.
    public static func _troveManagedGet(_ object: Object, column: Int, held: List) -> List {
        held.handedOut(by: object, column: column) ? held : List(owner: object, column: column)
    }
}

extension MutableSet {
    /// The set the field holds once its object is stored (see `List`'s).
    public static func _troveManagedGet(_ object: Object, column: Int, held: MutableSet) -> MutableSet {
        held.handedOut(by: object, column: column) ? held : MutableSet(owner: object, column: column)
    }
}

extension Map {
    /// The map the field holds once its object is stored (see `List`'s).
    public static func _troveManagedGet(_ object: Object, column: Int, held: Map) -> Map {
        held.handedOut(by: object, column: column) ? held : Map(owner: object, column: column)
    }
}

extension ManagedCollection {
    /// Whether `object`'s field holding this collection can hand it out as the
    /// managed collection of `column`: it was attached there.
    fileprivate func handedOut(by object: Object, column: Int) -> Bool {
        isManaged && managedOwner === object && managedColumn == column
    }
}
