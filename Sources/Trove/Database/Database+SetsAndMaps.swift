import TroveStorage

/// Set and map storage, beside lists (`Database+Lists.swift`).
///
/// A set property keeps `set:Type.prop` with keys `owner ‖ index key of the
/// value` (order-preserving, so a set iterates in value order; a value too
/// long for a key gets a hash of the whole value appended), and the value
/// itself as the entry. A map keeps `map:Type.prop` with keys
/// `owner ‖ UTF-8 of the map key`. Membership, lookup, insert and remove are
/// one B-tree operation each, whatever the size.
extension Database {
    /// Longest map key, in UTF-8 bytes (LMDB keys are at most 511 bytes).
    static let maximumMapKeyLength = 400

    /// The key of a set member.
    func setKey(_ value: StoredValue, owner: UInt64, column: Int, table: TableInfo) -> [UInt8] {
        Database.setKey(
            value, type: table.layout.types[column], owner: owner, in: table.collections[column]!.name, tokens: table.keyTokens)
    }

    /// The key of a set member of type `type` in set table `name`.
    static func setKey(_ value: StoredValue, type: PropertyType, owner: UInt64, in name: String, tokens: KeyTokens?) -> [UInt8] {
        if let tokens {
            var key = Database.ownerPrefix(owner)
            IndexKey.make(value, type: type, cut: false).bytes.withUnsafeBytes { tokens.append($0, in: name, to: &key) }
            return key
        }
        var (bytes, exact) = IndexKey.make(value, type: type)
        // Leave room for the owner and the hash within LMDB's 511-byte keys.
        if bytes.count > 480 {
            bytes.removeLast(bytes.count - 480)
            exact = false
        }
        var key = Database.ownerPrefix(owner) + bytes
        if !exact {
            // Two long values with one prefix: tell them apart by a hash of the whole value.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            var text = value.description
            text.withUTF8 { for byte in $0 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 } }
            withUnsafeBytes(of: hash.bigEndian) { key.append(contentsOf: $0) }
        }
        return key
    }

    func setContains(_ value: StoredValue, owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws
        -> Bool
    {
        guard let set = table.collections[column], let layout = table.elementLayouts[column], transaction.canSee(set) else {
            return false
        }
        let key = setKey(value, owner: owner, column: column, table: table)
        return try key.withUnsafeBytes { k in
            try transaction.withValue(in: set, key: k) { stored in
                stored.map { ValueComparison.test(RecordReader($0, layout: layout).value(at: 0), .equal, value, []) } ?? false
            }
        }
    }

    /// Adds a member; returns false when it was there already.
    @discardableResult
    func setInsert(_ value: StoredValue, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws -> Bool {
        try checkElement(value, column: column, table: table)
        if try setContains(value, owner: owner, column: column, table: table, state.transaction) { return false }
        try putEntry(
            value, replacing: nil, key: setKey(value, owner: owner, column: column, table: table), owner: owner, column: column,
            table: table, state)
        generation &+= 1
        return true
    }

    /// Removes a member; returns false when it was not there.
    @discardableResult
    func setRemove(_ value: StoredValue, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws -> Bool {
        guard try setContains(value, owner: owner, column: column, table: table, state.transaction) else { return false }
        let key = setKey(value, owner: owner, column: column, table: table)
        try key.withUnsafeBytes { _ = try state.transaction.delete(table.collections[column]!, key: $0) }
        if table.refs[column] != nil, case .int(let target) = value {
            try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
        }
        generation &+= 1
        return true
    }

    func setCount(owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws -> Int {
        try collectionEntries(owner: owner, column: column, table: table, transaction).count
    }

    private func mapKey(_ key: String, owner: UInt64, table: TableInfo, column: Int) throws -> [UInt8] {
        let bytes = Array(key.utf8)
        guard bytes.count <= Database.maximumMapKeyLength else {
            throw TroveError(
                .invalidValue,
                "a key of \(table.name).\(table.schema.properties[column].name) is \(bytes.count) bytes; map keys can be at most \(Database.maximumMapKeyLength)",
                path: path)
        }
        return Database.storedEntryKey(bytes, owner: owner, column: column, table: table)
    }

    /// The stored key of the entry of a set or map whose key, as
    /// ``forEachCollectionEntry`` gives it, is `entryKey`: the owner's
    /// prefix and the key, or with key tokens, the key's token.
    static func storedEntryKey(_ entryKey: [UInt8], owner: UInt64, column: Int, table: TableInfo) -> [UInt8] {
        var key = Database.ownerPrefix(owner)
        guard let tokens = table.keyTokens, table.tokenizesEntries(column) else { return key + entryKey }
        entryKey.withUnsafeBytes { tokens.append($0, in: table.collections[column]!.name, to: &key) }
        return key
    }

    func mapValue(forKey key: String, owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws
        -> StoredValue?
    {
        guard let map = table.collections[column], let layout = table.elementLayouts[column], transaction.canSee(map) else {
            return nil
        }
        let bytes = try mapKey(key, owner: owner, table: table, column: column)
        return try bytes.withUnsafeBytes { k in
            try transaction.withValue(in: map, key: k) {
                $0.map { RecordReader(table.elementRecord($0, column: column), layout: layout).value(at: 0) }
            }
        }
    }

    /// Sets a map entry; nil removes it.
    func mapSet(_ value: StoredValue?, forKey key: String, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        let old = try mapValue(forKey: key, owner: owner, column: column, table: table, state.transaction)
        let bytes = try mapKey(key, owner: owner, table: table, column: column)
        if let value {
            try checkElement(value, column: column, table: table)
            try putEntry(
                value, replacing: old, key: bytes, owner: owner, column: column, table: table, state, mapKey: Array(key.utf8))
        } else if let old {
            try bytes.withUnsafeBytes { _ = try state.transaction.delete(table.collections[column]!, key: $0) }
            if table.refs[column] != nil, case .int(let target) = old {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
            }
        }
        generation &+= 1
    }
}
