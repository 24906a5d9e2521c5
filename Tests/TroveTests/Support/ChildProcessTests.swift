import Foundation
import Testing
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' way of running programs: a child inherits only its standard
/// streams, so a long-lived one (a server's watchdog) cannot hold another
/// child's pipe or socket open and leave a test waiting for an end that came.
@Suite("Child processes of the tests")
struct ChildProcessTests {
    @Test("a child gets its three standard streams and no other descriptor of the test process")
    func inheritsOnlyStandardStreams() throws {
        let pipe = try ChildProcess.makePipe()
        let plain = open("/dev/null", O_RDONLY)  // not close-on-exec: the child must still not get it
        defer { for descriptor in [pipe.read, pipe.write, plain] { close(descriptor) } }
        let sleeper = try ChildProcess("/bin/sleep", ["30"], stdout: .descriptor(pipe.write))
        defer {
            sleeper.send(SIGKILL)
            sleeper.wait()
        }
        // Listed once the child sleeps: while its loader starts it, it holds the files it maps open
        // for a moment (a loaded machine showed the listing catch descriptor 3 then).
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let call = (try? String(contentsOfFile: "/proc/\(sleeper.pid)/syscall", encoding: .utf8)) ?? ""
            // clock_nanosleep and nanosleep on x86_64 and arm64.
            if ["230", "35", "115", "101"].contains(call.split(separator: " ").first.map(String.init) ?? "") { break }
            usleep(1_000)
        }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(sleeper.pid)/fd")
            .compactMap { Int32($0) }.sorted()
        #expect(descriptors == [0, 1, 2])
        #expect(sleeper.isRunning)
    }

    @Test("run gives the exit status, the output and the errors; a signal is told from an exit")
    func runReportsTheEnd() throws {
        let echoed = try ChildProcess.run("/bin/sh", ["-c", "cat; echo oops >&2; exit 3"], input: "hello\n")
        #expect(echoed.ending == .exited(3))
        #expect(echoed.out == "hello\n")
        #expect(echoed.err == "oops\n")
        let killed = try ChildProcess.run("/bin/sh", ["-c", "kill -TERM $$"])
        #expect(killed.ending == .signaled(SIGTERM))
        #expect(throws: ChildProcessError.self) { _ = try ChildProcess("/nonexistent/program", []) }
    }
}
