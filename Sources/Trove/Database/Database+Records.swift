import TroveStorage

/// What `add` does when an object with the same primary key is stored.
public enum UpdatePolicy: Sendable {
    /// Throw `TroveError.Kind.primaryKeyExists` (the default).
    case error
    /// Update the stored object with the new values (an upsert).
    case modified
    /// Like `.modified`; every property is written, changed or not.
    case all
}

/// The record-level operations everything else is built on: store, read,
/// change one column, delete, and keep the indexes in step. This is the
/// physical-layout boundary of the object layer.
extension Database {
    /// Stores a record; returns its object key. With a primary key and an
    /// update policy, an existing object with that key is overwritten.
    func storeRecord(_ input: [StoredValue], in table: TableInfo, policy: UpdatePolicy, _ state: WriteState) throws
        -> (objectKey: UInt64, values: [StoredValue])
    {
        var values = input
        let transaction = state.transaction
        var existing: UInt64?
        let objectKey: UInt64
        if table.keyIsPrimaryKey, let column = table.primaryKeyColumn {
            // The schema's properties are read in place: copying one costs more than the insert's encoding.
            if table.schema.properties[column].isAutoIncrement, case .int(0) = values[column] {
                values[column] = .int(try nextAutoIncrement(table, state))
            }
            let value = values[column].converted(to: table.layout.types[column]) ?? values[column]
            guard let key = table.objectKey(forPrimaryKey: value) else {
                throw TroveError(
                    .invalidPrimaryKey,
                    "the primary key \(table.name).\(table.schema.properties[column].name) needs an integer, not \(values[column])",
                    path: path)
            }
            if table.primaryKeyIsOptional, value == .int(.min) {
                throw TroveError(
                    .invalidPrimaryKey,
                    "the optional primary key \(table.name).\(table.schema.properties[column].name) cannot be \(Int64.min): that key is nil's",
                    path: path)
            }
            if values[column] != value { values[column] = value }  // a copy of the values only when converted
            objectKey = key
            let inserted: Bool
            if table.store.storesValues {
                values = try RecordWriter.checkedValues(values, layout: table.layout).values
                inserted = try table.store.insert(objectKey, values: values, in: transaction)
            } else {
                try state.recordWriter.encode(values, layout: table.layout)
                let stored = state.recordWriter.converted ? nil : values
                inserted = try state.recordWriter.bytes.withUnsafeBytes {
                    try table.store.insert(objectKey, record: $0, values: stored, in: transaction)
                }
            }
            if inserted {
                try finishInsert(values, objectKey: objectKey, table: table, state)
                return (objectKey, values)
            }
            if policy == .error {
                throw TroveError(
                    .primaryKeyExists,
                    "a \(table.name) with primary key \(table.schema.properties[column].name) = \(value.swiftValue.map { "\($0)" } ?? "nil") already exists; use add(_:update: .modified) to update it",
                    path: path)
            }
            existing = objectKey
        } else if let column = table.primaryKeyColumn, let pkTable = table.primaryKeyIndex {
            let property = table.schema.properties[column]
            if property.isAutoIncrement, case .int(0) = values[column] {
                values[column] = .int(try nextAutoIncrement(table, state))
            } else if property.isAutoIncrement, case .int(let given) = values[column], !table.indexIsOrdered(column) {
                // A value given by hand: the next generated one comes after it (the keys' order cannot tell).
                try raiseAutoIncrement(table, past: given, state)
            }
            let primaryKeyBytes = try primaryKeyKey(values[column], table: table)
            // Claim the primary key for a new object key; if it is taken, that is the existing object.
            let candidate = try nextObjectKey(for: table, state)
            var bigEndian = candidate.bigEndian
            let claimed = try primaryKeyBytes.withUnsafeBytes { k in
                try withUnsafeBytes(of: &bigEndian) { try transaction.put(pkTable, key: k, value: $0, mode: .insertOnly) }
            }
            if claimed {
                objectKey = candidate
            } else {
                if policy == .error {
                    throw TroveError(
                        .primaryKeyExists,
                        "a \(table.name) with primary key \(property.name) = \(values[column]) already exists; use add(_:update: .modified) to update it",
                        path: path)
                }
                existing = try primaryKeyBytes.withUnsafeBytes { k in
                    try transaction.withValue(in: pkTable, key: k) { $0.map { OrderedKey.objectKey(from: $0) } }
                }
                objectKey = existing!
            }
        } else {
            objectKey = try nextObjectKey(for: table, state)
        }
        if existing == nil, table.store.storesValues {
            values = try RecordWriter.checkedValues(values, layout: table.layout).values
            // (As `append` does: a key that is taken, which a fresh key never is, is replaced.)
            if try !table.store.insert(objectKey, values: values, in: transaction) {
                try table.store.replace(objectKey, values: values, in: transaction)
            }
            try finishInsert(values, objectKey: objectKey, table: table, state)
            return (objectKey, values)
        }
        if existing != nil { return (objectKey, try replaceRecord(values, objectKey: objectKey, in: table, state)) }
        try state.recordWriter.encode(values, layout: table.layout)
        let stored = state.recordWriter.converted ? nil : values
        try state.recordWriter.bytes.withUnsafeBytes {
            try table.store.append(objectKey, record: $0, values: stored, in: transaction)
        }
        try finishInsert(values, objectKey: objectKey, table: table, state)
        return (objectKey, values)
    }

