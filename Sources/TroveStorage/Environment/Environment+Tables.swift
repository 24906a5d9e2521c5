import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The environment's tables: which are sealed, the names LMDB knows them
/// by, and the handles this process has opened.
extension Environment {
    /// Whether the values of table `name` are encrypted.
    func seals(_ name: String) -> Bool {
        guard cipher != nil else { return false }
        if keyTokens != nil { return !name.hasPrefix(Environment.multiValuePrefix) && name != Environment.encryptionTable }
        return options.sealedTablePrefixes.contains { name.hasPrefix($0) }
    }

    /// The name LMDB knows table `name` by: in a file with ``keyTokens``, a
    /// name holding a type or property (every name with a colon) is its kind
    /// (`clu:`, `idx:`…) and the token of the whole name.
    package func storedName(_ name: String) -> String {
        guard let keyTokens, let colon = name.firstIndex(of: ":") else { return name }
        if let known = state.withLock({ $0.storedNames[name] }) { return known }
        let stored = String(name[...colon]) + keyTokens.hexToken(name, in: "")
        state.withLock { $0.storedNames[name] = stored }
        return stored
    }

    func cachedTable(_ name: String) -> Table? {
        if let table = state.withLock({ $0.tables[name] }) { return table }
        guard keyTokens != nil else { return nil }
        // Opened by its stored name when the environment opened.
        let stored = storedName(name)
        return state.withLock { state in
            guard let dbi = state.tablesByStoredName[stored] else { return nil }
            let table = Table(
                name: name, isMultiValue: name.hasPrefix(Environment.multiValuePrefix), dbi: dbi, isSealed: seals(name))
            state.tables[name] = table
            return table
        }
    }

    func cacheTable(_ table: Table) {
        state.withLock {
            $0.tables[table.name] = table
            $0.slotLimit = max($0.slotLimit, table.dbi + 1)
        }
    }

    /// One past the highest table slot opened so far; a transaction begun
    /// after reading this can see tables below it.
    var tableSlotLimit: MDB_dbi { state.withLock { $0.slotLimit } }

    /// The names of every table in the file (the keys of LMDB's main table).
    package func tableNames() throws -> [String] {
        let txn = try ReadTransaction(environment: self)
        defer { txn.end() }
        let main = Table(name: "", isMultiValue: false, dbi: 1)
        txn.visibleTableLimit = max(txn.visibleTableLimit, main.dbi + 1)
        return try txn.withCursor(on: main) { cursor in
            var names: [String] = []
            var entry = try cursor.first()
            while let current = entry {
                names.append(String(decoding: current.key, as: UTF8.self))
                entry = try cursor.next()
            }
            return names
        }
    }

    /// Opens every table of the file, so that every later snapshot can see
    /// them. LMDB table handles are opened only here and inside write
    /// transactions, which the writer lock serializes.
    func openExistingTables() throws {
        let names = try tableNames()
        guard !names.isEmpty else { return }
        if keyTokens != nil {
            // Stored names do not give the names tables are asked for: keep each handle by its stored name.
            try openStoredNames(names)
            return
        }
        if options.readOnly {
            // No writer can exist in a read-only environment: a committed read
            // transaction may open the handles.
            for name in names { _ = try openInReadTransaction(name, isMultiValue: name.hasPrefix(Environment.multiValuePrefix)) }
            return
        }
        let write = try WriteTransaction(environment: self)
        do {
            for name in names {
                _ = try write.openTable(name, isMultiValue: name.hasPrefix(Environment.multiValuePrefix), create: false)
            }
            try write.commit()
        } catch {
            write.abort()
            throw error
        }
    }

    fileprivate func openStoredNames(_ names: [String]) throws {
        try writerLock.lock(path: path)
        defer { writerLock.unlock() }
        var txn: OpaquePointer?
        try LMDBCall.check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "starting a read transaction", path: path)
        var opened: [String: MDB_dbi] = [:]
        for name in names {
            var dbi: MDB_dbi = 0
            let flags = name.hasPrefix(Environment.multiValuePrefix) ? UInt32(MDB_DUPSORT) : 0
            let rc = mdb_dbi_open(txn, name, flags, &dbi)
            if rc != 0 {
                mdb_txn_abort(txn)
                throw LMDBCall.error(rc, "opening table \(name)", path: path)
            }
            opened[name] = dbi
        }
        try LMDBCall.check(mdb_txn_commit(txn), "opening the tables", path: path)
        state.withLock { state in
            for (name, dbi) in opened {
                state.tablesByStoredName[name] = dbi
                state.slotLimit = max(state.slotLimit, dbi + 1)
            }
        }
    }

    /// Opens an existing table that this process has not opened yet (created
    /// by another process since), in a short write transaction of its own.
    func openExistingTable(_ name: String, isMultiValue: Bool) throws -> Table? {
        if let table = cachedTable(name) { return table }
        if options.readOnly { return try openInReadTransaction(name, isMultiValue: isMultiValue) }
        // A table the file does not have (an unencrypted file's key check,
        // say) needs no write transaction to find out: asking must not wait
        // for another handle's write.
        guard try tableNames().contains(storedName(name)) else { return nil }
        let write = try WriteTransaction(environment: self)
        do {
            let table = try write.openTable(name, isMultiValue: isMultiValue, create: false)
            try write.commit()
            return table
        } catch {
            write.abort()
            throw error
        }
    }

    func openInReadTransaction(_ name: String, isMultiValue: Bool) throws -> Table? {
        try writerLock.lock(path: path)
        defer { writerLock.unlock() }
        if let table = cachedTable(name) { return table }
        var txn: OpaquePointer?
        try LMDBCall.check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "starting a read transaction", path: path)
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, storedName(name), isMultiValue ? UInt32(MDB_DUPSORT) : 0, &dbi)
        if rc != 0 {
            mdb_txn_abort(txn)
            if rc == MDB_NOTFOUND { return nil }
            throw LMDBCall.error(rc, "opening table \(name)", path: path)
        }
        try LMDBCall.check(mdb_txn_commit(txn), "opening table \(name)", path: path)
        let table = Table(name: name, isMultiValue: isMultiValue, dbi: dbi, isSealed: seals(name))
        cacheTable(table)
        return table
    }
}
