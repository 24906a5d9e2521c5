import Foundation
import Trove
import TroveStorage

/// A Realm: Realm Swift's `Realm`, on a Trove ``Database`` handle.
///
/// As in Realm Swift, `try Realm()` on one thread (or in one actor) hands
/// back the same instance for the same file while it is in use, so what one
/// part of the code writes the next part reads at once; `add`, `delete`
/// and `beginWrite` do not throw, and misuse (adding outside a write, a
/// duplicate primary key) traps with the message Realm would give.
///
/// ```swift
/// let realm = try Realm()
/// try realm.write { realm.add(photo) }
/// let photos = realm.objects(PhotoData.self).sorted(byKeyPath: "dateAdded", ascending: false)
/// ```
public struct Realm: Equatable {
    /// The Trove handle underneath, for Trove's own API.
    public let database: Database

    /// Realm's name for Trove's ``Trove/UpdatePolicy``.
    public typealias UpdatePolicy = Trove.UpdatePolicy
    /// What a Realm observer is called with.
    public typealias NotificationBlock = (_ notification: Notification, _ realm: Realm) -> Void

    /// The notifications a Realm observer receives.
    public enum Notification: String, Sendable {
        /// A write transaction was committed (here or elsewhere) and this Realm shows it.
        case didChange = "RLMRealmDidChangeNotification"
        /// Another commit is waiting for a refresh (Trove refreshes by itself; not sent).
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// Opens the Realm of ``Configuration/defaultConfiguration``.
    public init(queue: DispatchQueue? = nil, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(configuration: .defaultConfiguration, queue: queue, isolation: isolation)
    }

    /// Opens the Realm of `configuration`.
    public init(configuration: Configuration, queue: DispatchQueue? = nil, isolation: isolated (any Actor)? = #isolation)
        throws
    {
        database = try Realm.cachedHandle(configuration.troveConfiguration, isolation: isolation)
    }

    /// Opens a Realm that belongs to `actor` (Realm's `Realm(actor:)`): its
    /// notifications and autorefresh run there, and it is used there.
    ///
    /// ```swift
    /// actor Importer {
    ///     func run() async throws { let realm = try await Realm(actor: self); … }
    /// }
    /// ```
    public init<A: Actor>(
        configuration: Configuration = .defaultConfiguration, actor: A, downloadBeforeOpen: OpenBehavior = .never
    ) async throws {
        database = try Realm.cachedHandle(configuration.troveConfiguration, isolation: actor)
    }

    /// Opens a Realm from async code, on the caller's isolation (Realm's
    /// `try await Realm(downloadBeforeOpen:)`; Trove has no sync, so the
    /// behaviour changes nothing).
    ///
    /// ```swift
    /// @MainActor func load() async throws { let realm = try await Realm(downloadBeforeOpen: .never); … }
    /// ```
    public init(
        configuration: Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior,
        isolation: isolated (any Actor)? = #isolation
    ) async throws {
        try self.init(configuration: configuration, isolation: isolation)
    }

    /// Opens a Realm from async code, on the caller's isolation (Realm's
    /// `Realm.open`): the Realm belongs to that actor.
    ///
    /// ```swift
    /// @MainActor func load() async throws { let realm = try await Realm.open(); … }
    /// ```
    public static func open(
        configuration: Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior = .never,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        try Realm(configuration: configuration, isolation: isolation)
    }

    /// When to download a synced Realm before opening it; Trove has no sync, so always `.never`.
    public enum OpenBehavior: Sendable {
        /// Open the local file at once.
        case never
        /// (Sync only.) Treated as `.never`.
        case always
        /// (Sync only.) Treated as `.never`.
        case once
    }

    /// Opens the Realm at `fileURL` with the default configuration's other settings.
    public init(fileURL: URL, isolation: isolated (any Actor)? = #isolation) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        configuration.inMemoryIdentifier = nil
        try self.init(configuration: configuration, isolation: isolation)
    }

    /// A Realm on an open Trove handle.
    public init(_ database: Database) {
        self.database = database
    }

    /// Two Realms are equal when they are the same handle.
    public static func == (lhs: Realm, rhs: Realm) -> Bool { lhs.database === rhs.database }

    /// The configuration the Realm was opened with.
    public var configuration: Configuration { Configuration(database.configuration) }

    /// Whether no type in the file holds an object.
    public var isEmpty: Bool {
        let schemas = (try? database.storedSchemas()) ?? []
        return schemas.allSatisfy { (try? database.dynamicObjects($0.name).count == 0) ?? true }
    }

    // MARK: Writing

    /// Runs `block` in a write transaction and commits it; an error thrown
    /// by the block cancels the transaction and is rethrown.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws
        -> Result
    {
        if !database.isInWriteTransaction { runQueuedWrites() }
        do {
            let result = try database.write(withoutNotifying: tokens, block)
            Logger.shared.log(level: .debug, "DB: Commit of '\(database.path)' at commit \(database.visibleCommit)")
            return result
        } catch let error as TroveError {
            throw Realm.Error(error)
        }
    }

    /// Begins a write transaction; pair it with ``commitWrite(withoutNotifying:)``
    /// or ``cancelWrite()``. Traps when one is already open, as Realm does.
    public func beginWrite() {
        if !database.isInWriteTransaction { runQueuedWrites() }
        do { try database.beginWrite() } catch { realmMisuse("Cannot begin a write transaction", error) }
        // `try! Realm().beginWrite()` then `try! Realm().create(…)`: on Apple
        // platforms the autorelease pool keeps that first Realm alive until
        // the commit; here the Realm keeps itself alive while its write is open.
        Realm.writing.withLock { $0[ObjectIdentifier(database)] = WriteHold(database: database) }
    }

    /// Commits the open write transaction.
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        defer { releaseWriteHold() }
        try realmErrors { try database.commitWrite(withoutNotifying: tokens) }
        Logger.shared.log(level: .debug, "DB: Commit of '\(database.path)' at commit \(database.visibleCommit)")
    }

