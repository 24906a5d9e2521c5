/// An unordered collection of distinct values (or objects) as a property of an ``Object``.
///
/// ```swift
/// final class Photo: Object {
///     @Persisted var tags = MutableSet<String>()
/// }
/// try db.write {
///     photo.tags.insert("beach")
///     photo.tags.formUnion(["sea", "beach"])   // "beach" once
/// }
/// photo.tags.contains("sea")   // one lookup, whatever the size
/// ```
///
/// A managed set iterates in value order (strings by their UTF-8 bytes,
/// numbers by value, objects by object key).
public final class MutableSet<Element: _TroveStorable & Hashable>: RandomAccessCollection, CustomStringConvertible {
    private var unmanaged: [Element] = []
    private var ownership: CollectionOwnership
    private var owner: Object? { ownership.owner }
    private var column: Int { ownership.column }

    /// An empty, unmanaged set.
    public init() {
        ownership = CollectionOwnership()
    }

    /// An unmanaged set holding the distinct elements of a sequence.
    public convenience init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.init()
        for element in elements where !unmanaged.contains(element) { unmanaged.append(element) }
    }

    init(owner: Object, column: Int) {
        ownership = CollectionOwnership(owner: owner, column: column)
    }

    private var place: CollectionPlace? { ownership.place }

    /// Makes this set, held in a legacy field of `object`, the managed
    /// set of its `column` (what it held unmanaged was stored already).
    func attach(to object: Object, column: Int) {
        unmanaged = .init()
        ownership.attach(to: object, column: column)
    }
    var managedOwner: Object? { owner }
    var managedColumn: Int { column }

    /// Whether the set belongs to a stored object.
    public var isManaged: Bool { ownership.isManaged }

    /// The number of elements. A managed set reads every element to count them.
    public var count: Int {
        guard let place else { return unmanaged.count }
        return place.read { try place.database.setCount(owner: place.key, column: column, table: place.table, $0) }
    }

    /// Whether the set has no elements; as costly as ``count``.
    public var isEmpty: Bool { count == 0 }

    /// Whether the set holds `element`. On a managed set this is one lookup,
    /// and an object of another handle, or a deleted one, is never in it.
    public func contains(_ element: Element) -> Bool {
        guard let place else { return unmanaged.contains(element) }
        if let object = element as? Object, object._database !== place.database || object.isInvalidated { return false }
        return place.read {
            try place.database.setContains(element._troveStored, owner: place.key, column: column, table: place.table, $0)
        }
    }

    /// The elements as an array, in the set's order.
    public func array() -> [Element] {
        guard let place else { return unmanaged }
        let values = place.read { try place.database.listValues(owner: place.key, column: column, table: place.table, $0) }
        return place.resolve(values, as: Element.self)
    }

    /// Iterates the elements in the set's order, as they were when the loop started.
    public func makeIterator() -> IndexingIterator<[Element]> { array().makeIterator() }

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }

    /// The element at `position` in the set's order (Realm's `set[0]`). A
    /// managed set reads its elements up to there; iterate to visit them all.
    ///
    /// ```swift
    /// let firstTag = photo.tags[0]
    /// ```
    public subscript(position: Int) -> Element {
        let elements = array()
        precondition(
            position >= 0 && position < elements.count,
            "Trove: index \(position) is out of range for a MutableSet of \(elements.count) elements")
        return elements[position]
    }

    /// The elements as text, as Realm prints a set:
    /// `MutableSet<string> <0x…> (\n\t[0] beach,\n\t[1] sea\n)`.
    public var description: String { _realmStyleDescription(depth: RealmStyleDescription.maxDepth) }

    /// Adds an element if it is not there (an unmanaged object is added to the database).
    public func insert(_ element: Element) {
        guard let place else {
            if !unmanaged.contains(element) { unmanaged.append(element) }
            return
        }
        place.change("insert into") { state in
            try place.database.setInsert(place.stored(element), owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes an element if it is there.
    public func remove(_ element: Element) {
        guard let place else {
            unmanaged.removeAll { $0 == element }
            return
        }
        if let object = element as? Object, !object.isManaged { return }
        place.change("remove from") { state in
            try place.database.setRemove(element._troveStored, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes every element.
    public func removeAll() {
        guard let place else { return unmanaged.removeAll() }
        place.change("remove all of") { state in
            try place.database.collectionRemoveAll(owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Adds every element of a sequence.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element {
        for element in other { insert(element) }
    }

    /// Adds every element of a sequence: ``formUnion(_:)`` under Realm's name.
    ///
    /// ```swift
    /// try db.write { photo.tags.insert(objectsIn: ["sea", "sun"]) }
    /// ```
    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        formUnion(elements)
    }

    /// Keeps only the elements that are also in `other`.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let keep = Array(other)
        for element in array() where !keep.contains(where: { Self.same($0, element) }) { remove(element) }
    }

    /// Removes the elements of `other`.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        for element in other { remove(element) }
    }

    /// Whether every element is also in `other`.
    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element {
        let superset = Array(other)
        return array().allSatisfy { element in superset.contains { Self.same($0, element) } }
    }

    /// Whether two elements are the same element of a set: the same stored
    /// object (or a mixed value holding it), else equal values.
    private static func same(_ a: Element, _ b: Element) -> Bool {
        switch Element._troveType {
        case .link:
            if let x = a as? Object, let y = b as? Object { return x.isSameStoredObject(as: y) }
        case .mixed:
            if case .object(let x)? = a as? Mixed, case .object(let y)? = b as? Mixed { return x.isSameStoredObject(as: y) }
        default: break
        }
        return a == b
    }

    /// Whether the sets share an element.
    public func intersects<S: Sequence>(_ other: S) -> Bool where S.Element == Element {
        other.contains { contains($0) }
    }
}

/// What `add` needs of an unmanaged set or list whose element type it does not know.
extension MutableSet: _TroveListStorage {
    var _unmanagedElements: [Any] { array().map { $0 as Any } }
    static var _elementLinkTarget: Object.Type? { Element._troveLinkTarget }

    func _appendAny(_ element: Any) -> Bool {
        guard let typed = Element._troveConvert(element) else { return false }
        insert(typed)
        return true
    }
}

extension MutableSet: _TroveStoredInitializable {
    public static var _troveType: PropertyType { Element._troveType }
    public static var _troveIsOptional: Bool { Element._troveElementIsOptional }
    public static var _troveDefault: MutableSet { MutableSet() }
    public convenience init(_troveStored: StoredValue) { self.init() }
    public var _troveStored: StoredValue { .null }
    public static var _troveLinkTarget: Object.Type? { Element._troveLinkTarget }
    public static var _troveCollection: CollectionKind? { .set }

    public static func _troveManagedGet(_ object: Object, column: Int) -> MutableSet {
        MutableSet(owner: object, column: column)
    }

    /// On a key-path probe: a set holding a probe of its object type (see ``List``'s).
    public static func _troveProbeGet(_ object: Object, column: Int) -> MutableSet {
        _ = object._readColumn(column)
        let set = MutableSet()
        if let target = Element._troveLinkTarget, let probe = object.linkProbe(target, column: column) as? Element {
            set.insert(probe)
        }
        return set
    }

    public static func _troveManagedSet(_ value: MutableSet, _ object: Object, column: Int) {
        let target = _troveManagedGet(object, column: column)
        if value.owner === object && value.column == target.column { return }
        let elements = value.array()
        target.removeAll()
        target.formUnion(elements)
    }
}

extension MutableSet {
    /// The set's objects as live ``Results`` when it holds objects and its
    /// owner is stored; nil for values and while unmanaged.
    package var objectResults: Results<Element>? {
        guard let objectType = Element.self as? Object.Type, let place else { return nil }
        return place.anyResults(of: objectType) as? Results<Element>
    }
}

extension MutableSet where Element: Object {
    /// The set's objects as live ``Results``, to query, sort and aggregate.
    public func results() -> Results<Element> {
        guard let place else { preconditionFailure("Trove: only the set of a stored object can be queried; add its owner first") }
        return place.results(Element.self)
    }

    /// The set's objects that match a predicate.
    public func filter(_ predicateFormat: String, _ arguments: Any?...) throws -> Results<Element> {
        try results().filter(predicateFormat, arguments: arguments)
    }
}

extension MutableSet: ValueResultsCollection {
    /// The values as live results in `order`; nil while unmanaged.
    package func valueResults(_ order: ValueOrder) -> Any? {
        guard let place else { return nil }
        return place.valueResults(Element.self, order: order, of: self)
    }
}
