import Foundation
import Trove
import TroveStorage

/// Pull: the rows others changed, applied under the merge rules in one write.
extension SyncClient {
    /// Fetches every row changed after `since` up to the space's head and
    /// applies them in one write. `pruning` (a bootstrap after a reset): an
    /// object here the server no longer has at all, with no change to send,
    /// is deleted here too.
    func pull(
        from since: UInt64, epoch: String, pruning: Bool, _ transport: SyncTransport, _ report: inout Report
    ) throws {
        var rows: [PulledRow] = []
        var cursor: (seq: UInt64, type: String?, id: String?) = (since, nil, nil)
        var head: Int?
        var clock: Any?
        while true {
            if isCancelled() { throw CancellationError() }
            let page = try transport.call(
                "pull",
                [String(cursor.seq), cursor.type, cursor.id, head.map(String.init), String(configuration.batchSize * 4)])
            if page["reset"] as? Bool == true {
                throw TroveError(.syncServer, "the sync server's retention moved past this device while it synced: sync again")
            }
            head = head ?? (page["head"] as? Int)
            clock = page["clock"]
            let got = PulledRow.rows(of: page)
            rows += got
            Self.faultPoint?("pull-page")
            onProgress?(SyncProgress(phase: .pulling, received: rows.count))
            guard page["more"] as? Bool == true, let last = got.last else { break }
            cursor = (last.seq, last.type, last.id)
        }
        var gone: [(String, String)] = []
        if pruning {
            let seen = Set(rows.map { $0.type + "\u{0}" + $0.id })
            var unseen: [String: [String]] = [:]
            for (name, primaryKey, state) in try SyncLedger(transaction: database.currentTransaction).allStates()
            where types[name] != nil && state.isAlive && state.pendingCid == 0 && !seen.contains(name + "\u{0}" + primaryKey) {
                unseen[name, default: []].append(primaryKey)
            }
            // Rows changed after the head are not in the pull: only those the server has no row for at all go.
            for (name, ids) in unseen {
                for start in stride(from: 0, to: ids.count, by: 500) {
                    let chunk = Array(ids[start..<min(ids.count, start + 500)])
                    let found = PulledRow.rows(
                        of: try transport.call("current_rows", [name, Self.arrayLiteral(chunk)]))
                    rows += found
                    let present = Set(found.map(\.id))
                    gone += chunk.filter { !present.contains($0) }.map { (name, $0) }
                }
            }
        }
        onProgress?(SyncProgress(phase: .applying, received: rows.count))
        try applying {
            let ledger = SyncLedger(transaction: database.openWriteTransaction!)
            var deferred: [DeferredWrite] = []
            for row in rows {
                if try apply(row, ledger, &deferred) { report.pulled += 1 }
            }
            for (name, primaryKey) in gone {
                try forget(name, primaryKey, ledger)
                report.pulled += 1
            }
            try writeDeferred(deferred, ledger)
            Self.faultPoint?("apply")
            if let head { try ledger.setInteger(UInt64(head), "since") }
            try ledger.setText(epoch, "epoch")
            try observe(clock, ledger)
        }
    }

    /// What a pull writes after every object of it exists: links, and the
    /// contents of lists, sets and maps (which may hold links).
    typealias DeferredWrite = (type: SyncedType, objectKey: UInt64, property: PropertySchema, write: Deferred)

    /// Writes what applied rows deferred, once every object they may point at exists.
    func writeDeferred(_ writes: [DeferredWrite], _ ledger: SyncLedger) throws {
        for write in writes {
            try writeDeferred(write.write, write.property, objectKey: write.objectKey, of: write.type)
        }
        // What was applied is recorded as it now reads, so capture finds nothing to send.
        for (type, key) in Set(writes.map { HashedKey(type: $0.type.name, key: $0.objectKey) }).map({ (types[$0.type]!, $0.key) })
        {
            try recordApplied(key, of: type, ledger)
        }
    }

    struct HashedKey: Hashable {
        let type: String
        let key: UInt64
    }

