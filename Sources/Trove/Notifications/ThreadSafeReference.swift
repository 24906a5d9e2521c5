/// A way to hand a managed object to another isolation domain: the
/// reference is `Sendable` (it holds the object's type and key, not the
/// object), and resolves to that object on a handle opened there.
///
/// ```swift
/// let reference = ThreadSafeReference(to: photo)
/// Task.detached {
///     let db = try Database(configuration: config)
///     if let photo = db.resolve(reference) { try db.write { photo.memo = "seen" } }
/// }
/// ```
///
/// Resolving gives nil when the object was deleted in the meantime.
public struct ThreadSafeReference<T: Object>: Sendable {
    /// The stored type's name and the object's key in it.
    let typeName: String
    let objectKey: UInt64

    /// A reference to a managed object.
    public init(to object: T) {
        guard object.isManaged, !object.isInvalidated else {
            preconditionFailure("Trove: ThreadSafeReference needs a stored, not deleted \(T.self); add it first")
        }
        typeName = object.storedTypeName
        objectKey = object._objectKey
    }
}

extension Database {
    /// The object a ``ThreadSafeReference`` points at, read by this handle
    /// (refreshed first, so it sees the latest commit); nil if it is gone.
    public func resolve<T: Object>(_ reference: ThreadSafeReference<T>) -> T? {
        refresh()
        let binding = bindingOrTrap(for: T.self, storedAs: reference.typeName)
        guard binding.table.name == reference.typeName, contains(objectKey: reference.objectKey, in: binding.table) else {
            return nil
        }
        return materialize(T.self, objectKey: reference.objectKey, binding: binding)
    }

    /// ``write(_:)`` for async code: while another handle of this process
    /// is writing, waits without blocking the thread, then writes.
    ///
    /// ```swift
    /// actor Importer {
    ///     func run(_ rows: [Row]) async throws {
    ///         try await db.asyncWrite { for row in rows { try db.add(Item(row)) } }
    ///     }
    /// }
    /// ```
    ///
    /// A write by another process still makes the start of the transaction
    /// wait (LMDB's lock between processes cannot be polled).
    @discardableResult
    public func asyncWrite<Result>(
        isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        while environment.isWriterBusy, writeState == nil {
            try Task.checkCancellation()
            try await Task.sleep(for: .milliseconds(1))
        }
        return try write(block)
    }
}
