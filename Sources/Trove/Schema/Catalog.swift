import Foundation
import TroveStorage

/// The schema catalog of one file, shared by every handle in the process:
/// the stored schema of each type and its open tables. The `meta` table in
/// the file holds the format version, the schema version, one JSON schema per
/// type (`schema:<Type>`), and the object-key counters (`seq:<Type>`).
final class Catalog: @unchecked Sendable {
    static let metaTable = "meta"
    /// `meta` key set (to 1) in a file whose integer primary keys are not object keys.
    static let integerKeysKey = "integerKeys"
    /// In an encrypted file: one value sealed with the file's key, to tell a
    /// wrong key on open. The table itself is not sealed.
    static let keyCheckTable = Environment.encryptionTable
    static let keyCheckContext = Array("trove-key-check".utf8)
    static let keyCheckPlaintext = Array("Trove encrypted database".utf8)
    /// The tables whose values an encryption key seals: objects, list, set
    /// and map elements, the catalog, and the change log (which also makes
    /// its records authenticated: a handle trusts them to keep what it read;
    /// indexes and inverse links hold keys only).
    static let sealedTablePrefixes = ["obj:", "clu:", "list:", "set:", "map:", metaTable, "changes", syncTablePrefix]
    /// Tables of TroveSync's own bookkeeping in the file (`sync:…`): not
    /// objects, so no observer is told of them.
    static let syncTablePrefix = "sync:"

    private let published = Locked<[String: TableInfo]>([:])
    /// The highest object key handed out per type in this process, committed
    /// or not: keys from a cancelled write are never handed out again, so an
    /// object left over from it can never alias a new one.
    private let highWater = Locked<[String: UInt64]>([:])

    func highestKey(_ type: String) -> UInt64 {
        highWater.withLock { $0[type] ?? 0 }
    }

    func raiseHighestKey(_ type: String, to key: UInt64) {
        highWater.withLock { $0[type] = max($0[type] ?? 0, key) }
    }

    func table(named name: String) -> TableInfo? {
        published.withLock { $0[name] }
    }

    func publish(_ table: TableInfo) {
        published.withLock { $0[table.name] = table }
    }

    // MARK: Meta entries

    /// In a file with an encryption key: the sealed constant that tells a
    /// wrong key on open (nothing without a key).
    static func writeKeyCheck(in transaction: WriteTransaction) throws {
        guard let cipher = transaction.environment.cipher else { return }
        let check = try transaction.openTable(keyCheckTable)!
        let sealed = try keyCheckPlaintext.withUnsafeBytes { plain in
            try keyCheckContext.withUnsafeBytes { try cipher.seal(plain, table: keyCheckTable, key: $0) }
        }
        try keyCheckContext.withUnsafeBytes { k in
            try sealed.withUnsafeBytes { _ = try transaction.put(check, key: k, value: $0) }
        }
    }

    /// The kinds of catalog entry that name a type: `schema:`, `seq:` and `auto:`.
    static let typeKeyPrefixes = ["schema:", "seq:", "auto:"]

    /// The stored key of catalog entry `key`: in a file with key tokens, a
    /// type's name in it is its token (the kind stays readable: the change
    /// log tells counters from the schema by it).
    static func metaKey(_ key: String, in transaction: Transaction) -> [UInt8] {
        metaKey(key, tokens: transaction.environment.keyTokens)
    }

    static func metaKey(_ key: String, tokens: KeyTokens?) -> [UInt8] {
        guard let tokens, let prefix = typeKeyPrefixes.first(where: { key.hasPrefix($0) })
        else { return Array(key.utf8) }
        return Array(prefix.utf8) + tokens.token(Array(key.utf8.dropFirst(prefix.utf8.count)), in: metaTable)
    }