    /// Writes `values` over the stored record of `objectKey`: its outgoing
    /// links and lists are dropped (the caller stores them again), its index
    /// and full-text entries follow.
    func replaceRecord(_ values: [StoredValue], objectKey: UInt64, in table: TableInfo, _ state: WriteState) throws
        -> [StoredValue]
    {
        let transaction = state.transaction
        if table.hasRelations { try detachOutgoing(objectKey, in: table, state) }
        try state.recordWriter.encode(values, layout: table.layout)
        var oldTexts: [Int: StoredValue] = [:]
        let oldKeys: [Int: [UInt8]] = try table.store.withRecord(objectKey, in: transaction) { reader in
            guard let reader else { return [:] }
            var keys: [Int: [UInt8]] = [:]
            for (column, index) in table.indexes {
                keys[column] = table.indexKey(reader.value(at: column), column: column, in: index).bytes
            }
            for column in table.fullTextIndexes.keys { oldTexts[column] = reader.value(at: column) }
            return keys
        }
        for (column, old) in oldTexts {
            try reindexText(column: column, from: old, to: values[column], objectKey: objectKey, table: table, state)
        }
        try state.recordWriter.bytes.withUnsafeBytes { try table.store.replace(objectKey, record: $0, in: transaction) }
        for (column, index) in table.indexes {
            let newKey = table.indexKey(values[column], column: column, in: index).bytes
            if let oldKey = oldKeys[column] {
                if oldKey == newKey { continue }
                try deleteIndexEntry(oldKey, objectKey: objectKey, in: index, transaction)
            }
            try putIndexEntry(newKey, objectKey: objectKey, in: index, transaction)
        }
        if table.hasRelations { try attachLinks(values, objectKey: objectKey, table: table, state) }
        generation &+= 1
        return values
    }

    /// What follows putting a new record: its index entries and its links' inverse entries.
    private func finishInsert(_ values: [StoredValue], objectKey: UInt64, table: TableInfo, _ state: WriteState) throws {
        for (column, index) in table.indexes {
            try putIndexEntry(
                table.indexKey(values[column], column: column, in: index).bytes, objectKey: objectKey, in: index,
                state.transaction)
        }
        if !table.fullTextIndexes.isEmpty { try indexTexts(values, objectKey: objectKey, table: table, state) }
        if table.hasRelations { try attachLinks(values, objectKey: objectKey, table: table, state) }
        generation &+= 1
    }

