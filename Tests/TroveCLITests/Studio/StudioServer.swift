import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `trove studio` child process, and a plain HTTP/1.1 client for it
/// (sockets, so that a test controls every header and byte it sends).
final class StudioServer: @unchecked Sendable {
    let process: Process
    let port: UInt16
    let token: String
    /// The address the server printed.
    let address: String
    private let output: Pipe
    private let errors: Pipe

    /// Starts `trove studio file --port 0` with `arguments`, and waits for its address.
    init(file: String, _ arguments: String...) throws {
        process = Process()
        process.executableURL = try built("trove")
        process.arguments = ["studio", file, "--port", "0"] + arguments
        output = Pipe()
        errors = Pipe()
        closeOnExec(output, errors)
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var seen = Data()
        let reader = output.fileHandleForReading
        while !seen.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                throw StudioFailure("trove studio ended before printing its address: \(message)")
            }
            seen.append(chunk)
        }
        let line = String(decoding: seen, as: UTF8.self).split(separator: "\n")[0]
        guard let range = line.range(of: "http://127.0.0.1:"), let tokenRange = line.range(of: "/?token=") else {
            throw StudioFailure("no address in: \(line)")
        }
        address = String(line[range.lowerBound...])
        port = UInt16(line[range.upperBound..<tokenRange.lowerBound])!
        token = String(line[tokenRange.upperBound...])
    }

    /// Stops the server as Ctrl-C does; returns its exit status. A server
    /// that has not stopped 20 seconds later is killed (the status then says so).
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit { stop() }

    /// Sends one request with the token (in the `X-Trove-Token` header)
    /// unless `authorized` is false, and reads the whole answer.
    func request(
        _ method: String, _ path: String, body: Data? = nil, authorized: Bool = true, headers: [String: String] = [:]
    ) throws -> PlainHTTP.Reply {
        var headers = headers
        if authorized { headers["X-Trove-Token"] = token }
        return try PlainHTTP.request(port: port, method, path, body: body, headers: headers)
    }

    func get(_ path: String) throws -> PlainHTTP.Reply { try request("GET", path) }

    func send(_ method: String, _ path: String, json: String) throws -> PlainHTTP.Reply {
        try request(method, path, body: Data(json.utf8))
    }

    /// Opens the event stream and returns the socket; read it with ``read(_:until:seconds:)``.
    func openEvents() throws -> Int32 {
        let socket = try PlainHTTP.connect(port: port)
        PlainHTTP.send(
            Data(
                "GET /api/events?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8),
            to: socket)
        return socket
    }

    /// Reads from `socket` until what was read contains `text` or `seconds` pass; returns what was read.
    func read(_ socket: Int32, until text: String, seconds: Double) -> String {
        var received = Data()
        let deadline = Date(timeIntervalSinceNow: seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline, !String(decoding: received, as: UTF8.self).contains(text) {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}

struct StudioFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
