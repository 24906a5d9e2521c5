import Foundation
import Trove
import TroveStorage

extension Realm {
    /// Realm's migration block: the migration and the file's old schema version.
    public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

    /// Where a Realm lives and how it opens (Realm's `Realm.Configuration`),
    /// turned into Trove's ``Trove/Configuration`` when the file opens.
    ///
    /// ```swift
    /// var config = Realm.Configuration(schemaVersion: 2, migrationBlock: { migration, old in … })
    /// config.fileURL = groupDirectory.appendingPathComponent("photos.realm")
    /// Realm.Configuration.defaultConfiguration = config
    /// let realm = try Realm()
    /// ```
    public struct Configuration: Sendable, CustomStringConvertible {
        /// The file; Trove's default file when nil.
        public var fileURL: URL?
        /// Names an in-memory Realm instead of a file.
        public var inMemoryIdentifier: String?
        /// A 64-byte key that encrypts the file.
        public var encryptionKey: Data?
        /// Open the file for reading only.
        public var readOnly: Bool
        /// The version of the model.
        public var schemaVersion: UInt64
        /// Runs when a file at a lower schema version opens.
        public var migrationBlock: MigrationBlock?
        /// Delete the file and start empty when the model needs a migration.
        public var deleteRealmIfMigrationNeeded: Bool
        /// Asked on open with the file's size and the bytes in use; true compacts it first.
        public var shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)?
        /// The model classes to check against the file when it opens; nil for all used.
        public var objectTypes: [Object.Type]?
        /// A file copied to ``fileURL`` when no file is there yet.
        public var seedFilePath: URL?
        /// Accepted for source compatibility; Trove keeps no limit on open versions.
        public var maximumNumberOfActiveVersions: UInt?

        /// Realm's initializer, with Realm's labels and defaults.
        public init(
            fileURL: URL? = nil, inMemoryIdentifier: String? = nil, encryptionKey: Data? = nil, readOnly: Bool = false,
            schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil, objectTypes: [Object.Type]? = nil,
            seedFilePath: URL? = nil
        ) {
            self.fileURL = fileURL
            self.inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
            self.seedFilePath = seedFilePath
        }

        /// The configuration `Realm()` opens with; set it once at launch.
        public static var defaultConfiguration: Configuration {
            get { defaultStore.withLock { $0 } }
            set { defaultStore.withLock { $0 = newValue } }
        }

        private static let defaultStore = Locked(Configuration())

        /// The file, the schema version and the options that are set.
        public var description: String {
            var parts = [
                "fileURL: \(fileURL?.path ?? Trove.Configuration.defaultFileURL.path)", "schemaVersion: \(schemaVersion)",
            ]
            if let inMemoryIdentifier { parts.append("inMemoryIdentifier: \(inMemoryIdentifier)") }
            if readOnly { parts.append("readOnly") }
            if encryptionKey != nil { parts.append("encrypted") }
            return "Realm.Configuration(\(parts.joined(separator: ", ")))"
        }

        /// Trove's configuration for the same file and options.
        public var troveConfiguration: Trove.Configuration {
            var configuration = Trove.Configuration(
                fileURL: fileURL ?? Trove.Configuration.defaultFileURL, schemaVersion: schemaVersion,
                objectTypes: objectTypes ?? [])
            if let inMemoryIdentifier { configuration.inMemoryIdentifier = inMemoryIdentifier }
            configuration.encryptionKey = encryptionKey
            configuration.readOnly = readOnly
            configuration.deleteDatabaseIfMigrationNeeded = deleteRealmIfMigrationNeeded
            configuration.shouldCompactOnLaunch = shouldCompactOnLaunch
            configuration.seedFileURL = seedFilePath
            if let migrationBlock { configuration.migration = { migration, old in migrationBlock(migration, old) } }
            // Realm's default schema is every model class: a migration carries them all.
            if objectTypes == nil { configuration.migratedModelClasses = { ModelClasses.all } }
            return configuration
        }

        /// Realm's view of a Trove configuration.
        public init(_ configuration: Trove.Configuration) {
            self.init(
                fileURL: configuration.inMemoryIdentifier == nil ? configuration.fileURL : nil,
                inMemoryIdentifier: configuration.inMemoryIdentifier, encryptionKey: configuration.encryptionKey,
                readOnly: configuration.readOnly, schemaVersion: configuration.schemaVersion,
                deleteRealmIfMigrationNeeded: configuration.deleteDatabaseIfMigrationNeeded,
                shouldCompactOnLaunch: configuration.shouldCompactOnLaunch,
                objectTypes: configuration.objectTypes.isEmpty ? nil : configuration.objectTypes,
                seedFilePath: configuration.seedFileURL)
            if let migration = configuration.migration {
                migrationBlock = { m, old in
                    do { try migration(m, old) } catch { fatalError("Trove: the migration failed: \(error)") }
                }
            }
        }
    }
}
