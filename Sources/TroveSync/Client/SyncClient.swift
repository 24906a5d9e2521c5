import Foundation
import Trove
import TroveStorage

/// Syncs chosen types of a Trove file with a space on a sync server (a
/// PostgreSQL set up by `trove sync setup`).
///
/// From the moment a client is made, every write through its handle records
/// what it changed, per object and property, in the same transaction
/// (``SyncLedger``); ``sync()`` sends those changes, then fetches and applies
/// everything other devices and the backend changed since the last sync, in
/// one write transaction (observers see it as one commit). Local reads and
/// writes never wait for the network.
///
/// ```swift
/// let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [Note.self]))
/// let sync = try SyncClient(database: db, configuration: .init(
///     serverURL: "postgresql://trove_device:…@db.example.com/app", token: token, space: "diary", types: ["Note"]))
/// try db.write { note.title = "offline edit" }
/// let report = try sync.sync()   // pushed 1, pulled what others wrote
/// ```
///
/// Conflicts resolve per property: the later hybrid-logical-clock wins,
/// ties broken by device; a delete wins over concurrent updates; an object
/// created again after a delete starts without its old values.
public final class SyncClient {
    /// Where and what to sync.
    public struct Configuration: Sendable {
        /// `postgresql://ROLE:PASSWORD@HOST:PORT/DATABASE`, logging in as the devices' role.
        public var serverURL: String
        /// The device token `trove sync grant` printed.
        public var token: String
        /// The space to sync with.
        public var space: String
        /// The names of the types that sync (each needs a String, UUID or ObjectId primary key).
        public var types: [String]
        /// Changes sent per call (the server takes up to 5,000).
        public var batchSize = 500

        public init(serverURL: String, token: String, space: String, types: [String]) {
            self.serverURL = serverURL
            self.token = token
            self.space = space
            self.types = types
        }
    }

    /// What one ``sync()`` moved.
    public struct Report: Sendable, Equatable {
        /// Changed objects sent and applied by the server.
        public var pushed = 0
        /// Objects received and applied here (created, changed or deleted).
        public var pulled = 0
        /// Changes the server refused: the object, and why.
        public var rejected: [Rejection] = []
        /// Whether this sync read the whole space again (a new epoch on the
        /// server, or this device fell behind its retention window); local
        /// changes not yet sent were kept and sent.
        public var bootstrapped = false
        /// Whether this file found the server ahead of it — it was restored
        /// from an older copy, or copied to another device that synced too —
        /// and went on as a new device of the same principal (the file keeps
        /// its new token; the configured one still opens it).
        public var becameNewDevice = false
    }

    /// A change the server refused.
    public struct Rejection: Sendable, Equatable {
        public var typeName: String
        public var primaryKey: String
        public var reason: String
    }

    let database: Database
    let configuration: Configuration
    /// The device, from the token (its part before the dot).
    private(set) var device: UUID
    /// The token this file syncs with: the configured one, or the one it was
    /// given when it found itself a copy (``becomeNewDevice(_:)``).
    private var token: String
    /// The token the client syncs with now.
    var currentToken: String { token }
    /// Devices this file synced as before it became a new one: the values they wrote here are its own.
    private var formerDevices: Set<UUID> = []
    /// The synced types by name.
    let types: [String: SyncedType]
    /// The embedded object types synced types hold, by name.
    private(set) var embeddedSchemas: [String: ObjectSchema] = [:]
    /// Per embedded type, the synced types and properties that hold its objects.
    private var embeddedOwners: [String: [(type: SyncedType, property: String)]] = [:]
    /// While ``sync()`` applies what it pulled: those writes are the server's, not local changes.
    private var isApplying = false
    var transport: SyncTransport?
    /// Asked before each call to the server: true ends the sync with `CancellationError` (what it applied stays).
    var isCancelled: @Sendable () -> Bool = { false }
    /// Told how a sync goes, after each batch and page.
    var onProgress: (@Sendable (SyncProgress) -> Void)?
    /// Told after a write of this handle recorded changes to send (``BackgroundSync`` syncs soon after).
    var onLocalChange: (@Sendable () -> Void)?
    /// Runs ``sync(isolation:progress:)`` off the caller's thread (made on first use).
    lazy var worker = SyncWorker(databaseConfiguration: database.configuration, configuration: configuration)

