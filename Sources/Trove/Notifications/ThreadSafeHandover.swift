/// Trove's plumbing behind ``ThreadSafeReference``: what a reference keeps
/// of its value — enough to make it again on another handle of the same file,
/// and nothing tied to a handle (no object, binding or snapshot), so that it
/// is `Sendable`. Make one with ``ThreadSafeReference/init(to:)``:
///
/// ```swift
/// let reference = ThreadSafeReference(to: photo)   // holds a _ThreadSafeHandover
/// ```
public struct _ThreadSafeHandover: Sendable {
    enum Value: Sendable {
        /// A stored object: its class (the reference's type or a subclass) and key.
        case object(Object.Type, typeName: String, key: UInt64)
        /// ``Results``: the query, run again over the objects of a class (the
        /// results' element type, or a subclass for a class hierarchy).
        case results(ResultsQuery, of: Object.Type, typeName: String)
        /// A collection property (``List``, ``MutableSet``, ``Map``,
        /// ``LinkingObjects``): the object owning it and the property's name.
        case property(String, ownerType: Object.Type, ownerTypeName: String, ownerKey: UInt64)
        /// ``Results`` of a collection's values: the collection property (as
        /// in ``property``) and the order.
        case values(String, ownerType: Object.Type, ownerTypeName: String, ownerKey: UInt64, order: ValueOrder)
    }

    let value: Value
    /// The configuration of the handle the value was read on (TroveRealm's
    /// `@ThreadSafe` opens a Realm with it where the value is read again).
    package let configuration: Configuration
    /// The file the value is in: only a handle on it may resolve it.
    package let path: String
    /// The commit the value was read at: a handle resolving it moves to at
    /// least this one.
    let commit: Int
    /// The file's environment, to pin the commit in (see ``SnapshotPin``).
    let environment: Environment
    /// Whether a reference to the value pins its commit: the value was read
    /// outside a write by a handle that pins references (TroveRealm's).
    let pinsCommit: Bool

    init(_ value: Value, database: Database) {
        self.value = value
        configuration = database.configuration
        path = database.path
        commit = database.visibleCommit
        environment = database.environment
        pinsCommit = database.pinsReferences && !database.isInWriteTransaction && !database.isFrozen
    }

    /// The handover of the collection property `column` of `owner`; traps
    /// for a collection of an unmanaged or deleted object.
    init(propertyOf owner: Object?, column: Int, kind: Any.Type) {
        guard let owner, let database = owner._database, let table = owner._table, !owner.isInvalidated else {
            preconditionFailure(
                "Trove: ThreadSafeReference needs the \(kind) of a stored, not deleted object; add the object first")
        }
        let name = table.schema.properties[column].name
        self.init(
            .property(name, ownerType: type(of: owner), ownerTypeName: table.name, ownerKey: owner._objectKey),
            database: database)
    }

    /// The collection property this names, read by `database`; nil when its
    /// owner is gone (or it names no `C`).
    func property<C>(as _: C.Type, in database: Database) -> C? {
        switch value {
        case .property(let name, let ownerType, let ownerTypeName, let ownerKey),
            .values(let name, let ownerType, let ownerTypeName, let ownerKey, _):
            return database.object(ofClass: ownerType, storedAs: ownerTypeName, objectKey: ownerKey)?.value(forKey: name)
                as? C
        default:
            return nil
        }
    }
}

extension Database {
    /// The stored object of a class known only at run time (a reference's,
    /// which may be a subclass of the type asked for), as this handle sees
    /// it; nil when there is none.
    func object(ofClass type: Object.Type, storedAs typeName: String, objectKey: UInt64) -> Object? {
        let binding = bindingOrTrap(for: type, storedAs: typeName)
        if binding.table.isRetired { return nil }
        let object = type.init()
        object.bind(to: self, objectKey: objectKey, binding: binding)
        do {
            return try keepRecord(of: object, table: binding.table) ? object : nil
        } catch {
            fatalError("Trove: cannot read a \(binding.table.name) object from \(path): \(error)")
        }
    }
}
