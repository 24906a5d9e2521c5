import TroveStorage

/// What a ``Results`` observer receives.
public enum ResultsChange<Element> {
    /// The results when observation starts.
    case initial(Results<Element>)
    /// The results after a commit, with what changed: `deletions` are indices
    /// in the previous results, `insertions` and `modifications` indices in
    /// these. An object whose position changed is deleted and inserted.
    case update(Results<Element>, deletions: [Int], insertions: [Int], modifications: [Int])
    /// The results can no longer be computed (the file failed); no more changes follow.
    case error(any Error)
}

/// What an ``Object`` observer receives.
public enum ObjectChange<T> {
    /// Properties changed (only those observed, when key paths were given).
    case change(T, [PropertyChange])
    /// The object was deleted; no more changes follow.
    case deleted
    /// The object can no longer be read; no more changes follow.
    case error(any Error)
}

/// One changed property of an observed object.
public struct PropertyChange: Sendable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The stored value before and after.
    public let oldStoredValue: StoredValue
    /// The stored value after the change.
    public let newStoredValue: StoredValue

    /// The values as Swift values (`String`, `Int`, `Date`, ..., nil), as Realm hands them out.
    public var oldValue: Any? { Self.swiftValue(oldStoredValue) }
    /// ``newStoredValue`` as a Swift value, nil for null.
    public var newValue: Any? { Self.swiftValue(newStoredValue) }

    /// An integer as `Int` (what integer properties read as), anything else as it is stored.
    private static func swiftValue(_ value: StoredValue) -> Any? {
        if case .int(let integer) = value { return Int(integer) }
        return value.swiftValue
    }

    /// A change of `name` from one stored value to another.
    package init(name: String, oldStoredValue: StoredValue, newStoredValue: StoredValue) {
        self.name = name
        self.oldStoredValue = oldStoredValue
        self.newStoredValue = newStoredValue
    }

    /// The change without its old value (Realm gives none to an observer
    /// on the thread that made the change).
    package var withoutOldValue: PropertyChange {
        PropertyChange(name: name, oldStoredValue: .null, newStoredValue: newStoredValue)
    }

    /// The property's name with its old and new values: `memo: "cat" -> "dog"`.
    public var description: String { "\(name): \(oldStoredValue) -> \(newStoredValue)" }
}

extension StoredValue {
    /// The value as the Swift type it stores (nil for null).
    public var swiftValue: Any? {
        switch self {
        case .null: return nil
        case .bool(let v): return v
        case .int(let v): return v
        case .float(let v): return v
        case .double(let v): return v
        case .string(let v): return v
        case .data(let v): return v
        case .date(let v): return v
        case .uuid(let v): return v
        case .decimal(let v): return v
        case .objectId(let v): return v
        case .decimal128(let v): return v
        case .object(let typeName, let key): return "\(typeName)#\(key)"
        case .list(let v): return v.map(\.swiftValue)
        case .dictionary(let v): return v.mapValues(\.swiftValue)
        }
    }
}

extension Database {
    /// Calls `block` after every commit this handle sees (its own, even one
    /// that changed nothing, and others' once it refreshes), with the handle.
    ///
    /// ```swift
    /// let token = db.observe { db in print("now \(db.objects(PhotoData.self).count) photos") }
    /// ```
    public func observe(_ block: @escaping (Database) -> Void) -> NotificationToken {
        addObserver(DatabaseObserver(block))
    }