    /// Records the to-one links of a freshly stored record in their inverse-link tables.
    private func attachLinks(_ values: [StoredValue], objectKey: UInt64, table: TableInfo, _ state: WriteState) throws {
        for column in table.refs.keys where table.collections[column] == nil {
            guard case .int(let target) = values[column] else { continue }
            try checkLinkTarget(values[column], property: table.schema.properties[column], of: table)
            try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: objectKey, by: 1, state.transaction)
        }
    }

    /// The index key of a primary key value, refusing values too long to index.
    func primaryKeyKey(_ value: StoredValue, table: TableInfo) throws -> [UInt8] {
        let column = table.primaryKeyColumn!
        let (bytes, exact) = table.indexKey(value, column: column, in: table.primaryKeyIndex!)
        guard exact else {
            throw TroveError(
                .invalidPrimaryKey,
                "the primary key \(table.name).\(table.schema.properties[column].name) is longer than \(OrderedKey.maximumLength - 1) bytes; use a shorter key",
                path: path)
        }
        return bytes
    }

    /// The next auto-increment value: above every value handed out in this
    /// transaction and above the largest primary key stored (explicit keys included).
    func nextAutoIncrement(_ table: TableInfo, _ state: WriteState) throws -> Int64 {
        let counterName = table.autoIncrementCounter
        var next = Int64(try autoIncrementCounter(counterName, state))
        let largest: Int64?
        if table.keyIsPrimaryKey {
            largest = try table.store.lastKey(in: state.transaction).map { TableInfo.integer(forObjectKey: $0) }
        } else {
            largest = try state.transaction.withCursor(on: table.primaryKeyIndex!) { cursor in
                try cursor.last().flatMap { OrderedKey.int64(from: $0.key) }
            }
        }
        if let largest, largest >= next {
            guard largest < Int64.max else {
                throw TroveError(
                    .invalidPrimaryKey, "\(table.name) has used every auto-increment value up to Int64.max", path: path)
            }
            next = largest + 1
        }
        state.nextKeys[counterName] = UInt64(next + 1)
        if let column = table.primaryKeyColumn, !table.indexIsOrdered(column) {
            // Keys that hold tokens tell no largest value: the counter is all there is, so it is stored.
            state.deletedBeyond[counterName] = max(state.deletedBeyond[counterName] ?? 0, UInt64(next + 1))
        }
        return next
    }

    /// The next auto-increment value the write knows of: its own, or the stored counter's.
    private func autoIncrementCounter(_ counterName: String, _ state: WriteState) throws -> UInt64 {
        if let cached = state.nextKeys[counterName] { return cached }
        let meta = try state.transaction.openTable(Catalog.metaTable)!
        return try Catalog.integer(UInt64.self, key: counterName, in: meta, state.transaction) ?? 1
    }

    /// Makes the next auto-increment value of `table` come after `value`.
    private func raiseAutoIncrement(_ table: TableInfo, past value: Int64, _ state: WriteState) throws {
        guard value >= 0, value < Int64.max else { return }
        let counterName = table.autoIncrementCounter
        let next = max(try autoIncrementCounter(counterName, state), UInt64(value) + 1)
        state.nextKeys[counterName] = next
        state.deletedBeyond[counterName] = max(state.deletedBeyond[counterName] ?? 0, next)
    }

    func putIndexEntry(_ key: [UInt8], objectKey: UInt64, in index: Table, _ transaction: WriteTransaction) throws {
        var bigEndian = objectKey.bigEndian
        try key.withUnsafeBytes { k in
            try withUnsafeBytes(of: &bigEndian) { _ = try transaction.put(index, key: k, value: $0) }
        }
    }

    func deleteIndexEntry(
        _ value: StoredValue, column: Int, objectKey: UInt64, in index: Table, _ table: TableInfo,
        _ transaction: WriteTransaction
    ) throws {
        try deleteIndexEntry(table.indexKey(value, column: column, in: index).bytes, objectKey: objectKey, in: index, transaction)
    }

    func deleteIndexEntry(_ key: [UInt8], objectKey: UInt64, in index: Table, _ transaction: WriteTransaction) throws {
        var bigEndian = objectKey.bigEndian
        try key.withUnsafeBytes { k in
            try withUnsafeBytes(of: &bigEndian) { _ = try transaction.delete(index, key: k, value: $0) }
        }
    }

    /// Every column of a stored object, or nil when it does not exist.
    func recordValues(_ objectKey: UInt64, in table: TableInfo, _ transaction: Transaction) throws -> [StoredValue]? {
        try table.store.withRecord(objectKey, in: transaction) { $0?.allValues() }
    }

    /// Deletes one stored object and its index entries. Returns false if it
    /// was not there.
    @discardableResult
    func deleteRecord(_ objectKey: UInt64, in table: TableInfo, _ state: WriteState) throws -> Bool {
        let transaction = state.transaction
        let autoIncrements = table.primaryKeyColumn.map { table.schema.properties[$0].isAutoIncrement } ?? false
        if table.primaryKeyIndex == nil, table.indexes.isEmpty, table.fullTextIndexes.isEmpty, !autoIncrements {
            // Nothing keyed by the object's values: it is deleted without being read.
            guard try table.store.delete(objectKey, in: transaction) else { return false }
            noteDeleted(objectKey: objectKey, values: nil, table: table, state)
            generation &+= 1
            return true
        }
        guard let values = try recordValues(objectKey, in: table, transaction) else { return false }
        try table.store.delete(objectKey, in: transaction)
        noteDeleted(objectKey: objectKey, values: values, table: table, state)
        if let column = table.primaryKeyColumn, let pkTable = table.primaryKeyIndex {
            let key = try primaryKeyKey(values[column], table: table)
            try key.withUnsafeBytes { _ = try transaction.delete(pkTable, key: $0) }
        }
        for (column, index) in table.indexes {
            try deleteIndexEntry(values[column], column: column, objectKey: objectKey, in: index, table, transaction)
        }
        if !table.fullTextIndexes.isEmpty { unindexTexts(values, objectKey: objectKey, table: table, state) }
        generation &+= 1
        return true
    }

    /// Remembers what a delete freed, for ``flushCounters``.
    func noteDeleted(objectKey: UInt64, values: [StoredValue]?, table: TableInfo, _ state: WriteState) {
        let sequence = table.sequenceCounter
        // (A key below the counter as stored needs no store of it: that was a lookup and a put a delete.)
        let known = storedCounters.flatMap { $0.confirmedAt == state.transaction.id - 1 ? $0.values[sequence] : nil }
        if objectKey >= known ?? 0 {
            state.deletedBeyond[sequence] = max(state.deletedBeyond[sequence] ?? 0, objectKey + 1)
        }
        if let column = table.primaryKeyColumn, table.schema.properties[column].isAutoIncrement,
            case .int(let value) = values?[column] ?? .null, value >= 0
        {
            let auto = table.autoIncrementCounter
            state.deletedBeyond[auto] = max(state.deletedBeyond[auto] ?? 0, UInt64(value) + 1)
        }
    }

    /// Deletes every object of a table at once (its indexes emptied with it).
    func deleteAllRecords(in table: TableInfo, _ state: WriteState) throws {
        let transaction = state.transaction
        guard let lastKey = try table.store.lastKey(in: transaction) else { return }
        var largestAuto: StoredValue?
        if let column = table.primaryKeyColumn, table.schema.properties[column].isAutoIncrement {
            if table.keyIsPrimaryKey {
                largestAuto = .int(TableInfo.integer(forObjectKey: lastKey))
            } else if let pk = table.primaryKeyIndex {
                largestAuto = try transaction.withCursor(on: pk) { cursor in
                    try cursor.last().flatMap { OrderedKey.int64(from: $0.key) }.map { .int($0) }
                }
            }
        }
        var values = table.layout.fallbacks
        if let column = table.primaryKeyColumn, let largestAuto { values[column] = largestAuto }
        noteDeleted(objectKey: lastKey, values: values, table: table, state)
        try table.store.clear(in: transaction)
        if let pk = table.primaryKeyIndex { try transaction.clear(pk) }
        for index in table.indexes.values { try transaction.clear(index) }
        try clearFullTextIndexes(of: table, state)
        generation &+= 1
    }

    /// Deletes the objects a query selects, without materializing them.
    func deleteMatches(table: TableInfo, predicate: BoundPredicate?, _ state: WriteState) throws {
        let linked = try isLinked(table)
        if predicate == nil, !linked { return try deleteAllRecords(in: table, state) }
        let keys = try QueryPlanner.keys(table: table, predicate: predicate, sort: [], in: state.transaction)
        if linked {
            try deleteObjects(keys.map { (table, $0) }, state)
        } else {
            for key in keys { try deleteRecord(key, in: table, state) }
        }
    }

    /// Whether deleting objects of a table must follow links (its own or other types' pointing at it).
    func isLinked(_ table: TableInfo) throws -> Bool {
        try table.hasRelations || !incomingLinks(to: table.name).isEmpty
    }

    /// The object key for a primary-key value, or nil when no object has it.
    /// `checkingExistence: false` skips the lookup an integer key (which is
    /// its own object key) needs, for callers that read the record next.
    func objectKey(forPrimaryKey value: StoredValue, in table: TableInfo, checkingExistence: Bool = true) throws -> UInt64? {
        guard let column = table.primaryKeyColumn else {
            throw TroveError(.invalidPrimaryKey, "\(table.name) has no primary key", path: path)
        }
        let converted = value.converted(to: table.layout.types[column]) ?? value
        if table.keyIsPrimaryKey {
            guard let objectKey = table.objectKey(forPrimaryKey: converted) else { return nil }
            return !checkingExistence || contains(objectKey: objectKey, in: table) ? objectKey : nil
        }
        let key = try primaryKeyKey(converted, table: table)
        return try key.withUnsafeBytes { k in
            try readTransaction().withValue(in: table.primaryKeyIndex!, key: k) { $0.map { OrderedKey.objectKey(from: $0) } }
        }
    }

    // MARK: Live property access

    func contains(objectKey: UInt64, in table: TableInfo) -> Bool {
        (try? table.store.contains(objectKey, in: readTransaction())) ?? false
    }

    func readColumn(_ column: Int, objectKey: UInt64, table: TableInfo) -> StoredValue {
        guard let values = fetchRecordOrTrap(objectKey, table: table) else {
            fatalError(
                "Trove: this \(table.name) object was deleted (or its add was rolled back); check `isInvalidated` before reading it"
            )
        }
        guard table.layout.inRecord[column] else { return .null }
        return values.withUnsafeBytes { RecordReader($0, layout: table.layout).value(at: column) }
    }

    /// A copy of a stored record, or nil when the object does not exist.
    func fetchRecord(_ objectKey: UInt64, table: TableInfo) throws -> [UInt8]? {
        if table.isRetired { return nil }
        return try table.store.recordCopy(objectKey, in: readTransaction())
    }

    /// ``fetchRecord(_:table:)`` for reads that cannot throw (property getters):
    /// a storage failure traps with the file and the reason.
    func fetchRecordOrTrap(_ objectKey: UInt64, table: TableInfo) -> [UInt8]? {
        do {
            return try fetchRecord(objectKey, table: table)
        } catch {
            fatalError("Trove: cannot read a \(table.name) object from \(path): \(error)")
        }
    }

    /// Logs a column write of the object `objectKey` of `table` at the current generation.
    private func logColumnWrite(_ table: TableInfo, _ objectKey: UInt64) {
        if columnWrites.count == 256 {
            columnWrites.removeFirst(128)
            columnWritesAscendFrom = Swift.max(0, columnWritesAscendFrom - 128)
        }
        let id = ObjectIdentifier(table)
        if let last = columnWrites.last, last.table != id || last.objectKey >= objectKey {
            columnWritesAscendFrom = columnWrites.count
        }
        columnWrites.append((generation, id, objectKey))
    }

    /// Sets one property of a managed object: patches its record in place when
    /// it can, re-encodes it otherwise, and keeps the column's index in step.
    func writeColumn(_ column: Int, _ value: StoredValue, of object: Object, table: TableInfo) {
        // The property's name is read only for a message: copying its schema costs more than the patch.
        let name = { table.schema.properties[column].name }
        guard let state = writeState else {
            fatalError(
                "Trove: cannot set \(table.name).\(name()) on a managed object outside a write transaction; wrap the change in `try db.write { ... }`"
            )
        }
        if column == table.primaryKeyColumn {
            fatalError(
                "Trove: the primary key \(table.name).\(name()) of a stored object cannot change; delete the object and add a new one"
            )
        }
        if state.deferredError != nil { return }  // the write already failed; commitWrite reports it
        if table.editsColumnAlone[column], table.store.clusters != nil {
            // The value goes straight into the column, in the object's cluster in the write's cache.
            do {
                if object._cluster == nil || !clusterPlaceIsCurrent(of: object) {
                    object._cluster = nil
                    guard try keepRecord(of: object, table: table) else {
                        fatalError(
                            "Trove: cannot set \(table.name).\(name()): the object was deleted; check `isInvalidated` first")
                    }
                }
                let stored = try storable(value, column: column, table: table)
                _ = try object._cluster.unsafelyUnwrapped.set(stored, at: object._clusterSlot, column: column)
                table.store.noteChange(object._objectKey, state.transaction)
            } catch {
                state.deferredError = error
            }
            generation &+= 1
            object._recordGeneration = generation
            logColumnWrite(table, object._objectKey)
            return
        }
        do {
            // (An object reading a view has no copy: views are read outside writes only.)
            let copyIsCurrent =
                object._view == nil && object._cluster == nil
                && (object._recordGeneration == generation
                    || recordStillCurrent(kept: object._recordGeneration, table: table, objectKey: object._objectKey))
            if copyIsCurrent, table.patchesInPlace[column], try patchInPlace(column, value, of: object, table: table, state) {
                return
            }
            let current: [UInt8]
            if copyIsCurrent {
                current = Array(object._record)
            } else {
                guard let fresh = try fetchRecord(object._objectKey, table: table) else {
                    fatalError(
                        "Trove: cannot set \(table.name).\(name()): the object was deleted; check `isInvalidated` first")
                }
                current = fresh
            }
            let record = try updateColumn(column, to: value, objectKey: object._objectKey, record: current, table: table, state)
            object.keepRecord(record, layout: table.layout, generation: generation)
            logColumnWrite(table, object._objectKey)
        } catch {
            state.deferredError = error
        }
    }

    /// Sets one column of each stored object among `keys` to `transform` of
    /// its current value (``Results/update(_:_:)``); returns how many objects
    /// it ran for. In the cluster layout a column nothing else follows (no
    /// index, link count or full-text index) is edited cluster by cluster,
    /// without building records; otherwise each object's record is updated as
    /// a setter would (index, links and full-text index kept in step).
    /// `typed`: every value `transform` returns has the column's type (it
    /// comes from a Swift value of the property's type), so none is checked.
    /// `selected` nil: every object of the type (no list of keys is made where none is needed).
    func updateEach(
        _ selected: ResultKeys?, column: Int, table: TableInfo, typed: Bool = false,
        _ transform: (StoredValue) throws -> StoredValue
    ) throws -> Int {
        let state = try requireWrite("update(_:_:)")
        let property = table.schema.properties[column]
        if column == table.primaryKeyColumn {
            throw TroveError(
                .invalidProperty,
                "the primary key \(table.name).\(property.name) of a stored object cannot change; delete the objects and add new ones",
                path: path)
        }
        if let error = state.deferredError { throw error }
        if table.isRetired || selected?.isEmpty == true { return 0 }
        // Every kept copy of these objects is stale now (none is logged in `columnWrites`).
        defer { generation &+= 1 }
        let store = table.store
        let transaction = state.transaction
        func sortedKeys() throws -> [UInt64] {
            guard let selected else { return try store.keys(in: transaction, from: 0, through: nil) }
            var sorted = Array(selected)
            if !zip(sorted, sorted.dropFirst()).allSatisfy({ $0 < $1 }) { sorted.sort() }
            return sorted
        }
        if let clusters = store.clusters, table.layout.inRecord[column], table.layout.types[column] != .mixed,
            table.indexes[column] == nil, table.refs[column] == nil, table.fullTextIndexes[column] == nil
        {
            let sorted = try sortedKeys()
            var updated: [UInt64] = []
            updated.reserveCapacity(sorted.count)
            defer { if transaction.changeHook != nil { state.recorder.noteChanges(in: store.table, objectKeys: updated) } }
            let cache = try store.clusterCache(transaction)!
            if typed {
                try clusters.update(sorted, column: column, in: transaction, cache, updated: { updated.append($0) }, transform)
            } else {
                try clusters.update(sorted, column: column, in: transaction, cache, updated: { updated.append($0) }) {
                    try storable(transform($0), column: column, table: table)
                }
            }
            return updated.count
        }
        var count = 0
        if store.clusters == nil, table.patchesInPlace[column] {
            // Each record patched where a cursor walking the keys finds it. A
            // value the slot cannot take as it is (nil on either side) goes the
            // general way afterwards.
            var general: [(key: UInt64, value: StoredValue)] = []
            var last: UInt64?  // a write that grew the map runs its key again
            try transaction.rewrite(store.table, keys: selected == nil ? nil : try sortedKeys()) { key, record in
                let old = record.withUnsafeBytes { RecordReader($0, layout: table.layout).value(at: column) }
                let new = typed ? try transform(old) : try storable(transform(old), column: column, table: table)
                if key != last { count += 1 }
                last = key
                if RecordWriter.patch(&record, column: column, value: new, layout: table.layout) { return true }
                general.append((key, new))
                return false
            }
            for (key, value) in general {
                guard let record = try fetchRecord(key, table: table) else { continue }
                _ = try updateColumn(column, to: value, objectKey: key, record: record, table: table, state)
            }
            return count
        }
        for key in try selected.map(Array.init) ?? sortedKeys() {
            guard let record = try fetchRecord(key, table: table) else { continue }
            let old = record.withUnsafeBytes { RecordReader($0, layout: table.layout).value(at: column) }
            _ = try updateColumn(column, to: try transform(old), objectKey: key, record: record, table: table, state)
            count += 1
        }
        return count
    }

    /// `value` as `column` stores it (``RecordWriter/checked(_:column:layout:)``), its error naming the file.
    private func storable(_ value: StoredValue, column: Int, table: TableInfo) throws -> StoredValue {
        do {
            return try RecordWriter.checked(value, column: column, layout: table.layout)
        } catch var error as TroveError {
            error.path = error.path ?? path
            throw error
        }
    }

    /// Writes a fixed-size column nothing else follows (``TableInfo/patchesInPlace``)
    /// by patching the object's own record copy, then storing that copy (the
    /// cluster layout changes the column alone): no record is copied or
    /// encoded. False, with nothing changed, when the slot cannot take the
    /// value as it is (nil on either side, another type): the general path
    /// then encodes the record or reports the error.
    private func patchInPlace(_ column: Int, _ value: StoredValue, of object: Object, table: TableInfo, _ state: WriteState)
        throws -> Bool
    {
        let record = object._record
        guard RecordWriter.patch(record, column: column, value: value, layout: table.layout) else { return false }
        let stored: Bool
        if table.store.clusters != nil {
            stored = try table.store.set(object._objectKey, column: column, to: value, in: state.transaction)
        } else {
            try table.store.replace(object._objectKey, record: UnsafeRawBufferPointer(record), in: state.transaction)
            stored = true
        }
        guard stored else {
            fatalError(
                "Trove: cannot set \(table.name).\(table.schema.properties[column].name): the object was deleted; check `isInvalidated` first"
            )
        }
        generation &+= 1
        object._recordGeneration = generation
        logColumnWrite(table, object._objectKey)
        return true
    }

    /// Writes one column of a stored record (given as `record`): patched in
    /// place when fixed-size, re-encoded otherwise; the column's index entry
    /// follows when its key bytes change. Returns the new record.
    func updateColumn(
        _ column: Int, to value: StoredValue, objectKey: UInt64, record current: [UInt8], table: TableInfo, _ state: WriteState
    )
        throws -> [UInt8]
    {
        let transaction = state.transaction
        guard table.layout.inRecord[column] else {
            let property = table.schema.properties[column]
            throw TroveError(
                .invalidProperty,
                "\(table.name).\(property.name) is a \(property.typeDescription); change it through its collection, not as one value",
                path: path)
        }
        var record = current
        let old = record.withUnsafeBytes { RecordReader($0, layout: table.layout).value(at: column) }
        if table.refs[column] != nil, old != value {
            try checkLinkTarget(value, property: table.schema.properties[column], of: table)
            if case .int(let target) = old {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: objectKey, by: -1, transaction)
            }
            if case .int(let target) = value {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: objectKey, by: 1, transaction)
            }
        }
        if !RecordWriter.patch(&record, column: column, value: value, layout: table.layout) {
            var values = record.withUnsafeBytes { RecordReader($0, layout: table.layout).allValues() }
            values[column] = value
            try state.recordWriter.encode(values, layout: table.layout)
            record = state.recordWriter.bytes
        }
        try record.withUnsafeBytes { try table.store.replace(objectKey, record: $0, changing: column, in: transaction) }
        if !table.fullTextIndexes.isEmpty {
            try reindexText(column: column, from: old, to: value, objectKey: objectKey, table: table, state)
        }
        if let index = table.indexes[column] {
            let oldKey = table.indexKey(old, column: column, in: index).bytes
            let newKey = table.indexKey(value, column: column, in: index).bytes
            if oldKey != newKey {
                try deleteIndexEntry(oldKey, objectKey: objectKey, in: index, transaction)
                try putIndexEntry(newKey, objectKey: objectKey, in: index, transaction)
            }
        }
        generation &+= 1
        return record
    }
}
