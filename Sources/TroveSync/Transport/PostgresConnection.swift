import CLibPQ
import Foundation
import TroveStorage

/// One connection to the sync server's PostgreSQL, through libpq.
///
/// A device only ever calls the server's sync functions, by name, with its
/// arguments bound as parameters (never written into the statement), so the
/// same calls can later travel over HTTPS to a PostgREST or Supabase RPC
/// endpoint where libpq is not available (iOS). Errors never quote the
/// connection URL: it carries a password.
///
/// Not safe to share between threads: one task owns a connection.
package final class PostgresConnection {
    private let connection: OpaquePointer
    /// The server, for messages: host, port and database, no credentials.
    package let server: String

    /// Connects to `url` (`postgresql://user:password@host:port/database`).
    /// Throws ``TroveError/Kind/syncServer`` saying why, without the password.
    package init(url: String) throws {
        guard let connection = PQconnectdb(url) else {
            throw TroveError(.syncServer, "cannot connect to the sync server: libpq could not allocate a connection")
        }
        let host = PQhost(connection).map { String(cString: $0) } ?? "?"
        let port = PQport(connection).map { String(cString: $0) } ?? "?"
        let database = PQdb(connection).map { String(cString: $0) } ?? "?"
        server = "\(host):\(port)/\(database)"
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = PostgresConnection.message(connection)
            PQfinish(connection)
            throw TroveError(.syncServer, "cannot connect to the sync server at \(server): \(reason)")
        }
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    /// Runs one statement with `parameters` bound as text to `$1`, `$2`…
    /// (nil is SQL NULL) and returns its rows as text (nil for NULL).
    @discardableResult
    package func query(_ statement: String, _ parameters: [String?] = []) throws -> [[String?]] {
        var copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let result = copies.withUnsafeMutableBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { bound in
                PQexecParams(connection, statement, Int32(parameters.count), nil, bound.baseAddress, nil, nil, 0)
            }
        }
        guard let result else {
            throw TroveError(
                .syncServer, "the sync server at \(server) did not answer: \(PostgresConnection.message(connection))")
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            break
        default:
            throw PostgresConnection.failure(result, server: server)
        }
        var rows: [[String?]] = []
        let columns = PQnfields(result)
        for row in 0..<PQntuples(result) {
            rows.append(
                (0..<columns).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                })
        }
        return rows
    }

    /// Runs a script of statements separated by semicolons, without
    /// parameters (schema installation); throws on the first that fails.
    package func execute(_ script: String) throws {
        guard let result = PQexec(connection, script) else {
            throw TroveError(
                .syncServer, "the sync server at \(server) did not answer: \(PostgresConnection.message(connection))")
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw PostgresConnection.failure(result, server: server)
        }
    }

    private static func failure(_ result: OpaquePointer, server: String) -> TroveError {
        let reason = PQresultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return TroveError(
            .syncServer,
            "the sync server at \(server) refused a statement\(state.map { " (SQLSTATE \($0))" } ?? ""): \(reason.trimmingCharacters(in: .whitespacesAndNewlines))"
        )
    }

    /// Calls the server function `schema.function` with `arguments` and
    /// returns the rows it gives. The names are quoted as identifiers.
    @discardableResult
    package func call(_ function: String, in schema: String, _ arguments: [String?]) throws -> [[String?]] {
        let placeholders = arguments.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try query(
            "SELECT * FROM \(PostgresConnection.identifier(schema)).\(PostgresConnection.identifier(function))(\(placeholders))",
            arguments)
    }

    /// `name` as a quoted SQL identifier: in double quotes, each double quote doubled.
    package static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func message(_ connection: OpaquePointer) -> String {
        PQerrorMessage(connection).map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
            ?? "unknown error"
    }
}
