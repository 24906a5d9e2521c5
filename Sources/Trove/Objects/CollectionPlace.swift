/// Where a managed collection property (``List``, ``MutableSet``, ``Map``)
/// lives: its owner's handle, table and key, and its column. The three
/// collection types read and change the database through it.
struct CollectionPlace {
    let database: Database
    let table: TableInfo
    let key: UInt64
    let column: Int

    init?(owner: Object?, column: Int) {
        guard let owner, let database = owner._database, let table = owner._table else { return nil }
        self.database = database
        self.table = table
        key = owner._objectKey
        self.column = column
    }

    var name: String { "\(table.name).\(table.schema.properties[column].name)" }

    /// A read from the handle's snapshot; a storage failure traps (collection reads cannot throw).
    func read<R>(_ body: (Transaction) throws -> R) -> R {
        do {
            return try body(database.readTransaction())
        } catch {
            fatalError("Trove: cannot read \(name) from \(database.path): \(error)")
        }
    }

    /// A change inside the handle's write transaction; a failure is kept and
    /// thrown by the write when it commits (collection mutators cannot throw).
    func change(_ operation: String, _ body: (WriteState) throws -> Void) {
        guard let state = database.writeState else {
            fatalError(
                "Trove: cannot \(operation) \(name) on a managed object outside a write transaction; wrap the change in `try db.write { ... }`"
            )
        }
        if state.deferredError != nil { return }
        do {
            try body(state)
        } catch {
            state.deferredError = error
        }
    }

    /// The stored form of an element; an unmanaged object is added first.
    func stored<E: _TroveStorable>(_ element: E) throws -> StoredValue {
        // Decided by the element type first: a cast of a value to a class or a
        // protocol costs ~2,000 instructions on Linux, per element.
        switch E._troveType {
        case .link:
            if let object = element as? Object ?? (element as? any _TroveLinkCarrier)?._troveCarriedObject {
                return .int(
                    Int64(bitPattern: try database.linkKey(for: object, property: table.schema.properties[column], of: table)))
            }
        case .mixed:
            if let mixed = element as? Mixed { return try database.storedMixed(mixed) }
        default: break
        }
        return element._troveStored
    }

    /// Elements from stored values; objects are bound together and read in one pass.
    func resolve<E: _TroveStorable>(_ values: [StoredValue], as _: E.Type) -> [E] {
        // Values, and values stored as links (a custom type of an embedded object), one by one.
        guard let target = E._troveLinkTarget, !(E.self is any _TroveLinkCarrier.Type) else {
            return values.map { E._troveResolve($0, in: database) }
        }
        let binding = database.bindingOrTrap(for: target, storedAs: table.schema.properties[column].objectType ?? "")
        if E._troveIsOptional, !(E.self is any _TroveOptionalObject.Type) {
            // An optional of a type carried by a link (a custom type of an
            // embedded object): each value made by its type, not reinterpreted.
            return values.map { E._troveResolve($0, in: database) }
        }
        if E._troveIsOptional {
            // A map whose values may be nil (a deleted target leaves its key): `E` is `T?`,
            // which has the representation of `Object?`.
            let objects = values.map { value -> Object? in
                guard case .int(let key) = value else { return nil }
                let own = database.targetBinding(UInt64(bitPattern: key), declared: binding)
                let object = own.info.type.init()
                object.bind(to: database, objectKey: UInt64(bitPattern: key), binding: own)
                return object
            }
            database.loadRecords(into: objects.compactMap { $0 }.filter { $0._table === binding.table }, table: binding.table)
            return unsafeBitCast(objects, to: [E].self)
        }
        let objects = values.map { value -> Object in
            guard case .int(let key) = value else { return binding.info.type.init() }
            let own = database.targetBinding(UInt64(bitPattern: key), declared: binding)
            let object = own.info.type.init()
            object.bind(to: database, objectKey: UInt64(bitPattern: key), binding: own)
            return object
        }
        database.loadRecords(into: objects.filter { $0._table === binding.table }, table: binding.table)
        // E is the object type here: same representation.
        return unsafeBitCast(objects, to: [E].self)
    }

    /// ``results(_:)`` for a class known only at run time: a `Results` of that class.
    func anyResults(of type: Object.Type) -> Any { type.results(in: self) }

    /// The objects of a collection of objects as live ``Results`` (in collection order, repeats included).
    func results<E: Object>(_: E.Type) -> Results<E> {
        let binding = database.bindingOrTrap(for: E.self, storedAs: table.schema.properties[column].objectType ?? "")
        let (table, owner, column) = (self.table, key, self.column)
        return Results(
            database: database, source: .linkTargets(binding),
            predicate: .objectKeys { transaction in
                var keys: [UInt64] = []
                keys.reserveCapacity(16)  // (growing from empty to 10 keys reallocated four times)
                try Database.forEachCollectionEntry(owner: owner, column: column, table: table, transaction) { _, element in
                    if let key = element.int(at: 0) { keys.append(UInt64(bitPattern: key)) }
                }
                return keys
            })
    }
}

/// `T?` for an object class `T`: the one optional whose array has the
/// representation of `[Object?]`.
private protocol _TroveOptionalObject {}
extension Optional: _TroveOptionalObject where Wrapped: Object {}

extension Object {
    /// The collection's objects as results of this class (`Self` is the class it is called on).
    fileprivate static func results(in place: CollectionPlace) -> Any { place.results(Self.self) }
}
