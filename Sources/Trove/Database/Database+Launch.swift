import Foundation
import TroveStorage

/// What happens to the file before a handle opens it: copying a seed file,
/// deleting a cache whose model changed, compacting on launch. Done only when
/// no handle of this process has the file open.
extension Database {
    static func prepareOnDisk(_ configuration: Configuration) throws {
        let url = configuration.fileURL
        let path = url.path
        let files = FileManager.default
        if configuration.inMemoryIdentifier != nil, !Environment.isOpen(path: path) {
            // Left by a crashed process that had this process id: not ours to share.
            try? files.removeItem(atPath: path)
            try? files.removeItem(atPath: path + "-lock")
        }
        if let seed = configuration.seedFileURL, !files.fileExists(atPath: path) {
            guard files.fileExists(atPath: seed.path) else {
                throw TroveError(.fileAccess, "the seed file \(seed.path) does not exist", path: seed.path)
            }
            try files.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            do {
                try files.copyItem(at: seed, to: url)
            } catch {
                throw TroveError(.fileAccess, "cannot copy the seed file \(seed.path) to \(path): \(error)", path: path)
            }
        }
        guard files.fileExists(atPath: path), !configuration.readOnly, !Environment.isOpen(path: path) else { return }
        if configuration.deleteDatabaseIfMigrationNeeded, try needsMigration(configuration) {
            for file in [path, path + "-lock"] where files.fileExists(atPath: file) {
                do {
                    try files.removeItem(atPath: file)
                } catch {
                    throw TroveError(.fileAccess, "cannot delete \(file) to start over: \(error)", path: file)
                }
            }
            return
        }
        if let shouldCompact = configuration.shouldCompactOnLaunch {
            let total = ((try? files.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
            do {
                _ = try compactFile(configuration) { environment in shouldCompact(total, try environment.liveSize()) }
            } catch TroveError.fileInUse {
                // Another process (an app extension, say) has the file open:
                // replacing it would lose that process's commits. Next launch.
            }
        }
    }

    /// Replaces the file with its compacted copy when `decide` agrees and no
    /// handle anywhere has the file open (`TroveError.Kind.fileInUse` otherwise).
    static func compactFile(
        _ configuration: Configuration, upgradingKeys: Bool = false, when decide: (Environment) throws -> Bool
    ) throws -> Environment.CompactionOutcome {
        var options = configuration.environmentOptions
        options.upgradesKeys = upgradingKeys
        return try Environment.compact(
            path: configuration.fileURL.path, options: options,
            decide: { environment in
                let transaction = try ReadTransaction(environment: environment)
                defer { transaction.end() }
                try Database.checkEncryptionKey(of: environment, in: transaction)
                return try decide(environment)
            }, copy: copyTables)
    }

    /// Whether opening with `configuration` would migrate: another schema
    /// version, or a listed type whose stored schema differs in a way that is not additive.
    private static func needsMigration(_ configuration: Configuration) throws -> Bool {
        try withEnvironment(configuration) { environment in
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            guard let meta = try transaction.existingTable(Catalog.metaTable) else { return false }
            let version = try Catalog.integer(UInt64.self, key: "schemaVersion", in: meta, transaction) ?? 0
            if version != configuration.schemaVersion, !configuration.acceptsAnySchemaVersion { return true }
            for type in configuration.objectTypes {
                let code = ModelInfo.of(type).schema
                if let stored = try Catalog.storedSchema(code.name, in: transaction),
                    !code.reconcile(withStored: stored).blocking.isEmpty
                {
                    return true
                }
            }
            return false
        }
    }

    /// Opens the file's environment for a moment (it closes when `body` returns).
    private static func withEnvironment<R>(_ configuration: Configuration, _ body: (Environment) throws -> R) throws -> R {
        var options = configuration.environmentOptions
        options.readOnly = false
        options.deleteOnClose = false
        let environment = try Environment.open(path: configuration.fileURL.path, options: options)
        let transaction = try ReadTransaction(environment: environment)
        defer { transaction.end() }
        try Database.checkEncryptionKey(of: environment, in: transaction)
        return try body(environment)
    }
}
