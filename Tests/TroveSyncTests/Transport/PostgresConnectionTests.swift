import Foundation
import Testing
import TroveStorage

@testable import TroveSync

@Suite("A connection to the sync server (libpq, a real PostgreSQL started by the test)")
struct PostgresConnectionTests {

    @Test("arguments are bound, never written into the statement: quotes, semicolons and NULL arrive as they are")
    func argumentsAreBound() throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let connection = try PostgresConnection(url: postgres.url("sync_owner", database: "sync"))
        let hostile = "x'); DROP TABLE pg_class; --"
        let rows = try connection.query("SELECT $1::text, $2::text IS NULL, length($1)", [hostile, nil])
        #expect(rows == [[hostile, "t", String(hostile.count)]])
        try connection.query("CREATE SCHEMA IF NOT EXISTS probe")
        try connection.query(
            "CREATE OR REPLACE FUNCTION probe.\"echo it\"(value text) RETURNS TABLE(echoed text) LANGUAGE sql AS $$ SELECT value $$"
        )
        #expect(try connection.call("echo it", in: "probe", ["한글 'quoted'"]) == [["한글 'quoted'"]])
    }

    @Test(
        "in the PgBouncer pass, devices reach the server through PgBouncer in transaction mode",
        .enabled(if: TestPostgres.throughPgBouncer))
    func throughPgBouncer() throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let url = postgres.url("sync_device", database: "sync")
        #expect(!url.contains(":\(postgres.port)/"))
        #expect(try PostgresConnection(url: url).query("SELECT current_user") == [["sync_device"]])
        #expect(postgres.serverLog.contains("login attempt: db=sync user=sync_device"), "\(postgres.serverLog)")
    }

    @Test("a wrong password, an unknown database or a bad statement is a syncServer error that never shows the password")
    func failuresSayWhatWithoutSecrets() throws {
        let postgres = try TestPostgres()
        defer { postgres.stop() }
        let wrong = "postgresql://sync_device:not-the-password-4711@127.0.0.1:\(postgres.port)/sync?connect_timeout=10"
        let refused = try #require(syncError { try PostgresConnection(url: wrong) })
        #expect(refused.message.contains("password authentication failed"))
        #expect(!refused.message.contains("not-the-password-4711"))
        #expect(refused.message.contains("127.0.0.1:\(postgres.port)/sync"))
        let device = try PostgresConnection(url: postgres.url("sync_device", database: "sync"))
        let denied = try #require(syncError { try device.query("CREATE TABLE intruder (x int)") })
        #expect(denied.message.contains("42501"), "\(denied.message)")  // insufficient privilege
        let syntax = try #require(syncError { try device.query("SELEC 1") })
        #expect(syntax.message.contains("42601"))
        #expect(try device.query("SELECT 1") == [["1"]])  // the connection goes on
        #expect(!postgres.serverLog.contains("not-the-password-4711"))
    }
}
