import Foundation
import Trove
import TroveStorage

/// TroveSync's bookkeeping inside the synced file, written in the same
/// LMDB transactions as the objects it describes (a crash keeps both or
/// neither):
///
/// - `sync:meta`: the device, the last clock given out, the next change
///   id, how far pulls have read (`since`) and the space's epoch.
/// - `sync:state`: per object (type ‖ 0 ‖ primary key; its token in an
///   encrypted file, whose `sync:` tables are sealed) its ``ObjectState``:
///   causal length, current object key, pending change id, and per property
///   the clock and a hash of the value last captured or applied.
/// - `sync:keys`: type ‖ 0 ‖ object key (the type's token ‖ object key when
///   encrypted) → primary key, to name a deleted object.
/// - `sync:pending`: change id → type ‖ 0 ‖ primary key: the objects with
///   changes the server has not applied yet, oldest first.
struct SyncLedger {
    static let metaTable = Database.syncTablePrefix + "meta"
    static let stateTable = Database.syncTablePrefix + "state"
    static let keysTable = Database.syncTablePrefix + "keys"
    static let pendingTable = Database.syncTablePrefix + "pending"

    let transaction: Transaction

    /// In an encrypted file: the tokens its keys hold instead of names and primary keys.
    private var tokens: KeyTokens? { transaction.environment.keyTokens }

    private func table(_ name: String) throws -> Table? {
        if let write = transaction as? WriteTransaction { return try write.openTable(name) }
        guard let table = try transaction.existingTable(name), transaction.canSee(table) else { return nil }
        return table
    }

    private var write: WriteTransaction {
        guard let write = transaction as? WriteTransaction else {
            preconditionFailure("TroveSync wrote its bookkeeping outside a write transaction")
        }
        return write
    }

    // MARK: Meta

    func integer(_ key: String) throws -> UInt64? {
        guard let table = try table(Self.metaTable), let bytes = try transaction.value(in: table, key: Array(key.utf8)),
            bytes.count == 8
        else { return nil }
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    func setInteger(_ value: UInt64, _ key: String) throws {
        let table = try table(Self.metaTable)!
        var little = value.littleEndian
        try Array(key.utf8).withUnsafeBytes { k in
            _ = try withUnsafeBytes(of: &little) { try write.put(table, key: k, value: $0) }
        }
    }

    func text(_ key: String) throws -> String? {
        guard let table = try table(Self.metaTable), let bytes = try transaction.value(in: table, key: Array(key.utf8))
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    func setText(_ value: String, _ key: String) throws {
        let table = try table(Self.metaTable)!
        try Array(key.utf8).withUnsafeBytes { k in
            _ = try Array(value.utf8).withUnsafeBytes { try write.put(table, key: k, value: $0) }
        }
    }

    // MARK: Objects

    static func objectName(_ type: String, _ primaryKey: String) -> [UInt8] {
        Array(type.utf8) + [0] + Array(primaryKey.utf8)
    }

    /// An object's key in `sync:state`: its name, or in an encrypted file the name's token.
    private func stateKey(_ type: String, _ primaryKey: String) -> [UInt8] {
        let name = Self.objectName(type, primaryKey)
        return tokens?.token(name, in: Self.stateTable) ?? name
    }

    func state(_ type: String, _ primaryKey: String) throws -> ObjectState? {
        guard let table = try table(Self.stateTable),
            let bytes = try transaction.value(in: table, key: stateKey(type, primaryKey))
        else { return nil }
        guard let state = ObjectState(decoding: bytes) else {
            throw TroveError(.corruptFile, "TroveSync's record of \(type) \(primaryKey.debugDescription) is damaged")
        }
        return state
    }

    func setState(_ state: ObjectState, _ type: String, _ primaryKey: String) throws {
        let table = try table(Self.stateTable)!
        try stateKey(type, primaryKey).withUnsafeBytes { k in
            _ = try state.encoded(name: Self.objectName(type, primaryKey)).withUnsafeBytes {
                try write.put(table, key: k, value: $0)
            }
        }
    }

    /// Every object the ledger records, alive or deleted, with its type and
    /// primary key (read from the state: its key is a token in an encrypted file).
    func allStates() throws -> [(type: String, primaryKey: String, state: ObjectState)] {
        guard let table = try table(Self.stateTable) else { return [] }
        return try transaction.withCursor(on: table) { cursor in
            var found: [(String, String, ObjectState)] = []
            var entry = try cursor.first()
            while let current = entry {
                guard let state = ObjectState(decoding: Array(current.value)) else {
                    throw TroveError(.corruptFile, "TroveSync's record of a synced object is damaged")
                }
                // (A state of the first version has no name: it is found again when its object changes.)
                if let name = state.name, let zero = name.firstIndex(of: 0) {
                    found.append(
                        (
                            String(decoding: name[..<zero], as: UTF8.self),
                            String(decoding: name[(zero + 1)...], as: UTF8.self), state
                        ))
                }
                entry = try cursor.next()
            }
            return found
        }
    }

    /// The prefix of a type's entries in `sync:keys`: its name and a 0, or in an encrypted file the name's token.
    private func typePrefix(_ type: String) -> [UInt8] {
        tokens?.token(Array(type.utf8), in: Self.keysTable) ?? Array(type.utf8) + [0]
    }

    private func keyName(_ type: String, _ objectKey: UInt64) -> [UInt8] {
        typePrefix(type) + withUnsafeBytes(of: objectKey.bigEndian) { Array($0) }
    }

    func primaryKey(_ type: String, objectKey: UInt64) throws -> String? {
        guard let table = try table(Self.keysTable),
            let bytes = try transaction.value(in: table, key: keyName(type, objectKey))
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    func setPrimaryKey(_ primaryKey: String?, _ type: String, objectKey: UInt64) throws {
        let table = try table(Self.keysTable)!
        try keyName(type, objectKey).withUnsafeBytes { k in
            if let primaryKey {
                _ = try Array(primaryKey.utf8).withUnsafeBytes { try write.put(table, key: k, value: $0) }
            } else {
                _ = try write.delete(table, key: k)
            }
        }
    }

    /// Forgets that `objectKey` holds `primaryKey` (when it was given to another object meanwhile, keeps that).
    func forgetObjectKey(_ objectKey: UInt64, of type: String, ifItNames primaryKey: String) throws {
        guard objectKey != 0, try self.primaryKey(type, objectKey: objectKey) == primaryKey else { return }
        try setPrimaryKey(nil, type, objectKey: objectKey)
    }

    /// The object keys of `type` the ledger knows (to find deletions when a write's objects are not listed).
    func knownObjectKeys(_ type: String) throws -> [UInt64] {
        guard let table = try table(Self.keysTable) else { return [] }
        let prefix = typePrefix(type)
        return try transaction.withCursor(on: table) { cursor in
            var keys: [UInt64] = []
            var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.count == prefix.count + 8, current.key.starts(with: prefix) {
                keys.append(UInt64(bigEndian: current.key.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self)))
                entry = try cursor.next()
            }
            return keys
        }
    }

    // MARK: Pending changes

    func addPending(_ cid: UInt64, _ type: String, _ primaryKey: String) throws {
        let table = try table(Self.pendingTable)!
        _ = try Self.objectName(type, primaryKey).withUnsafeBytes { try write.put(table, key: cid, value: $0) }
    }

    func removePending(_ cid: UInt64) throws {
        let table = try table(Self.pendingTable)!
        _ = try write.delete(table, key: cid)
    }

    /// Pending changes in change-id order, up to `limit`.
    func pending(limit: Int) throws -> [(cid: UInt64, type: String, primaryKey: String)] {
        guard let table = try table(Self.pendingTable) else { return [] }
        return try transaction.withCursor(on: table) { cursor in
            var found: [(UInt64, String, String)] = []
            var entry = try cursor.first()
            while let current = entry, found.count < limit {
                guard current.key.count == 8, let zero = current.value.firstIndex(of: 0) else {
                    throw TroveError(.corruptFile, "TroveSync's list of changes to send is damaged")
                }
                found.append(
                    (
                        UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self)),
                        String(decoding: current.value[..<zero], as: UTF8.self),
                        String(decoding: current.value[(zero + 1)...], as: UTF8.self)
                    ))
                entry = try cursor.next()
            }
            return found
        }
    }

