import Foundation

/// Tells the studio's open pages of commits to the file, by this server or
/// any other process, as server-sent events: the commit watcher posts each
/// new transaction id; each page's stream waits for the next one.
final class CommitEvents: @unchecked Sendable {
    private let condition = NSCondition()
    private var commit: Int
    private var stopping = false
    /// A comment line this often keeps proxies and the browser from closing an idle stream.
    static let keepAlive: TimeInterval = 15

    init(commit: Int) {
        self.commit = commit
    }

    /// Called by the commit watcher with the file's new last transaction.
    func post(_ commit: Int) {
        condition.lock()
        self.commit = commit
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every stream (the server is stopping).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// A page's stream, starting from the commit it has seen.
    func stream() -> EventStream { Stream(self) }

    private final class Stream: EventStream, @unchecked Sendable {
        let events: CommitEvents
        var seen: Int?

        init(_ events: CommitEvents) { self.events = events }

        func next() -> [UInt8]? {
            let condition = events.condition
            condition.lock()
            defer { condition.unlock() }
            guard let seen else {
                // First: how long to wait before reconnecting, and where the page starts from.
                self.seen = events.commit
                return Array("retry: 1000\nevent: hello\ndata: {\"commit\":\(events.commit)}\n\n".utf8)
            }
            let deadline = Date(timeIntervalSinceNow: CommitEvents.keepAlive)
            while events.commit == seen, !events.stopping {
                if !condition.wait(until: deadline) { return Array(": keep-alive\n\n".utf8) }
            }
            if events.stopping { return nil }
            self.seen = events.commit
            return Array("event: commit\ndata: {\"commit\":\(events.commit)}\n\n".utf8)
        }
    }
}
