import Foundation
import TroveStorage

/// Where a database lives and how it is opened. `Sendable`: build it once,
/// share it, and open a ``Database`` handle from it wherever you need one.
///
/// ```swift
/// let config = Configuration(fileURL: URL(fileURLWithPath: "photos.trove"),
///                            objectTypes: [PhotoData.self])
/// let db = try Database(configuration: config)
/// ```
public struct Configuration: Sendable {
    /// How hard a commit works to survive a power cut.
    public enum Durability: Sendable {
        /// Every commit is on disk before `write` returns (the default).
        case full
        /// The data is synced but the meta page is not: a power cut may lose
        /// the last commit, never corrupt the file (LMDB's `MDB_NOMETASYNC`).
        case relaxed
        /// Nothing is synced; the operating system writes when it likes. A
        /// crash of the machine (not of the process) may lose recent commits.
        case none
    }

    /// The database file. Its lock file sits beside it (`<file>-lock`).
    public var fileURL: URL
    /// Names an in-memory database instead of a file: handles with the same
    /// identifier in this process share it, and it disappears when the last
    /// one closes. (It lives in shared memory — `/dev/shm` on Linux, the
    /// temporary directory elsewhere — under a name unique to the process.)
    ///
    /// ```swift
    /// var config = Configuration()
    /// config.inMemoryIdentifier = "preview"
    /// ```
    public var inMemoryIdentifier: String? {
        didSet {
            if let inMemoryIdentifier { fileURL = Configuration.memoryFileURL(inMemoryIdentifier) }
        }
    }

