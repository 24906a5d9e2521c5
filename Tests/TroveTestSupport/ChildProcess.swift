import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program a test runs, started so that it inherits nothing but its three
/// standard streams, and waited for by its own process id.
///
/// Foundation's `Process` is not used by the tests: it learns that its child
/// ended when a socket the child holds is closed, and a process another test
/// starts meanwhile (an exit test, a server's watchdog) could inherit that
/// socket and keep it open for as long as it lives, so that
/// `waitUntilExit()` never returned for a program long gone. Here the child
/// closes every descriptor above 2 before it runs, pipes are made
/// close-on-exec, and the end is learned from `waitpid` on the child's id.
///
/// ```swift
/// let result = try ChildProcess.run("/bin/echo", ["hello"])
/// #expect(result.ending == .exited(0) && result.out == "hello\n")
/// ```
package final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    package enum Ending: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The exit status, or the signal's number (as Foundation's `terminationStatus` gives it).
        package var status: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exited with \(status)"
            case .signaled(let signal): "ended by signal \(signal)"
            }
        }
    }

    /// Where a standard stream of the child goes.
    package enum Stream {
        /// /dev/null.
        case null
        /// A file, created (or, for output, emptied) if needed.
        case file(String)
        /// A descriptor of the test process (a pipe's end from ``makePipe()``).
        case descriptor(Int32)
    }

    /// What ``run(_:_:environment:input:mergingErrors:)`` gives back.
    package struct Finished: Sendable {
        package let ending: Ending
        package let out: String
        package let err: String

        /// The exit status, or the signal's number.
        package var status: Int32 { ending.status }
    }

    package let pid: pid_t
    private let lock = NSLock()
    private var ended: Ending?

    /// Starts `executable` (a path) with `arguments`; `environment` nil keeps
    /// the test process's, otherwise it is the child's whole environment.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: Stream = .null,
        stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        // After the dup2s, which read the descriptors it closes.
        guard Self.addCloseFrom(&actions, 3) == 0 else {
            throw ChildProcessError("cannot ask posix_spawn to close the inherited descriptors: errno \(errno)")
        }
        // Signals as a freshly started program has them: none blocked (the spawning thread may block
        // some) and none ignored (the test process ignores SIGPIPE).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned =
            envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
    }

    /// Whether the child is still running (it is reaped if it has ended).
    package var isRunning: Bool { ending(blocking: false) == nil }

    /// Waits for the child to end.
    @discardableResult
    package func wait() -> Ending { ending(blocking: true)! }

    /// Sends `signal` unless the child has already been reaped (its id may then be another process's).
    package func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if ended == nil { kill(pid, signal) }
    }

    private func ending(blocking: Bool) -> Ending? {
        lock.lock()
        defer { lock.unlock() }
        if let ended { return ended }
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            preconditionFailure("waitpid(\(pid)) failed: errno \(errno); was the child reaped elsewhere?")
        }
        let signal = status & 0x7F
        ended = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
        return ended
    }

    /// Runs `executable` to its end with `input` on its standard input and
    /// returns what it wrote. Output goes through files, not pipes, so
    /// nothing waits on a full pipe however much is written.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
        mergingErrors: Bool = false
    ) throws -> Finished {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-child-processes")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stem = directory.appendingPathComponent(UUID().uuidString).path
        let (inPath, outPath, errPath) = (stem + ".in", stem + ".out", stem + ".err")
        defer { for path in [inPath, outPath, errPath] { unlink(path) } }
        try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: inPath))
        let errors = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard errors >= 0 else { throw ChildProcessError("cannot create \(errPath): errno \(errno)") }
        let output = mergingErrors ? errors : open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            close(errors)
            if output != errors { close(output) }
        }
        guard output >= 0 else { throw ChildProcessError("cannot create \(outPath): errno \(errno)") }
        let child = try ChildProcess(
            executable, arguments, environment: environment, stdin: .file(inPath), stdout: .descriptor(output),
            stderr: .descriptor(errors))
        let ending = child.wait()
        func contents(_ path: String) -> String {
            String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
        }
        return Finished(ending: ending, out: mergingErrors ? contents(errPath) : contents(outPath), err: contents(errPath))
    }

    /// A pipe whose two ends are close-on-exec (a child given one as a
    /// standard stream still gets it there). A write to it once the child
    /// has gone fails with EPIPE.
    package static func makePipe() throws -> (read: Int32, write: Int32) {
        signal(SIGPIPE, SIG_IGN)  // a write to a child that died is an error, not the end of the tests
        var descriptors: [Int32] = [0, 0]
        guard Self.pipe2(&descriptors, O_CLOEXEC) == 0 else { throw ChildProcessError("pipe2 failed: errno \(errno)") }
        return (descriptors[0], descriptors[1])
    }

    // Glibc's Swift module declares neither (both are in glibc since 2.34).
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer {
        guard let found = dlsym(dlopen(nil, RTLD_NOW), name) else {
            fatalError("\(name) is missing from the C library; the tests need glibc 2.34 or later")
        }
        return found
    }

    nonisolated(unsafe) private static let addCloseFrom = unsafeBitCast(
        symbol("posix_spawn_file_actions_addclosefrom_np"), to: CloseFrom.self)
    nonisolated(unsafe) private static let pipe2 = unsafeBitCast(symbol("pipe2"), to: Pipe2.self)
}

/// A child process that could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
