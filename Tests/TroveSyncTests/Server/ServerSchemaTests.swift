import Foundation
import Testing
import TroveStorage

@testable import TroveSync

/// The sync server's SQL, on a real PostgreSQL: who may do what, and the
/// merge rules as devices and a backend see them.
@Suite("The sync server in PostgreSQL")
struct ServerSchemaTests {
    static let note = ["id": "string", "title": "string", "score": "int", "ratio": "double", "blob": "data"]

    @Test("setup installs once and again changes nothing; the version is recorded; a newer server is refused")
    func setupIsIdempotent() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        try ServerSchema.install(on: server.owner, deviceRole: "sync_device")
        #expect(
            try server.owner.query("SELECT value FROM trove_sync.meta WHERE key = 'schema_version'") == [
                [
                    String(ServerSchema.version)
                ]
            ])
        let token = try server.grant("min", "diary")
        let device = DeviceCalls(connection: try server.deviceConnection(), token: token, space: "diary")
        _ = try device.define("Note", primaryKey: "id", Self.note)
        // Installing again keeps the data and the devices.
        try ServerSchema.install(on: server.owner, deviceRole: "sync_device")
        #expect(try device.hello()["principal"] as? String == "min")
        try server.owner.query("UPDATE trove_sync.meta SET value = '99' WHERE key = 'schema_version'")
        let newer = try #require(syncError { try ServerSchema.install(on: server.owner, deviceRole: "sync_device") })
        #expect(newer.message.contains("schema version 99"), "\(newer.message)")
        try server.owner.query("UPDATE trove_sync.meta SET value = '1' WHERE key = 'schema_version'")
        let noRole = try #require(syncError { try ServerSchema.install(on: server.owner, deviceRole: "nobody_here") })
        #expect(noRole.message.contains("no role nobody_here"), "\(noRole.message)")
    }

    @Test("a device may call the device functions and nothing else: no table, no admin function, no identity through settings")
    func devicesMayOnlyCallFunctions() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let token = try server.grant("min", "diary")
        let connection = try server.deviceConnection()
        let device = DeviceCalls(connection: connection, token: token, space: "diary")
        _ = try device.define("Note", primaryKey: "id", Self.note)
        for statement in [
            "SELECT * FROM trove_sync.devices", "SELECT * FROM trove_sync.members", "SELECT * FROM trove_data.\"Note\"",
            "INSERT INTO trove_sync.members VALUES ('diary', 'mallory', false)",
            "UPDATE trove_data.\"Note\" SET title = 'x'", "SELECT trove_sync.grant_device('mallory', 'diary', false)",
            "SELECT trove_sync.authenticate('x.y', 'diary', true)", "SELECT trove_sync.purge_tombstones()",
            "SELECT trove_sync.new_epochs()", "SET ROLE sync_owner", "CREATE TABLE trove_sync.intruder (x int)",
        ] {
            let refused = syncError { try connection.query(statement) }
            #expect(refused?.message.contains("42501") == true, "\(statement): \(refused?.message ?? "allowed")")
        }
        // A setting is not an identity: the functions read only the token.
        try connection.query("SELECT set_config('trove_sync.applying', 'on', false)")
        try connection.query("SELECT set_config('request.jwt.claim.sub', 'mallory', false)")
        let stranger = DeviceCalls(connection: connection, token: "not-a-token", space: "diary")
        #expect(syncError { try stranger.hello() }?.message.contains("28000") == true)
    }

    @Test(
        "a bad, unknown, wrong or revoked token is refused; a device acts only in its spaces, and not at all through a read-only membership"
    )
    func tokensAndMemberships() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let token = try server.grant("min", "diary")
        let reader = try server.grant("jun", "diary", readOnly: true)
        _ = try server.grant("jun", "family")
        let connection = try server.deviceConnection()
        let device = DeviceCalls(connection: connection, token: token, space: "diary")
        _ = try device.define("Note", primaryKey: "id", Self.note)
        let (id, secret) = (token.split(separator: ".")[0], token.split(separator: ".")[1])
        for bad in ["", "x", "\(id)", "\(id).", "\(id).\(secret)0", "\(UUID().uuidString.lowercased()).\(secret)", "'; --.x"] {
            let refused = syncError { try DeviceCalls(connection: connection, token: bad, space: "diary").hello() }
            #expect(refused?.message.contains("28000") == true, "\(bad): \(refused?.message ?? "accepted")")
        }
        // Not a member of family, even with a valid token and hand-written SQL on its own connection.
        let outside = syncError { try DeviceCalls(connection: connection, token: token, space: "family").hello() }
        #expect(outside?.message.contains("not a member of space 'family'") == true, "\(outside?.message ?? "")")
        let direct = syncError {
            try connection.query(
                "SELECT trove_sync.push($1, 'family', '{\"changes\": []}')", [token])
        }
        #expect(direct?.message.contains("42501") == true)
        // Read-only: pulls, never pushes or defines.
        let readOnly = DeviceCalls(connection: connection, token: reader, space: "diary")
        #expect(try readOnly.pullAll().rows.isEmpty)
        #expect(
            syncError { try readOnly.push([change(1, "Note", "a", ["title": ("x", hlcNow())])]) }?.message.contains(
                "may only read") == true)
        #expect(
            syncError { try readOnly.define("Other", primaryKey: "id", ["id": "string"]) }?.message.contains("may only read")
                == true)
        // A device may ask for another of its principal (a copied file does); revoking the first revokes both.
        let second = try #require(try device.call("new_device", [])["token"] as? String)
        let child = DeviceCalls(connection: connection, token: second, space: "diary")
        #expect(try child.hello()["principal"] as? String == "min")
        // Revoked: refused from then on.
        #expect(try ServerSchema.revokeDevice(String(id), on: server.owner))
        #expect(syncError { try device.hello() }?.message.contains("not valid") == true)
        #expect(syncError { try child.hello() }?.message.contains("not valid") == true)
        // The token never reaches the server's log, even in a refused call.
        #expect(!server.postgres.serverLog.contains(String(secret)))
    }

    @Test("a pushed object reaches another device with its values exactly: quotes, Korean, NaN, -0.0, bytes")
    func pushThenPull() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let connection = try server.deviceConnection()
        let a = DeviceCalls(connection: connection, token: try server.grant("min", "diary"), space: "diary")
        let b = DeviceCalls(connection: connection, token: try server.grant("jun", "diary"), space: "diary")
        _ = try a.define("Note", primaryKey: "id", Self.note)
        let now = hlcNow()
        let hostile = "it's \"quoted\"; DROP TABLE trove_sync.devices; -- 일기"
        let answer = try a.push([
            change(
                1, "Note", "n1", ["title": (hostile, now), "score": ("42", now), "ratio": ("-0", now), "blob": ("\\x00ff", now)]),
            change(2, "Note", "n2", ["ratio": ("NaN", now), "score": ("-9223372036854775808", now)]),
        ])
        #expect(answer["applied"] as? Int == 2)
        #expect((answer["rejected"] as? [Any])?.isEmpty == true)
        let pulled = try b.pullAll()
        #expect(pulled.rows.count == 2)
        let first = try #require(pulled.rows.first { $0["id"] as? String == "n1" })
        let values = try #require(first["v"] as? [String: Any])
        #expect(values["title"] as? String == hostile)
        #expect(values["score"] as? String == "42")
        #expect(values["ratio"] as? String == "-0")
        #expect(values["blob"] as? String == "\\x00ff")
        let second = try #require(pulled.rows.first { $0["id"] as? String == "n2" })
        #expect((second["v"] as? [String: Any])?["ratio"] as? String == "NaN")
        #expect((second["v"] as? [String: Any])?["score"] as? String == "-9223372036854775808")
        #expect((second["v"] as? [String: Any])?["title"] is NSNull)
        #expect(first["cl"] as? Int == 1)
        let clocks = try #require(first["c"] as? [String: Any])
        let device = try #require(try a.hello()["device"] as? String)
        #expect(clocks["title"] as? String == String(format: "%016llx", now) + ":" + device)
        // Nothing after the head.
        #expect(try b.pullAll(since: pulled.head).rows.isEmpty)
        #expect(try devicesTableIsIntact(server))
    }

    @Test("per property, the later clock wins whatever the order the pushes arrive in; equal clocks are ordered by device")
    func lastWriterWinsPerProperty() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let connection = try server.deviceConnection()
        for (space, aFirst) in [("one", true), ("two", false)] {
            let a = DeviceCalls(connection: connection, token: try server.grant("a", space), space: space)
            let b = DeviceCalls(connection: connection, token: try server.grant("b", space), space: space)
            _ = try a.define("Note", primaryKey: "id", Self.note)
            let base = hlcNow(plus: -10)
            let fromA = [change(1, "Note", "n", ["title": ("a", base + 100), "score": ("1", base + 300)])]
            let fromB = [change(1, "Note", "n", ["title": ("b", base + 200), "score": ("2", base + 50), "ratio": ("0.5", base)])]
            if aFirst {
                _ = try a.push(fromA)
                _ = try b.push(fromB)
            } else {
                _ = try b.push(fromB)
                _ = try a.push(fromA)
            }
            let row = try #require(try a.pullAll().rows.first)
            let values = try #require(row["v"] as? [String: Any])
            #expect(values["title"] as? String == "b", "\(space)")
            #expect(values["score"] as? String == "1", "\(space)")
            #expect(values["ratio"] as? String == "0.5", "\(space)")
        }
        // The same clock from two devices: the larger device id wins, on every server the same.
        let a = DeviceCalls(connection: connection, token: try server.grant("a", "tie"), space: "tie")
        let b = DeviceCalls(connection: connection, token: try server.grant("b", "tie"), space: "tie")
        let clock = hlcNow()
        _ = try a.push([change(1, "Note", "t", ["title": ("from a", clock)])])
        _ = try b.push([change(1, "Note", "t", ["title": ("from b", clock)])])
        let deviceA = try #require(try a.hello()["device"] as? String)
        let deviceB = try #require(try b.hello()["device"] as? String)
        let winner = try #require(try a.pullAll().rows.first?["v"] as? [String: Any])["title"] as? String
        #expect(winner == (deviceA > deviceB ? "from a" : "from b"))
    }

    @Test("a delete wins over a concurrent update, even a later one; a re-created object starts without the old values")
    func deletesWinAndRecreatesStartClean() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let (a, b) = try Self.twoDevices(server)
        let base = hlcNow(plus: -10)
        _ = try a.push([change(1, "Note", "n", ["title": ("first", base), "score": ("7", base)])])
        _ = try b.push([change(1, "Note", "n", cl: 2)])  // b deleted it
        _ = try a.push([change(2, "Note", "n", cl: 1, ["title": ("late edit", base + 1_000)])])  // a had not seen the delete
        var row = try #require(try b.pullAll().rows.first)
        #expect(row["cl"] as? Int == 2)
        #expect((row["v"] as? [String: Any])?["title"] is NSNull)
        // Re-created: a new life, the old score does not come back.
        _ = try a.push([change(3, "Note", "n", cl: 3, ["title": ("again", base + 2_000)])])
        row = try #require(try b.pullAll().rows.first)
        #expect(row["cl"] as? Int == 3)
        #expect((row["v"] as? [String: Any])?["title"] as? String == "again")
        #expect((row["v"] as? [String: Any])?["score"] is NSNull)
        // A change of the earlier life arriving late is ignored.
        _ = try b.push([change(2, "Note", "n", cl: 1, ["score": ("99", base + 5_000)])])
        #expect((try b.pullAll().rows.first?["v"] as? [String: Any])?["score"] is NSNull)
    }

    @Test("a batch sent again is applied once; a refused change comes back as a rejection and the changes behind it apply")
    func retriesAndRejections() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let (a, _) = try Self.twoDevices(server)
        let now = hlcNow()
        let batch = [
            change(1, "Note", "n1", ["score": ("1", now)]),
            change(2, "Note", "n2", ["score": ("not a number", now)]),
            change(3, "Nope", "n3", ["score": ("3", now)]),
            change(4, "Note", "n4", ["score": ("4", now)]),
        ]
        let first = try a.push(batch)
        #expect(first["applied"] as? Int == 2)
        #expect(first["pushed"] as? Int == 4)
        let rejected = try #require(first["rejected"] as? [[String: Any]])
        #expect(rejected.map { $0["cid"] as? Int } == [2, 3])
        #expect(rejected[0]["state"] as? String == "22P02", "\(rejected[0])")
        #expect((rejected[1]["reason"] as? String)?.contains("no type \"Nope\"") == true, "\(rejected[1])")
        let again = try a.push(batch)
        #expect(again["applied"] as? Int == 0)
        #expect(again["skipped"] as? Int == 4)
        #expect(try a.hello()["pushed"] as? Int == 4)
        let rows = try a.pullAll().rows
        #expect(rows.compactMap { $0["id"] as? String }.sorted() == ["n1", "n4"])
        // Change ids must rise within a batch.
        #expect(
            syncError { try a.push([change(9, "Note", "x"), change(8, "Note", "y")]) }?.message.contains("must rise") == true)
    }

    @Test("a device's slow statement is cut off by the statement timeout setup gives the devices' role")
    func slowStatementsAreCut() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        try server.owner.query("UPDATE trove_sync.meta SET value = '300' WHERE key = 'device_statement_timeout_ms'")
        #expect(try ServerSchema.install(on: server.owner, deviceRole: "sync_device").isEmpty)
        let device = try server.deviceConnection()
        let started = Date()
        let cut = syncError { try device.query("SELECT pg_sleep(5)") }
        #expect(cut?.message.contains("57014") == true, "\(cut?.message ?? "")")
        #expect(Date().timeIntervalSince(started) < 5, "pg_sleep(5) ran to its end")
    }

    @Test("a clock far in the future is clamped to the server's time plus the bound, and the server's clock comes back")
    func futureClocksAreClamped() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let (a, b) = try Self.twoDevices(server)
        let answer = try a.push([change(1, "Note", "n", ["title": ("from the future", hlcNow(plus: 365 * 86_400))])])
        let clockText = try #require(answer["clock"] as? String)
        let clock = try #require(Int64(clockText))
        #expect(clock <= hlcNow(plus: 61) && clock >= hlcNow(plus: 50), "\(clock >> 16) against \(hlcNow() >> 16)")
        // An honest later write (past the bound) wins over it.
        _ = try b.push([change(1, "Note", "n", ["title": ("honest", clock + 1)])])
        #expect((try a.pullAll().rows.first?["v"] as? [String: Any])?["title"] as? String == "honest")
    }

    @Test("hostile type and property names are quoted or refused; an oversized batch is refused; the schema may only grow")
    func namesBatchesAndSchema() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let connection = try server.deviceConnection()
        let a = DeviceCalls(connection: connection, token: try server.grant("a", "s"), space: "s")
        let hostile = "x\"; DROP TABLE trove_sync.devices; --"
        _ = try a.define(hostile, primaryKey: "id", ["id": "string", "it's": "string"])
        _ = try a.push([change(1, hostile, "k", ["it's": ("v", hlcNow())])])
        #expect((try a.pullAll().rows.first?["v"] as? [String: Any])?["it's"] as? String == "v")
        #expect(try devicesTableIsIntact(server))
        for (name, properties) in [
            ("trove_meta", ["id": "string"]), ("Bad:Name", ["id": "string"]), ("T", ["id": "string", "a:clock": "int"]),
            ("T", ["id": "string", "trove_cl": "int"]), ("T", ["id": "int"]), ("T", ["id": "string", "x": "pointer"]),
        ] {
            let refused = syncError { try a.define(name, primaryKey: "id", properties) }
            #expect(refused?.message.contains("22023") == true, "\(name) \(properties): \(refused?.message ?? "accepted")")
        }
        _ = try a.define("Note", primaryKey: "id", Self.note)
        let added = try a.define("Note", primaryKey: "id", ["id": "string", "mood": "string"])
        #expect((added["added"] as? [String: Any])?["mood"] as? String == "string")
        let differs = syncError { try a.define("Note", primaryKey: "id", ["id": "string", "score": "string"]) }
        #expect(differs?.message.contains("\"Note\".score is int on the server, not string") == true, "\(differs?.message ?? "")")
        let huge = (1...5_001).map { change($0, "Note", "n\($0)") }
        #expect(syncError { try a.push(huge) }?.message.contains("larger than the server takes") == true)
    }

    @Test("a backend's INSERT, UPDATE and DELETE in plain SQL reach devices as stamped changes; a delete leaves a tombstone")
    func backendWritesAreStamped() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let (a, _) = try Self.twoDevices(server)
        _ = try a.push([change(1, "Note", "mine", ["title": ("device", hlcNow(plus: -5))])])
        let start = try a.pullAll().head
        try server.owner.query(
            "INSERT INTO trove_data.\"Note\" (trove_space, id, title, score) VALUES ('s', 'b1', 'from backend', 5)")
        try server.owner.query("UPDATE trove_data.\"Note\" SET score = 6 WHERE id = 'mine'")
        var rows = try a.pullAll(since: start).rows
        #expect(rows.compactMap { $0["id"] as? String }.sorted() == ["b1", "mine"])
        let inserted = try #require(rows.first { $0["id"] as? String == "b1" })
        #expect(inserted["cl"] as? Int == 1)
        let clocks = try #require(inserted["c"] as? [String: Any])
        #expect((clocks["title"] as? String)?.hasSuffix(":00000000-0000-0000-0000-000000000000") == true)
        #expect(clocks["ratio"] is NSNull)
        let updated = try #require(rows.first { $0["id"] as? String == "mine" })
        #expect((updated["v"] as? [String: Any])?["title"] as? String == "device")
        #expect((updated["v"] as? [String: Any])?["score"] as? String == "6")
        #expect((updated["c"] as? [String: Any])?["title"] as? String != (updated["c"] as? [String: Any])?["score"] as? String)
        // A delete is kept as a tombstone; an insert over it creates the object again.
        let before = try a.pullAll().head
        try server.owner.query("DELETE FROM trove_data.\"Note\" WHERE id = 'b1'")
        rows = try a.pullAll(since: before).rows
        #expect(rows.count == 1 && rows[0]["cl"] as? Int == 2)
        try server.owner.query("INSERT INTO trove_data.\"Note\" (trove_space, id, title) VALUES ('s', 'b1', 'back')")
        let again = try #require(try a.pullAll().rows.first { $0["id"] as? String == "b1" })
        #expect(again["cl"] as? Int == 3)
        #expect((again["v"] as? [String: Any])?["title"] as? String == "back")
        #expect((again["v"] as? [String: Any])?["score"] is NSNull)
        // The backend's writes go after the device's in sequence, and a device write still merges by clock.
        _ = try a.push([change(2, "Note", "mine", ["score": ("1", hlcNow(plus: -3_600))])])
        #expect(
            (try a.pullAll().rows.first { $0["id"] as? String == "mine" }?["v"] as? [String: Any])?["score"] as? String == "6")
    }

    @Test("a pull pages through every row once, in sequence order, up to the head it started at")
    func pullsPage() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let (a, _) = try Self.twoDevices(server)
        let connection = a.connection
        _ = try a.define("Tag", primaryKey: "name", ["name": "string", "color": "string"])
        let now = hlcNow()
        for batch in 0..<5 {
            _ = try a.push(
                (0..<5).map { change(batch * 10 + $0 + 1, "Note", "n\(batch)-\($0)", ["score": (String($0), now)]) }
                    + [change(batch * 10 + 9, "Tag", "t\(batch)", ["color": ("red", now)])])
        }
        let paged = try a.pullAll(pageSize: 4)
        #expect(paged.rows.count == 30)
        #expect(paged.pages == 8)
        let keys = paged.rows.map { "\($0["t"]!)/\($0["id"]!)" }
        #expect(Set(keys).count == 30)
        let seqs = paged.rows.map { $0["seq"] as! Int }
        #expect(seqs == seqs.sorted())
        // Another device's other space is not visible.
        let other = DeviceCalls(connection: connection, token: try server.grant("b", "elsewhere"), space: "elsewhere")
        #expect(try other.pullAll().rows.isEmpty)
    }

    /// Devices of principals a and b in space s, where a has defined Note.
    static func twoDevices(_ server: TestSyncServer) throws -> (DeviceCalls, DeviceCalls) {
        let connection = try server.deviceConnection()
        let a = DeviceCalls(connection: connection, token: try server.grant("a", "s"), space: "s")
        let b = DeviceCalls(connection: connection, token: try server.grant("b", "s"), space: "s")
        _ = try a.define("Note", primaryKey: "id", note)
        return (a, b)
    }

    private func devicesTableIsIntact(_ server: TestSyncServer) throws -> Bool {
        try server.owner.query("SELECT count(*) > 0 FROM trove_sync.devices") == [["t"]]
    }
}
