import Foundation
import Trove

/// `trove studio FILE [--port N] [--read-only]`: serves the studio on
/// 127.0.0.1 until Ctrl-C, and prints its address (with the token every
/// request needs) as the first line of its output.
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
        let server = HTTPServer { request in api.handle(request) }
        let bound = try server.start(port: port)
        print("Trove Studio on \(path)\(readOnly ? " (read-only)" : ""): http://127.0.0.1:\(bound)/?token=\(api.token)")
        print("Open the address in a browser; Ctrl-C stops the server.")
        fflush(nil)

        // Ctrl-C (or a kill): end the event streams, stop the server, leave.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let stop: @Sendable () -> Void = {
            stopWatching()
            api.events.stop()
            server.stop()
            print("stopped")
            exit(0)
        }
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: .global()) }
        for source in sources {
            source.setEventHandler(handler: stop)
            source.resume()
        }
        // The sources must outlive their last use above: a released source stops
        // listening, and the signals themselves are ignored.
        withExtendedLifetime(sources) {
            while true { sleep(3600) }
        }
    }
}
