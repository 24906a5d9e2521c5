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

    /// Whether the file is encrypted but its keys hold user data as it is
    /// (an encrypted file written before key tokens): ``upgradeKeys(configuration:)``,
    /// `writeCopy(to:encryptionKey:)` and `trove convert` give it tokens.
    package var keysHoldPlainData: Bool { environment.cipher != nil && environment.keyTokens == nil }

    /// Rewrites an encrypted file of the earlier scheme in place (as
    /// ``compact(configuration:)`` does, and refused the same way while the
    /// file is open) so that its keys hold tokens; returns false for a file
    /// that needs nothing.
    package static func upgradeKeys(configuration: Configuration) throws -> Bool {
        guard configuration.encryptionKey != nil else { return false }
        var upgraded = false
        _ = try compactFile(configuration, upgradingKeys: true) { environment in
            upgraded = environment.keyTokens == nil
            return upgraded
        }
        return upgraded
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
            // The copy gets a salt of its own, so a value copied between the two does not open.
            var options = target.environmentOptions
            options.maxTables = environment.options.maxTables  // the copy gets every table of the file
            try Database.copyTables(from: environment, into: Environment.open(path: partial, options: options))
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
    ///
    /// Keys holding user data are copied as they are when both files hold
    /// them alike (both plain, or tokens of one key and salt: a compaction).
    /// Otherwise (encrypting, decrypting, a new key, a file of the earlier
    /// scheme upgraded) the catalog's, sets' and maps' keys are made anew
    /// from their values, and the primary key tables, indexes and full-text
    /// indexes, whose keys do not give their values back, are built again
    /// from the objects.
    static func copyTables(from environment: Environment, into target: Environment) throws {
        let sameKeys =
            (environment.keyTokens == nil && target.keyTokens == nil)
            || (environment.keyTokens != nil && target.keyTokens != nil && environment.salt == target.salt)
        var names: [String]?
        if environment.keyTokens != nil {
            // Stored names hide the names: the catalog lists them.
            let source = try ReadTransaction(environment: environment)
            defer { source.end() }
            var listed = [Catalog.metaTable]
            let indexedIntegers = try Catalog.integerKeysAreIndexed(in: source)
            for type in try Catalog.storedTypeNames(in: source) {
                guard let schema = try Catalog.storedSchema(type, in: source) else { continue }
                listed += TableInfo.tableNames(for: schema, integerKeysAreIndexed: indexedIntegers).map(\.name)
            }
            names = listed
        }
        let skipping = Set([Catalog.keyCheckTable] + ChangeLog.tableNames)
        if !sameKeys, names == nil { names = try environment.tableNames() }
        if !sameKeys { names = names?.filter { !Database.isIndexTable($0) } }
        try environment.copyTables(
            into: target, names: names, skipping: skipping,
            prepare: { try Catalog.writeKeyCheck(in: $0) },
            rewriting: { name, source in
                if !sameKeys, let rekey = try rekeying(name, source, from: environment, to: target) { return rekey }
                guard name.hasPrefix(ObjectStore.clusterPrefix),
                    let schema = try Catalog.storedSchema(String(name.dropFirst(ObjectStore.clusterPrefix.count)), in: source)
                else { return nil }
                let layout = RecordLayout(schema)
                return { cursor, put in try ClusterTable.repack(cursor, layout: layout, put) }
            })
        if !sameKeys {
            let write = try WriteTransaction(environment: target)
            do {
                try rebuildIndexes(in: write)
                try write.commit()
            } catch {
                write.abort()
                throw error
            }
        }
    }

    /// How a table whose keys hold user data is copied into a file that
    /// holds them otherwise: each entry's key made anew from what it stands
    /// for, then all put in the order of the new keys. Nil for a table whose
    /// keys hold none (objects, lists, inverse links).
    private static func rekeying(
        _ name: String, _ source: Transaction, from environment: Environment, to target: Environment
    ) throws -> Environment.Rewriter? {
        func sortedPuts(
            _ entries: [(key: [UInt8], value: [UInt8])], _ put: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
        ) throws {
            for entry in entries.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                try entry.key.withUnsafeBytes { k in try entry.value.withUnsafeBytes { try put(k, $0) } }
            }
        }
        if name == Catalog.metaTable {
            // A type's name in a key: its token in the source, told by the names the catalog holds.
            var names: [[UInt8]: String] = [:]
            for type in try Catalog.storedTypeNames(in: source) { names[Array(type.utf8)] = type }
            if let tokens = environment.keyTokens {
                names = Dictionary(
                    uniqueKeysWithValues: names.values.map { (tokens.token(Array($0.utf8), in: Catalog.metaTable), $0) })
            }
            return { cursor, put in
                var entries: [(key: [UInt8], value: [UInt8])] = []
                var entry = try cursor.first()
                while let current = entry {
                    var key = String(decoding: current.key, as: UTF8.self)
                    var value = Array(current.value)
                    if let prefix = Catalog.typeKeyPrefixes.first(where: { current.key.starts(with: $0.utf8) }) {
                        let type = Array(current.key.dropFirst(prefix.utf8.count))
                        guard let typeName = names[type] else {
                            // A counter of a type no longer stored: nothing needs it.
                            entry = try cursor.next()
                            continue
                        }
                        key = prefix + typeName
                    } else if key == "format", value.count == 4 {
                        // The format says whether keys hold tokens.
                        let format = UInt32(littleEndian: value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                        let copied =
                            target.keyTokens != nil
                            ? max(format, keyTokensFormatVersion)
                            : format == keyTokensFormatVersion ? sealedLogFormatVersion : format
                        value = withUnsafeBytes(of: copied.littleEndian) { Array($0) }
                    }
                    entries.append((Catalog.metaKey(key, tokens: target.keyTokens), value))
                    entry = try cursor.next()
                }
                try sortedPuts(entries, put)
            }
        }
        let isSet = name.hasPrefix("set:")
        guard isSet || name.hasPrefix("map:") else { return nil }
        let path = name.dropFirst(4)
        guard let dot = path.lastIndex(of: "."),
            let schema = try Catalog.storedSchema(String(path[..<dot]), in: source),
            var element = schema.properties.first(where: { $0.name == path[path.index(after: dot)...] })
        else { return nil }
        element.collection = nil
        element.isIndexed = false
        element.isPrimaryKey = false
        let layout = RecordLayout(ObjectSchema(name: String(path), properties: [element]))
        let tableName = name
        return { cursor, put in
            var entries: [(key: [UInt8], value: [UInt8])] = []
            var entry = try cursor.first()
            while let current = entry {
                entry = try cursor.next()
                guard let owner = Database.owner(of: current.key) else { continue }
                if isSet {
                    let value = RecordReader(current.value, layout: layout).value(at: 0)
                    entries.append(
                        (
                            Database.setKey(value, type: layout.types[0], owner: owner, in: tableName, tokens: target.keyTokens),
                            Array(current.value)
                        ))
                    continue
                }
                let (mapKey, record): ([UInt8], [UInt8])
                if environment.keyTokens != nil {
                    guard let split = TableInfo.mapEntry(current.value) else { continue }
                    (mapKey, record) = (Array(split.key), Array(split.record))
                } else {
                    (mapKey, record) = (Array(current.key.dropFirst(8)), Array(current.value))
                }
                var key = Database.ownerPrefix(owner)
                if let tokens = target.keyTokens {
                    mapKey.withUnsafeBytes { tokens.append($0, in: tableName, to: &key) }
                    let length = withUnsafeBytes(of: UInt16(mapKey.count).littleEndian) { Array($0) }
                    entries.append((key, length + mapKey + record))
                } else {
                    entries.append((key + mapKey, record))
                }
            }
            try sortedPuts(entries, put)
        }
    }
}
