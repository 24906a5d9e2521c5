/// Where a list or dictionary nested in a stored mixed value lives: the
/// object, its mixed property, and the steps from the property's value down
/// to the collection. The whole value is one column of the object's record,
/// so a change reads the value, changes it at the path and writes it back:
/// observers of the object see its mixed property change.
struct NestedCollectionPlace: Hashable {
    enum Step: Hashable, CustomStringConvertible {
        case index(Int)
        case key(String)

        var description: String {
            switch self {
            case .index(let position): return "[\(position)]"
            case .key(let key): return "[\"\(key)\"]"
            }
        }
    }

    let owner: Object
    let column: Int
    let path: [Step]

    var database: Database? { owner._database }

    var name: String {
        let property = owner._table.map { "\($0.name).\($0.schema.properties[column].name)" } ?? "a mixed property"
        return property + path.map(\.description).joined()
    }

    /// Whether the path still leads to a collection: false once the owner is
    /// deleted or the value on the way was replaced by something else.
    var isValid: Bool { read() != nil }

    /// The mixed value `stored` found at `step` below this place: a nested
    /// collection lives there, anything else is read as it is.
    func mixed(at step: Step, _ stored: StoredValue) -> Mixed {
        NestedCollectionPlace(owner: owner, column: column, path: path + [step]).mixed(stored)
    }

    /// The mixed value `stored`, found at this place.
    func mixed(_ stored: StoredValue) -> Mixed {
        switch stored {
        case .list: return .list(List(nested: self))
        case .dictionary: return .dictionary(Map(nested: self))
        default:
            guard let database else { return .none }
            return Mixed._troveResolve(stored, in: database)
        }
    }

    /// The collection's stored value, or nil when the path no longer leads to one.
    func read() -> StoredValue? {
        guard owner._database != nil, !owner.isInvalidated else { return nil }
        var value = owner._readManaged(column: column)
        for step in path {
            switch (step, value) {
            case (.index(let position), .list(let elements)) where elements.indices.contains(position):
                value = elements[position]
            case (.key(let key), .dictionary(let entries)):
                guard let next = entries[key] else { return nil }
                value = next
            default: return nil
            }
        }
        switch value {
        case .list, .dictionary: return value
        default: return nil
        }
    }

    /// The list's elements; none once the path is broken.
    func elements() -> [StoredValue] {
        if case .list(let elements) = read() { return elements }
        return []
    }

    /// The dictionary's entries; none once the path is broken.
    func entries() -> [String: StoredValue] {
        if case .dictionary(let entries) = read() { return entries }
        return [:]
    }

    /// The stored form of a value to put in the collection (an unmanaged object in it is added).
    func stored(_ value: Mixed) throws -> StoredValue {
        guard let database else { return value._troveStored }
        return try database.storedMixed(value, depth: path.count + 1)
    }

    /// Changes the list in the owner's write transaction; a failure is kept
    /// and thrown by the write when it commits (collection mutators cannot throw).
    func changeList(_ operation: String, _ body: (inout [StoredValue]) throws -> Void) {
        change(operation) { value in
            guard case .list(var elements) = value else { throw gone() }
            value = .null  // one copy of the elements while they change
            try body(&elements)
            value = .list(elements)
        }
    }

    /// Changes the dictionary in the owner's write transaction, as ``changeList(_:_:)``.
    func changeDictionary(_ operation: String, _ body: (inout [String: StoredValue]) throws -> Void) {
        change(operation) { value in
            guard case .dictionary(var entries) = value else { throw gone() }
            value = .null
            try body(&entries)
            value = .dictionary(entries)
        }
    }

    private func change(_ operation: String, _ body: (inout StoredValue) throws -> Void) {
        guard let database, let state = database.writeState else {
            fatalError(
                "Trove: cannot \(operation) \(name) on a managed object outside a write transaction; wrap the change in `try db.write { ... }`"
            )
        }
        if state.deferredError != nil { return }
        do {
            guard !owner.isInvalidated else { throw gone() }
            var root = owner._readManaged(column: column)
            try Self.update(&root, at: path[...], body, gone)
            owner._writeColumn(column, root)
        } catch {
            state.deferredError = error
        }
    }

