import TroveStorage

extension Database {
    /// Whether a write transaction is open on this handle.
    public var isInWriteTransaction: Bool { writeState != nil }

    /// Runs `block` in a write transaction and commits it.
    ///
    /// If `block` throws, every change it made is rolled back and the error is
    /// rethrown; the file is left exactly as before. A `write` inside a
    /// `write` throws `TroveError.Kind.writeInProgress`.
    ///
    /// ```swift
    /// try db.write {
    ///     try db.add(photo)
    ///     photo.memo = "edited"
    /// }
    /// ```
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try write(withoutNotifying: [], block)
    }

    /// Opens a write transaction; pair it with ``commitWrite()`` or ``cancelWrite()``.
    /// Prefer ``write(_:)``, which cannot forget either.
    public func beginWrite() throws {
        checkIsolation()
        if isFrozen {
            throw TroveError(
                .fileAccess,
                "this handle of \(path) is frozen (a snapshot that cannot change); write through a live handle", path: path)
        }
        if writeState != nil {
            throw TroveError(
                .writeInProgress,
                "a write transaction is already open on this handle of \(path); nested writes are not supported, do the work in the open one",
                path: path)
        }
        let transaction = try WriteTransaction(environment: environment)
        if let carried = carriedClusterCaches, carried.commit + 1 == transaction.id {
            var caches = carried.caches
            for (slot, cache) in carried.caches where !(cache as! ClusterTable.ClusterCache).carry(into: transaction) {
                caches[slot] = nil
            }
            transaction.objectCaches = caches
        }
        carriedClusterCaches = nil
        let state: WriteState
        if let spare = spareWriteState {
            spareWriteState = nil
            spare.start(transaction)
            state = spare
        } else {
            state = WriteState(transaction: transaction, recorder: changeRecorder)
        }
        if !observers.isEmpty, let previous = snapshot, !previous.isParked {
            // Kept open for the observers, to compare with the commit.
            state.previousSnapshot = previous
            snapshot = nil
        } else {
            snapshot?.reset()
        }
        writeState = state
        generation &+= 1
    }

    /// Commits the open write transaction, making its changes durable.
    ///
    /// If a property setter failed during the transaction (setters cannot
    /// throw), the transaction is rolled back and that error is thrown here.
    public func commitWrite() throws {
        guard var state = writeState else {
            throw TroveError(.notInWriteTransaction, "commitWrite() called with no write transaction open on \(path)", path: path)
        }
        if let error = state.deferredError {
            cancelWrite()
            throw error
        }
        do {
            if let beforeCommit {
                try beforeCommit(state.recorder.record.changedObjects)
            } else {
                try refuseUncapturedSyncWrites(state)
            }
            try state.transaction.writePending()
            try flushCounters(state)
            // The change log is written only for a transaction that wrote: the clusters it changed first.
            try state.transaction.writeOutCaches()
            try ChangeLog.append(state.recorder, in: state.transaction, tables: &changeLogTables)
            let id = state.transaction.id
            try state.transaction.commit()
            // (Every cache of a write is a cluster cache.)
            let caches = state.transaction.objectCaches
            carriedClusterCaches = caches.isEmpty ? nil : (id, caches)
            // Schemas known unchanged before a write that changed no schema are known after it.
            if incomingLinkCache?.confirmedAt == id - 1 {
                incomingLinkCache?.confirmedAt = state.recorder.changedCatalog ? nil : id
            }
            if lastIncomingLinks?.confirmedAt == id - 1 {
                lastIncomingLinks?.confirmedAt = state.recorder.changedCatalog ? nil : id
            }
            // (A write that changed the catalog may have dropped a type and its counters.)
            storedCounters =
                state.countersAfterCommit.isEmpty || state.recorder.changedCatalog
                ? nil : (state.countersAfterCommit, id)
        } catch {
            // (A table the write opened for the log is gone with it.)
            changeLogTables = ChangeLog.Tables()
            cancelWrite()
            throw error
        }
        writeState = nil
        for table in state.pendingTables.values { catalog.publish(table) }
        publishKeyHighWater(state)
        generation &+= 1
        isDeliveringOwnCommit = true
        defer { isDeliveringOwnCommit = false }
        deliverChanges(skipping: state.silenced, previous: state.previousSnapshot)
        if let previous = state.previousSnapshot { retire(previous) }
        park(&state)
    }

    /// Keeps a finished write's state for the handle's next write, when
    /// nothing else holds it (a migration's state may outlive its write).
    private func park(_ state: inout WriteState) {
        guard isKnownUniquelyReferenced(&state) else { return }
        state.park()
        spareWriteState = state
    }

    private func publishKeyHighWater(_ state: WriteState) {
        for (counter, next) in state.nextKeys where counter.hasPrefix("seq:") {
            catalog.raiseHighestKey(String(counter.dropFirst(4)), to: next - 1)
        }
    }

    /// Discards every change of the open write transaction. Objects added in
    /// it become invalidated.
    public func cancelWrite() {
        guard var state = writeState else { return }
        state.transaction.abort()
        writeState = nil
        if let previous = state.previousSnapshot {
            // As without observers: the next read sees the latest commit.
            previous.reset()
            if snapshot == nil { snapshot = previous } else { retire(previous) }
        }
        publishKeyHighWater(state)
        for (name, table) in state.pendingTables {
            table.isRetired = true
            objectBindings = objectBindings.filter { $0.value.table.name != name }
            valueBindings = valueBindings.filter { $0.value.table.name != name }
        }
        generation &+= 1
        park(&state)
    }

    /// Marks every object and ``Results`` this handle handed out so far as
    /// invalidated (what TroveRealm's `realm.invalidate()` promises); they
    /// still read the latest commit. Objects and results obtained afterwards
    /// are valid.
    package func invalidateHandedOut() {
        invalidationEpoch &+= 1
    }

    /// The open write, or an error naming the operation that needed one.
    func requireWrite(_ operation: String) throws -> WriteState {
        guard let writeState else {
            throw TroveError(
                .notInWriteTransaction,
                "\(operation) must be called inside a write transaction: wrap it in `try db.write { ... }`",
                path: path)
        }
        return writeState
    }

    // MARK: Object keys

    /// The next never-used object key of a type.
    func nextObjectKey(for table: TableInfo, _ state: WriteState) throws -> UInt64 {
        let counterName = table.sequenceCounter
        if let next = state.nextKeys[counterName] {
            state.nextKeys[counterName] = next + 1
            return next
        }
        let meta = try state.transaction.openTable(Catalog.metaTable)!
        var next = try Catalog.integer(UInt64.self, key: counterName, in: meta, state.transaction) ?? 1
        // Never below the largest key present, nor below any key this process
        // handed out in a write that was cancelled.
        if let last = try table.store.lastKey(in: state.transaction), last >= next { next = last + 1 }
        next = max(next, catalog.highestKey(table.schema.keySpace) + 1)
        if table.schema.ancestors != nil {
            // A subclass shares its hierarchy's keys: the counter is stored at
            // each commit (the top class's own largest key is read instead).
            if let root = try? tableInfo(named: table.schema.keySpace) {
                if !root.keyIsPrimaryKey, let last = try root.store.lastKey(in: state.transaction), last >= next {
                    next = last + 1
                }
                while root.keyIsPrimaryKey, try root.store.contains(next, in: state.transaction) { next += 1 }
            }
            state.deletedBeyond[counterName] = max(state.deletedBeyond[counterName] ?? 0, next + 1)
        }
        state.nextKeys[counterName] = next + 1
        return next
    }

    /// Stores the counters of types that had deletes, so a deleted largest
    /// key (or auto-increment value) is never handed out again.
    private func flushCounters(_ state: WriteState) throws {
        if let known = storedCounters, known.confirmedAt == state.transaction.id - 1 {
            state.countersAfterCommit = known.values
        }
        guard !state.deletedBeyond.isEmpty else { return }
        let meta = try state.transaction.openTable(Catalog.metaTable)!
        for (name, beyond) in state.deletedBeyond {
            let stored = try Catalog.integer(UInt64.self, key: name, in: meta, state.transaction) ?? 0
            let next = max(stored, beyond, state.nextKeys[name] ?? 0)
            if next != stored { try Catalog.put(next.littleEndian, key: name, in: meta, state.transaction) }
            state.countersAfterCommit[name] = next
        }
    }
}
