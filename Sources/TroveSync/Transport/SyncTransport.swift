import Foundation
import TroveStorage

/// The calls a device makes, and nothing else: the server's device
/// functions (``ServerSchema``), each with the device token and the space.
/// Over libpq here (``PostgresTransport``); the same calls can travel over
/// HTTPS to a PostgREST or Supabase RPC endpoint where libpq is not
/// available (iOS), by another implementation of this protocol.
protocol SyncTransport {
    /// Calls device function `function` with (token, space, `arguments`…) and returns its JSON answer.
    func call(_ function: String, _ arguments: [String?]) throws -> [String: Any]

    /// The space's sequence now (`heads`): a cheap poll for whether anything changed.
    func head() throws -> UInt64
}

/// ``SyncTransport`` over one libpq connection.
final class PostgresTransport: SyncTransport {
    private let connection: PostgresConnection
    private let token: String
    private let space: String

    init(url: String, token: String, space: String) throws {
        connection = try PostgresConnection(url: url)
        self.token = token
        self.space = space
    }

    func call(_ function: String, _ arguments: [String?]) throws -> [String: Any] {
        let rows = try connection.call(function, in: "trove_sync", [token, space] + arguments)
        guard let text = rows.first?.first ?? nil,
            let answer = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else {
            throw TroveError(.syncServer, "the sync server at \(connection.server) gave no answer to \(function)")
        }
        return answer
    }

    func head() throws -> UInt64 {
        let list = "{\"" + space.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"}"
        let rows = try connection.call("heads", in: "trove_sync", [token, list])
        guard let text = rows.first?.first ?? nil,
            let answer = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { throw TroveError(.syncServer, "the sync server at \(connection.server) gave no answer to heads") }
        return UInt64(answer[space] as? Int ?? 0)
    }
}