    func pendingCount() throws -> Int {
        guard let table = try table(Self.pendingTable) else { return 0 }
        return try transaction.count(of: table)
    }
}

/// What the ledger knows of one synced object.
struct ObjectState {
    /// Causal length: odd while the object lives, even once deleted; 0 before it existed.
    var cl: UInt64 = 0
    /// The object's key in this file (0 while deleted).
    var objectKey: UInt64 = 0
    /// The change id of its pending change (0: none).
    var pendingCid: UInt64 = 0
    /// Per property: the clock of its value and a hash of that value (``ValueText/hash(_:exact:)``).
    var properties: [String: (clock: PropertyClock, hash: UInt64)] = [:]

    /// Type ‖ 0 ‖ primary key, as the ledger recorded it with the state.
    private(set) var name: [UInt8]?

    var isAlive: Bool { cl % 2 == 1 }

    func encoded(name: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [2]
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(cl)
        append(objectKey)
        append(pendingCid)
        append(UInt64(properties.count))
        for (name, entry) in properties.sorted(by: { $0.key < $1.key }) {
            let utf8 = Array(name.utf8)
            append(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
            append(entry.clock.hlc)
            withUnsafeBytes(of: entry.clock.device.uuid) { bytes.append(contentsOf: $0) }
            append(entry.hash)
        }
        append(UInt64(name.count))
        bytes.append(contentsOf: name)
        return bytes
    }

    init() {}

    init?(decoding bytes: [UInt8]) {
        var offset = 1
        // Version 1 (the first TroveSync) did not record the name.
        guard let version = bytes.first, version == 1 || version == 2 else { return nil }
        func integer() -> UInt64? {
            guard offset + 8 <= bytes.count else { return nil }
            defer { offset += 8 }
            return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        }
        guard let cl = integer(), let objectKey = integer(), let pendingCid = integer(), let count = integer(),
            count < 100_000
        else { return nil }
        (self.cl, self.objectKey, self.pendingCid) = (cl, objectKey, pendingCid)
        for _ in 0..<count {
            guard let length = integer(), offset + Int(length) <= bytes.count else { return nil }
            let name = String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self)
            offset += Int(length)
            guard let hlc = integer(), offset + 16 <= bytes.count else { return nil }
            let device = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(fromByteOffset: offset, as: uuid_t.self)) }
            offset += 16
            guard let hash = integer() else { return nil }
            properties[name] = (PropertyClock(hlc: hlc, device: device), hash)
        }
        if version == 1 {
            guard offset == bytes.count else { return nil }
            return
        }
        guard let length = integer(), offset + Int(length) == bytes.count else { return nil }
        name = Array(bytes[offset...])
    }
}
