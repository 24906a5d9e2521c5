import Foundation
import Testing
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A `trove studio` child process, and a plain HTTP/1.1 client for it
/// (sockets, so that a test controls every header and byte it sends).
final class StudioServer: @unchecked Sendable {
    let process: ChildProcess
    let port: UInt16
    let token: String
    /// The address the server printed.
    let address: String

    /// Starts `trove studio file --port 0` with `arguments`, and waits for its address.
    /// (Its output goes to files: a pipe nobody reads after the address would stop the server once full.)
    init(file: String, _ arguments: String...) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-studio-servers")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stem = directory.appendingPathComponent(UUID().uuidString).path
        process = try ChildProcess(
            try built("trove").path, ["studio", file, "--port", "0"] + arguments, stdout: .file(stem + ".out"),
            stderr: .file(stem + ".err"))
        func contents(_ suffix: String) -> String {
            (try? String(contentsOfFile: stem + suffix, encoding: .utf8)) ?? ""
        }
        let deadline = Date().addingTimeInterval(60)
        while !contents(".out").contains("\n") {
            if !process.isRunning || Date() > deadline {
                process.send(SIGKILL)
                throw StudioFailure("trove studio \(process.wait()) before printing its address: \(contents(".err"))")
            }
            usleep(5_000)
        }
        let line = contents(".out").split(separator: "\n")[0]
        guard let range = line.range(of: "http://127.0.0.1:"), let tokenRange = line.range(of: "/?token=") else {
            process.send(SIGKILL)
            process.wait()
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
            process.send(SIGINT)
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            process.send(SIGKILL)
        }
        return process.wait().status
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
