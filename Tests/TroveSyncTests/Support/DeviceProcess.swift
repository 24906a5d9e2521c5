import Foundation

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
    private(set) var pid: pid_t = 0
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
        signal(SIGPIPE, SIG_IGN)  // a command written to a device that just died must not kill the test
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        // Close-on-exec: a process another test spawns meanwhile (a server's
        // watchdog) must not inherit this device's pipe ends, or the test
        // would never see the end of a dead device's output and wait for good.
        // (Glibc's module has no pipe2.)
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw HarnessError("pipe failed: errno \(errno)") }
        for descriptor in toChild + fromChild { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errorLog, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        for descriptor in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else { throw HarnessError("cannot start \(arguments[0]): errno \(spawned)") }
        input = toChild[1]
        output = fromChild[0]
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
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(input)
        close(output)
        deaths += 1
        let signal = status & 0x7F
        if signal == SIGKILL { return "SIGKILL" }
        let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        return signal != 0 ? "signal \(signal): \(log.suffix(3000))" : "exit \((status >> 8) & 0xFF): \(log.suffix(3000))"
    }

    /// Kills it now (the test's own SIGKILL, at a random moment).
    func kill() { _ = Glibc.kill(pid, SIGKILL) }

    /// Asks it to quit and reaps it.
    func quit() {
        send("quit")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(input)
        close(output)
    }
}