    private static func update(
        _ value: inout StoredValue, at path: ArraySlice<Step>, _ body: (inout StoredValue) throws -> Void,
        _ gone: () -> TroveError
    ) throws {
        guard let step = path.first else { return try body(&value) }
        switch (step, value) {
        case (.index(let position), .list(var elements)) where elements.indices.contains(position):
            value = .null
            try update(&elements[position], at: path.dropFirst(), body, gone)
            value = .list(elements)
        case (.key(let key), .dictionary(var entries)):
            guard var element = entries[key] else { throw gone() }
            value = .null
            try update(&element, at: path.dropFirst(), body, gone)
            entries[key] = element
            value = .dictionary(entries)
        default: throw gone()
        }
    }

    private func gone() -> TroveError {
        TroveError(
            .invalidObject,
            "\(name) is no longer in the stored value (the object was deleted, or a value on the way was replaced); read it again",
            path: database?.path ?? "")
    }

    static func == (lhs: NestedCollectionPlace, rhs: NestedCollectionPlace) -> Bool {
        lhs.owner.isSameStoredObject(as: rhs.owner) && lhs.column == rhs.column && lhs.path == rhs.path
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(owner))
        hasher.combine(column)
        hasher.combine(path)
    }

    /// Observes the collection: its changes after each commit that changes it,
    /// by position for a list and by key (in key order) for a dictionary.
    func observe(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        guard let database else {
            preconditionFailure("Trove: only a collection of a stored object can be observed; add its owner first")
        }
        let observer = NestedCollectionObserver(place: self, block: block)
        observer.start()
        return database.addObserver(observer)
    }
}

/// Observes one collection nested in a mixed value, diffing its stored value.
final class NestedCollectionObserver: ChangeObserver {
    let place: NestedCollectionPlace
    let block: (CollectionChangeSet) -> Void
    private var last: StoredValue?

    init(place: NestedCollectionPlace, block: @escaping (CollectionChangeSet) -> Void) {
        self.place = place
        self.block = block
    }

    func start() {
        last = place.read()
        block(CollectionChangeSet(isInitial: true))
    }

    func update(in database: Database, notify: Bool) {
        guard let table = place.owner._table else { return }
        if let changes = database.delivery?.changes, !changes.mayHaveChanged(place.owner._objectKey, of: table.name, orAnyOf: [])
        {
            return
        }
        let current = place.read()
        defer { last = current }
        guard notify, current != last else { return }
        let change = Self.difference(from: last, to: current)
        if !(change.deletions.isEmpty && change.insertions.isEmpty && change.modifications.isEmpty) { block(change) }
    }

    /// What turns one state of the collection into the next: for a list, the
    /// changed positions (a run removed or inserted between what stayed at
    /// both ends, or the values replaced when the length is the same); for a
    /// dictionary, the keys' positions in key order.
    static func difference(from old: StoredValue?, to new: StoredValue?) -> CollectionChangeSet {
        var change = CollectionChangeSet()
        func dictionary(_ value: StoredValue?) -> [String: StoredValue]? {
            if case .dictionary(let entries) = value { return entries }
            return nil
        }
        if dictionary(old) != nil || dictionary(new) != nil {
            let (before, after) = (dictionary(old) ?? [:], dictionary(new) ?? [:])
            let oldKeys = before.keys.sorted()
            let newKeys = after.keys.sorted()
            change.deletions = oldKeys.indices.filter { after[oldKeys[$0]] == nil }
            change.insertions = newKeys.indices.filter { before[newKeys[$0]] == nil }
            change.modifications = newKeys.indices.filter { index in
                let key = newKeys[index]
                return before[key] != nil && before[key] != after[key]
            }
            return change
        }
        let before: [StoredValue] = if case .list(let elements) = old { elements } else { [] }
        let after: [StoredValue] = if case .list(let elements) = new { elements } else { [] }
        if before.count == after.count {
            change.modifications = before.indices.filter { before[$0] != after[$0] }
            return change
        }
        let shorter = min(before.count, after.count)
        var prefix = 0
        while prefix < shorter, before[prefix] == after[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix, before[before.count - 1 - suffix] == after[after.count - 1 - suffix] {
            suffix += 1
        }
        change.deletions = Array(prefix..<(before.count - suffix))
        change.insertions = Array(prefix..<(after.count - suffix))
        return change
    }
}