    /// Runs a write whose commit does not notify the given observers (a UI's
    /// own edit should not bounce back to it); they still see the new state.
    ///
    /// ```swift
    /// try db.write(withoutNotifying: [token]) { photo.memo = text }
    /// ```
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws -> Result {
        try beginWrite()
        if !tokens.isEmpty { writeState?.silenced = Set(tokens.map(\.id)) }
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite() }
        return result
    }

    /// Commits the open write transaction without notifying the given
    /// observers (see ``write(withoutNotifying:_:)``).
    ///
    /// ```swift
    /// try db.beginWrite()
    /// photo.memo = text
    /// try db.commitWrite(withoutNotifying: [token])
    /// ```
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        if !tokens.isEmpty { writeState?.silenced.formUnion(tokens.map(\.id)) }
        try commitWrite()
    }

    func addObserver(_ observer: any ChangeObserver) -> NotificationToken {
        // The first observer starts from the snapshot the handle shows now: a
        // refresh that finds no new commit must not call anyone.
        if observers.isEmpty, writeState == nil { deliveredTransaction = readTransaction().id }
        nextObserverID += 1
        observers[nextObserverID] = observer
        return NotificationToken(id: nextObserverID, database: self)
    }

    func removeObserver(_ id: Int) {
        observers[id] = nil
    }

    /// Brings every observer up to date with the handle's current snapshot,
    /// once per new snapshot, and calls back those not silenced. `previous`
    /// is the snapshot they last saw, when the handle kept it open.
    func deliverChanges(skipping silenced: Set<Int> = [], previous: ReadTransaction? = nil) {
        guard !observers.isEmpty, writeState == nil else { return }
        let current = readTransaction()
        let snapshot = current.id
        guard snapshot != deliveredTransaction else {
            // A write that changed nothing leaves the snapshot where it was; the
            // handle's own commit still tells its database observers, as Realm's does.
            if isDeliveringOwnCommit {
                for id in observers.keys.sorted() where !silenced.contains(id) {
                    (observers[id] as? DatabaseObserver)?.update(in: self, notify: true)
                }
            }
            return
        }
        let kept = previous.flatMap { !$0.isParked && $0.id == deliveredTransaction ? $0 : nil }
        delivery = Delivery(
            previous: kept,
            changes: kept == nil ? nil : ChangeLog.changes(after: deliveredTransaction, through: snapshot, in: current))
        defer { delivery = nil }
        deliveredTransaction = snapshot
        // In registration order; an observer may register or remove others while called.
        for id in observers.keys.sorted() {
            guard let observer = observers[id] else { continue }
            observer.update(in: self, notify: !silenced.contains(id))
        }
    }
}

final class DatabaseObserver: ChangeObserver {
    let block: (Database) -> Void

    init(_ block: @escaping (Database) -> Void) {
        self.block = block
    }

    func update(in database: Database, notify: Bool) {
        if notify { block(database) }
    }
}

/// Keeps the last values of one object and reports the properties that
/// changed: a value in the record by its old and new value; a collection, an
/// inverse link or a path through links by a fingerprint of what it reaches
/// (reported with null values).
final class ObjectObserver<T: Object>: ChangeObserver {
    let object: T
    /// The observed properties, grouped by the object's property they start
    /// with; nil: every property but inverse links.
    let paths: [Int: [ObservedPath]]?
    let block: (ObjectChange<T>) -> Void
    var values: [StoredValue] = []
    var prints: [Int: Int] = [:]
    var finished = false

    init(object: T, paths: [ObservedPath]?, block: @escaping (ObjectChange<T>) -> Void) {
        self.object = object
        self.paths = paths.map { Dictionary(grouping: $0, by: \.column) }
        self.block = block
    }

    /// The record's values, and a fingerprint per observed property that is not one of them.
    func read(_ database: Database) throws -> (values: [StoredValue], prints: [Int: Int])? {
        guard let table = object._table else { return nil }
        let transaction = database.readTransaction()
        guard table.store.isVisible(in: transaction) else { return nil }
        let key = object._objectKey
        return try table.store.withRecord(key, in: transaction) { record in
            guard let record else { return nil }
            let values = record.allValues()
            var prints: [Int: Int] = [:]
            if let paths {
                for (column, group) in paths where !(group.count == 1 && group[0].isPlain) {
                    var hasher = Hasher()
                    for path in group {
                        try database.hashPath(path.steps[...], key: key, record: record, into: &hasher, transaction)
                    }
                    prints[column] = hasher.finalize()
                }
            } else {
                for (column, property) in table.schema.properties.enumerated()
                where !table.layout.inRecord[column] && property.collection != .linkingObjects {
                    var hasher = Hasher()
                    try database.hashPath(
                        [ObservedPath.Step(table: table, column: column)], key: key, record: record, into: &hasher, transaction)
                    prints[column] = hasher.finalize()
                }
            }
            return (values, prints)
        }
    }