    /// Starts recording the changes of `configuration.types` made through
    /// `database` (objects already stored are recorded as new the first
    /// time). Throws for a type that cannot sync, saying why, and for a
    /// file encrypted before key tokens.
    public init(database: Database, configuration: Configuration) throws {
        let parts = configuration.token.split(separator: ".")
        guard parts.count == 2, let device = UUID(uuidString: String(parts[0])) else {
            throw TroveError(.syncServer, "the device token is malformed: use the whole line `trove sync grant` printed")
        }
        if database.isEncrypted, database.currentTransaction.environment.keyTokens == nil {
            throw TroveError(
                .fileAccess,
                "\(database.path) was encrypted before key tokens: its keys would show the synced primary keys; give it tokens first (trove convert, or Database.upgradeKeys)"
            )
        }
        self.database = database
        self.configuration = configuration
        self.device = device
        token = configuration.token
        var types: [String: SyncedType] = [:]
        for name in configuration.types { types[name] = try SyncedType(database.storedSchema(ofType: name)) }
        for type in types.values {
            for (_, property, _) in type.synced where property.type == .link && property.ownsTargets != true {
                guard let target = property.objectType, types[target] != nil else {
                    throw TroveError(
                        .invalidProperty,
                        "\(type.name).\(property.name) links to \(property.objectType ?? "?"), which does not sync: add it to the synced types"
                    )
                }
            }
        }
        self.types = types
        for type in types.values {
            for (_, property, _) in type.synced where property.ownsTargets == true {
                let name = property.objectType ?? ""
                let schema = try database.storedSchema(ofType: name)
                if let nested = schema.properties.first(where: { $0.type == .link || $0.collection != nil || $0.type == .mixed })
                {
                    throw TroveError(
                        .invalidProperty,
                        "\(type.name).\(property.name) embeds \(name), whose \(nested.name) (\(nested.typeDescription)) cannot sync yet: an embedded object syncs with values only (no links, lists, sets, maps or mixed values inside)"
                    )
                }
                embeddedSchemas[name] = schema
                embeddedOwners[name, default: []].append((type, property.name))
            }
        }
        try refreshIdentity(SyncLedger(transaction: database.currentTransaction))
        let recorded = SyncLedger(transaction: database.currentTransaction)
        if let space = try recorded.text("space"), space != configuration.space {
            throw TroveError(
                .fileAccess,
                "\(database.path) syncs with space \(space), not \(configuration.space): a file holds one space's objects; use another file for \(configuration.space)"
            )
        }
        database.beforeCommit = { [weak self] changed in try self?.capture(changed) }
        // Objects stored before sync began are recorded once, as created.
        let names = types.keys.sorted().joined(separator: "\n")
        if try recorded.text("types") != names || recorded.text("space") == nil
            || recorded.text("device") != self.device.uuidString.lowercased()
        {
            try database.write {
                let ledger = SyncLedger(transaction: database.openWriteTransaction!)
                try ledger.setText(configuration.space, "space")
                try ledger.setText(self.device.uuidString.lowercased(), "device")
                if try ledger.text("types") != names {
                    try ledger.setText(names, "types")
                    try captureAll(in: ledger)
                }
            }
        }
    }

    /// Takes the device this file now syncs as from its bookkeeping: the
    /// configured one, or the one it became when it found itself a copy
    /// (maybe in another handle's sync since this client was made).
    private func refreshIdentity(_ ledger: SyncLedger) throws {
        let configured = configuration.token.split(separator: ".").first.map(String.init)?.lowercased() ?? ""
        if try ledger.text("replaces") == configured, let replacement = try ledger.text("token"),
            let replacing = UUID(uuidString: String(replacement.split(separator: ".").first ?? ""))
        {
            token = replacement
            device = replacing
        }
        formerDevices = Set(try ledger.text("former")?.split(separator: "\n").compactMap { UUID(uuidString: String($0)) } ?? [])
    }