    /// Raises the file's format to at least `version` (a Trove that reads
    /// only older formats then refuses the file instead of misreading it).
    static func raiseFormat(to version: UInt32, in transaction: WriteTransaction) throws {
        if transaction.environment.knownFormat >= version { return }
        let meta = try transaction.openTable(metaTable)!
        let format = try integer(UInt32.self, key: "format", in: meta, transaction) ?? 1
        if format < version {
            try put(version.littleEndian, key: "format", in: meta, transaction)
            transaction.raisedFormat = true
        } else if !transaction.raisedFormat {
            transaction.environment.noteFormat(format)
        }
    }

    static func put<T: FixedWidthInteger>(_ value: T, key: String, in meta: Table, _ transaction: WriteTransaction) throws {
        // (A format set here may be lower than the one the environment knew: a file made to look older.)
        if key == "format" { transaction.environment.forgetFormat() }
        var raw = value
        try metaKey(key, in: transaction).withUnsafeBytes { k in
            try withUnsafeBytes(of: &raw) { _ = try transaction.put(meta, key: k, value: $0) }
        }
    }

    /// `meta` key set (to 1) in a file whose lists' tables hold chunks of
    /// elements (``ListChunk``) rather than one element per entry.
    static let packedListsKey = "packedLists"

    /// Whether the file's lists are stored in chunks (``packedListsKey``).
    static func listsArePacked(in transaction: Transaction) throws -> Bool {
        guard let meta = try transaction.existingTable(metaTable), transaction.canSee(meta) else { return false }
        return try integer(UInt8.self, key: packedListsKey, in: meta, transaction) == 1
    }

    /// Whether the file's integer primary keys are found through a primary
    /// key index rather than being the object keys (``integerKeysKey``).
    static func integerKeysAreIndexed(in transaction: Transaction) throws -> Bool {
        guard let meta = try transaction.existingTable(metaTable), transaction.canSee(meta) else { return false }
        return try integer(UInt8.self, key: integerKeysKey, in: meta, transaction) == 1
    }

    static func integer<T: FixedWidthInteger>(_: T.Type, key: String, in meta: Table, _ transaction: Transaction) throws -> T? {
        try metaKey(key, in: transaction).withUnsafeBytes { k in
            try transaction.withValue(in: meta, key: k) { bytes -> T? in
                guard let bytes, bytes.count == MemoryLayout<T>.size else { return nil }
                return T(littleEndian: bytes.loadUnaligned(as: T.self))
            }
        }
    }

    /// Stored schemas decoded before, by type name, with the bytes each was
    /// decoded from: every write that deletes reads the stored schemas
    /// (delete rules look for links into the type), and decoding the JSON
    /// cost about 0.2 ms per type. (Keyed by the bytes, each lookup hashed
    /// them byte by byte: a deleting write on a file of four types spent
    /// 276k instructions looking for links into the type, 86k comparing.)
    private static let decodedSchemas = Locked<[String: [(json: [UInt8], schema: ObjectSchema)]]>([:])

    static func storedSchema(_ type: String, in transaction: Transaction) throws -> ObjectSchema? {
        guard let meta = try transaction.existingTable(metaTable) else { return nil }
        guard let json = try transaction.value(in: meta, key: metaKey("schema:\(type)", in: transaction)) else { return nil }
        return try decodedSchema(json, type: type, in: transaction)
    }

    private static func decodedSchema(_ json: [UInt8], type: String, in transaction: Transaction) throws -> ObjectSchema {
        let known = decodedSchemas.withLock { known in
            known[type]?.first { entry in
                entry.json.count == json.count
                    && entry.json.withUnsafeBytes { a in
                        json.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
                    }
            }?.schema
        }
        if let known { return known }
        do {
            let schema = try JSONDecoder().decode(ObjectSchema.self, from: Data(json))
            decodedSchemas.withLock { known in
                if known.count >= 256 { known.removeAll() }
                // (Files with a type of one name and other schemas each keep theirs, a few at a time.)
                var versions = known[type] ?? []
                if versions.count >= 4 { versions.removeFirst() }
                versions.append((json, schema))
                known[type] = versions
            }
            return schema
        } catch {
            throw TroveError(
                .corruptFile, "the stored schema of \(type) in \(transaction.environment.path) cannot be read: \(error)",
                path: transaction.environment.path)
        }
    }

