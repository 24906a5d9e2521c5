import Foundation
import Testing
import TroveStorage

@testable import TroveSync

/// A PostgreSQL with the sync schema installed: the owner's connection for
/// granting devices and writing as a backend, and device connections that
/// log in as `sync_device`, which may only call the device functions.
final class TestSyncServer {
    let postgres: TestPostgres
    let owner: PostgresConnection

    init() throws {
        postgres = try TestPostgres()
        do {
            owner = try PostgresConnection(url: postgres.url("sync_owner", database: "sync"))
            try ServerSchema.install(on: owner, deviceRole: "sync_device")
        } catch {
            postgres.stop()
            throw error
        }
    }

    func stop() { postgres.stop() }

    /// A new device of `principal`, a member of `space`; its token.
    func grant(_ principal: String, _ space: String, readOnly: Bool = false) throws -> String {
        try ServerSchema.grantDevice(principal: principal, space: space, readOnly: readOnly, on: owner)
    }

    /// A connection as devices log in.
    func deviceConnection() throws -> PostgresConnection {
        try PostgresConnection(url: postgres.url("sync_device", database: "sync"))
    }
}

/// Calls a device function and decodes its JSON answer.
struct DeviceCalls {
    let connection: PostgresConnection
    let token: String
    let space: String

    func call(_ function: String, _ arguments: [String?]) throws -> [String: Any] {
        let text = try #require(try connection.call(function, in: "trove_sync", [token, space] + arguments).first?.first ?? nil)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func hello() throws -> [String: Any] { try call("hello", []) }

    func define(_ type: String, primaryKey: String, _ properties: [String: String]) throws -> [String: Any] {
        try call("define_type", [type, json(["primaryKey": primaryKey, "properties": properties])])
    }

    /// Pushes `changes` (each `cid`, `type`, `id`, `cl`, `set`: property → [value text or NSNull, hlc]).
    func push(_ changes: [[String: Any]]) throws -> [String: Any] {
        try call("push", [json(["changes": changes])])
    }

    /// Every row changed after `since`, page by page.
    func pullAll(since: Int = 0, pageSize: Int = 1000) throws -> (rows: [[String: Any]], head: Int, pages: Int) {
        var rows: [[String: Any]] = []
        var cursor: (type: String?, id: String?) = (nil, nil)
        var seq = since
        var head: Int?
        var pages = 0
        while true {
            let page = try call(
                "pull",
                [String(seq), cursor.type, cursor.id, head.map(String.init), String(pageSize)])
            pages += 1
            head = head ?? (page["head"] as? Int)
            let got = page["rows"] as? [[String: Any]] ?? []
            rows += got
            guard page["more"] as? Bool == true, let last = got.last else { break }
            seq = last["seq"] as! Int
            cursor = (last["t"] as? String, last["id"] as? String)
        }
        return (rows, head ?? 0, pages)
    }

    private func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
}

/// A change of one object: `set` maps properties to (value text, hlc).
func change(_ cid: Int, _ type: String, _ id: String, cl: Int = 1, _ set: [String: (String?, Int64)] = [:]) -> [String: Any] {
    [
        "cid": cid, "type": type, "id": id, "cl": cl,
        "set": set.mapValues { [$0.0 as Any? ?? NSNull(), String($0.1)] },
    ]
}

/// A hybrid logical clock of `milliseconds` since 1970 and a counter.
func hlc(_ milliseconds: Int64, _ counter: Int64 = 0) -> Int64 { milliseconds << 16 | counter }

/// The current time as a hybrid logical clock.
func hlcNow(plus seconds: Int64 = 0) -> Int64 { hlc(Int64(Date().timeIntervalSince1970 * 1000) + seconds * 1000) }

/// The TroveError a call throws, a ``TroveError/Kind/syncServer`` (recorded
/// as an issue when it throws none, another kind or another error).
func syncError(_ body: () throws -> Any) -> TroveError? {
    do {
        _ = try body()
    } catch let error as TroveError {
        #expect(error.kind == .syncServer)
        return error
    } catch {
        Issue.record("expected a TroveError, got \(error)")
        return nil
    }
    Issue.record("expected an error, nothing was thrown")
    return nil
}