    /// Discards the open write transaction's changes.
    public func cancelWrite() {
        database.cancelWrite()
        releaseWriteHold()
    }

    private func releaseWriteHold() {
        if !database.isInWriteTransaction { _ = Realm.writing.withLock { $0.removeValue(forKey: ObjectIdentifier(database)) } }
    }

    private struct WriteHold: @unchecked Sendable {
        let database: Database
    }

    /// The handles with a write begun by ``beginWrite()`` and not yet ended.
    private static let writing = Locked([ObjectIdentifier: WriteHold]())

    /// Whether a write transaction is open.
    public var isInWriteTransaction: Bool { database.isInWriteTransaction }

    /// Adds (or, with `update`, upserts) an object and everything it links to.
    /// Traps outside a write, and on a duplicate primary key with `.error`.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        do { try database.add(object, update: update) } catch { realmMisuse("Cannot add \(type(of: object))", error) }
    }

    /// Adds every object of `objects`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Makes an object from values and adds it (see Trove's
    /// `Database.create(_:value:update:)`); traps on a bad value, as Realm does.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        do {
            return try database.create(type, value: value, update: update)
        } catch {
            realmMisuse("Cannot create a \(T.self)", error)
        }
    }

    /// Deletes an object (traps outside a write, or for an object of another Realm).
    public func delete(_ object: Object) {
        do { try database.delete(object) } catch { realmMisuse("Cannot delete \(type(of: object))", error) }
    }

    /// Deletes every object of `objects`.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        do { try database.delete(Array(objects)) } catch { realmMisuse("Cannot delete objects", error) }
    }

    /// Deletes every object a query matches.
    public func delete<Element: Object>(_ objects: Results<Element>) {
        do { try database.delete(objects) } catch { realmMisuse("Cannot delete \(Element.self) objects", error) }
    }

    /// Deletes every object of every type.
    public func deleteAll() {
        do { try database.deleteAll() } catch { realmMisuse("Cannot delete all objects", error) }
    }

    // MARK: Reading

    /// Every stored object of a type, as live results.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> { database.objects(type) }

    /// The object with a primary key, or nil. The key may be any value the
    /// key property holds: `nil` (or `NSNull()`) for an optional key.
    /// A key of another type traps, as Realm's raises.
    ///
    /// ```swift
    /// let rex = realm.object(ofType: Dog.self, forPrimaryKey: "Rex")
    /// ```
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        guard let value = StoredValue(any: key) else {
            realmMisuse(
                "Cannot look up a \(Element.self) by primary key",
                TroveError(.invalidPrimaryKey, "\(KeyType.self) is not a type a primary key can have"))
        }
        return database.object(ofType: type, forPrimaryKeyValue: value)
    }

    /// The object, results or collection a thread-safe reference points at,
    /// read by this Realm as Realm reads it: a Realm that has not yet seen the
    /// commit the reference was made at refreshes first; one that has reads
    /// the value as it reads everything else. Nil when the object, or the
    /// object owning the collection, was deleted, and for a reference made on
    /// another file.
    ///
    /// ```swift
    /// let reference = ThreadSafeReference(to: dog.owners)
    /// Task.detached {
    ///     let realm = try Realm()
    ///     print(realm.resolve(reference)?.count ?? 0)
    /// }
    /// ```
    ///
    /// As in Realm, a reference resolves once: afterwards it `isInvalidated`,
    /// and resolving it again traps. (Trove's own `Database.resolve(_:)`
    /// resolves a reference any number of times.)
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        let first = reference.resolved.withLock { resolved in
            defer { resolved = true }
            return !resolved
        }
        guard first else {
            realmMisuse(
                "Can only resolve a thread safe reference once",
                TroveError(.invalidObject, "make a new ThreadSafeReference for each thread that needs the value"))
        }
        guard reference.handover.path == database.path else { return nil }
        if let pinned = reference.pin?.take(), !database.adoptSnapshot(pinned) { pinned.end() }
        return database.resolve(reference, refreshing: .toReference)
    }

    /// Moves the Realm to the latest commit; returns whether there was one to see.
    @discardableResult
    public func refresh() -> Bool {
        let before = database.visibleCommit
        database.refresh()
        return database.visibleCommit != before
    }

    /// Whether the Realm follows commits by itself (in an actor, after each commit).
    public var autorefresh: Bool {
        get { database.autorefresh }
        nonmutating set { database.autorefresh = newValue }
    }

    /// Releases the Realm's snapshot; the next read takes the latest commit.
    /// An open write transaction is cancelled, and every object, result and
    /// collection the Realm handed out so far reports `isInvalidated`, as in
    /// Realm; read them again from the Realm. (They still read the latest
    /// commit where Realm's would throw.)
    public func invalidate() {
        if database.isInWriteTransaction { cancelWrite() }
        database.invalidateHandedOut()
        database.refresh()
        database.releaseSnapshot()
    }

    /// Calls `block` after each commit this Realm shows.
    public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
        let database = self.database
        return database.observe { _ in block(.didChange, Realm(database)) }
    }

    // MARK: Files

    /// Writes a compacted copy to `fileURL`, encrypted with `encryptionKey` (or plain).
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try realmErrors {
            if let encryptionKey {
                try database.writeCopy(to: fileURL, encryptionKey: encryptionKey)
            } else if database.configuration.encryptionKey != nil {
                try database.writeCopy(to: fileURL, encryptionKey: nil)
            } else {
                try database.writeCopy(to: fileURL)
            }
        }
    }

    /// Writes a compacted copy to the file of `configuration`, encrypted with
    /// its key (Realm's `writeCopy(configuration:)`); open it with that configuration.
    ///
    /// ```swift
    /// try realm.writeCopy(configuration: Realm.Configuration(fileURL: backupURL))
    /// ```
    public func writeCopy(configuration: Configuration) throws {
        guard let fileURL = configuration.fileURL else {
            throw Realm.Error(TroveError(.invalidValue, "writeCopy(configuration:) needs a configuration with a fileURL"))
        }
        try writeCopy(toFile: fileURL, encryptionKey: configuration.encryptionKey)
    }

    /// Whether the file of `config` exists.
    public static func fileExists(for config: Configuration) -> Bool {
        FileManager.default.fileExists(atPath: config.troveConfiguration.fileURL.path)
    }

    /// Deletes the file of `config` and its lock file; false when there was
    /// none. Throws ``Error/Code/alreadyOpen`` while a Realm has it open.
    @discardableResult
    public static func deleteFiles(for config: Configuration) throws -> Bool {
        let path = config.troveConfiguration.fileURL.path
        if Environment.isOpen(path: path) {
            throw Realm.Error(TroveError(.fileInUse, "cannot delete \(path): a Realm has it open", path: path))
        }
        var deleted = false
        for file in [path, path + "-lock"] where FileManager.default.fileExists(atPath: file) {
            try realmErrors {
                do {
                    try FileManager.default.removeItem(atPath: file)
                } catch {
                    throw TroveError(.fileAccess, "cannot delete \(file): \(error)", path: file)
                }
            }
            deleted = true
        }
        return deleted
    }

    // MARK: One handle per thread or actor

    private struct WeakHandle {
        weak var database: Database?
    }

    /// Open handles by isolation (the actor, or the thread outside actors) and file.
    private static let handles = Locked([String: WeakHandle]())

    /// Whether TroveRealm opened `database` for a `Realm(configuration:)`
    /// (not a Trove handle wrapped by ``init(_:)``).
    static func opened(_ database: Database) -> Bool {
        handles.withLock { $0.values.contains { $0.database === database } }
    }

    private static func cachedHandle(_ configuration: Trove.Configuration, isolation: (any Actor)?) throws -> Database {
        // The main actor and plain code on the main thread share one Realm, as in Realm
        // (property initializers of main-actor classes run without an isolation).
        let owner =
            isolation is MainActor || (isolation == nil && Database.isOnMainQueue)
            ? "main" : isolation.map { "actor \(ObjectIdentifier($0).hashValue)" } ?? "thread \(pthread_self())"
        let path = configuration.fileURL.standardizedFileURL.path
        let key = owner + " " + path
        let logger = Logger.shared
        if let cached = handles.withLock({ $0[key]?.database }),
            cached.configuration.encryptionKey == configuration.encryptionKey,
            cached.configuration.readOnly == configuration.readOnly
        {
            logger.log(level: .detail, "DB: Realm at '\(path)' for \(owner): the open handle")
            logger.log(level: .trace, "DB: '\(path)' shows commit \(cached.visibleCommit)")
            return cached
        }
        logger.log(level: .detail, "DB: Open file '\(path)' for \(owner)")
        // A Realm of the main thread belongs to the main actor even when plain
        // code opened it, so it refreshes and notifies on the main queue, as
        // Realm's main-thread Realm does through its run loop.
        let confinement: (any Actor)? = isolation ?? (Database.isOnMainQueue ? MainActor.shared : nil)
        let database = try realmErrors { try Database(configuration: configuration, isolation: confinement) }
        logger.log(
            level: .trace,
            "DB: '\(path)' opened at commit \(database.visibleCommit), schema version \(database.storedSchemaVersion)")
        handles.withLock { handles in
            handles = handles.filter { $0.value.database != nil }
            handles[key] = WeakHandle(database: database)
        }
        // As a Realm: references pin their version, objects without a primary
        // key are equal only to themselves, and until its first read
        // the Realm reads the version of a reference it resolves.
        database.pinsReferences = true
        database.comparesUnkeyedObjectsByIdentity = true
        database.releaseSnapshot()
        return database
    }
}

/// Realm traps where its Swift API does not throw; so does TroveRealm.
func realmMisuse(_ what: String, _ error: any Swift.Error) -> Never {
    let message = (error as? TroveError)?.message ?? "\(error)"
    fatalError("TroveRealm: \(what): \(message)")
}

/// Realm's free function: the schema version of the file at `fileURL`, read
/// without opening it for the app's model.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    var configuration = Trove.Configuration(fileURL: fileURL)
    // Read-only unless a Realm of this process has the file open (handles on
    // one file share its settings); either way nothing is written.
    configuration.readOnly = !Environment.isOpen(path: fileURL.path)
    configuration.acceptsAnySchemaVersion = true
    configuration.encryptionKey = encryptionKey
    guard FileManager.default.fileExists(atPath: fileURL.path) else {
        // Realm's code and words: no file is a Realm not yet initialized.
        throw Realm.Error(
            TroveError(.corruptFile, "Realm at path '\(fileURL.path)' has not been initialized.", path: fileURL.path))
    }
    return try realmErrors { try Database(configuration: configuration, isolation: nil).storedSchemaVersion }
}
