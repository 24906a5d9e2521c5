import Foundation
import Trove
import TroveStorage

/// Capture: inside every write of the client's handle, what changed in the
/// synced types is compared with the ledger and recorded as changes to send.
extension SyncClient {
    func capture(_ changed: Database.ChangedObjects) throws {
        guard !isApplying, let write = database.openWriteTransaction else { return }
        let ledger = SyncLedger(transaction: write)
        try refreshIdentity(ledger)
        if changed.everything { return try captureAll(in: ledger) }
        var session = try CaptureSession(ledger: ledger, device: device)
        // An embedded object changed on its own: its owner changed.
        var owning: [String: Set<UInt64>] = [:]
        for (name, owners) in embeddedOwners {
            guard let listed = changed.types[name] else { continue }
            for (type, property) in owners {
                guard let keys = listed else {
                    owning[type.name, default: []].formUnion(try database.objectKeys(ofType: type.name))
                    continue
                }
                for key in keys {
                    owning[type.name, default: []].formUnion(
                        try database.owners(of: key, ownerType: type.name, property: property))
                }
            }
        }
        for (name, type) in types {
            guard let listed = changed.types[name] ?? owning[name].map({ Optional($0) }) else { continue }
            var keys = try listed ?? Set(database.objectKeys(ofType: name)).union(ledger.knownObjectKeys(name))
            keys.formUnion(owning[name] ?? [])
            for key in keys.sorted() { try capture(key, of: type, &session) }
        }
        try session.save()
        if session.recordedChanges { onLocalChange?() }
    }

    func captureAll(in ledger: SyncLedger) throws {
        var session = try CaptureSession(ledger: ledger, device: device)
        for (name, type) in types {
            let keys = Set(try database.objectKeys(ofType: name)).union(try ledger.knownObjectKeys(name))
            for key in keys.sorted() { try capture(key, of: type, &session) }
        }
        try session.save()
    }

    /// Compares one object with what the ledger last recorded of it and
    /// records what changed: a new clock per changed property, a new causal
    /// length when it was created (again) or deleted, and a pending change.
    func capture(_ key: UInt64, of type: SyncedType, _ session: inout CaptureSession) throws {
        let ledger = session.ledger
        let known = try ledger.primaryKey(type.name, objectKey: key)
        guard let values = try database.storedValues(objectKey: key, ofType: type.name) else {
            if let known { try captureDeletion(of: known, at: key, of: type, &session) }
            return
        }
        let primaryKey = try Self.primaryKeyText(values[type.primaryKeyIndex], type)
        if let known, known != primaryKey {
            // The object this key held was deleted and the key given to another one in the same write.
            try captureDeletion(of: known, at: key, of: type, &session)
        }
        var state = try ledger.state(type.name, primaryKey) ?? ObjectState()
        var changed = false
        let newLife = !state.isAlive
        if newLife {
            state.cl += 1
            state.properties = [:]
            changed = true
        }
        for (index, property, kind) in type.synced {
            if SyncedType.isKeyed(kind) {
                let entries = try collectionTexts(key, property, of: type)
                if captureEntries(entries, property, &state, newLife: newLife, &session.clock) { changed = true }
                continue
            }
            let (text, exact) =
                SyncedType.isList(kind)
                ? (try listText(key, property, of: type), nil) : try self.text(values[index], property, of: type)
            let hash = ValueText.hash(text, exact: exact)
            guard newLife || state.properties[property.name]?.hash != hash else { continue }
            state.properties[property.name] = (PropertyClock(hlc: session.clock.next(), device: device), hash)
            changed = true
        }
        var moved = false
        if state.objectKey != key {
            try ledger.forgetObjectKey(state.objectKey, of: type.name, ifItNames: primaryKey)
            state.objectKey = key
            try ledger.setPrimaryKey(primaryKey, type.name, objectKey: key)
            moved = true
        }
        if changed { try session.markPending(&state, type.name, primaryKey) }
        if changed || moved { try ledger.setState(state, type.name, primaryKey) }
    }