    func start(_ database: Database) {
        guard let current = try? read(database) else { return }
        (values, prints) = current
    }

    /// The types besides the object's whose changes its observed paths reach.
    private lazy var reachedTypes: Set<String> = ObservedPath.reachedTypes(
        paths.map { $0.values.flatMap { $0 } } ?? [], excluding: object._table?.name)

    func update(in database: Database, notify: Bool) {
        guard !finished, let table = object._table else { return }
        // Commits that wrote neither the object nor what its paths reach change nothing here.
        if let changes = database.delivery?.changes,
            !changes.mayHaveChanged(object._objectKey, of: table.name, orAnyOf: reachedTypes)
        {
            return
        }
        do {
            guard let current = try read(database) else {
                finished = true
                if notify { block(.deleted) }
                return
            }
            var changes: [PropertyChange] = []
            let columns = paths.map { $0.keys.sorted() } ?? Array(table.schema.properties.indices)
            for column in columns {
                let property = table.schema.properties[column]
                if let print = current.prints[column] {
                    guard prints[column] != print else { continue }
                    changes.append(PropertyChange(name: property.name, oldStoredValue: .null, newStoredValue: .null))
                } else if table.layout.inRecord[column] {
                    let old = column < values.count ? values[column] : table.layout.fallbacks[column]
                    guard old != current.values[column] else { continue }
                    changes.append(
                        PropertyChange(
                            name: property.name, oldStoredValue: shown(old, of: property),
                            newStoredValue: shown(current.values[column], of: property)))
                }
            }
            (values, prints) = current
            if notify, !changes.isEmpty { block(.change(object, changes)) }
        } catch {
            finished = true
            if notify { block(.error(error)) }
        }
    }

    /// A link's value as the object it points at, not its key.
    private func shown(_ value: StoredValue, of property: PropertySchema) -> StoredValue {
        guard property.isLink, case .int(let key) = value else { return value }
        return .object(typeName: property.objectType ?? "", key: UInt64(bitPattern: key))
    }
}

extension Results {
    /// Calls `block` now with `.initial`, then after every commit this handle
    /// sees that changes the results: which objects left (indices in the old
    /// results), arrived and changed (indices in the new ones) — what
    /// `UICollectionView.performBatchUpdates` needs.
    ///
    /// ```swift
    /// let token = photos.observe { change in
    ///     switch change {
    ///     case .initial(let photos): show(photos)
    ///     case .update(_, let deletions, let insertions, let modifications):
    ///         collectionView.performBatchUpdates { ... }
    ///     case .error(let error): print(error)
    ///     }
    /// }
    /// ```
    ///
    /// `keyPaths` limits which property changes count as modifications.
    /// Changes of other handles arrive when this handle refreshes (``Database/refresh()``).
    /// Keep the token; releasing it stops the notifications.
    public func observe(keyPaths: [PartialKeyPath<Element>]? = nil, _ block: @escaping (ResultsChange<Element>) -> Void)
        -> NotificationToken
    {
        let paths = keyPaths.map { keyPaths in
            keyPaths.map { keyPath in
                let path = source.path(for: keyPath)
                do {
                    return try ObservedPath(path, in: table, database: database)
                } catch {
                    preconditionFailure("Trove: cannot observe \(keyPath): \((error as? TroveError)?.message ?? "\(error)")")
                }
            }
        }
        return observe(paths: paths, block)
    }

    /// ``observe(keyPaths:_:)`` with the properties named as strings; a name
    /// may follow links, lists of links and inverse links (`"owner.name"`):
    /// a change anywhere along the path is a modification of the object.
    ///
    /// ```swift
    /// let token = try photos.observe(properties: ["memo", "album.title"]) { change in … }
    /// ```
    public func observe(properties: [String], _ block: @escaping (ResultsChange<Element>) -> Void) throws
        -> NotificationToken
    {
        let paths = try properties.map { try ObservedPath($0, in: table, database: database) }
        return observe(paths: paths, block)
    }