    static func storeSchema(_ schema: ObjectSchema, in transaction: WriteTransaction) throws {
        let meta = try transaction.openTable(metaTable)!
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(schema)
        try metaKey("schema:\(schema.name)", in: transaction).withUnsafeBytes { k in
            try json.withUnsafeBytes { _ = try transaction.put(meta, key: k, value: $0) }
        }
    }

    /// Removes catalog entry `key` (a type's schema or counter).
    static func remove(_ key: String, in meta: Table, _ transaction: WriteTransaction) throws {
        try metaKey(key, in: transaction).withUnsafeBytes { _ = try transaction.delete(meta, key: $0) }
    }

    /// The keys and values of every stored schema, end to end, each after
    /// its length (u32): what ``storedSchemas(in:match:)`` compares a later
    /// snapshot's with.
    static func storedSchemaBytes(in transaction: Transaction) throws -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ part: UnsafeRawBufferPointer) {
            withUnsafeBytes(of: UInt32(part.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: part)
        }
        _ = try walkSchemas(in: transaction) { key, value in
            append(key)
            append(value)
            return true
        }
        return bytes
    }

    /// Whether the stored schemas' keys and values are still `bytes`
    /// (``storedSchemaBytes(in:)``), compared where they lie.
    static func storedSchemas(in transaction: Transaction, match bytes: [UInt8]) throws -> Bool {
        // (A class: a captured `var` offset paid an exclusivity check at every use.)
        final class Matcher {
            let expected: UnsafeRawBufferPointer
            @exclusivity(unchecked) var offset = 0
            init(_ expected: UnsafeRawBufferPointer) { self.expected = expected }
            func matches(_ part: UnsafeRawBufferPointer) -> Bool {
                guard offset + 4 + part.count <= expected.count,
                    expected.loadUnaligned(fromByteOffset: offset, as: UInt32.self) == UInt32(part.count).littleEndian
                else { return false }
                let start = offset + 4
                offset = start + part.count
                return part.isEmpty || memcmp(expected.baseAddress! + start, part.baseAddress!, part.count) == 0
            }
        }
        return try bytes.withUnsafeBytes { expected in
            let matcher = Matcher(expected)
            let walked = try walkSchemas(in: transaction) { key, value in matcher.matches(key) && matcher.matches(value) }
            return walked && matcher.offset == expected.count
        }
    }

    /// Hands every stored schema's key and value to `body` in key order
    /// while it returns true; false when it stopped the walk.
    private static func walkSchemas(
        in transaction: Transaction, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws -> Bool {
        guard let meta = try transaction.existingTable(metaTable) else { return true }
        let prefix = Array("schema:".utf8)
        return try prefix.withUnsafeBytes { start in
            try transaction.withCursor(on: meta) { cursor in
                var entry = try cursor.seek(atLeast: start)
                while let current = entry, current.key.starts(with: prefix) {
                    guard body(current.key, current.value) else { return false }
                    entry = try cursor.next()
                }
                return true
            }
        }
    }

    /// The names of every type stored in the file, sorted. (With key
    /// tokens, the names are read from the schemas, not the keys.)
    static func storedTypeNames(in transaction: Transaction) throws -> [String] {
        guard let meta = try transaction.existingTable(metaTable) else { return [] }
        let prefix = Array("schema:".utf8)
        let tokenized = transaction.environment.keyTokens != nil
        var names: [String] = []
        var schemas: [[UInt8]] = []
        try prefix.withUnsafeBytes { start in
            try transaction.withCursor(on: meta) { cursor in
                var entry = try cursor.seek(atLeast: start)
                while let current = entry, current.key.starts(with: prefix) {
                    if tokenized {
                        schemas.append(Array(current.value))
                    } else {
                        names.append(String(decoding: current.key.dropFirst(prefix.count), as: UTF8.self))
                    }
                    entry = try cursor.next()
                }
            }
        }
        for json in schemas { names.append(try decodedSchema(json, type: "a type", in: transaction).name) }
        return tokenized ? names.sorted() : names
    }
}
