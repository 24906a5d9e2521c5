import Foundation
import TroveStorage

/// A handle on one database file: the entry point for reading and writing.
///
/// ```swift
/// let db = try Database(configuration: .init(fileURL: url))
/// try db.write {
///     try db.add(photo)
/// }
/// let recent = db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
/// ```
///
/// A handle reads from one snapshot of the file until it refreshes: after its
/// own commits, and on ``refresh()``. Handles are cheap: every handle on a
/// file in a process shares one LMDB environment. A handle is not `Sendable`;
/// open one per thread, task or actor.
public final class Database {
    /// The configuration the handle was opened with.
    public let configuration: Configuration
    let environment: Environment
    let catalog: Catalog

    // (The state every read or write passes through skips Swift's dynamic
    // exclusivity checks, ~100 instructions each, a dozen a single-object
    // commit: a handle is used in one isolation domain, `checkIsolation()`.)
    @exclusivity(unchecked) var snapshot: ReadTransaction?
    /// A parked snapshot kept for reuse: with observers, a refresh keeps the
    /// old snapshot open while they compare, and parks it here after.
    @exclusivity(unchecked) var spareSnapshot: ReadTransaction?
    /// While observers are told of new commits: what they compare.
    @exclusivity(unchecked) var delivery: Delivery?
    /// How many times an observer of results ran its query again and
    /// compared in full, because the change log could not tell it (for tests).
    var fullComparisons = 0
    /// Records what each of this handle's writes changed (one at a time).
    let changeRecorder = ChangeRecorder()
    /// The cluster caches of this handle's last write, by table slot, with
    /// the transaction id it committed as: when the handle's next write is
    /// the file's next (nobody committed in between), it starts with them
    /// (a run of small writes to the same objects reads and decodes their
    /// clusters once).
    @exclusivity(unchecked) var carriedClusterCaches: (commit: Int, caches: [UInt32: any TransactionCache])?
    /// The change log's tables, each once a write of this handle committed
    /// with it (tables are never dropped: they stay).
    @exclusivity(unchecked) var changeLogTables = ChangeLog.Tables()
    /// A finished write's state, kept for the handle's next write (``WriteState/park()``).
    @exclusivity(unchecked) var spareWriteState: WriteState?
    @exclusivity(unchecked) var writeState: WriteState? {
        didSet {
            columnWrites.removeAll(keepingCapacity: true)
            columnWritesAscendFrom = 0
            writeSerial &+= 1
        }
    }
    /// Whether integer primary keys are found through a primary key index
    /// (as other primary keys are) instead of being the object keys: set in
    /// new encrypted files (``Catalog/integerKeysKey``).
    var integerKeysAreIndexed = false
    /// Runs inside every write of this handle just before it commits (see
    /// ``CommitHook``); nil, the default, costs nothing.
    @exclusivity(unchecked) package var beforeCommit: CommitHook?
    /// The column writes of this write transaction, each with the generation
    /// it moved to (see ``recordStillCurrent(kept:table:objectKey:)``).
    @exclusivity(unchecked) var columnWrites: [(generation: UInt64, table: ObjectIdentifier, objectKey: UInt64)] = []
    /// Where the last run of ``columnWrites`` starts whose entries are of one
    /// table with object keys ascending (a loop setting each object of a
    /// `Results` in turn): a copy kept inside it is checked by binary search.
    @exclusivity(unchecked) var columnWritesAscendFrom = 0
    /// Bumped whenever what this handle sees may have changed; results
    /// re-evaluate when it moves.
    /// (Exempt from dynamic exclusivity checks, like an object's managed
    /// state: a handle stays in one isolation domain, and every property read
    /// and write reads it.)
    @exclusivity(unchecked) var generation: UInt64 = 0
    /// Moves on whenever a write begins or ends on this handle: an object
    /// that reads a cluster of a write's cache holds the number it had then,
    /// so it looks again once that write is over.
    @exclusivity(unchecked) var writeSerial: UInt64 = 0
    @exclusivity(unchecked) var objectBindings: [ObjectIdentifier: ObjectBinding] = [:] {
        didSet { lastBinding = nil }
    }
    /// The binding asked for last: a loop of adds or lookups asks for one
    /// class again and again.
    @exclusivity(unchecked) var lastBinding: ObjectBinding?
    var valueBindings: [ObjectIdentifier: ValueBinding] = [:]
    /// Each stored type's subclasses, read from the catalog of one snapshot
    /// (transaction id and ``generation``).
    var subclassNames: (stamp: SubclassStamp?, byType: [String: [String]]) = (nil, [:])
    var storedAncestors: [String: [String]] = [:]
    /// For each type, the stored types that link to it (``incomingLinks(to:)``),
    /// found in the stored schemas whose keys and values were `schemas`
    /// (``Catalog/storedSchemaBytes(in:)``); `confirmedAt`: a commit (its
    /// transaction id) after which the file's stored schemas were those.
    @exclusivity(unchecked) var incomingLinkCache: (schemas: [UInt8], byType: [String: [String]], confirmedAt: Int?)?
    /// The last answer of ``incomingLinks(to:)``, with the commit after
    /// which it holds as ``incomingLinkCache``'s `confirmedAt` does.
    @exclusivity(unchecked) var lastIncomingLinks: (type: String, links: [(table: TableInfo, column: Int)], confirmedAt: Int?)?
    /// The types the file syncs (TroveSync's; none for a file that never
    /// synced) as the write with transaction id `readIn` read them: still so
    /// in the write of id `readIn + 1`, which sees the file that one left
    /// (only a write through a sync client changes them, and such a write does not read them here).
    @exclusivity(unchecked) var syncedTypes: (types: [String], readIn: Int)?
    /// Stored counters (object keys, auto-increment values) as the commit
    /// with transaction id `confirmedAt` left them, or higher since: counters
    /// only grow, so a write right after it need not store one again for a
    /// delete below it (``noteDeleted(objectKey:values:table:_:)``).
    @exclusivity(unchecked) var storedCounters: (values: [String: UInt64], confirmedAt: Int)?
    /// Raised by ``invalidateHandedOut()``: objects and results made before
    /// it report `isInvalidated` (Realm's `invalidate()`).
    @exclusivity(unchecked) package internal(set) var invalidationEpoch: UInt32 = 0
    /// Parsed query texts, so a query run again with new arguments is not parsed again.
    var predicateTemplates: [String: PredicateParser.Template] = [:]
    /// Types opened by name only (``dynamicObjects(_:)``), without a model,
    /// and the snapshot in which each was last found to match the stored schema.
    var dynamicTables: [String: (table: TableInfo, checkedAt: Int)] = [:]
    /// How ``DynamicObject``s read each stored type, by type name.
    var dynamicBindings: [String: ObjectBinding] = [:]
    /// Registered change observers (``Results/observe(keyPaths:_:)`` and
    /// friends), by token id, and the snapshot they last saw.
    @exclusivity(unchecked) var observers: [Int: any ChangeObserver] = [:]
    /// Objects of ``ObservationTracked`` classes read here, for Observation.
    @exclusivity(unchecked) var trackedObjects: TrackedObjects?
    var nextObserverID = 0
    @exclusivity(unchecked) var deliveredTransaction = -1
    /// True while observers hear of this handle's own commit (not of a refresh).
    @exclusivity(unchecked) package internal(set) var isDeliveringOwnCommit = false
    /// The isolation the handle was opened in (`#isolation`): where
    /// autorefresh delivers. nil for a handle opened outside any actor.
    package let isolation: (any Actor)?
    /// Whether references made from this handle pin the snapshot they were
    /// made at (TroveRealm's handles, as Realm's references do; see ``SnapshotPin``).
    package var pinsReferences = false
    /// Whether live objects of a type without a primary key read from this
    /// handle are `==` only to themselves (TroveRealm's handles, as Realm's
    /// objects are); otherwise the same row is the same object.
    package var comparesUnkeyedObjectsByIdentity = false
    /// True from ``releaseSnapshot()`` until the handle reads again: Realm's
    /// "not in a read transaction", when a resolved reference may set the
    /// version the handle reads.
    package private(set) var awaitsFirstRead = false
    /// True while the initializer runs: a handle may be opened for an actor
    /// from outside it (`Realm(actor:)`), and its own setup is not a use.
    private var isOpening = true
    var watcherListener: Int?

