import TroveStorage

/// A way to hand a managed object, results or a collection property to
/// another isolation domain (Realm's `ThreadSafeReference`): the reference is
/// `Sendable` — it holds what the value is (an object's class and key, a
/// query, a collection's owner and property), not the value — and
/// ``Database/resolve(_:)`` makes the value again on a handle opened there.
///
/// ```swift
/// let photoReference = ThreadSafeReference(to: photo)
/// let recentReference = ThreadSafeReference(to: db.objects(PhotoData.self).sorted(by: \.dateAdded))
/// Task.detached {
///     let db = try Database(configuration: config)
///     if let photo = db.resolve(photoReference) { try db.write { photo.memo = "seen" } }
///     print(db.resolve(recentReference)?.count ?? 0)
/// }
/// ```
///
/// Anything ``ThreadConfined`` can be referenced: ``Object``, ``Results`` of
/// objects, ``List``, ``MutableSet``, ``Map`` and ``LinkingObjects``. The
/// value is resolved as the resolving handle sees the file after refreshing,
/// not as it was when the reference was made: a commit made in between is
/// seen. Resolving gives nil once the object, or the object owning the
/// collection, has been deleted.
///
/// Unlike Realm's, a reference pins no version of the file, so there is
/// nothing to release: it may be resolved any number of times, on any
/// number of handles of the same file, and simply dropped. (TroveRealm's
/// `realm.resolve(_:)` keeps Realm's rules: once, at the version the
/// reference was made at.)
public struct ThreadSafeReference<Confined: ThreadConfined>: Sendable {
    /// What the value is, apart from any handle.
    package let handover: _ThreadSafeHandover
    /// Whether a Realm resolved it: TroveRealm's references, like Realm's,
    /// resolve once. Shared by the reference's copies.
    package let resolved = Locked(false)
    /// The snapshot the value was read in, for a reference TroveRealm made.
    package let pin: SnapshotPin?

    /// A reference to a managed value: a stored object, results, or a
    /// collection property of a stored object. Traps for an unmanaged or
    /// deleted object, or a collection of one, as Realm does.
    ///
    /// ```swift
    /// let reference = ThreadSafeReference(to: room.messages)
    /// ```
    public init(to value: Confined) {
        handover = value._threadSafeHandover
        pin = handover.pinsCommit ? SnapshotPin(environment: handover.environment, commit: handover.commit) : nil
    }

    /// A reference that pins no snapshot, whatever handle the value is read
    /// by: for a value resolved at once (freezing, thawing, `@ThreadSafe`).
    package init(unpinned value: Confined) {
        handover = value._threadSafeHandover
        pin = nil
    }
}

extension Database {
    /// The value a ``ThreadSafeReference`` points at, read by this handle
    /// (refreshed first, so it sees the latest commit): the object, results
    /// or collection, or nil when the object, or the object owning the
    /// collection, is gone. A reference resolves as often as needed.
    ///
    /// ```swift
    /// func rename(_ reference: ThreadSafeReference<Photo>) throws {
    ///     let db = try Database(configuration: config)
    ///     guard let photo = db.resolve(reference) else { return }   // deleted meanwhile
    ///     try db.write { photo.memo = "renamed" }
    /// }
    /// ```
    ///
    /// Traps when the reference points into another file.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        resolve(reference, refreshing: .always)
    }

    /// When resolving a reference refreshes the handle.
    package enum ResolveRefresh {
        /// Always first (``resolve(_:)``: the latest commit is seen).
        case always
        /// Only when the handle has not yet seen the commit the reference was
        /// made at (Realm's `resolve`).
        case toReference
        /// Never: the value as the handle reads it now (Realm's `thaw()`).
        case never
    }

    /// ``resolve(_:)`` with a choice of when the handle refreshes (TroveRealm
    /// resolves and thaws as Realm does).
    package func resolve<Confined: ThreadConfined>(
        _ reference: ThreadSafeReference<Confined>, refreshing: ResolveRefresh
    ) -> Confined? {
        let handover = reference.handover
        precondition(
            handover.path == path,
            "Trove: a ThreadSafeReference to a value of \(handover.path) cannot be resolved by a handle on \(path)")
        switch refreshing {
        case .always: refresh()
        case .toReference: if visibleCommit < handover.commit { refresh() }
        case .never: break
        }
        return Confined._resolve(handover, in: self)
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
        try await waitForWriter()
        return try write(block)
    }

    /// Waits, without blocking the caller's thread, while another handle of
    /// this process writes; throws `CancellationError` if the task is cancelled meanwhile.
    package func waitForWriter(isolation: isolated (any Actor)? = #isolation) async throws {
        while environment.isWriterBusy, writeState == nil {
            try Task.checkCancellation()
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