    private func observe(paths: [ObservedPath]?, _ block: @escaping (ResultsChange<Element>) -> Void) -> NotificationToken {
        let observer = ResultsObserver(results: self, paths: paths, block: block)
        observer.start(database)
        return database.addObserver(observer)
    }
}

/// The types ``Object``'s observation methods are declared for, so that
/// `photo.observe(keyPaths: [\.memo]) { change in … }` reads `\.memo` and
/// `change` in the object's own type (as Realm's do). Every ``Object``
/// conforms; there is nothing to implement.
public protocol _ObservableObject: AnyObject {}

extension Object: _ObservableObject {}

extension _ObservableObject where Self: Object {
    /// Observes this managed object: `.change` with the properties that
    /// changed (old and new values) after each commit this handle sees,
    /// `.deleted` once it is deleted. With `keyPaths`, only changes of those
    /// properties are delivered; a key path may read through a link
    /// (`\.album?.title`), and then a change of the link or of what it reaches
    /// is a change of the link property (with null old and new values, as for
    /// a change of a list, set or map).
    ///
    /// ```swift
    /// let token = photo.observe(keyPaths: [\.memo]) { change in
    ///     if case .change(let photo, _) = change { memoLabel.text = photo.memo }
    /// }
    /// ```
    ///
    /// Keep the token; releasing it stops the notifications.
    public func observe(keyPaths: [PartialKeyPath<Self>]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        let binding = observedBinding()
        let paths = keyPaths.map { keyPaths in
            keyPaths.map { keyPath in
                guard let path = binding.path(forKeyPath: keyPath) else {
                    preconditionFailure("Trove: \(keyPath) is not a persisted property of \(type(of: self))")
                }
                return observedPath(path, binding)
            }
        }
        return startObserving(paths: paths, block)
    }

    /// ``observe(keyPaths:_:)`` with the properties named as strings
    /// (Realm's `observe(keyPaths: ["memo"])`); a name may follow links,
    /// lists of links and inverse links (`"album.title"`, `"owners.name"`). A
    /// name the type does not have is a programmer error: it traps, naming
    /// the type's properties.
    ///
    /// ```swift
    /// let token = photo.observe(keyPaths: ["memo", "album.title"]) { change in … }
    /// ```
    public func observe(keyPaths names: [String], _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let binding = observedBinding()
        return startObserving(paths: names.map { observedPath($0, binding) }, block)
    }

    private func observedPath(_ name: String, _ binding: ObjectBinding) -> ObservedPath {
        do {
            return try ObservedPath(name, in: binding.table, database: _database!)
        } catch {
            preconditionFailure(
                "Trove: observe(keyPaths:) names '\(name)': \((error as? TroveError)?.message ?? "\(error)"); the properties of \(type(of: self)) are \(binding.table.schema.properties.map(\.name).joined(separator: ", "))"
            )
        }
    }

    /// `observe(keyPaths:_:)` as an async sequence; it finishes after `.deleted`.
    ///
    /// ```swift
    /// for await event in photo.changes(keyPaths: [\.memo]) { … }
    /// ```
    public func changes(keyPaths: [PartialKeyPath<Self>]? = nil) -> AsyncStream<ObjectChangeEvent> {
        ChangeStream.make { continuation in
            observe(keyPaths: keyPaths) { change in
                switch change {
                case .change(_, let properties): continuation.yield(.change(properties))
                case .deleted:
                    continuation.yield(.deleted)
                    continuation.finish()
                case .error(let error):
                    continuation.yield(.error(TroveError.wrapping(error)))
                    continuation.finish()
                }
            }
        }
    }

    private func observedBinding() -> ObjectBinding {
        guard _database != nil, let binding = _binding else {
            preconditionFailure("Trove: only a managed \(type(of: self)) can be observed; add it to a database first")
        }
        return binding
    }

    private func startObserving(paths: [ObservedPath]?, _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        let database = _database!
        let observer = ObjectObserver(object: self, paths: paths, block: block)
        observer.start(database)
        return database.addObserver(observer)
    }
}

