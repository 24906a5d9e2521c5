import Foundation
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A device of the convergence test: the built `TroveSyncDevice` running on
/// one Trove file, driven a line at a time. It may die (SIGKILL at a named
/// point of a sync, or from the test); ``start()`` runs it again on the
/// same file.
final class DeviceProcess {
    let name: String
    private let arguments: [String]
    private let errorLog: String
    private var process: ChildProcess?
    private var input: Int32 = -1
    private var output: Int32 = -1
    private var buffered: [UInt8] = []
    /// How many times it died, and how it was started again.
    private(set) var deaths = 0

    init(name: String, file: String, url: String, token: String, space: String, journal: String) throws {
        self.name = name
        arguments = [try Self.binary(), file, url, token, space, journal, name]
        errorLog = journal + ".stderr"
        try start()
    }

    /// The built device program, beside the test bundle.
    static func binary() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/TroveSyncDevice").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw HarnessError("TroveSyncDevice is not built: run swift build --build-tests (make test does)")
    }

    /// Starts the program and waits for its "ready".
    func start() throws {
        // (A write to a device that just died fails with EPIPE: makePipe ignores SIGPIPE.)
        let toChild = try ChildProcess.makePipe()
        let fromChild = try ChildProcess.makePipe()
        let log = open(errorLog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        let started = Result {
            guard log >= 0 else { throw HarnessError("cannot open \(errorLog): errno \(errno)") }
            return try ChildProcess(
                arguments[0], Array(arguments.dropFirst()), stdin: .descriptor(toChild.read),
                stdout: .descriptor(fromChild.write), stderr: .descriptor(log))
        }
        // The child's ends are closed here at once, so that a read sees the end of a device that died.
        for descriptor in [toChild.read, fromChild.write, log] where descriptor >= 0 { close(descriptor) }
        input = toChild.write
        output = fromChild.read
        process = try started.get()
        buffered = []
        guard let ready = readLine(), ready == "ready" else {
            throw HarnessError("device \(name) did not start: \(died())")
        }
    }

    /// Sends one command (nothing when the program is gone; its answer is then nil).
    func send(_ command: String) {
        let bytes = Array((command + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    /// The next line it answers; nil when it died.
    func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            buffered += chunk[..<count]
        }
    }

    /// Sends a command and returns its answer (nil when the program died).
    func ask(_ command: String) -> String? {
        send(command)
        return readLine()
    }

    /// Reaps the dead program: "SIGKILL" when it was killed, else how it
    /// ended and what it wrote to stderr (a trap is a failure of the test).
    func died() -> String {
        let ending = process?.wait()
        close(input)
        close(output)
        deaths += 1
        if ending == .signaled(SIGKILL) { return "SIGKILL" }
        let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        return "\(ending.map { "\($0)" } ?? "never started"): \(log.suffix(3000))"
    }

    /// Kills it now (the test's own SIGKILL, at a random moment).
    func kill() { process?.send(SIGKILL) }

    /// Asks it to quit and reaps it.
    func quit() {
        send("quit")
        process?.wait()
        close(input)
        close(output)
    }
}
