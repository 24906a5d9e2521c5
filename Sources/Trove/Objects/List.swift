import Foundation

/// An ordered collection property of an ``Object``: values of any stored
/// type, or links to objects.
///
/// ```swift
/// final class ChatRoom: Object {
///     @Persisted(primaryKey: true) var id = ""
///     @Persisted var tags = List<String>()
///     @Persisted(deleteRule: .cascade) var messages = List<ChatMessage>()
/// }
///
/// try db.write {
///     room.messages.append(ChatMessage(text: "hi"))   // adds the message too
///     room.tags.insert("pinned", at: 0)
/// }
/// let recent = try room.messages.filter("sentAt > %@", yesterday).sorted(by: \.sentAt)
/// ```
///
/// On an unmanaged object a list is an ordinary array. On a managed object
/// it reads and writes the database: changes need a write transaction, and
/// appending to a list of any length writes one element.
public final class List<Element: _TroveStorable>: RandomAccessCollection, MutableCollection, RangeReplaceableCollection,
    CustomStringConvertible
{
    private var unmanaged: [Element]
    /// Set when the list belongs to a managed object.
    private var ownership: CollectionOwnership
    private var owner: Object? { ownership.owner }
    private var column: Int { ownership.column }
    /// Set for a list nested in a stored mixed value (then `Element` is ``Mixed``).
    private(set) var nested: NestedCollectionPlace?

    /// An empty, unmanaged list.
    public init() {
        unmanaged = []
        ownership = CollectionOwnership()
    }

    /// An unmanaged list holding `elements`.
    public convenience init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.init()
        unmanaged = Array(elements)
    }

    init(owner: Object, column: Int) {
        unmanaged = []
        ownership = CollectionOwnership(owner: owner, column: column)
    }

    init(nested: NestedCollectionPlace) {
        unmanaged = []
        ownership = CollectionOwnership()
        self.nested = nested
    }

    /// Whether the list belongs to a stored object.
    public var isManaged: Bool { ownership.isManaged || nested != nil }
    /// The object that owns the list, while it is managed (for layers built on Trove).
    package var managingObject: Object? { owner }

    private var place: CollectionPlace? { ownership.place }

    /// Makes this list, held in a legacy field of `object`, the managed
    /// list of its `column` (what it held unmanaged was stored already).
    func attach(to object: Object, column: Int) {
        unmanaged = .init()
        ownership.attach(to: object, column: column)
    }
    var managedOwner: Object? { owner }
    var managedColumn: Int { column }

    private func checkIndex(_ position: Int, _ count: Int, allowEnd: Bool = false) {
        precondition(
            position >= 0 && (position < count || (allowEnd && position == count)),
            "Trove: index \(position) is out of range for a List of \(count) elements")
    }

    // MARK: Collection

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }
    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of elements; on a managed list, one lookup whatever its length.
    public var count: Int {
        if let nested { return nested.elements().count }
        guard let place else { return unmanaged.count }
        return place.read { try place.database.listCount(owner: place.key, column: column, table: place.table, $0) }
    }

    /// The element at `position`; on a managed list, a read is one lookup and a
    /// write needs a write transaction. Traps when `position` is out of range.
    public subscript(position: Int) -> Element {
        get {
            if let nested {
                let elements = nested.elements()
                precondition(
                    elements.indices.contains(position), "Trove: index \(position) is out of range for \(nested.name)")
                return nested.mixed(at: .index(position), elements[position]) as! Element
            }
            guard let place else { return unmanaged[position] }
            let value = place.read {
                try place.database.listElement(owner: place.key, column: column, position: position, table: place.table, $0)
            }
            guard let value else {
                preconditionFailure("Trove: index \(position) is out of range for \(place.name)")
            }
            return place.resolve([value], as: Element.self)[0]
        }
        set {
            if let nested {
                return nested.changeList("replace an element of") { elements in
                    checkIndex(position, elements.count)
                    elements[position] = try nested.stored(newValue as! Mixed)
                }
            }
            guard let place else { return unmanaged[position] = newValue }
            place.change("replace an element of") { state in
                checkIndex(
                    position,
                    try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction))
                try place.database.listSet(
                    place.stored(newValue), at: position, owner: place.key, column: column, table: place.table, state)
            }
        }
    }

    /// Iterates the elements as they were when the loop started, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        array().makeIterator()
    }

    /// The elements as an array.
    public func array() -> [Element] {
        if let nested {
            return nested.elements().enumerated().map { nested.mixed(at: .index($0), $1) as! Element }
        }
        guard let place else { return unmanaged }
        let values = place.read { try place.database.listValues(owner: place.key, column: column, table: place.table, $0) }
        return place.resolve(values, as: Element.self)
    }

    /// The elements as text, as Realm prints a list (objects and nested
    /// collections five levels deep, the first 100 elements):
    /// `List<string> <0x…> (\n\t[0] pinned,\n\t[1] work\n)`.
    public var description: String { _realmStyleDescription(depth: RealmStyleDescription.maxDepth) }

    // MARK: Changing

    /// Adds an element at the end (an unmanaged object is added to the database).
    public func append(_ element: Element) {
        if let nested {
            return nested.changeList("append to") { $0.append(try nested.stored(element as! Mixed)) }
        }
        guard let place else { return unmanaged.append(element) }
        place.change("append to") { state in
            let end = try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction)
            try place.database.listInsert(
                place.stored(element), at: end, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Adds the elements of a sequence at the end.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// ``append(contentsOf:)`` under Realm's name, so moved code compiles as it is.
    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        append(contentsOf: elements)
    }

    /// Inserts an element at `position`, moving the later ones back.
    public func insert(_ element: Element, at position: Int) {
        if let nested {
            return nested.changeList("insert into") { elements in
                checkIndex(position, elements.count, allowEnd: true)
                elements.insert(try nested.stored(element as! Mixed), at: position)
            }
        }
        guard let place else { return unmanaged.insert(element, at: position) }
        place.change("insert into") { state in
            checkIndex(
                position, try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction),
                allowEnd: true)
            try place.database.listInsert(
                place.stored(element), at: position, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes the element at `position` (for a list of objects, the object stays stored).
    public func remove(at position: Int) {
        if let nested {
            return nested.changeList("remove from") { elements in
                checkIndex(position, elements.count)
                elements.remove(at: position)
            }
        }
        guard let place else {
            unmanaged.remove(at: position)
            return
        }
        place.change("remove from") { state in
            checkIndex(
                position, try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction))
            try place.database.listRemove(at: position, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes the last element.
    public func removeLast() {
        remove(at: count - 1)
    }

    /// Removes every element.
    public func removeAll() {
        if let nested { return nested.changeList("remove all of") { $0.removeAll() } }
        guard let place else { return unmanaged.removeAll() }
        place.change("remove all of") { state in
            try place.database.collectionRemoveAll(owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Moves the element at `source` to `destination` (its index afterwards).
    public func move(from source: Int, to destination: Int) {
        if let nested {
            return nested.changeList("move elements of") { elements in
                checkIndex(source, elements.count)
                checkIndex(destination, elements.count)
                elements.insert(elements.remove(at: source), at: destination)
            }
        }
        guard let place else {
            let element = unmanaged.remove(at: source)
            unmanaged.insert(element, at: destination)
            return
        }
        place.change("move elements of") { state in
            let count = try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction)
            checkIndex(source, count)
            checkIndex(destination, count)
            try place.database.listMove(
                from: source, to: destination, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes the elements at `offsets` (SwiftUI's `onDelete` hands them over).
    ///
    /// ```swift
    /// .onDelete { offsets in try? db.write { room.tags.remove(atOffsets: offsets) } }
    /// ```
    public func remove(atOffsets offsets: IndexSet) {
        for position in offsets.reversed() { remove(at: position) }
    }

    /// Moves the elements at `offsets` to just before `destination` (an index
    /// before the move), keeping their order, as SwiftUI's `onMove` describes it.
    ///
    /// ```swift
    /// .onMove { from, to in try? db.write { room.tags.move(fromOffsets: from, toOffset: to) } }
    /// ```
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        let moving = offsets.map { self[$0] }
        let before = offsets.count { $0 < destination }
        remove(atOffsets: offsets)
        for (index, element) in moving.enumerated() { insert(element, at: destination - before + index) }
    }

    /// Exchanges the elements at two positions (a list is a reference: no `var` needed).
    ///
    /// ```swift
    /// try db.write { room.tags.swapAt(0, 1) }
    /// ```
    public func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        let first = self[i]
        let second = self[j]
        replace(index: i, object: second)
        replace(index: j, object: first)
    }

    /// Replaces the elements in `subrange` with `newElements` (which may
    /// differ in number). Traps when `subrange` is not within the list.
    ///
    /// ```swift
    /// try db.write { room.tags.replaceSubrange(0..<2, with: ["pinned"]) }
    /// ```
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == Element {
        let count = self.count
        precondition(
            subrange.lowerBound >= 0 && subrange.upperBound <= count,
            "Trove: range \(subrange) is out of range for a List of \(count) elements")
        let replacements = Array(newElements)
        guard isManaged else { return unmanaged.replaceSubrange(subrange, with: replacements) }
        for position in subrange.reversed() { remove(at: position) }
        for (offset, element) in replacements.enumerated() { insert(element, at: subrange.lowerBound + offset) }
    }

    /// The elements in `bounds`; setting it replaces them, with as many
    /// elements as the new value has.
    ///
    /// ```swift
    /// try db.write { room.tags[1..<3] = ["a"] }
    /// ```
    public subscript(bounds: Range<Int>) -> Slice<List> {
        get { Slice(base: self, bounds: bounds) }
        set { replaceSubrange(bounds, with: Array(newValue)) }
    }

    /// Replaces the element at `index` (Realm's legacy name for the subscript setter).
    public func replace(index: Int, object: Element) {
        self[index] = object
    }

    /// Replaces the whole contents.
    public func replaceAll<S: Sequence>(with elements: S) where S.Element == Element {
        let newElements = Array(elements)
        removeAll()
        append(contentsOf: newElements)
    }
}

/// What `add` needs of an unmanaged list whose element type it does not know.
protocol _TroveListStorage {
    var _unmanagedElements: [Any] { get }
    /// The type of a link's target, for lists of objects.
    static var _elementLinkTarget: Object.Type? { get }
    /// Appends `element` when it has (or converts to) the element type.
    func _appendAny(_ element: Any) -> Bool
    func removeAll()
}

extension List: _TroveListStorage {
    var _unmanagedElements: [Any] { isManaged ? array().map { $0 as Any } : unmanaged.map { $0 as Any } }
    static var _elementLinkTarget: Object.Type? { Element._troveLinkTarget }

    func _appendAny(_ element: Any) -> Bool {
        guard let typed = Element._troveConvert(element) else { return false }
        append(typed)
        return true
    }
}

extension List: _TroveStoredInitializable {
    public static var _troveType: PropertyType { Element._troveType }
    public static var _troveIsOptional: Bool { Element._troveElementIsOptional }
    public static var _troveDefault: List { List() }
    public convenience init(_troveStored: StoredValue) { self.init() }
    public var _troveStored: StoredValue { .null }
    public static var _troveLinkTarget: Object.Type? { Element._troveLinkTarget }
    public static var _troveCollection: CollectionKind? { .list }

    public static func _troveManagedGet(_ object: Object, column: Int) -> List {
        List(owner: object, column: column)
    }

    /// On a key-path probe: a list holding a probe of its object type, so that
    /// `\.dogs[0].name` reads on to the element's property.
    public static func _troveProbeGet(_ object: Object, column: Int) -> List {
        _ = object._readColumn(column)
        guard let target = Element._troveLinkTarget, let probe = object.linkProbe(target, column: column) as? Element
        else { return List() }
        return List([probe])
    }

    public static func _troveManagedSet(_ value: List, _ object: Object, column: Int) {
        let target = _troveManagedGet(object, column: column)
        if value.owner === object && value.column == target.column { return }
        target.replaceAll(with: value.array())
    }
}

extension List {
    /// The list's objects as live ``Results`` when it holds objects and its
    /// owner is stored; nil for values and while unmanaged.
    package var objectResults: Results<Element>? {
        guard let objectType = Element.self as? Object.Type, let place else { return nil }
        return place.anyResults(of: objectType) as? Results<Element>
    }
}

extension List where Element: Object {
    /// The list's objects that match a predicate, as ``Results`` (in object order unless sorted).
    ///
    /// ```swift
    /// let unread = try room.messages.filter("isRead == false")
    /// ```
    public func filter(_ predicateFormat: String, _ arguments: Any?...) throws -> Results<Element> {
        try results().filter(predicateFormat, arguments: arguments)
    }

    /// The list's objects sorted by a property.
    public func sorted<V: _TroveStorable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        results().sorted(by: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by a property named in a string.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        results().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The sum of a numeric property over the list's objects (repeats count again), read
    /// in place without materializing objects.
    ///
    /// ```swift
    /// let total = person.friends.sum(of: \.age)
    /// ```
    public func sum<V: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, V>) -> V {
        guard place != nil else { return reduce(.zero) { $0 + $1[keyPath: keyPath] } }
        return results().sum(of: keyPath)
    }

    /// The sum of an optional numeric property over the list's objects, nil skipped.
    ///
    /// ```swift
    /// let owed = invoice.lines.sum(of: \.discount)   // discount: Int?
    /// ```
    public func sum<V: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, V?>) -> V {
        guard place != nil else { return reduce(.zero) { $0 + ($1[keyPath: keyPath] ?? .zero) } }
        return results().sum(of: keyPath)
    }

    /// The smallest value of a property among the list's objects; nil when
    /// empty. An unmanaged list's are read in memory, as all these aggregates.
    public func min<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? {
        guard place != nil else { return unmanagedExtreme(keyPath, largest: false) }
        return results().min(of: keyPath)
    }

    /// The largest value of a property among the list's objects; nil when empty.
    public func max<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? {
        guard place != nil else { return unmanagedExtreme(keyPath, largest: true) }
        return results().max(of: keyPath)
    }

    /// The mean of a numeric property over the list's objects; nil when empty.
    public func average<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> Double? {
        guard place != nil else {
            let numbers = compactMap { $0[keyPath: keyPath]._troveStored.numeric }
            return numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
        }
        return results().average(of: keyPath)
    }

    /// The smallest or largest value of a property among an unmanaged list's objects, nil skipped.
    private func unmanagedExtreme<V: _TroveStorable>(_ keyPath: KeyPath<Element, V>, largest: Bool) -> V? {
        ValueComparison.extreme(lazy.map { $0[keyPath: keyPath]._troveStored }, largest: largest).map(V._troveFromStored)
    }

    /// The list's objects as live ``Results`` (in list order, repeats included), to query, sort and aggregate.
    public func results() -> Results<Element> {
        guard let place else {
            preconditionFailure("Trove: only the list of a stored object can be queried; add its owner first")
        }
        return place.results(Element.self)
    }
}

extension List: ValueResultsCollection {
    /// The values as live results in `order`; nil while unmanaged.
    package func valueResults(_ order: ValueOrder) -> Any? {
        guard nested == nil, let place else { return nil }
        return place.valueResults(Element.self, order: order, of: self)
    }
}