    /// Where a file stands with sync: nil for a file that never synced.
    public struct Status: Sendable, Equatable {
        /// The device whose token last synced the file.
        public var device: String?
        /// The space it syncs with.
        public var space: String?
        /// The types that sync.
        public var types: [String]
        /// Objects with changes the server has not applied yet.
        public var pendingChanges: Int
        /// The space's sequence this file has pulled through (0 before the first pull).
        public var pulledThrough: UInt64
        /// When the last change was recorded or the last answer came (from the file's hybrid clock).
        public var lastClock: Date?
    }

    /// Where `database`'s file stands with sync, read from its bookkeeping
    /// (no server is asked); nil when it never synced.
    ///
    /// ```swift
    /// if let status = try SyncClient.status(of: db) { print("\(status.pendingChanges) changes to send") }
    /// ```
    public static func status(of database: Database) throws -> Status? {
        let ledger = SyncLedger(transaction: database.currentTransaction)
        guard let types = try ledger.text("types") else { return nil }
        let clock = try ledger.integer("clock") ?? 0
        return Status(
            device: try ledger.text("device"), space: try ledger.text("space"),
            types: types.split(separator: "\n").map(String.init), pendingChanges: try ledger.pendingCount(),
            pulledThrough: try ledger.integer("since") ?? 0,
            lastClock: clock == 0 ? nil : Date(timeIntervalSince1970: Double(clock >> 16) / 1000))
    }

    deinit {
        database.beforeCommit = nil
    }

    // MARK: Capture

