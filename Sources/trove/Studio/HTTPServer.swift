import CMicroHTTPD
import Foundation
import Trove

/// One HTTP request, as a ``HTTPServer`` hands it to its handler.
struct HTTPRequest {
    let method: String
    /// The path, without the query (decoded by libmicrohttpd).
    let path: String
    let body: [UInt8]
    /// A query argument by name (decoded), or nil.
    let argument: (String) -> String?
    /// A request header by name (any case), or nil.
    let header: (String) -> String?
}

/// What a handler answers: a status and a body, or a stream of server-sent events.
struct HTTPResponse {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var headers: [(String, String)] = []
    /// Sent instead of `body`, as long as the client stays (`text/event-stream`).
    var events: EventStream?

    init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    static func events(_ stream: EventStream) -> HTTPResponse {
        var response = HTTPResponse(status: 200, contentType: "text/event-stream; charset=utf-8", body: [])
        response.events = stream
        return response
    }
}

/// A stream of server-sent events: the server's connection thread asks it
/// for the next bytes and waits while it has none.
protocol EventStream: AnyObject, Sendable {
    /// The next bytes to send, waiting for them as long as it takes; nil
    /// ends the stream (the server is stopping).
    func next() -> [UInt8]?
}

/// A local HTTP server on GNU libmicrohttpd: listens on 127.0.0.1 only, with
/// a thread per connection, and hands each complete request (its body at
/// most ``maximumBody`` bytes) to one handler.
///
/// Idle connections cost a thread each, so they are kept short: a
/// connection that has not sent a request head within ``idleTimeout``
/// seconds is closed, and `admit` sees each request's head (its path and
/// headers, before any body) and may answer it at once — a request without
/// the token is refused on its first bytes, not after its whole body. A
/// connection whose request was admitted may then stay idle for
/// ``admittedTimeout`` seconds (a browser's kept-alive connection, an event
/// stream between its keep-alives).
final class HTTPServer: @unchecked Sendable {
    /// Bodies over this size are refused (413) without being kept.
    let maximumBody: Int
    /// Seconds a connection may stay idle before a request of it was admitted.
    let idleTimeout: UInt32
    /// Seconds a connection may stay idle once a request of it was admitted.
    let admittedTimeout: UInt32 = 300
    /// Connections open at once, idle or not.
    static let connectionLimit: UInt32 = 512
    private let admit: @Sendable (HTTPRequest) -> HTTPResponse?
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private var daemon: OpaquePointer?

    init(
        maximumBody: Int = 1 << 20, idleTimeout: UInt32 = 10,
        admit: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.maximumBody = maximumBody
        self.idleTimeout = idleTimeout
        self.admit = admit
        self.handler = handler
    }

    /// Starts listening on 127.0.0.1:`port` (0: a free port); returns the port.
    func start(port: UInt16) throws -> UInt16 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard
            let daemon = trove_mhd_start(
                port, accessHandler, context, requestCompleted, HTTPServer.connectionLimit, idleTimeout)
        else {
            throw TroveError(
                .fileAccess,
                port == 0
                    ? "cannot listen on 127.0.0.1"
                    : "cannot listen on 127.0.0.1:\(port) (another program uses the port?); pick another with --port N, or --port 0 for any free port"
            )
        }
        self.daemon = daemon
        return trove_mhd_port(daemon)
    }

    /// Stops listening and waits for the connections' threads (event streams must end first).
    func stop() {
        if let daemon { MHD_stop_daemon(daemon) }
        daemon = nil
    }

    /// A request being received: its body so far.
    final class Pending {
        var body: [UInt8] = []
        var tooLarge = false
    }

    fileprivate func handle(
        _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = state.pointee else {
            // The first call: the headers are in, the body (if any) is not.
            let head = HTTPRequest(
                method: method, path: url, body: [],
                argument: { self.lookup(connection, .GET_ARGUMENT_KIND, $0) },
                header: { self.lookup(connection, .HEADER_KIND, $0) })
            if var refusal = admit(head) {
                refusal.headers.append(("Connection", "close"))
                return send(refusal, on: connection)
            }
            trove_mhd_set_timeout(connection, admittedTimeout)
            let pending = Pending()
            if let length = lookup(connection, .HEADER_KIND, "Content-Length").flatMap(Int.init), length > maximumBody {
                pending.tooLarge = true
            }
            state.pointee = Unmanaged.passRetained(pending).toOpaque()
            return .YES
        }
        let pending = Unmanaged<Pending>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if !pending.tooLarge, let upload {
                if pending.body.count + uploadSize.pointee > maximumBody {
                    pending.tooLarge = true
                    pending.body = []
                } else {
                    upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        let response: HTTPResponse
        if pending.tooLarge {
            response = HTTPResponse(
                status: 413, contentType: "application/json",
                body: Array(
                    "{\"error\":{\"kind\":\"tooLarge\",\"message\":\"the request body is over \(maximumBody) bytes\"}}".utf8))
        } else {
            let request = HTTPRequest(
                method: method, path: url, body: pending.body,
                argument: { self.lookup(connection, .GET_ARGUMENT_KIND, $0) },
                header: { self.lookup(connection, .HEADER_KIND, $0) })
            response = handler(request)
        }
        return send(response, on: connection)
    }

    private func lookup(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(connection, kind, name).map { String(cString: $0) }
    }

    private func send(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let made: OpaquePointer?
        if let stream = response.events {
            let box = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
            made = MHD_create_response_from_callback(UInt64.max, 4096, streamReader, box, streamFreed)
        } else {
            var body = response.body
            made = body.withUnsafeMutableBytes {
                MHD_create_response_from_buffer($0.count, $0.baseAddress, .RESPMEM_MUST_COPY)
            }
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        MHD_add_response_header(made, "Content-Type", response.contentType)
        MHD_add_response_header(made, "Cache-Control", "no-store")
        MHD_add_response_header(made, "X-Content-Type-Options", "nosniff")
        MHD_add_response_header(made, "Referrer-Policy", "no-referrer")
        for (name, value) in response.headers { MHD_add_response_header(made, name, value) }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    fileprivate func completed(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let state, let raw = state.pointee else { return }
        Unmanaged<Pending>.fromOpaque(raw).release()
        state.pointee = nil
    }
}

/// An event stream with what it has not sent yet (libmicrohttpd asks for at most a buffer's worth).
private final class StreamBox {
    let stream: EventStream
    var left: [UInt8] = []

    init(_ stream: EventStream) { self.stream = stream }
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, state in
    guard let context, let connection, let url, let method, let uploadSize, let state else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(
        connection, url: String(cString: url), method: String(cString: method), upload: upload, uploadSize: uploadSize,
        state: state)
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, _, state, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(state)
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -2 }
    let box = Unmanaged<StreamBox>.fromOpaque(context).takeUnretainedValue()
    if box.left.isEmpty {
        guard let next = box.stream.next() else { return -1 }  // end of stream
        box.left = next
    }
    let count = min(capacity, box.left.count)
    box.left.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: count) }
    box.left.removeFirst(count)
    return count
}

private let streamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<StreamBox>.fromOpaque(context).release()
}
