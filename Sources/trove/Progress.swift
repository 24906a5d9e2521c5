import Foundation

/// "imported 40000 of 100000" on stderr, rewritten in place, only when
/// stderr is a terminal (so pipes and logs stay clean).
struct Progress {
    let label: String
    let total: Int
    private let enabled = isatty(STDERR_FILENO) != 0
    private var last = Date.distantPast

    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
    }

    mutating func update(_ done: Int) {
        guard enabled, Date().timeIntervalSince(last) > 0.2 else { return }
        last = Date()
        FileHandle.standardError.write(Data("\r\(label) \(done) of \(total)".utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
