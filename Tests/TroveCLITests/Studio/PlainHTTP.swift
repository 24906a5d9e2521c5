import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain HTTP/1.1 client over a socket to 127.0.0.1: every header and byte
/// is the test's (the studio's tests send requests a browser would not).
enum PlainHTTP {
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

    /// Sends one request (`Connection: close`) and reads the whole answer.
    static func request(
        port: UInt16, _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]
    ) throws -> Reply {
        var lines = ["\(method) \(path) HTTP/1.1", "Connection: close"]
        var headers = headers
        if headers["Host"] == nil { headers["Host"] = "127.0.0.1:\(port)" }
        if let body {
            headers["Content-Type"] = headers["Content-Type"] ?? "application/json"
            headers["Content-Length"] = String(body.count)
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
        var request = Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        if let body { request.append(body) }
        let socket = try connect(port: port)
        defer { close(socket) }
        send(request, to: socket)
        return try parse(try receiveAll(socket))
    }

    static func connect(port: UInt16) throws -> Int32 {
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

    static func send(_ data: Data, to socket: Int32) {
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

    /// Reads one answer: to the end of its Content-Length, its last chunk,
    /// or the connection's end (servers may keep it open despite `Connection: close`).
    static func receiveAll(_ socket: Int32) throws -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !isComplete(received) {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    private static func isComplete(_ data: Data) -> Bool {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
        for line in head.components(separatedBy: "\r\n") where line.hasPrefix("content-length:") {
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            return data.count - end.upperBound >= length
        }
        if head.contains("transfer-encoding: chunked") { return data.suffix(5) == Data("0\r\n\r\n".utf8) }
        return false
    }

    static func parse(_ data: Data) throws -> Reply {
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

    private static func dechunk(_ data: Data) -> Data {
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
