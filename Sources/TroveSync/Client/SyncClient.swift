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
    var token: String
    /// The token the client syncs with now.
    var currentToken: String { token }
    /// Devices this file synced as before it became a new one: the values they wrote here are its own.
    var formerDevices: Set<UUID> = []
    /// The synced types by name.
    let types: [String: SyncedType]
    /// The embedded object types synced types hold, by name.
    private(set) var embeddedSchemas: [String: ObjectSchema] = [:]
    /// Per embedded type, the synced types and properties that hold its objects.
    var embeddedOwners: [String: [(type: SyncedType, property: String)]] = [:]
    /// While ``sync()`` applies what it pulled: those writes are the server's, not local changes.
    var isApplying = false
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
    func refreshIdentity(_ ledger: SyncLedger) throws {
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

    func syncOnce() throws -> Report {
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
    static func arrayLiteral(_ ids: [String]) -> String {
        "{"
            + ids.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            }
            .joined(separator: ",") + "}"
    }

    /// Deletes an object here because the server no longer has it, and forgets it.
    func forget(_ typeName: String, _ primaryKey: String, _ ledger: SyncLedger) throws {
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
    func undoRejected(_ rejected: [Rejection], _ transport: SyncTransport) throws {
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
    func becomeNewDevice(_ transport: SyncTransport) throws -> SyncTransport {
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

    func defineTypes(_ hello: [String: Any], _ transport: SyncTransport) throws {
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
    func requeue(everything: Bool) throws {
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

    func push(_ transport: SyncTransport, _ report: inout Report) throws {
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

    func observe(_ clock: Any?, _ ledger: SyncLedger) throws {
        guard let text = clock as? String, let value = UInt64(text) else { return }
        var local = HybridClock(last: try ledger.integer("clock") ?? 0)
        local.observe(value)
        try ledger.setInteger(local.last, "clock")
    }

    /// Runs `body` in a write whose changes are the server's (not captured).
    func applying(_ body: () throws -> Void) throws {
        isApplying = true
        defer { isApplying = false }
        try database.write(body)
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
