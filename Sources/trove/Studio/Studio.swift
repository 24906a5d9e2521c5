import Foundation
import Trove

/// `trove studio FILE [--port N] [--read-only]`: serves the studio on
/// 127.0.0.1 until Ctrl-C, and prints its address (with the token every
/// request needs) as the first line of its output.
/// Where the signal handler of `trove studio` writes to wake the main thread.
nonisolated(unsafe) private var signalWakeDescriptor: Int32 = -1

enum Studio {
    static let defaultPort: UInt16 = 8723

    static func run(_ arguments: Arguments) throws {
        try arguments.allow(options: ["--port"], flags: ["--read-only"])
        guard arguments.positional.count == 1 else { throw UsageError("studio takes one FILE") }
        let path = arguments.positional[0]
        var port = defaultPort
        if let text = arguments.option("--port") {
            guard let number = UInt16(text) else { throw UsageError("--port needs a port number (0 to 65535), not \(text)") }
            port = number
        }
        let readOnly = arguments.flags.contains("--read-only")
        let db = try Commands.open(path, readOnly: readOnly)
        let api = StudioAPI(database: db, path: path, readOnly: readOnly, token: StudioAPI.makeToken())
        let stopWatching = db.watchCommits { [events = api.events] commit in events.post(commit) }
        let server = HTTPServer(admit: { request in api.admit(request) }) { request in api.handle(request) }
        let bound = try server.start(port: port)

        // Ctrl-C (or a kill): end the event streams, stop the server, leave.
        // The handler is in place before the address is printed, so a signal
        // sent as soon as it appears stops the server too; it only wakes this
        // thread (through a pipe: a write is all a signal handler may do).
        var wake: [Int32] = [0, 0]
        guard pipe(&wake) == 0 else {
            throw UsageError("trove studio could not make a pipe: \(String(cString: strerror(errno)))")
        }
        signalWakeDescriptor = wake[1]
        let handler: @convention(c) (Int32) -> Void = { _ in
            var byte: UInt8 = 1
            _ = write(signalWakeDescriptor, &byte, 1)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        // A parent may start us with the signals blocked (a thread of a test
        // runner's pool blocks them, and a child keeps its mask): this thread takes them.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        print("Trove Studio on \(path)\(readOnly ? " (read-only)" : ""): http://127.0.0.1:\(bound)/?token=\(api.token)")
        print("Open the address in a browser; Ctrl-C stops the server.")
        fflush(nil)
        var byte: UInt8 = 0
        while read(wake[0], &byte, 1) != 1 {}
        stopWatching()
        api.events.stop()
        server.stop()
        print("stopped")
        exit(0)
    }
}
