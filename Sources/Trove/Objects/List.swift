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
public final class List<Element: _TroveStorable>: RandomAccessCollection, MutableCollection, CustomStringConvertible {
    private var unmanaged: [Element]
    /// Set when the list belongs to a managed object.
    private let owner: Object?
    private let column: Int

    /// An empty, unmanaged list.
    public init() {
        unmanaged = []
        owner = nil
        column = -1
    }

    /// An unmanaged list holding `elements`.
    public convenience init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.init()
        unmanaged = Array(elements)
    }

    init(owner: Object, column: Int) {
        unmanaged = []
        self.owner = owner
        self.column = column
    }

    /// Whether the list belongs to a stored object.
    public var isManaged: Bool { owner != nil }

    private struct Place {
        let database: Database
        let table: TableInfo
        let key: UInt64
    }

    private var place: Place? {
        guard let owner, let database = owner._database, let table = owner._table else { return nil }
        return Place(database: database, table: table, key: owner._objectKey)
    }

    private func read<R>(_ body: (Place) throws -> R) -> R {
        let place = place!
        do {
            return try body(place)
        } catch {
            fatalError("Trove: cannot read \(place.table.name).\(propertyName) from \(place.database.path): \(error)")
        }
    }

    private var propertyName: String { owner?._table?.schema.properties[column].name ?? "list" }

    /// Runs a change in the owner's write transaction; a failure is reported when the write commits.
    private func change(_ operation: String, _ body: (Place, WriteState) throws -> Void) {
        let place = place!
        guard let state = place.database.writeState else {
            fatalError(
                "Trove: cannot \(operation) \(place.table.name).\(propertyName) on a managed object outside a write transaction; wrap the change in `try db.write { ... }`"
            )
        }
        if state.deferredError != nil { return }
        do {
            try body(place, state)
        } catch {
            state.deferredError = error
        }
    }

    private func stored(_ element: Element, _ place: Place) throws -> StoredValue {
        if let object = element as? Object {
            let property = place.table.schema.properties[column]
            return .int(Int64(bitPattern: try place.database.linkKey(for: object, property: property, of: place.table)))
        }
        return element._troveStored
    }

    private func checkIndex(_ position: Int, _ count: Int, allowEnd: Bool = false) {
        precondition(
            position >= 0 && (position < count || (allowEnd && position == count)),
            "Trove: index \(position) is out of range for a List of \(count) elements")
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    public var count: Int {
        guard owner != nil else { return unmanaged.count }
        return read { try $0.database.listCount(owner: $0.key, column: column, table: $0.table, $0.database.readTransaction()) }
    }

    public subscript(position: Int) -> Element {
        get {
            guard owner != nil else { return unmanaged[position] }
            return read { place in
                guard
                    let value = try place.database.listElement(
                        owner: place.key, column: column, position: position, table: place.table,
                        place.database.readTransaction())
                else {
                    preconditionFailure("Trove: index \(position) is out of range for \(place.table.name).\(propertyName)")
                }
                return Element._troveResolve(value, in: place.database)
            }
        }
        set {
            guard owner != nil else { return unmanaged[position] = newValue }
            change("replace an element of") { place, state in
                checkIndex(
                    position,
                    try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction))
                try place.database.listSet(
                    stored(newValue, place), at: position, owner: place.key, column: column, table: place.table, state)
            }
        }
    }

    /// Iterates the elements as they were when the loop started, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        array().makeIterator()
    }

    /// The elements as an array.
    public func array() -> [Element] {
        guard owner != nil else { return unmanaged }
        return read { place in
            let database = place.database
            let values = try database.listValues(owner: place.key, column: column, table: place.table, database.readTransaction())
            guard let target = Element._troveLinkTarget else {
                return values.map { Element._troveResolve($0, in: database) }
            }
            // Objects: bind them all to one binding and read their records in one pass.
            let binding = try database.objectBinding(for: target)
            let objects = values.map { value -> Object in
                let object = binding.info.type.init()
                if case .int(let key) = value { object.bind(to: database, objectKey: UInt64(bitPattern: key), binding: binding) }
                return object
            }
            database.loadRecords(into: objects, table: binding.table)
            // Element is the object type here (a list of objects holds no optionals): same representation.
            return unsafeBitCast(objects, to: [Element].self)
        }
    }

    public var description: String { "List\(array())" }

    // MARK: Changing

    /// Adds an element at the end (an unmanaged object is added to the database).
    public func append(_ element: Element) {
        guard owner != nil else { return unmanaged.append(element) }
        change("append to") { place, state in
            let end = try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction)
            try place.database.listInsert(
                stored(element, place), at: end, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Adds the elements of a sequence at the end.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Inserts an element at `position`, moving the later ones back.
    public func insert(_ element: Element, at position: Int) {
        guard owner != nil else { return unmanaged.insert(element, at: position) }
        change("insert into") { place, state in
            checkIndex(
                position, try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction),
                allowEnd: true)
            try place.database.listInsert(
                stored(element, place), at: position, owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Removes the element at `position` (for a list of objects, the object stays stored).
    public func remove(at position: Int) {
        guard owner != nil else {
            unmanaged.remove(at: position)
            return
        }
        change("remove from") { place, state in
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
        guard owner != nil else { return unmanaged.removeAll() }
        change("remove all of") { place, state in
            try place.database.listRemoveAll(owner: place.key, column: column, table: place.table, state)
        }
    }

    /// Moves the element at `source` to `destination` (its index afterwards).
    public func move(from source: Int, to destination: Int) {
        guard owner != nil else {
            let element = unmanaged.remove(at: source)
            unmanaged.insert(element, at: destination)
            return
        }
        change("move elements of") { place, state in
            let count = try place.database.listCount(owner: place.key, column: column, table: place.table, state.transaction)
            checkIndex(source, count)
            checkIndex(destination, count)
            try place.database.listMove(
                from: source, to: destination, owner: place.key, column: column, table: place.table, state)
        }
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
}

extension List: _TroveListStorage {
    var _unmanagedElements: [Any] { owner == nil ? unmanaged.map { $0 as Any } : array().map { $0 as Any } }
}

extension List: _TroveStorable {
    public static var _troveType: PropertyType { Element._troveType }
    public static var _troveIsOptional: Bool { Element._troveIsOptional }
    public static var _troveDefault: List { List() }
    public convenience init(_troveStored: StoredValue) { self.init() }
    public var _troveStored: StoredValue { .null }
    public static var _troveLinkTarget: Object.Type? { Element._troveLinkTarget }
    public static var _troveCollection: CollectionKind? { .list }

    public static func _troveManagedGet(_ object: Object, _ storage: AnyKeyPath) -> List {
        List(owner: object, column: object._binding.unsafelyUnwrapped.column(for: storage))
    }

    public static func _troveManagedSet(_ value: List, _ object: Object, _ storage: AnyKeyPath) {
        let target = _troveManagedGet(object, storage)
        if value.owner === object && value.column == target.column { return }
        target.replaceAll(with: value.array())
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
        results().sum(of: keyPath)
    }

    /// The smallest value of a property among the list's objects; nil when empty.
    public func min<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? { results().min(of: keyPath) }

    /// The largest value of a property among the list's objects; nil when empty.
    public func max<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? { results().max(of: keyPath) }

    /// The mean of a numeric property over the list's objects; nil when empty.
    public func average<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> Double? { results().average(of: keyPath) }

    /// The list's objects as live ``Results`` (in list order, repeats included), to query, sort and aggregate.
    public func results() -> Results<Element> {
        guard let place else {
            preconditionFailure("Trove: only the list of a stored object can be queried; add its owner first")
        }
        let binding = place.database.objectBindingOrTrap(for: Element.self)
        let column = self.column
        let table = place.table
        let database = place.database
        let owner = place.key
        return Results(
            database: database, source: .object(binding),
            predicate: .objectKeys { transaction in
                try database.listValues(owner: owner, column: column, table: table, transaction).compactMap {
                    if case .int(let key) = $0 { return UInt64(bitPattern: key) }
                    return nil
                }
            })
    }
}
