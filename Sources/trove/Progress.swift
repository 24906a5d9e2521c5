import Foundation

/// "exported 40000 of 100000" on stderr, rewritten in place, only when
/// stderr is a terminal (so pipes and logs stay clean).
struct Progress {
    let label: String
    /// What `done` counts up to; for ``update(rows:bytes:)``, the input's bytes (0: not known).
    let total: Int
    private let enabled: Bool
    private var last = Date.distantPast

    /// `shown` false: never drawn (work done for a server, not the terminal).
    init(_ label: String, total: Int, shown: Bool = true) {
        self.label = label
        self.total = total
        enabled = shown && isatty(STDERR_FILENO) != 0
    }

    mutating func update(_ done: Int) {
        guard enabled, Date().timeIntervalSince(last) > 0.2 else { return }
        last = Date()
        FileHandle.standardError.write(Data("\r\(label) \(done) of \(total)".utf8))
    }

    /// For input read as it goes: the rows so far, and how far into the input.
    mutating func update(rows: Int, bytes: Int) {
        guard enabled, Date().timeIntervalSince(last) > 0.2 else { return }
        last = Date()
        let share = total > 0 ? " (\(min(100, bytes * 100 / total))%)" : ""
        FileHandle.standardError.write(Data("\r\(label) \(rows) rows\(share)".utf8))
    }

    /// Clears the line (before a message; the next update draws it again).
    mutating func clear() {
        finish()
        last = .distantPast
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