    /// The values stored at `key` when they are those of `primaryKey` (nil when the key holds another object).
    func storedValues(of type: SyncedType, _ primaryKey: String, at key: UInt64) throws -> [StoredValue]? {
        guard key != 0, let values = try database.storedValues(objectKey: key, ofType: type.name),
            try Self.primaryKeyText(values[type.primaryKeyIndex], type) == primaryKey
        else { return nil }
        return values
    }

    /// Records that the object `primaryKey`, stored at `key`, was deleted.
    func captureDeletion(
        of primaryKey: String, at key: UInt64, of type: SyncedType, _ session: inout CaptureSession
    ) throws {
        let ledger = session.ledger
        try ledger.setPrimaryKey(nil, type.name, objectKey: key)
        guard var state = try ledger.state(type.name, primaryKey), state.objectKey == key else { return }
        state.objectKey = 0
        if state.isAlive {
            state.cl += 1
            state.properties = [:]
            try session.markPending(&state, type.name, primaryKey)
        }
        try ledger.setState(state, type.name, primaryKey)
    }

    static func primaryKeyText(_ value: StoredValue, _ type: SyncedType) throws -> String {
        switch value {
        case .string(let v): return v
        case .uuid(let v): return v.uuidString.lowercased()
        case .objectId(let v): return v.stringValue
        default:
            throw TroveError(.invalidValue, "\(type.name) has an object without a usable primary key (\(value))")
        }
    }

    /// A property's value as the server takes it, and for a date the exact bits beside it.
    func text(_ value: StoredValue, _ property: PropertySchema, of type: SyncedType) throws -> (String?, String?) {
        if property.ownsTargets == true { return (try embeddedText(value, property, of: type), nil) }
        if property.type == .link {
            guard case .int(let target) = value, let targetName = property.objectType, let targetType = types[targetName]
            else { return (nil, nil) }
            guard let targetValues = try database.storedValues(objectKey: UInt64(bitPattern: target), ofType: targetName)
            else {
                if let held = try database.linkedTypeName(UInt64(bitPattern: target), declaredAs: targetName), held != targetName
                {
                    throw TroveError(
                        .invalidValue,
                        "\(type.name).\(property.name) holds a \(held), a subclass of \(targetName): links to subclass objects do not sync yet; link a \(targetName), or keep \(type.name) out of the synced types"
                    )
                }
                return (nil, nil)
            }
            return (try Self.primaryKeyText(targetValues[targetType.primaryKeyIndex], targetType), nil)
        }
        if property.type == .mixed { return (try ValueText.mixedText(value, of: property, in: type.name), nil) }
        let text = try ValueText.text(value, of: property, in: type.name)
        if case .date(let date) = value { return (text, ValueText.exactDateText(date)) }
        return (text, nil)
    }

    /// One capture's clock and change ids, saved at its end.
    struct CaptureSession {
        let ledger: SyncLedger
        var clock: HybridClock
        var nextCid: UInt64
        private let started: (UInt64, UInt64)

        init(ledger: SyncLedger, device: UUID) throws {
            self.ledger = ledger
            clock = HybridClock(last: try ledger.integer("clock") ?? 0)
            nextCid = try ledger.integer("nextCid") ?? 1
            started = (clock.last, nextCid)
        }

        /// Whether the session marked any change to send.
        var recordedChanges: Bool { nextCid != started.1 }

        mutating func markPending(_ state: inout ObjectState, _ type: String, _ primaryKey: String) throws {
            if state.pendingCid != 0 { try ledger.removePending(state.pendingCid) }
            state.pendingCid = nextCid
            try ledger.addPending(nextCid, type, primaryKey)
            nextCid += 1
        }

        func save() throws {
            if clock.last != started.0 { try ledger.setInteger(clock.last, "clock") }
            if nextCid != started.1 { try ledger.setInteger(nextCid, "nextCid") }
        }
    }
}