    /// Whether the handle follows other handles' and processes' commits by
    /// itself (default on): after each commit it refreshes on the isolation
    /// it was opened in — releasing its old snapshot, so the file does not
    /// grow under an idle handle — and delivers its notifications there.
    ///
    /// A handle opened outside any actor (plain synchronous code) sees
    /// other commits on ``refresh()``; so does one with autorefresh off.
    public var autorefresh = true {
        didSet { updateAutorefresh() }
    }

    /// Whether the handle is a frozen snapshot (see ``freeze(isolation:)``): it never
    /// moves to a newer commit and cannot write.
    @exclusivity(unchecked) public internal(set) var isFrozen = false

    /// The newest file format this Trove reads and writes; a file with a
    /// higher one was written by a newer Trove. New files start at 1; a file
    /// is raised to ``fullTextFormatVersion`` when it gains a full-text index,
    /// so that a Trove that cannot keep the index in step refuses to write it,
    /// and to ``clustersFormatVersion`` (now ``clusterStampsFormatVersion``) when it gains a type in clusters.
    static let formatVersion: UInt32 = 14
    /// The format of an encrypted file whose change log is sealed (and so
    /// authenticated): a Trove before it would read the log as plain.
    static let sealedLogFormatVersion: UInt32 = 4
    /// The format of an encrypted file whose keys hold tokens in place of
    /// user data (``KeyTokens``): a Trove before it would not find its tables.
    static let keyTokensFormatVersion: UInt32 = 5
    /// The format of a file with a full-text index.
    static let fullTextFormatVersion: UInt32 = 2
    /// The format of a file that stores a type in column clusters (`clu:`
    /// tables, which a Trove before them would not see).
    static let clustersFormatVersion: UInt32 = 3
    /// The format of a file whose clusters carry stamps
    /// (``ClusterTable/stampPart``): a Trove before them would leave a
    /// deleted cluster's stamp behind, where it reads as a damaged cluster.
    /// A plain file with clusters is raised to it when it is opened for writing.
    static let clusterStampsFormatVersion: UInt32 = 6
    /// The format of a file whose integer primary keys are not its object
    /// keys (``Catalog/integerKeysAreIndexed(in:)``: a new encrypted file,
    /// where an object key in the clear would show the primary key): a
    /// Trove before it would look objects up by the primary key's value.
    static let indexedIntegerKeysFormatVersion: UInt32 = 7
    /// The format of a file whose clusters may hold deleted objects' slots
    /// (``ClusterTable/deletedPart``), raised by the first write that
    /// leaves one: a Trove before it would read those objects as stored.
    static let deletedSlotsFormatVersion: UInt32 = 8
    /// The format of a file whose cluster columns may have patches
    /// (``ClusterTable/patchPart(_:)``), raised by the first write that
    /// stores one: a Trove before it would read the columns' old values.
    static let columnPatchesFormatVersion: UInt32 = 9
    /// The format of a file with a list whose table holds chunks of
    /// elements (``ListChunk``): a Trove before them would read a chunk as
    /// one element.
    static let packedListsFormatVersion: UInt32 = 10
    /// The format of a file whose cluster columns may hold fewer values than
    /// their cluster's keys, the objects appended since a column was
    /// written being in its patch (``ColumnPatch``), raised by the first
    /// write that stores one: a Trove before it would find the column damaged.
    static let appendPatchesFormatVersion: UInt32 = 11
    /// The format of a file whose clusters may hold a tail
    /// (``ClusterTable/tailPart``: objects appended since the cluster's keys
    /// were written, and its columns' patches), raised by the first write
    /// that stores one: a Trove before it would not see those objects.
    static let clusterTailsFormatVersion: UInt32 = 12
    /// The format of a file whose change log keeps records in two tables
    /// (``ChangeLog``: `changes.1` holds the blocks of odd number), raised by
    /// the first record stored there: a Trove before it would not find those
    /// records, and its compaction would copy them, where a later commit
    /// could reuse their ids.
    static let changeLogBlocksFormatVersion: UInt32 = 13
    /// The format of a file whose clusters may hold their deleted-slot bits
    /// after their stamp (``ClusterTable/stampPart``), raised by the first
    /// write that stores them so: a Trove before it would read the stamp as
    /// damaged and the deleted objects as stored.
    static let deletesWithStampFormatVersion: UInt32 = 14