    private func capture(_ changed: Database.ChangedObjects) throws {
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

    private func captureAll(in ledger: SyncLedger) throws {
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
    private func capture(_ key: UInt64, of type: SyncedType, _ session: inout CaptureSession) throws {
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
    private func storedValues(of type: SyncedType, _ primaryKey: String, at key: UInt64) throws -> [StoredValue]? {
        guard key != 0, let values = try database.storedValues(objectKey: key, ofType: type.name),
            try Self.primaryKeyText(values[type.primaryKeyIndex], type) == primaryKey
        else { return nil }
        return values
    }

    /// Records that the object `primaryKey`, stored at `key`, was deleted.
    private func captureDeletion(
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
            else { return (nil, nil) }
            return (try Self.primaryKeyText(targetValues[targetType.primaryKeyIndex], targetType), nil)
        }
        if property.type == .mixed { return (try ValueText.mixedText(value, of: property, in: type.name), nil) }
        let text = try ValueText.text(value, of: property, in: type.name)
        if case .date(let date) = value { return (text, ValueText.exactDateText(date)) }
        return (text, nil)
    }

    /// One capture's clock and change ids, saved at its end.
    private struct CaptureSession {
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

    // MARK: Sync

    /// Sends the recorded changes, then fetches and applies what others
    /// changed, and returns when done (``sync(isolation:progress:)`` does the
    /// same without blocking, cancellably; ``startBackgroundSync(minimumInterval:maximumInterval:onResult:)``
    /// keeps syncing). Throws ``TroveError/Kind/syncServer`` when the server
    /// cannot be reached or refuses the device; what was recorded stays
    /// recorded, and the next call sends it.
    @discardableResult
    public func sync() throws -> Report {
        do {
            return try syncOnce()
        } catch {
            // A broken or refused connection is not reused: the next sync connects again.
            transport = nil
            throw error
        }
    }

    private func syncOnce() throws -> Report {
        let known = token
        try refreshIdentity(SyncLedger(transaction: database.currentTransaction))
        if token != known { self.transport = nil }
        var transport =
            try self.transport ?? PostgresTransport(url: configuration.serverURL, token: token, space: configuration.space)
        self.transport = transport
        var report = Report()
        let hello = try transport.call("hello", [])
        let recorded = SyncLedger(transaction: database.currentTransaction)
        let sent = max(try recorded.integer("acked") ?? 0, try recorded.integer("inflight") ?? 0)
        if UInt64(hello["pushed"] as? Int ?? 0) > sent {
            // The server applied changes of this device that this file never sent: it is an older copy of the
            // file, or another copy synced too. Its change ids would be taken as done: it goes on as a new device.
            transport = try becomeNewDevice(transport)
            report.becameNewDevice = true
        }
        try defineTypes(hello, transport)
        let ledger = SyncLedger(transaction: database.currentTransaction)
        let epoch = hello["epoch"] as? String ?? ""
        let knownEpoch = try ledger.text("epoch")
        var since = try ledger.integer("since") ?? 0
        let minSeq = UInt64(hello["minSeq"] as? Int ?? 0)
        // Restored from a backup, the server lost changes this file may hold: everything it knows goes again.
        let restored = knownEpoch != nil && knownEpoch != epoch
        // Behind the retention window, this file may have missed deletes whose tombstones are gone: what it
        // has not changed takes the server's state; what it changed goes again, whole.
        let expired = !restored && since > 0 && since < minSeq
        if restored || expired {
            try requeue(everything: restored)
            since = 0
            report.bootstrapped = true
        }
        try push(transport, &report)
        try undoRejected(report.rejected, transport)
        try pull(from: since, epoch: epoch, pruning: report.bootstrapped, transport, &report)
        return report
    }

    /// `ids` as a PostgreSQL text array literal.
    private static func arrayLiteral(_ ids: [String]) -> String {
        "{"
            + ids.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            }
            .joined(separator: ",") + "}"
    }

    /// Deletes an object here because the server no longer has it, and forgets it.
    private func forget(_ typeName: String, _ primaryKey: String, _ ledger: SyncLedger) throws {
        guard let state = try ledger.state(typeName, primaryKey) else { return }
        if state.objectKey != 0, let type = types[typeName], try storedValues(of: type, primaryKey, at: state.objectKey) != nil {
            try database.deleteObject(objectKey: state.objectKey, ofType: typeName)
        }
        try ledger.forgetObjectKey(state.objectKey, of: typeName, ifItNames: primaryKey)
        if state.pendingCid != 0 { try ledger.removePending(state.pendingCid) }
        try ledger.setState(ObjectState(), typeName, primaryKey)
    }

    /// Takes back what the server holds for each object whose change it
    /// refused (an object it never accepted is deleted here): the local
    /// change is undone, in one write, and reported in ``Report/rejected``.
    private func undoRejected(_ rejected: [Rejection], _ transport: SyncTransport) throws {
        guard !rejected.isEmpty else { return }
        var rows: [PulledRow] = []
        for (typeName, group) in Dictionary(grouping: rejected, by: \.typeName) where types[typeName] != nil {
            let ids = Array(Set(group.map(\.primaryKey)))
            let answer = try transport.call("current_rows", [typeName, Self.arrayLiteral(ids)])
            let found = PulledRow.rows(of: answer)
            rows += found
            let present = Set(found.map(\.id))
            // Never accepted: the object goes, as if its creation had not happened.
            for id in ids where !present.contains(id) { rows.append(PulledRow(gone: typeName, id: id)) }
        }
        try applying {
            let ledger = SyncLedger(transaction: database.openWriteTransaction!)
            var deferred: [DeferredWrite] = []
            for row in rows {
                let (typeName, id) = (row.type, row.id)
                guard var state = try ledger.state(typeName, id) else { continue }
                if row.cl == 0 {
                    try forget(typeName, id, ledger)
                    continue
                }
                // The server's row as a new life, whatever this file held: every value and clock taken.
                state.cl = 0
                try ledger.setState(state, typeName, id)
                _ = try apply(row, ledger, &deferred)
            }
            try writeDeferred(deferred, ledger)
        }
    }

    /// Asks the server for a new device of the same principal and
    /// continues as it: the new token is kept in the file, and the values the
    /// old device wrote here stay this file's own.
    private func becomeNewDevice(_ transport: SyncTransport) throws -> SyncTransport {
        let answer = try transport.call("new_device", [])
        guard let newToken = answer["token"] as? String,
            let newDevice = UUID(uuidString: String(newToken.split(separator: ".").first ?? ""))
        else { throw TroveError(.syncServer, "the sync server gave no new device") }
        let configured = configuration.token.split(separator: ".").first.map(String.init) ?? ""
        formerDevices.insert(device)
        try applying {
            let ledger = SyncLedger(transaction: database.openWriteTransaction!)
            try ledger.setText(configured.lowercased(), "replaces")
            try ledger.setText(newToken, "token")
            try ledger.setText(newDevice.uuidString.lowercased(), "device")
            try ledger.setText(formerDevices.map { $0.uuidString.lowercased() }.sorted().joined(separator: "\n"), "former")
            try ledger.setInteger(0, "acked")
            try ledger.setInteger(0, "inflight")
        }
        device = newDevice
        token = newToken
        let fresh = try PostgresTransport(url: configuration.serverURL, token: newToken, space: configuration.space)
        self.transport = fresh
        return fresh
    }

    private func defineTypes(_ hello: [String: Any], _ transport: SyncTransport) throws {
        let known = hello["types"] as? [String: Any] ?? [:]
        for type in types.values.sorted(by: { $0.name < $1.name }) {
            let definition = type.definition
            if let server = known[type.name] as? [String: Any],
                (server["properties"] as? [String: String]) == (definition["properties"] as? [String: String])
            {
                continue
            }
            if hello["readOnly"] as? Bool == true { continue }
            let text = String(
                decoding: try JSONSerialization.data(withJSONObject: definition, options: [.sortedKeys]), as: UTF8.self)
            _ = try transport.call("define_type", [type.name, text])
        }
    }

    /// Marks objects to be sent again, each whole (every value it holds, as
    /// this device's, with the clock it had): every object the ledger knows,
    /// deleted ones included, or only those with changes not yet sent.
    private func requeue(everything: Bool) throws {
        try applying {
            let ledger = SyncLedger(transaction: database.openWriteTransaction!)
            var session = try CaptureSession(ledger: ledger, device: device)
            for (name, primaryKey, var state) in try ledger.allStates() where types[name] != nil && state.cl > 0 {
                guard everything || state.pendingCid != 0 else { continue }
                for (property, entry) in state.properties where entry.clock.hlc != 0 {
                    state.properties[property] = (PropertyClock(hlc: entry.clock.hlc, device: device), entry.hash)
                }
                try session.markPending(&state, name, primaryKey)
                try ledger.setState(state, name, primaryKey)
            }
            try session.save()
        }
    }

    private func push(_ transport: SyncTransport, _ report: inout Report) throws {
        let total = try SyncLedger(transaction: database.currentTransaction).pendingCount()
        while true {
            let ledger = SyncLedger(transaction: database.currentTransaction)
            let pending = try ledger.pending(limit: configuration.batchSize)
            guard !pending.isEmpty else { return }
            if isCancelled() { throw CancellationError() }
            var changes: [[String: Any]] = []
            for (cid, typeName, primaryKey) in pending {
                guard let type = types[typeName], let state = try ledger.state(typeName, primaryKey) else { continue }
                var set: [String: Any] = [:]
                if state.isAlive, state.objectKey != 0,
                    let values = try storedValues(of: type, primaryKey, at: state.objectKey)
                {
                    let isMine = { (clock: PropertyClock) in
                        clock.device == self.device || self.formerDevices.contains(clock.device)
                    }
                    for (index, property, kind) in type.synced {
                        if SyncedType.isKeyed(kind) {
                            set[property.name] = try entriesChange(state.objectKey, property, of: type, state, isMine: isMine)
                            continue
                        }
                        guard let entry = state.properties[property.name], isMine(entry.clock) else { continue }
                        let (text, exact) =
                            SyncedType.isList(kind)
                            ? (try listText(state.objectKey, property, of: type), nil)
                            : try self.text(values[index], property, of: type)
                        set[property.name] = [text as Any? ?? NSNull(), String(entry.clock.hlc)]
                        if let exact { set[property.name + ":exact"] = [exact, String(entry.clock.hlc)] }
                    }
                }
                changes.append(["cid": cid, "type": typeName, "id": primaryKey, "cl": state.cl, "set": set])
            }
            let batch = String(
                decoding: try JSONSerialization.data(withJSONObject: ["changes": changes], options: [.sortedKeys]),
                as: UTF8.self)
            // Recorded before it is sent: a server ahead of both this and the last answer means another copy.
            try applying { try SyncLedger(transaction: database.openWriteTransaction!).setInteger(pending.last!.cid, "inflight") }
            Self.faultPoint?("push-sending")
            let answer = try transport.call("push", [batch])
            Self.faultPoint?("push-answered")
            let pushed = UInt64(answer["pushed"] as? Int ?? 0)
            report.pushed += answer["applied"] as? Int ?? 0
            for rejection in answer["rejected"] as? [[String: Any]] ?? [] {
                report.rejected.append(
                    Rejection(
                        typeName: rejection["type"] as? String ?? "?", primaryKey: rejection["id"] as? String ?? "?",
                        reason: rejection["reason"] as? String ?? "?"))
            }
            try applying {
                let ledger = SyncLedger(transaction: database.openWriteTransaction!)
                for (cid, typeName, primaryKey) in pending where cid <= pushed {
                    try ledger.removePending(cid)
                    if var state = try ledger.state(typeName, primaryKey), state.pendingCid == cid {
                        state.pendingCid = 0
                        try ledger.setState(state, typeName, primaryKey)
                    }
                }
                try observe(answer["clock"], ledger)
                try ledger.setInteger(max(pushed, try ledger.integer("acked") ?? 0), "acked")
            }
            guard pushed >= pending.last!.cid else {
                throw TroveError(.syncServer, "the sync server applied this device's changes only up to \(pushed)")
            }
            onProgress?(SyncProgress(phase: .pushing, sent: min(total, report.pushed + report.rejected.count), toSend: total))
        }
    }

    private func observe(_ clock: Any?, _ ledger: SyncLedger) throws {
        guard let text = clock as? String, let value = UInt64(text) else { return }
        var local = HybridClock(last: try ledger.integer("clock") ?? 0)
        local.observe(value)
        try ledger.setInteger(local.last, "clock")
    }

    /// Runs `body` in a write whose changes are the server's (not captured).
    private func applying(_ body: () throws -> Void) throws {
        isApplying = true
        defer { isApplying = false }
        try database.write(body)
    }

    /// Fetches every row changed after `since` up to the space's head and
    /// applies them in one write. `pruning` (a bootstrap after a reset): an
    /// object here the server no longer has at all, with no change to send,
    /// is deleted here too.
    private func pull(
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
    private func writeDeferred(_ writes: [DeferredWrite], _ ledger: SyncLedger) throws {
        for write in writes {
            try writeDeferred(write.write, write.property, objectKey: write.objectKey, of: write.type)
        }
        // What was applied is recorded as it now reads, so capture finds nothing to send.
        for (type, key) in Set(writes.map { HashedKey(type: $0.type.name, key: $0.objectKey) }).map({ (types[$0.type]!, $0.key) })
        {
            try recordApplied(key, of: type, ledger)
        }
    }

    private struct HashedKey: Hashable {
        let type: String
        let key: UInt64
    }

    /// Applies one pulled row under the merge rules; true when something here changed.
    private func apply(_ row: PulledRow, _ ledger: SyncLedger, _ deferred: inout [DeferredWrite]) throws -> Bool {
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
    private func recordApplied(_ key: UInt64, of type: SyncedType, _ ledger: SyncLedger) throws {
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

    /// The clock of a value no one wrote (a default): earlier than every other.
    static let unwritten = PropertyClock(hlc: 0, device: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    /// Changes recorded and not yet applied by the server.
    public var pendingChanges: Int {
        (try? SyncLedger(transaction: database.currentTransaction).pendingCount()) ?? 0
    }
}

// MARK: For the sync tests' device processes

extension SyncClient {
    /// Called at named points of ``sync()``: `push-sending` (the batch is
    /// marked in flight, not yet sent), `push-answered` (the server applied
    /// it, this file has not recorded that), `pull-page` (a page arrived,
    /// nothing applied), `apply` (inside the write that applies a pull,
    /// before it commits). The convergence test's devices die there.
    nonisolated(unsafe) package static var faultPoint: ((String) -> Void)?

    /// What the ledger records of one object: its causal length and, per
    /// property (and per set member or map key, as `property` U+0001 `key`),
    /// the clock of its value in the server's form, and which members or
    /// keys are recorded as removed.
    package func recordedState(ofType type: String, primaryKey: String) throws
        -> (cl: UInt64, clocks: [String: String], removed: Set<String>)?
    {
        guard let state = try SyncLedger(transaction: database.currentTransaction).state(type, primaryKey) else { return nil }
        return (
            state.cl, state.properties.mapValues(\.clock.text),
            Set(state.properties.filter { $0.key.contains("\u{1}") && $0.value.hash == 0 }.keys)
        )
    }
}