    /// Applies one pulled row under the merge rules; true when something here changed.
    func apply(_ row: PulledRow, _ ledger: SyncLedger, _ deferred: inout [DeferredWrite]) throws -> Bool {
        let (typeName, primaryKey, cl) = (row.type, row.id, row.cl)
        guard let type = types[typeName] else { return false }
        let (values, clocks, extra) = (row.values, row.clocks, row.extra)
        var state = try ledger.state(typeName, primaryKey) ?? ObjectState()
        guard cl >= state.cl else { return false }
        let newLife = cl > state.cl
        if newLife, state.pendingCid != 0 {
            // Local changes to an earlier life of the object lost to this one.
            try ledger.removePending(state.pendingCid)
            state.pendingCid = 0
        }
        if cl % 2 == 0 {
            guard newLife else { return false }
            if state.objectKey != 0 {
                try database.deleteObject(objectKey: state.objectKey, ofType: typeName)
                try ledger.setPrimaryKey(nil, typeName, objectKey: state.objectKey)
            }
            state = ObjectState()
            state.cl = cl
            try ledger.setState(state, typeName, primaryKey)
            return true
        }
        // Which properties (and which members and entries of sets and maps) take the row's value.
        var taken: [(PropertySchema, StoredValue?, String?, PropertyClock)] = []
        var takenEntries: [(PropertySchema, [TakenEntry])] = []
        for (_, property, kind) in type.synced {
            if SyncedType.isKeyed(kind) {
                if let text = clocks[property.name] {
                    let entries = try self.takenEntries(text, property, state, newLife: newLife)
                    if !entries.isEmpty { takenEntries.append((property, entries)) }
                }
                continue
            }
            guard let clockText = clocks[property.name], let clock = PropertyClock(text: clockText) else {
                continue
            }
            if !newLife, let mine = state.properties[property.name]?.clock, !(mine < clock) { continue }
            let text = values[property.name]
            if property.type == .link || property.collection != nil {
                taken.append((property, nil, text, clock))
                continue
            }
            var exact: String?
            if property.type == .date, let pair = extra[property.name + ":exact"], pair.clock == clockText {
                exact = pair.text
            }
            let value =
                property.type == .mixed
                ? try ValueText.mixedValue(text, of: property, in: typeName)
                : try ValueText.value(text, of: property, in: typeName, exact: exact)
            taken.append((property, value, nil, clock))
        }
        guard newLife || !taken.isEmpty || !takenEntries.isEmpty else { return false }
        var key = state.objectKey
        let exists = try key != 0 && storedValues(of: type, primaryKey, at: key) != nil
        let isDeferred = { (property: PropertySchema) in property.type == .link || property.collection != nil }
        if !exists {
            // Created here: every property the row has, the others their defaults.
            let primary = type.schema.properties[type.primaryKeyIndex]
            var record: [String: StoredValue] = [
                primary.name: try ValueText.value(primaryKey, of: primary, in: typeName)
            ]
            for (property, value, _, _) in taken where !isDeferred(property) {
                if value?.isNull == false || property.isOptional { record[property.name] = value }
            }
            try database.add(record, ofType: typeName, update: .modified)
            key =
                try database.objectKey(
                    forPrimaryKey: record[primary.name]!, ofType: typeName) ?? 0
        } else {
            for (property, value, _, _) in taken where !isDeferred(property) {
                try setValue(value ?? .null, property, objectKey: key, of: type)
            }
            if newLife {
                // A new life of an object stored here: nothing of the old one stays.
                let given = Set(taken.map(\.0.name) + takenEntries.map(\.0.name))
                for (_, property, kind) in type.synced where !given.contains(property.name) {
                    if property.collection == nil {
                        try setValue(property.defaultValue ?? .null, property, objectKey: key, of: type)
                    } else {
                        deferred.append((type, key, property, SyncedType.isList(kind) ? .list(nil) : .entries([:])))
                    }
                }
            }
        }
        // A set or map: what it holds here (nothing in a new life), changed by the entries the server wins.
        for (property, entries) in takenEntries {
            var current: [String: String?] = [:]
            if exists && !newLife {
                for (entryKey, text) in try collectionTexts(key, property, of: type) { current[entryKey] = text }
            }
            for entry in entries { current[entry.key] = entry.alive ? .some(entry.text) : nil }
            deferred.append((type, key, property, .entries(current)))
        }
        if newLife { state.properties = [:] }
        for (property, _, text, clock) in taken {
            if property.ownsTargets == true && property.collection == nil {
                deferred.append((type, key, property, .embedded(text)))
            } else if property.type == .link && property.collection == nil {
                deferred.append((type, key, property, .link(text)))
            } else if property.collection != nil {
                deferred.append((type, key, property, .list(text)))
            }
            state.properties[property.name] = (clock, 0)
        }
        for (property, entries) in takenEntries {
            for entry in entries { state.properties[Self.entryName(property.name, entry.key)] = (entry.clock, 0) }
        }
        if state.objectKey != key {
            try ledger.forgetObjectKey(state.objectKey, of: typeName, ifItNames: primaryKey)
            try ledger.setPrimaryKey(primaryKey, typeName, objectKey: key)
        }
        state.objectKey = key
        state.cl = cl
        try ledger.setState(state, typeName, primaryKey)
        try recordApplied(key, of: type, ledger)
        return true
    }

    func setValue(_ value: StoredValue, _ property: PropertySchema, objectKey: UInt64, of type: SyncedType) throws {
        guard let values = try database.storedValues(objectKey: objectKey, ofType: type.name) else { return }
        let primaryKey = values[type.primaryKeyIndex]
        let stored = value.isNull && !property.isOptional ? (property.defaultValue ?? value) : value
        try database.setValue(stored, forProperty: property.name, ofType: type.name, primaryKey: primaryKey)
    }

    /// Records the hashes of an object's values as they now read, so the
    /// next capture sees no change in what was applied.
    func recordApplied(_ key: UInt64, of type: SyncedType, _ ledger: SyncLedger) throws {
        guard let values = try database.storedValues(objectKey: key, ofType: type.name) else { return }
        let primaryKey = try Self.primaryKeyText(values[type.primaryKeyIndex], type)
        guard var state = try ledger.state(type.name, primaryKey) else { return }
        for (index, property, kind) in type.synced {
            if SyncedType.isKeyed(kind) {
                try recordEntries(key, property, of: type, &state)
                continue
            }
            // A property the server has no value for keeps its default here, under a clock that loses to any write.
            let clock = state.properties[property.name]?.clock ?? Self.unwritten
            let (text, exact) =
                SyncedType.isList(kind)
                ? (try listText(key, property, of: type), nil) : try self.text(values[index], property, of: type)
            state.properties[property.name] = (clock, ValueText.hash(text, exact: exact))
        }
        try ledger.setState(state, type.name, primaryKey)
    }
}