    /// Opens (creating if needed) the database at `configuration.fileURL`.
    ///
    /// Throws `TroveError` when the file cannot be opened, is not a Trove
    /// database, was written by a newer Trove, or holds a schema that does
    /// not match the types listed in `objectTypes`/`valueTypes`.
    ///
    /// A missing file, and an existing file of 0 bytes, are started as a new
    /// database (LMDB cannot tell an empty file from a new one; a failed copy
    /// or a full disk can leave one). Opened read-only, an empty file is
    /// refused with `TroveError.Kind.corruptFile`, and the `trove` tool
    /// refuses it always. Check the file's size first if an empty file means
    /// lost data to your app.
    ///
    /// ```swift
    /// let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [PhotoData.self]))
    /// ```
    public init(configuration: Configuration = Configuration(), isolation: (any Actor)? = #isolation) throws {
        self.configuration = configuration
        self.isolation = isolation
        try Database.prepareOnDisk(configuration)
        let options = configuration.environmentOptions
        let path = configuration.fileURL.path
        if configuration.readOnly, !FileManager.default.fileExists(atPath: path) {
            throw TroveError(.fileAccess, "cannot open \(path) read-only: the file does not exist", path: path)
        }
        environment = try Environment.open(path: path, options: options)
        var shared = environment.options
        // Settings of the first open only: they need not agree.
        shared.initialMapSize = options.initialMapSize
        shared.reservesMap = options.reservesMap
        shared.tablesCheckedOnOpen = options.tablesCheckedOnOpen
        shared.maxTables = options.maxTables
        shared.fileMode = options.fileMode
        shared.enforcesFileMode = options.enforcesFileMode
        if shared.encryptionKey != options.encryptionKey {
            throw TroveError(
                .wrongEncryptionKey,
                options.encryptionKey == nil
                    ? "\(path) is open in this process with an encryption key; open it with the same Configuration.encryptionKey"
                    : "\(path) is open in this process with another encryption key (or none); every handle must use the file's key",
                path: path)
        }
        if shared != options {
            throw TroveError(
                .invalidValue,
                "\(path) is already open in this process with other settings (durability, maximum file size or read-only); every handle on one file must use the same ones",
                path: path)
        }
        catalog = environment.attachment("trove.catalog") { Catalog() }
        try prepareFile()
        integerKeysAreIndexed = try Catalog.integerKeysAreIndexed(in: readTransaction())
        try migrateIfNeeded()
        for type in configuration.objectTypes { _ = try objectBinding(for: type) }
        for type in configuration.valueTypes { _ = try valueBinding(for: type) }
        updateAutorefresh()
        isOpening = false
    }

