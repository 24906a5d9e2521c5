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

    /// Stops the server as Ctrl-C does; returns its exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit { stop() }

    /// One answer: the status, the headers (lowercased names) and the body.
    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        /// The error kind of an error answer.
        var errorKind: String? { (json["error"] as? [String: Any])?["kind"] as? String }
        var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
    }

    /// Sends one request with the token (in the `X-Trove-Token` header)
    /// unless `authorized` is false, and reads the whole answer.
    func request(
        _ method: String, _ path: String, body: Data? = nil, authorized: Bool = true, headers: [String: String] = [:]
    ) throws -> Reply {
        var lines = ["\(method) \(path) HTTP/1.1", "Connection: close"]
        var headers = headers
        if headers["Host"] == nil { headers["Host"] = "127.0.0.1:\(port)" }
        if authorized { headers["X-Trove-Token"] = token }
        if let body {
            headers["Content-Type"] = headers["Content-Type"] ?? "application/json"
            headers["Content-Length"] = String(body.count)
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
        var request = Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        if let body { request.append(body) }
        let socket = try connect()
        defer { close(socket) }
        try send(request, to: socket)
        return try parse(try receiveAll(socket))
    }

    func get(_ path: String) throws -> Reply { try request("GET", path) }

    func send(_ method: String, _ path: String, json: String) throws -> Reply {
        try request(method, path, body: Data(json.utf8))
    }

    /// Opens the event stream and returns the socket; read it with ``read(_:until:seconds:)``.
    func openEvents() throws -> Int32 {
        let socket = try connect()
        try send(
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

    private func connect() throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw StudioFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(socket)
            throw StudioFailure("cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return socket
    }

    private func send(_ data: Data, to socket: Int32) throws {
        data.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = Glibc.send(socket, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                // The server may answer (413) and close before taking a big body: that is an answer too.
                if count <= 0 { return }
                sent += count
            }
        }
    }

    private func receiveAll(_ socket: Int32) throws -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    private func parse(_ data: Data) throws -> Reply {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw StudioFailure("no complete answer: \(String(decoding: data, as: UTF8.self))")
        }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1])!
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"] == "chunked" { body = dechunk(body) }
        return Reply(status: status, headers: headers, body: body)
    }

    private func dechunk(_ data: Data) -> Data {
        var result = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)),
            let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16), size > 0
        {
            let start = lineEnd.upperBound
            result.append(rest[start..<(start + size)])
            rest = rest[(start + size + 2)...]
        }
        return result
    }
}

struct StudioFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