/// Observes one list, set or map of one object: the elements are diffed by
/// position-independent identities (a value and which occurrence of it it
/// is; for objects, their key and a fingerprint of their record).
final class CollectionObserver: ChangeObserver {
    let owner: Object
    let column: Int
    let block: (CollectionChangeSet) -> Void
    var identities: [UInt64] = []
    var prints: [UInt64: Int] = [:]
    var finished = false

    /// For a collection of objects: the properties of the objects that count
    /// as a modification (through links, too); nil: any property in the record.
    let paths: [ObservedPath]?

    init(owner: Object, column: Int, paths: [ObservedPath]? = nil, block: @escaping (CollectionChangeSet) -> Void) {
        self.owner = owner
        self.column = column
        self.paths = paths
        self.block = block
    }

    func snapshot(_ database: Database) throws -> (identities: [UInt64], prints: [UInt64: Int])? {
        guard let table = owner._table, try database.fetchRecord(owner._objectKey, table: table) != nil else { return nil }
        let transaction = database.readTransaction()
        let entries = try database.collectionEntries(owner: owner._objectKey, column: column, table: table, transaction)
        let property = table.schema.properties[column]
        let target = property.isLink ? try database.tableInfo(named: property.objectType ?? "") : nil
        var occurrences: [Int: Int] = [:]
        var identities: [UInt64] = []
        var prints: [UInt64: Int] = [:]
        for entry in entries {
            // A map entry is its key; a list or set element its value, and which occurrence of it.
            var hasher = Hasher()
            if property.collection == .map { hasher.combine(entry.key) } else { hasher.combine(entry.value) }
            let base = hasher.finalize()
            let occurrence = occurrences[base, default: 0]
            occurrences[base] = occurrence + 1
            var identityHasher = Hasher()
            identityHasher.combine(base)
            identityHasher.combine(occurrence)
            let identity = UInt64(bitPattern: Int64(identityHasher.finalize()))
            identities.append(identity)
            var print = Hasher()
            print.combine(entry.value)
            if let target, case .int(let key) = entry.value {
                if let paths {
                    for path in paths {
                        try database.hashPath(
                            path.steps[...], key: UInt64(bitPattern: key), record: nil, into: &print, transaction)
                    }
                } else if let record = try database.fetchRecord(UInt64(bitPattern: key), table: target) {
                    print.combine(record)
                }
            }
            prints[identity] = print.finalize()
        }
        return (identities, prints)
    }

    func start(_ database: Database) {
        do {
            guard let (identities, prints) = try snapshot(database) else { return }
            (self.identities, self.prints) = (identities, prints)
            block(CollectionChangeSet(isInitial: true))
        } catch {
            finished = true
            block(CollectionChangeSet(error: TroveError.wrapping(error)))
        }
    }

    /// The types besides the owner's whose changes the elements reach.
    private lazy var reachedTypes: Set<String> = {
        guard let table = owner._table else { return [] }
        var types = ObservedPath.reachedTypes(paths ?? [], excluding: nil)
        if let target = table.schema.properties[column].objectType { types.insert(target) }
        return types
    }()

    func update(in database: Database, notify: Bool) {
        guard !finished else { return }
        // Commits that wrote neither the owner nor the elements' types change nothing here.
        if let changes = database.delivery?.changes, let table = owner._table,
            !changes.mayHaveChanged(owner._objectKey, of: table.name, orAnyOf: reachedTypes)
        {
            return
        }
        do {
            // The owner was deleted: the collection is empty now, and for good.
            let current = try snapshot(database) ?? ([], [:])
            let oldPrints = prints
            let changes = ChangeSet.between(identities, current.identities) { oldPrints[$0] != current.prints[$0] }
            (identities, prints) = current
            if notify, !changes.isEmpty {
                block(
                    CollectionChangeSet(
                        deletions: changes.deletions, insertions: changes.insertions, modifications: changes.modifications))
            }
        } catch {
            finished = true
            if notify { block(CollectionChangeSet(error: TroveError.wrapping(error))) }
        }
    }
}

extension CollectionPlace {
    func observe(owner: Object, paths: [ObservedPath]? = nil, _ block: @escaping (CollectionChangeSet) -> Void)
        -> NotificationToken
    {
        let observer = CollectionObserver(owner: owner, column: column, paths: paths, block: block)
        observer.start(database)
        return database.addObserver(observer)
    }