    static func memoryFileURL(_ identifier: String) -> URL {
        let safe = String(identifier.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }.prefix(100))
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return URL(fileURLWithPath: base).appendingPathComponent(
            "trove-memory-\(ProcessInfo.processInfo.processIdentifier)-\(safe)-\(identifier.hashValue & 0xFFFF_FFFF).trove")
    }
    /// The version of your model; see the migration guide.
    public var schemaVersion: UInt64
    /// Model classes to check against the file when it opens. Optional:
    /// types are registered on first use, but listing them turns a schema
    /// mismatch into an error thrown by `Database(configuration:)`.
    public var objectTypes: [Object.Type]
    /// ``Persistable`` value types to check when the file opens.
    public var valueTypes: [any Persistable.Type]
    /// The largest the file may grow, in bytes; nil for no limit. A write that
    /// needs more fails with `TroveError.Kind.fileSizeLimitReached` and
    /// leaves the file as it was.
    public var maximumFileSize: Int?
    /// How far each commit goes to reach the disk before `write` returns;
    /// ``Configuration/Durability/full`` by default. Every handle on one file in
    /// a process must use the same setting (another throws
    /// `TroveError.Kind.invalidValue`).
    ///
    /// ```swift
    /// var config = Configuration(fileURL: url, objectTypes: [PhotoData.self])
    /// config.durability = .relaxed   // faster commits; a power cut may lose the last one
    /// ```
    public var durability: Durability
    /// Open the file for reading only: no write is possible, the file is
    /// never changed (not even to register a type), and it must exist.
    public var readOnly = false
    /// Runs once when a file at a lower schema version opens, inside the
    /// migration's write transaction, with the file's old version. List every
    /// model type in ``objectTypes`` so the migration covers them.
    public var migration: (@Sendable (Migration, UInt64) throws -> Void)?
    /// A pre-filled database (say, bundled with the app) copied to ``fileURL``
    /// when no file is there yet.
    public var seedFileURL: URL?
    /// Deletes the file and starts empty when the model needs a migration
    /// (another schema version, or a change that is not additive): for caches.
    public var deleteDatabaseIfMigrationNeeded = false
    /// Asked on open, when no other handle of the process has the file open,
    /// with the file's size and the bytes in use; returning true compacts the
    /// file first (a copy without free pages replaces it).
    ///
    /// ```swift
    /// config.shouldCompactOnLaunch = { total, used in total > 100 << 20 && used * 2 < total }
    /// ```
    public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
    /// A 64-byte key that encrypts the file's contents at rest with
    /// AES-256-GCM (as Realm's `encryptionKey`); nil for none. Opening an
    /// encrypted file needs the same key; a wrong or missing one throws
    /// `TroveError.Kind.wrongEncryptionKey`.
    ///
    /// Encrypted: every property value of every object, list, set and map
    /// element and map value, and the schema catalog. Not encrypted, because
    /// LMDB must order them: the keys of tables — values of indexed
    /// properties and primary keys, map keys and set elements — plus type
    /// and table names and sizes. Keep secrets in properties that are not
    /// indexed, not primary keys, and not in a `MutableSet` or a map key.
    /// Deleted objects' keys and sealed values stay on free pages until the
    /// file is compacted (``Database/compact(configuration:)``).
    ///
    /// Each file derives its own AES key from this one (HKDF-SHA256 with a
    /// random salt kept in the file), and every value is authenticated
    /// together with its table and key: a value moved to another object,
    /// table or file fails to open (`TroveError.Kind.corruptFile`). What
    /// per-value encryption cannot detect is the file as a whole put back to
    /// an older copy of itself. For files only the app should read, also set
    /// ``filePermissions`` to `0o600`.
    ///
    /// ```swift
    /// var config = Configuration(fileURL: url)
    /// config.encryptionKey = try loadKeyFromKeychain()   // 64 bytes
    /// ```
    public var encryptionKey: Data?

    /// Open the file at whatever schema version it is at, without
    /// migrating: for code without the app's model — tools, dynamic objects
    /// (``Database/dynamicObjects(_:)``), backups — which the `trove` tool
    /// uses. ``schemaVersion`` and ``migration`` are then ignored; model types
    /// used through such a handle must still match the stored schema (or
    /// differ only additively), as always.
    ///
    /// ```swift
    /// var config = Configuration(fileURL: url)
    /// config.acceptsAnySchemaVersion = true
    /// let db = try Database(configuration: config)
    /// print(db.storedSchemaVersion)   // the app's version, say 3
    /// ```
    public var acceptsAnySchemaVersion = false

    /// Check the structure of every page of the file when it opens, for
    /// files from elsewhere (an import, a download, a user's document). LMDB
    /// follows the page headers and offsets it finds, so a damaged or crafted
    /// page could make a read fault; with this on, such a file is refused with
    /// `TroveError.Kind.corruptFile` naming the page. Off by default: the
    /// check reads the whole file, and Trove's own files are checked where
    /// every launch reads (the catalog) while every key and value read is
    /// bounded by the file. The `trove` tool turns it on (`--trust` skips it).
    ///
    /// ```swift
    /// var config = Configuration(fileURL: downloadedURL)
    /// config.readOnly = true
    /// config.checksEveryPageOnOpen = true
    /// ```
    public var checksEveryPageOnOpen = false

    /// The permission bits of the database file and its lock file, for
    /// files only this user should read: `0o600`. Applied when Trove creates
    /// them (the process's umask still applies), and an existing file that
    /// allows more is narrowed when opened for writing. Nil (the default)
    /// creates files `0o644` less the umask, like SQLite, and leaves existing
    /// ones alone. In-memory databases are always `0o600`. Compaction and
    /// copies keep the mode of the file they come from.
    ///
    /// ```swift
    /// var config = Configuration(fileURL: url)
    /// config.encryptionKey = key
    /// config.filePermissions = 0o600
    /// ```
    public var filePermissions: Int?

    /// More model classes a migration carries to their schemas besides
    /// ``objectTypes`` (TroveRealm's default configuration: every model class
    /// of the program, as Realm's default schema). Classes that are not valid
    /// models, or whose name another class has, are left out.
    package var migratedModelClasses: (@Sendable () -> [Object.Type])?

    /// The file used when none is given: the path in the `TROVE_DEFAULT_FILE`
    /// environment variable when it is set; otherwise `default.trove` in the
    /// app's Application Support directory on Apple platforms, and in
    /// `$XDG_DATA_HOME/trove` (`~/.local/share/trove`) elsewhere. The
    /// directory is created when missing.
    public static var defaultFileURL: URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TROVE_DEFAULT_FILE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        #if os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            let directory = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first!
        #else
            let data =
                environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            let directory = data.appendingPathComponent("trove")
        #endif
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("default.trove")
    }

    /// A file in the directory an app shares with its extensions and
    /// widgets (the first seed's `DBPath`): the app group's container on
    /// Apple platforms (`containerURL(forSecurityApplicationGroupIdentifier:)`),
    /// and elsewhere `$TROVE_APP_GROUPS/<group>`, created when missing (the
    /// environment variable must be set: processes sharing a file agree on it).
    ///
    /// ```swift
    /// let config = Configuration(fileURL: try Configuration.sharedFileURL(appGroup: "group.com.example.diary",
    ///                                                                      fileName: "photos.trove"))
    /// ```
    ///
    /// Throws `TroveError.Kind.fileAccess` when the app has no such group
    /// (the entitlement is missing; on Linux, `TROVE_APP_GROUPS` is not set)
    /// or the directory cannot be made.
    public static func sharedFileURL(appGroup: String, fileName: String = "default.trove") throws -> URL {
        guard !appGroup.isEmpty, !appGroup.contains("/"), appGroup != ".", appGroup != ".." else {
            throw TroveError(.fileAccess, "'\(appGroup)' is not an app group identifier")
        }
        #if os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            guard let directory = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: appGroup) else {
                throw TroveError(
                    .fileAccess,
                    "this app has no app group '\(appGroup)'; add it to the app's and the extension's entitlements")
            }
        #else
            // No app groups outside Apple platforms: the processes that share
            // files agree on a directory through the environment.
            guard let groups = ProcessInfo.processInfo.environment["TROVE_APP_GROUPS"], !groups.isEmpty else {
                throw TroveError(
                    .fileAccess,
                    "app group '\(appGroup)' has no directory: outside Apple platforms, set TROVE_APP_GROUPS to a directory the app and its extensions share (the group's files go in $TROVE_APP_GROUPS/\(appGroup))"
                )
            }
            let directory = URL(fileURLWithPath: groups).appendingPathComponent(appGroup)
        #endif
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw TroveError(
                .fileAccess, "cannot create the app group directory \(directory.path): \(error)", path: directory.path)
        }
        return directory.appendingPathComponent(fileName)
    }

    /// Settings for the file at `fileURL`; each argument sets the property of
    /// the same name, and the other properties (``readOnly``, ``encryptionKey``,
    /// ``inMemoryIdentifier``...) are set afterwards. Every argument has a
    /// default: `Configuration()` is ``defaultFileURL`` at schema version 0.
    ///
    /// ```swift
    /// var config = Configuration(fileURL: URL(fileURLWithPath: "photos.trove"),
    ///                            schemaVersion: 2, objectTypes: [PhotoData.self]) { migration, oldVersion in
    ///     if oldVersion < 2 { migration.renameProperty(onType: "PhotoData", from: "text", to: "memo") }
    /// }
    /// config.encryptionKey = key
    /// ```
    public init(
        fileURL: URL = Configuration.defaultFileURL, schemaVersion: UInt64 = 0, objectTypes: [Object.Type] = [],
        valueTypes: [any Persistable.Type] = [], maximumFileSize: Int? = nil, durability: Durability = .full,
        migration: (@Sendable (Migration, UInt64) throws -> Void)? = nil
    ) {
        self.migration = migration
        self.fileURL = fileURL
        self.schemaVersion = schemaVersion
        self.objectTypes = objectTypes
        self.valueTypes = valueTypes
        self.maximumFileSize = maximumFileSize
        self.durability = durability
    }

    /// The map size a new environment starts with; tests set it small to
    /// exercise growth.
    var initialMapSize: Int = 256 << 20
    /// Whether the map is reserved at its largest when the file opens (so
    /// that it never moves); tests of remapping turn it off.
    var reservesMap = true
    /// Whether types are stored in column clusters (``storageLayout``;
    /// `TROVE_LAYOUT=records` in the environment makes records the default, for the test suite).
    var storesNewTypesInClusters = TableInfo.clustersForNewTypes

    /// How this handle stores the objects of each type it uses.
    ///
    /// - ``StorageLayout/columnClusters`` (the default): runs of about 500
    ///   objects, one packed array per property. Filters, counts, sums and
    ///   updates of one property over many objects read and write only the
    ///   columns they touch (an unindexed range count and sum runs about 25
    ///   times faster than SQLite, an update of one property of every object
    ///   about 5 times). A type the file stores as records (a file written by
    ///   Trove before this layout) is converted when the handle first uses
    ///   it, in one write transaction (a crash leaves the records as they
    ///   were); ``conversionProgress`` reports how far it has got. A
    ///   read-only handle reads either layout and converts nothing.
    /// - ``StorageLayout/records``: one record per object. Reads of whole
    ///   objects by primary key beside a frequent writer are about 1.6 times as
    ///   fast, and single-object commits write less; scans, filters without
    ///   an index and bulk updates are much slower. A handle set to records
    ///   keeps a type already in clusters in clusters.
    ///
    /// A file holding clusters is refused by versions of Trove before the
    /// layout (file format 3).
    ///
    /// ```swift
    /// var config = Configuration(fileURL: url, objectTypes: [Reading.self])
    /// config.conversionProgress = { print("\($0.typeName): \($0.converted) of \($0.total)") }
    /// let db = try Database(configuration: config)   // an older file's types are converted here
    /// ```
    public var storageLayout: StorageLayout {
        get { storesNewTypesInClusters ? .columnClusters : .records }
        set { storesNewTypesInClusters = newValue == .columnClusters }
    }

    /// Told how far the conversion of a type's records into column clusters
    /// has gone (``storageLayout``), from 0 to all of its objects; called on
    /// the thread that opens the type.
    public var conversionProgress: (@Sendable (ConversionProgress) -> Void)?

    /// The most tables `types` can use: two per type and two per property
    /// (an index, a collection's elements, inverse links), and a few of the file's own.
    static func tableCount(of types: [Object.Type]) -> Int {
        types.reduce(16) { $0 + 2 + 2 * ModelInfo.of($1).fields.count }
    }

    /// The storage options these settings ask for.
    var environmentOptions: Environment.Options {
        var options = Environment.Options()
        options.initialMapSize = initialMapSize
        options.reservesMap = reservesMap
        options.maximumMapSize = maximumFileSize
        options.noMetaSync = durability == .relaxed
        options.noSync = durability == .none
        options.readOnly = readOnly
        options.deleteOnClose = inMemoryIdentifier != nil
        options.tablesCheckedOnOpen = checksEveryPageOnOpen ? nil : [Catalog.metaTable, Catalog.keyCheckTable]
        // Room for the tables of every type the schema lists, and of every
        // model class when a migration carries them all (Realm's default schema).
        var tables = Configuration.tableCount(of: objectTypes)
        if migratedModelClasses != nil { tables += ModelClasses.tableCount }
        options.maxTables = Environment.tableSlots(forExisting: tables / 2, least: options.maxTables)
        if inMemoryIdentifier != nil {
            options.fileMode = 0o600
            options.enforcesFileMode = true
        } else if let filePermissions {
            options.fileMode = mode_t(filePermissions & 0o777)
            options.enforcesFileMode = true
        }
        if let encryptionKey {
            options.encryptionKey = Array(encryptionKey)
            options.sealedTablePrefixes = Catalog.sealedTablePrefixes
        }
        return options
    }
}

/// How a handle stores objects (``Configuration/storageLayout``).
public enum StorageLayout: String, Sendable, CaseIterable {
    /// One record per object.
    case records
    /// Column clusters: runs of objects with one packed array per property.
    case columnClusters
}

/// How far the conversion of one type into column clusters has got
/// (``Configuration/conversionProgress``).
///
/// ```swift
/// config.conversionProgress = { progress in
///     bar.fraction = Double(progress.converted) / Double(max(progress.total, 1))
/// }
/// ```
public struct ConversionProgress: Sendable, Equatable {
    /// The type being converted.
    public let typeName: String
    /// Objects converted so far.
    public let converted: Int
    /// Objects of the type in all.
    public let total: Int
}
