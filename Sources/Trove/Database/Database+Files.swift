import Foundation
import TroveStorage

extension Database {
    /// Writes a compacted copy of the database to `url` (which must not exist):
    /// the latest commit, rebuilt table by table in key order so every page
    /// is full (free pages and the room scattered deletes left are gone),
    /// ready to be opened or shipped. An encrypted file's copy keeps its key.
    ///
    /// ```swift
    /// try db.writeCopy(to: backupURL)
    /// ```
    public func writeCopy(to url: URL) throws {
        try writeCopy(to: url, encryptionKey: configuration.encryptionKey)
    }

    /// Rewrites the file of `configuration` without its free pages, in
    /// place, and returns its size before and after. The file keeps its
    /// permissions and owner; a crash leaves either the old file or the new one.
    ///
    /// Only a file that no handle has open can be compacted — in this
    /// process or any other (an app extension sharing an app group file):
    /// another process would go on writing to the replaced file and its
    /// commits would be lost. Compaction then throws
    /// `TroveError.Kind.fileInUse` and leaves the file alone, and processes
    /// that open the file while it is being compacted wait until it is done.
    ///
    /// ```swift
    /// let (before, after) = try Database.compact(configuration: config)
    /// print("saved \(before - after) bytes")
    /// ```
    ///
    /// (Realm compacts only through `shouldCompactOnLaunch`, which Trove has
    /// too: ``Configuration/shouldCompactOnLaunch``.)
    @discardableResult
    public static func compact(configuration: Configuration) throws -> (bytesBefore: Int, bytesAfter: Int) {
        let path = configuration.fileURL.path
        guard configuration.inMemoryIdentifier == nil else {
            throw TroveError(.fileAccess, "an in-memory database has no file to compact", path: path)
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw TroveError(.fileAccess, "cannot compact \(path): the file does not exist", path: path)
        }
        switch try compactFile(configuration, when: { _ in true }) {
        case .compacted(let before, let after): return (before, after)
        case .declined: return (0, 0)
        }
    }

    /// Writes a copy of the database to `url` (which must not exist),
    /// encrypted with `encryptionKey` — or decrypted, with nil. Encrypting a
    /// plain file, changing a file's key and removing it all go through here:
    ///
    /// ```swift
    /// try db.writeCopy(to: encryptedURL, encryptionKey: newKey)   // 64 bytes
    /// ```
    ///
    /// The copy is built beside `url` and renamed into place when complete,
    /// so a failure never leaves a half-written file at `url`.
    public func writeCopy(to url: URL, encryptionKey: Data?) throws {
        let files = FileManager.default
        var existing = stat()
        if lstat(url.path, &existing) == 0 {  // a link, even a dangling one, is not followed
            throw TroveError(.fileAccess, "cannot copy \(path) to \(url.path): the destination exists", path: url.path)
        }
        let partial = url.path + ".partial"
        try? files.removeItem(atPath: partial)
        try? files.removeItem(atPath: partial + "-lock")
        do {
            // Made here, exclusively and without following links; LMDB then opens them.
            try FileReplacement.createExclusively(partial)
            try FileReplacement.createExclusively(partial + "-lock")
            var target = Configuration(fileURL: URL(fileURLWithPath: partial))
            target.encryptionKey = encryptionKey
            try Database.copyTables(from: environment, into: Environment.open(path: partial, options: target.environmentOptions))
            try? files.removeItem(atPath: partial + "-lock")
            try FileReplacement.adoptMode(of: path, for: partial)
            try FileReplacement.sync(partial)
            guard rename(partial, url.path) == 0 else {
                throw TroveError(.fileAccess, "cannot move the copy into place at \(url.path) (errno \(errno))", path: url.path)
            }
        } catch {
            try? files.removeItem(atPath: partial)
            try? files.removeItem(atPath: partial + "-lock")
            throw error
        }
    }

    /// Copies every table of the latest commit of `environment` into
    /// `target`, densely (see `Environment.copyTables`): values are opened
    /// with the source's key and sealed with the target's, which gets a key
    /// check of its own. Types in column clusters are copied as full
    /// clusters (``ClusterTable/repack(_:layout:_:)``: scattered deletes
    /// leave half-empty ones). The change log stays behind: the copy's
    /// transaction ids start again, and so does its log.
    static func copyTables(from environment: Environment, into target: Environment) throws {
        try environment.copyTables(
            into: target, skipping: [Catalog.keyCheckTable, ChangeLog.tableName],
            prepare: { try Catalog.writeKeyCheck(in: $0) },
            rewriting: { name, source in
                guard name.hasPrefix(ObjectStore.clusterPrefix),
                    let schema = try Catalog.storedSchema(String(name.dropFirst(ObjectStore.clusterPrefix.count)), in: source)
                else { return nil }
                let layout = RecordLayout(schema)
                return { cursor, put in try ClusterTable.repack(cursor, layout: layout, put) }
            })
    }
}