    /// Resolves property names of the collection's objects (`"title"`, `"album.name"`).
    func elementPaths(_ names: [String]) throws -> [ObservedPath] {
        let property = table.schema.properties[column]
        guard property.type == .link, let target = property.objectType else {
            throw TroveError(
                .invalidProperty,
                "\(table.name).\(property.name) holds \(property.typeDescription), not objects: it has no properties to observe")
        }
        let targetTable = try database.tableInfo(named: target)
        return try names.map { try ObservedPath($0, in: targetTable, database: database) }
    }
}

extension ManagedCollection {
    func observeElements(properties: [String], _ block: @escaping (CollectionChangeSet) -> Void) throws
        -> NotificationToken
    {
        guard let owner = managedOwner, let place = CollectionPlace(owner: owner, column: managedColumn) else {
            preconditionFailure("Trove: only a collection of a stored object can be observed; add its owner first")
        }
        return place.observe(owner: owner, paths: try place.elementPaths(properties), block)
    }
}

extension List where Element: Object {
    /// Observes the list, counting only changes of the named properties of
    /// its objects (and of what they reach through links) as modifications:
    /// `observe(properties: ["title"])` ignores an edit of any other property.
    /// Adding, removing and moving elements is always reported.
    ///
    /// ```swift
    /// let token = try album.tracks.observe(properties: ["title"]) { change in … }
    /// ```
    public func observe(properties: [String], _ block: @escaping (CollectionChangeSet) -> Void) throws
        -> NotificationToken
    {
        try observeElements(properties: properties, block)
    }
}

extension MutableSet where Element: Object {
    /// Observes the set, counting only changes of the named properties of its
    /// objects as modifications. See ``List/observe(properties:_:)``.
    ///
    /// ```swift
    /// let token = try person.friends.observe(properties: ["name"]) { change in … }
    /// ```
    public func observe(properties: [String], _ block: @escaping (CollectionChangeSet) -> Void) throws
        -> NotificationToken
    {
        try observeElements(properties: properties, block)
    }
}

extension Map {
    /// Observes a map of objects, counting only changes of the named
    /// properties of its objects as modifications. See ``List/observe(properties:_:)``.
    ///
    /// ```swift
    /// let token = try shelf.slots.observe(properties: ["title"]) { change in … }
    /// ```
    public func observe(properties: [String], _ block: @escaping (CollectionChangeSet) -> Void) throws
        -> NotificationToken
    {
        try observeElements(properties: properties, block)
    }
}

extension List {
    /// Observes the list: the first call has `isInitial`; then, after each
    /// commit this handle sees that changes it, the deletions (old indices),
    /// insertions and modifications (new indices; for objects, a changed
    /// object). A moved element is deleted and inserted.
    ///
    /// ```swift
    /// let token = room.messages.observe { change in
    ///     tableView.apply(deletions: change.deletions, insertions: change.insertions)
    /// }
    /// ```
    public func observe(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        if let nested { return nested.observe(block) }
        guard let place = CollectionPlace(owner: managedOwner, column: managedColumn) else {
            preconditionFailure("Trove: only the list of a stored object can be observed; add its owner first")
        }
        return place.observe(owner: managedOwner!, block)
    }
}

extension MutableSet {
    /// Observes the set; indices are positions in the set's order. See ``List/observe(_:)``.
    public func observe(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        guard let place = CollectionPlace(owner: managedOwner, column: managedColumn) else {
            preconditionFailure("Trove: only the set of a stored object can be observed; add its owner first")
        }
        return place.observe(owner: managedOwner!, block)
    }
}

extension Map {
    /// Observes the map; indices are positions in key order, and a changed
    /// value is a modification of its key. See ``List/observe(_:)``.
    public func observe(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        if let nested { return nested.observe(block) }
        guard let place = CollectionPlace(owner: managedOwner, column: managedColumn) else {
            preconditionFailure("Trove: only the map of a stored object can be observed; add its owner first")
        }
        return place.observe(owner: managedOwner!, block)
    }
}