    /// Traps when a handle opened in an actor is used outside it. Swift 6
    /// refuses most such uses at compile time (the handle is not `Sendable`),
    /// but region-based isolation lets a handle nothing else refers to *yet*
    /// be sent to another actor — and the handle itself registered for
    /// autorefresh on the actor it was opened in, which the compiler cannot see.
    @inline(__always)
    func checkIsolation() {
        guard let isolation, !isOpening else { return }
        // The main actor's own check traps inside libdispatch without a word:
        // ask the main queue instead (which runs on worker threads once a
        // program calls dispatch_main(), so the thread alone does not tell).
        if isolation is MainActor {
            if !Database.isOnMainQueue { fatalError(isolationMisuse(isolation)) }
            return
        }
        isolation.preconditionIsolated(isolationMisuse(isolation))
    }

    /// Whether the code runs on the main thread or the main queue (which
    /// worker threads drain once a program calls `dispatch_main()`).
    package static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueMark) != nil
    }

    /// Set on the main queue, so that code can tell it runs there.
    private static let mainQueueMark: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    private func isolationMisuse(_ isolation: any Actor) -> String {
        "Trove: this Database handle on \(path) was opened in \(type(of: isolation)) and is used from another isolation domain; open a handle where you use it (one per actor or task: handles on one file share its storage)"
    }

    /// Opens the database file at `url` with the default configuration.
    public convenience init(fileURL url: URL, isolation: (any Actor)? = #isolation) throws {
        try self.init(configuration: Configuration(fileURL: url), isolation: isolation)
    }

    deinit {
        if let id = watcherListener {
            environment.attachment("trove.commit-watcher") { CommitWatcher(environment: environment) }.remove(id)
        }
        writeState?.transaction.abort()
        writeState?.previousSnapshot?.end()
        snapshot?.end()
        spareSnapshot?.end()
    }

    /// The path of the database file.
    public var path: String { environment.path }

    /// The parsed form of a query text with `arguments` filled in.
    func parsedPredicate(_ text: String, arguments: [Any?]) throws -> (QueryExpression, [QuerySuffix]) {
        if let template = predicateTemplates[text] { return (try template.substituting(arguments), template.suffixes) }
        let template = try PredicateParser.parseTemplate(text)
        if predicateTemplates.count >= 256 { predicateTemplates.removeAll(keepingCapacity: true) }
        predicateTemplates[text] = template
        return (try template.substituting(arguments), template.suffixes)
    }

    // MARK: Snapshots

    /// The transaction reads go through: the open write, or the snapshot.
    func readTransaction() -> Transaction {
        if let writeState { return writeState.transaction }
        do {
            if let snapshot {
                if snapshot.isParked {
                    awaitsFirstRead = false
                    try snapshot.renew()
                    keepClusterViews(snapshot)
                }
                return snapshot
            }
            awaitsFirstRead = false
            if let spare = spareSnapshot {
                spareSnapshot = nil
                snapshot = spare
                try spare.renew()
                keepClusterViews(spare)
                return spare
            }
            let fresh = try ReadTransaction(environment: environment)
            snapshot = fresh
            return fresh
        } catch {
            fatalError("Trove: cannot start reading \(path): \(error)")
        }
    }

    /// Gives a renewed snapshot the cluster views its previous one read that
    /// the commits in between left alone, as the change log tells
    /// (``ClusterViewCache/carry(_:mapStart:in:)``): a reader that refreshes
    /// often beside a writer would otherwise read every cluster again.
    private func keepClusterViews(_ snapshot: ReadTransaction) {
        guard let parked = snapshot.takeParkedCache() else { return }
        let caches = parked.entries.compactMapValues { $0 as? ClusterViewCache }
        guard !caches.isEmpty, let changes = ChangeLog.changes(after: parked.id, through: snapshot.id, in: snapshot)
        else { return }
        let mapStart = environment.mapStart
        for (slot, cache) in caches where cache.carry(changes, mapStart: mapStart, in: snapshot) {
            snapshot.readCache[slot] = cache
        }
    }

    /// Moves this handle to the latest committed state of the file, so that
    /// results and objects show what other handles and processes committed.
    /// Does nothing inside a write, which already sees the latest state.
    public func refresh() { refresh(silencingHandleObservers: false) }

    /// ``refresh()``; `silencingHandleObservers`: observers of the handle
    /// itself (``observe(_:)``) are not called (collection and object
    /// observers still are, for what changed).
    func refresh(silencingHandleObservers: Bool) {
        checkIsolation()
        guard writeState == nil, !isFrozen else { return }
        generation &+= 1
        awaitsFirstRead = false
        let silenced = silencingHandleObservers ? Set(observers.filter { $0.value is DatabaseObserver }.keys) : []
        guard !observers.isEmpty, let previous = snapshot, !previous.isParked else {
            snapshot?.reset()  // keeps the reader slot; the next read renews it
            return deliverChanges(skipping: silenced)
        }
        // Observers compare the snapshot they saw with the new one.
        snapshot = nil
        deliverChanges(skipping: silenced, previous: previous)
        retire(previous)
    }

    /// Lets go of the snapshot until the handle next reads (it then reads
    /// the latest commit), unless it writes or is frozen; a reference
    /// resolved before that read sets the version instead
    /// (``adoptSnapshot(_:)``).
    package func releaseSnapshot() {
        guard writeState == nil, !isFrozen else { return }
        snapshot?.reset()
        awaitsFirstRead = true
        // Objects reading in place point at the released snapshot's pages: they look again.
        generation &+= 1
    }

    /// Reads from `pinned`, a snapshot a reference pinned, if the handle has
    /// not read since ``releaseSnapshot()`` and no observer saw a version;
    /// returns whether it does (else `pinned` stays the caller's).
    package func adoptSnapshot(_ pinned: ReadTransaction) -> Bool {
        guard awaitsFirstRead, writeState == nil, !isFrozen, observers.isEmpty else { return false }
        if let previous = snapshot {
            snapshot = nil
            retire(previous)
        }
        snapshot = pinned
        generation &+= 1
        awaitsFirstRead = false
        return true
    }

    /// Parks a snapshot observers no longer need, for the next refresh.
    func retire(_ previous: ReadTransaction) {
        previous.reset()
        if spareSnapshot == nil { spareSnapshot = previous } else { previous.end() }
    }

    // MARK: File preparation

    /// Checks that the file is a Trove database of a format this version
    /// reads, creating the catalog in a new file. Check and creation happen in
    /// one write transaction, so two handles opening a new file at once agree.
    private func prepareFile() throws {
        try checkEncryptionKey()
        if let meta = try readTransaction().existingTable(Catalog.metaTable), readTransaction().canSee(meta) {
            try checkFormat(meta, in: readTransaction())
            if !configuration.readOnly,
                try !changeLogIsReadable(in: readTransaction()) || needsStamps(meta)
                    || !Catalog.listsArePacked(in: readTransaction())
            {
                try withWriteTransaction { transaction in
                    if let meta = try transaction.existingTable(Catalog.metaTable) {
                        try sealChangeLog(meta, in: transaction)
                        try stampClusters(meta, in: transaction)
                        try packLists(in: transaction)
                    }
                }
            }
            return
        }
        // An encrypted file starts with its salt, in the key-check table.
        let existing = try environment.tableNames().filter { $0 != Catalog.keyCheckTable }
        if configuration.readOnly {
            throw TroveError(
                .corruptFile,
                existing.isEmpty
                    ? "\(path) is empty: it has no Trove catalog (it opens read-only, so none was created)"
                    : "\(path) is an LMDB file but not a Trove database (it has tables \(existing.prefix(5).joined(separator: ", ")))",
                path: path)
        }
        refresh()
        try withWriteTransaction { transaction in
            if let meta = try transaction.existingTable(Catalog.metaTable) {
                try checkFormat(meta, in: transaction)
                try sealChangeLog(meta, in: transaction)
                try stampClusters(meta, in: transaction)
                return
            }
            if !existing.isEmpty {
                throw TroveError(
                    .corruptFile,
                    "\(path) is an LMDB file but not a Trove database (it has tables \(existing.prefix(5).joined(separator: ", ")))",
                    path: path)
            }
            // Created in the same transaction as the catalog: a file is encrypted from its first byte or never.
            try Catalog.writeKeyCheck(in: transaction)
            let meta = try transaction.openTable(Catalog.metaTable)!
            let format: UInt32 =
                environment.keyTokens != nil
                ? Database.indexedIntegerKeysFormatVersion
                : environment.cipher != nil ? Database.sealedLogFormatVersion : 1
            try Catalog.put(format.littleEndian, key: "format", in: meta, transaction)
            if environment.keyTokens != nil {
                // Object keys lie in the clear in every table: they must not be integer primary keys.
                try Catalog.put(UInt8(1), key: Catalog.integerKeysKey, in: meta, transaction)
            }
            try Catalog.put(configuration.schemaVersion.littleEndian, key: "schemaVersion", in: meta, transaction)
            try Catalog.put(UInt8(1), key: Catalog.packedListsKey, in: meta, transaction)
        }
    }

    /// An encrypted file holds a value sealed with its key: it must open
    /// with the configured key. A plain file must not be given one.
    private func checkEncryptionKey() throws {
        try Database.checkEncryptionKey(of: environment, in: readTransaction())
    }

    static func checkEncryptionKey(of environment: Environment, in transaction: Transaction) throws {
        let path = environment.path
        let check = try transaction.existingTable(Catalog.keyCheckTable).flatMap { transaction.canSee($0) ? $0 : nil }
        guard let check else {
            if environment.cipher != nil, let meta = try transaction.existingTable(Catalog.metaTable), transaction.canSee(meta) {
                throw TroveError(
                    .wrongEncryptionKey,
                    "\(path) is not encrypted, but an encryption key was given; open it without one (writeCopy(to:encryptionKey:) makes an encrypted copy)",
                    path: path)
            }
            return
        }
        guard let cipher = environment.cipher else {
            throw TroveError(
                .wrongEncryptionKey, "\(path) is encrypted; open it with its Configuration.encryptionKey", path: path)
        }
        let opens = try Catalog.keyCheckContext.withUnsafeBytes { context in
            try transaction.withValue(in: check, key: context) { sealed -> Bool in
                guard let sealed else {
                    // A new file holds only its salt until the catalog is written with the key check.
                    return try transaction.existingTable(Catalog.metaTable).map { !transaction.canSee($0) } ?? true
                }
                var plain = [UInt8](repeating: 0, count: max(sealed.count - Cipher.overhead, 0))
                return plain.withUnsafeMutableBytes { cipher.open(sealed, table: Catalog.keyCheckTable, key: context, into: $0) }
                    && plain == Catalog.keyCheckPlaintext
            }
        }
        guard opens else {
            throw TroveError(
                .wrongEncryptionKey, "the encryption key does not open \(path); it was encrypted with another key", path: path)
        }
    }

    private func checkFormat(_ meta: Table, in transaction: Transaction) throws {
        guard let version = try Catalog.integer(UInt32.self, key: "format", in: meta, transaction) else {
            throw TroveError(.corruptFile, "\(path) has no file format version; it is not a Trove database", path: path)
        }
        if version > Database.formatVersion {
            throw TroveError(
                .fileFormatTooNew,
                "\(path) uses file format \(version), this Trove reads up to \(Database.formatVersion); update Trove to open it",
                path: path)
        }
    }

    /// An encrypted file written before its change log was sealed has plain
    /// records there: they are dropped (a handle that finds no record for a
    /// commit compares in full) and the format raised, so the log is sealed
    /// from here on and older Troves, which would read it as plain, refuse the file.
    private func sealChangeLog(_ meta: Table, in transaction: WriteTransaction) throws {
        guard environment.cipher != nil,
            try Catalog.integer(UInt32.self, key: "format", in: meta, transaction) ?? 1 < Database.sealedLogFormatVersion
        else { return }
        for name in ChangeLog.tableNames {
            if let log = try transaction.existingTable(name) { try transaction.clear(log) }
        }
        try Catalog.raiseFormat(to: Database.sealedLogFormatVersion, in: transaction)
    }

    /// A plain file with clusters, opened for writing, is raised to
    /// ``clusterStampsFormatVersion`` before this handle writes a stamp: a
    /// Trove before stamps would leave a deleted cluster's stamp behind.
    private func stampClusters(_ meta: Table, in transaction: WriteTransaction) throws {
        guard try needsStamps(meta, in: transaction) else { return }
        try Catalog.raiseFormat(to: Database.clusterStampsFormatVersion, in: transaction)
    }

    private func needsStamps(_ meta: Table, in transaction: Transaction? = nil) throws -> Bool {
        guard environment.cipher == nil,
            let format = try Catalog.integer(UInt32.self, key: "format", in: meta, transaction ?? readTransaction())
        else { return false }
        return format >= Database.clustersFormatVersion && format < Database.clusterStampsFormatVersion
    }

    /// A file from before list chunks, opened for writing, has every list
    /// rewritten as chunks in the transaction that opens it (a crash before
    /// it commits leaves the file as it was), and the format raised.
    private func packLists(in transaction: WriteTransaction) throws {
        guard try !Catalog.listsArePacked(in: transaction) else { return }
        var hasLists = false
        for name in try environment.tableNames() where name.hasPrefix("list:") {
            guard let list = try transaction.existingTable(name) else { continue }
            hasLists = true
            var lists: [(owner: UInt64, elements: ListElements)] = []
            try transaction.withCursor(on: list) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entry = try cursor.next()
                    // A key of another size was never an element (verify reports it); it does not survive.
                    guard current.key.count == 12, let owner = Database.owner(of: current.key) else { continue }
                    if lists.last?.owner != owner { lists.append((owner, ListElements())) }
                    lists[lists.count - 1].elements.append(current.value)
                }
            }
            try transaction.clear(list)
            for (owner, elements) in lists {
                try Database.putChunks(elements.chunks(), from: 0, owner: owner, in: list, transaction)
            }
        }
        try Catalog.put(UInt8(1), key: Catalog.packedListsKey, in: try transaction.openTable(Catalog.metaTable)!, transaction)
        if hasLists { try Catalog.raiseFormat(to: Database.packedListsFormatVersion, in: transaction) }
    }

    /// Whether the change log's records are sealed, or the file is plain:
    /// false for an encrypted file of an older format, opened read-only.
    func changeLogIsReadable(in transaction: Transaction) -> Bool {
        guard environment.cipher != nil else { return true }
        guard let meta = try? transaction.existingTable(Catalog.metaTable), transaction.canSee(meta) else { return true }
        return ((try? Catalog.integer(UInt32.self, key: "format", in: meta, transaction)) ?? 1)
            >= Database.sealedLogFormatVersion
    }

    /// Runs `body` in a write transaction of its own (used outside user writes:
    /// creating the file, registering a type).
    func withWriteTransaction(_ body: (WriteTransaction) throws -> Void) throws {
        let transaction = try WriteTransaction(environment: environment)
        let commit = transaction.id
        do {
            try body(transaction)
            // A catalog change: observers compare in full.
            var record = ChangeRecord()
            record.everything = true
            try transaction.writeOutCaches()
            try ChangeLog.append(record, in: transaction)
            try transaction.commit()
        } catch {
            transaction.abort()
            throw error
        }
        // Registering types is not news to the handle's observers when nothing
        // else was committed since they last heard (Realm creates its tables
        // when it opens, and tells no one).
        refresh(silencingHandleObservers: deliveredTransaction == commit - 1)
    }
}

/// Which catalog ``Database/subclassNames`` was read from: a snapshot, the
/// handle's generation, and the types its open write created.
struct SubclassStamp: Equatable {
    let transaction: Int
    let generation: UInt64
    let pendingTables: Int
}
