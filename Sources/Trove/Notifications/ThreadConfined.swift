/// A value that belongs to one ``Database`` handle, and so to one isolation
/// domain, and that a ``ThreadSafeReference`` can carry to another (Realm's
/// `ThreadConfined`): ``Object``, ``Results`` of objects, ``List``,
/// ``MutableSet``, ``Map`` and ``LinkingObjects``.
///
/// ```swift
/// func send<T: ThreadConfined>(_ value: T, to worker: Worker) async {
///     await worker.take(ThreadSafeReference(to: value))   // resolved there with db.resolve(_:)
/// }
/// ```
///
/// The requirements are Trove's plumbing: only Trove's types, and the layers
/// built on it, conform.
public protocol ThreadConfined {
    /// Trove's plumbing behind ``ThreadSafeReference/init(to:)``: what a
    /// reference keeps of the value; traps for an unmanaged or deleted one.
    var _threadSafeHandover: _ThreadSafeHandover { get }
    /// Trove's plumbing behind ``Database/resolve(_:)``: the value a
    /// handover describes, read by `database`; nil when it is gone.
    static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> Self?
}

extension Object: ThreadConfined {
    /// The object's class and key.
    public var _threadSafeHandover: _ThreadSafeHandover {
        guard let database = _database, !isInvalidated else {
            preconditionFailure("Trove: ThreadSafeReference needs a stored, not deleted \(type(of: self)); add it first")
        }
        return _ThreadSafeHandover(.object(type(of: self), typeName: storedTypeName, key: _objectKey), database: database)
    }
}

extension ThreadConfined where Self: Object {
    /// The referenced object read by `database`; nil once it is deleted.
    public static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> Self? {
        guard case .object(let type, let typeName, let key) = handover.value else { return nil }
        return database.object(ofClass: type, storedAs: typeName, objectKey: key) as? Self
    }
}

extension Results: ThreadConfined {
    /// The results' query and order, and the class of their objects; for
    /// results of a collection's values, the collection and the order.
    public var _threadSafeHandover: _ThreadSafeHandover {
        if let origin = source.valueOrigin {
            let collection = origin.collection as? any ManagedCollection
            let property = _ThreadSafeHandover(
                propertyOf: collection?.managedOwner, column: collection?.managedColumn ?? 0, kind: Results.self)
            guard case .property(let name, let ownerType, let ownerTypeName, let ownerKey) = property.value else {
                preconditionFailure("Trove: a collection's handover names its property")
            }
            return _ThreadSafeHandover(
                .values(name, ownerType: ownerType, ownerTypeName: ownerTypeName, ownerKey: ownerKey, order: origin.order),
                database: database)
        }
        guard let objectType = source.objectType else {
            preconditionFailure("Trove: ThreadSafeReference needs results of objects or of a collection's values")
        }
        return _ThreadSafeHandover(.results(query, of: objectType, typeName: table.name), database: database)
    }

    /// The same query and order (or the same collection's values), read by `database`.
    public static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> Results? {
        if case .values(_, _, _, _, let order) = handover.value {
            let collection = handover.property(as: (any ValueResultsCollection).self, in: database)
            return collection?.valueResults(order) as? Results
        }
        return (Results.self as? any ObjectResultsResolving.Type)?.resolveObjects(handover, in: database) as? Results
    }
}

/// ``Results`` of objects, which a handover of a query resolves to.
private protocol ObjectResultsResolving {
    static func resolveObjects(_ handover: _ThreadSafeHandover, in database: Database) -> Any?
}

extension Results: ObjectResultsResolving where Element: Object {
    static func resolveObjects(_ handover: _ThreadSafeHandover, in database: Database) -> Any? {
        guard case .results(let query, let type, let typeName) = handover.value, type is Element.Type else { return nil }
        let binding = database.bindingOrTrap(for: type, storedAs: typeName)
        let source: ResultsSource<Element> =
            ObjectIdentifier(type) == ObjectIdentifier(Element.self) ? .object(binding) : .polymorphic(binding)
        return Results(database: database, source: source, query: query)
    }
}

extension List: ThreadConfined {}
extension MutableSet: ThreadConfined {}
extension Map: ThreadConfined {}

extension ThreadConfined where Self: AnyObject {
    /// For the collection properties (``List``, ``MutableSet``, ``Map``):
    /// the object owning the collection and the property's name.
    public var _threadSafeHandover: _ThreadSafeHandover {
        let collection = self as? any ManagedCollection
        return _ThreadSafeHandover(propertyOf: collection?.managedOwner, column: collection?.managedColumn ?? 0, kind: Self.self)
    }

    /// The collection property read by `database`; nil once its owner is deleted.
    public static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> Self? {
        handover.property(as: Self.self, in: database)
    }
}

extension LinkingObjects: ThreadConfined {
    /// The object linked to and the property, or (for linking objects made
    /// from results) their query.
    public var _threadSafeHandover: _ThreadSafeHandover {
        if let owner { return _ThreadSafeHandover(propertyOf: owner.object, column: owner.column, kind: LinkingObjects.self) }
        guard let results else {
            preconditionFailure("Trove: ThreadSafeReference needs the linking objects of a stored object; add it first")
        }
        return results._threadSafeHandover
    }

    /// The linking objects read by `database`; nil once the object linked to is deleted.
    public static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> LinkingObjects? {
        if let property = handover.property(as: LinkingObjects.self, in: database) { return property }
        return Results<Element>._resolve(handover, in: database).map(LinkingObjects.init(results:))
    }
}
