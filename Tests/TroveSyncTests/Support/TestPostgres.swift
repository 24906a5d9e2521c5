import Foundation
import TroveSync
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for one test run: its own directory, port
/// and socket, SCRAM passwords, stopped and removed by ``stop()``. As root
/// (PostgreSQL refuses to run as root) its programs run as `nobody`.
///
/// Roles: `postgres` (superuser), `sync_owner` (owns database `sync`) and
/// `sync_device` (may log in, and nothing else until granted).
///
/// With `TROVE_SYNC_PGBOUNCER=1` (a pass of `make test`), Debian's PgBouncer
/// runs in front of it in transaction mode, and the URLs of database `sync`
/// go through it: every statement may then land on another server
/// session, which proves the protocol keeps no session state.
final class TestPostgres: @unchecked Sendable {
    let directory: URL
    let port: Int
    /// PgBouncer's port, when it is in front.
    private(set) var bouncerPort: Int?
    private let passwords: [String: String]
    private let binaries: URL

    static var throughPgBouncer: Bool { ProcessInfo.processInfo.environment["TROVE_SYNC_PGBOUNCER"] == "1" }

    /// The connection URL of `role` (with its password) over TCP on
    /// loopback; through PgBouncer for database `sync` when it is in front.
    func url(_ role: String = "postgres", database: String = "postgres") -> String {
        let through = database == "sync" && role != "postgres" ? bouncerPort ?? port : port
        return "postgresql://\(role):\(passwords[role]!)@127.0.0.1:\(through)/\(database)?connect_timeout=10"
    }

    /// Starts a server; throws saying what failed (with the server's log).
    init() throws {
        (directory, port, passwords, binaries) = try TestPostgres.launch()
        if TestPostgres.throughPgBouncer {
            do {
                bouncerPort = try startPgBouncer()
            } catch {
                stop()
                throw error
            }
        }
    }

    /// Starts PgBouncer in transaction mode in front of database `sync`, as
    /// `nobody` when root (it refuses to run as root); returns its port.
    private func startPgBouncer() throws -> Int {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/pgbouncer") else {
            throw HarnessError("PgBouncer is not installed (make deps-postgres installs Debian's pgbouncer)")
        }
        // PgBouncer does SCRAM with clients and the server from these plain passwords.
        let users = ["sync_owner", "sync_device"].map { "\"\($0)\" \"\(passwords[$0]!)\"" }.joined(separator: "\n")
        try Data((users + "\n").utf8).write(to: directory.appendingPathComponent("userlist.txt"))
        for _ in 0..<5 {
            let candidate = try TestPostgres.freePort()
            let settings = """
                [databases]
                sync = host=127.0.0.1 port=\(port) dbname=sync

                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = \(candidate)
                unix_socket_dir =
                auth_type = scram-sha-256
                auth_file = \(directory.path)/userlist.txt
                pool_mode = transaction
                max_client_conn = 200
                default_pool_size = 4
                ignore_startup_parameters = extra_float_digits
                logfile = \(directory.path)/pgbouncer.log
                pidfile = \(directory.path)/pgbouncer.pid

                """
            try Data(settings.utf8).write(to: directory.appendingPathComponent("pgbouncer.ini"))
            if getuid() == 0 {
                try TestPostgres.run("/bin/chown", ["-R", "nobody:nogroup", directory.path], asRoot: true)
            }
            do {
                try TestPostgres.run(
                    "/usr/sbin/pgbouncer", ["-d", directory.appendingPathComponent("pgbouncer.ini").path], in: directory)
            } catch {
                continue  // the port was taken meanwhile
            }
            // Ready once a login goes through it.
            let url = "postgresql://sync_owner:\(passwords["sync_owner"]!)@127.0.0.1:\(candidate)/sync?connect_timeout=10"
            for _ in 0..<100 {
                if (try? PostgresConnection(url: url).query("SELECT 1")) != nil { return candidate }
                usleep(50_000)
            }
            throw HarnessError("PgBouncer did not accept logins:\n\(bouncerLog)")
        }
        throw HarnessError("PgBouncer did not start:\n\(bouncerLog)")
    }

    private var bouncerLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? ""
    }

    private static func launch() throws -> (URL, Int, [String: String], URL) {
        let binaries = try TestPostgres.binaryDirectory()
        // Short: the socket path must stay under about 107 bytes.
        var template = Array("/tmp/pg.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("cannot make a directory for PostgreSQL: errno \(errno)")
        }
        let directory = URL(fileURLWithPath: String(cString: made))
        let passwords = Dictionary(
            uniqueKeysWithValues: ["postgres", "sync_owner", "sync_device"].map { ($0, UUID().uuidString) })
        var started = false
        defer { if !started { try? FileManager.default.removeItem(at: directory) } }
        try Data((passwords["postgres"]! + "\n").utf8).write(to: directory.appendingPathComponent("pwfile"))
        if getuid() == 0 { try TestPostgres.run("/bin/chown", ["-R", "nobody:nogroup", directory.path], asRoot: true) }
        chmod(directory.path, 0o700)
        let data = directory.appendingPathComponent("data").path
        try TestPostgres.run(
            binaries.appendingPathComponent("initdb").path,
            [
                "-D", data, "-U", "postgres", "--pwfile", directory.appendingPathComponent("pwfile").path,
                "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions",
            ], in: directory)
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("pwfile"))
        let settings = """

            listen_addresses = '127.0.0.1'
            unix_socket_directories = '\(directory.path)'
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            log_statement = 'none'
            log_min_duration_statement = -1
            log_min_error_statement = panic
            log_parameter_max_length = 0
            log_parameter_max_length_on_error = 0
            log_error_verbosity = terse

            """
        let configuration = FileHandle(forWritingAtPath: data + "/postgresql.conf")!
        configuration.seekToEndOfFile()
        configuration.write(Data(settings.utf8))
        try configuration.close()
        var chosen = 0
        for _ in 0..<5 {
            let candidate = try TestPostgres.freePort()
            do {
                try TestPostgres.run(
                    binaries.appendingPathComponent("pg_ctl").path,
                    [
                        "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-o", "-p \(candidate)", "-w",
                        "-t", "60", "start",
                    ],
                    in: directory)
                chosen = candidate
                break
            } catch let error as HarnessError
                where error.description.contains("could not") || error.description.contains("Address")
            {
                continue  // the port was taken meanwhile
            }
        }
        guard chosen != 0 else { throw HarnessError("PostgreSQL did not start:\n\(TestPostgres.log(directory))") }
        started = true
        watch(directory)
        do {
            try TestPostgres.createRoles(
                url: "postgresql://postgres:\(passwords["postgres"]!)@127.0.0.1:\(chosen)/postgres?connect_timeout=10",
                passwords: passwords)
        } catch {
            let log = TestPostgres.log(directory)
            TestPostgres.stop(directory)
            throw HarnessError("PostgreSQL started on port \(chosen) but refused the roles: \(error)\n\(log)")
        }
        return (directory, chosen, passwords, binaries)
    }

    /// The port the URLs of database `sync` name: PgBouncer's when it is in front.
    var syncPort: Int { bouncerPort ?? port }

    /// Stops the server as a crash does (`pg_ctl -m immediate`: no
    /// checkpoint, every session cut) and starts it again on the same port.
    func restart() throws {
        let data = directory.appendingPathComponent("data").path
        let control = binaries.appendingPathComponent("pg_ctl").path
        try TestPostgres.run(control, ["-D", data, "-m", "immediate", "-w", "stop"], in: directory)
        try TestPostgres.run(
            control,
            [
                "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-o", "-p \(port)", "-w", "-t", "60",
                "start",
            ], in: directory)
    }

    /// Dumps database `sync` (pg_dump, custom format) into the server's directory; the dump's path.
    func dumpSync() throws -> String {
        let path = directory.appendingPathComponent("sync-\(UUID().uuidString).dump").path
        try TestPostgres.run(
            binaries.appendingPathComponent("pg_dump").path, ["-Fc", "-f", path, "-d", url("postgres", database: "sync")],
            in: directory)
        return path
    }

    /// Restores database `sync` from a dump of ``dumpSync()``, as a restore from a backup does.
    func restoreSync(from path: String) throws {
        try TestPostgres.run(
            binaries.appendingPathComponent("pg_restore").path,
            ["--clean", "--if-exists", "--single-transaction", "-d", url("postgres", database: "sync"), path], in: directory)
    }

    /// Stops the server and removes its directory.
    func stop() {
        TestPostgres.stop(directory)
    }

    private static func stop(_ directory: URL) {
        if let text = try? String(contentsOf: directory.appendingPathComponent("pgbouncer.pid"), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            // SIGTERM is PgBouncer's immediate shutdown, but one busy with server connections was seen to outlive
            // it: after a second, SIGKILL.
            kill(pid, SIGTERM)
            for _ in 0..<40 where kill(pid, 0) == 0 { usleep(25_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        let pidFile = directory.appendingPathComponent("data/postmaster.pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = text.split(separator: "\n").first.flatMap({ pid_t($0) })
        {
            kill(pid, SIGQUIT)
            for _ in 0..<200 where FileManager.default.fileExists(atPath: pidFile.path) { usleep(25_000) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log so far (and PgBouncer's, when it is in front).
    var serverLog: String { TestPostgres.log(directory) + bouncerLog }

    // MARK: Setting up

    /// Stops the server and removes its directory if this process dies
    /// without ``stop()`` (killed, or trapped): a shell polls it once a second.
    private static func watch(_ directory: URL) {
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            [ -f '\(directory.path)/pgbouncer.pid' ] && kill -KILL "$(cat '\(directory.path)/pgbouncer.pid')"
            [ -f '\(directory.path)/data/postmaster.pid' ] && kill -QUIT "$(head -n 1 '\(directory.path)/data/postmaster.pid')"
            sleep 1; rm -rf '\(directory.path)'
            """
        _ = try? ChildProcess("/bin/sh", ["-c", script])
    }

    /// Creates the roles and the database, through libpq as the superuser.
    private static func createRoles(url: String, passwords: [String: String]) throws {
        // A server `pg_ctl -w` just reported ready was once seen to close the first connection
        // on a loaded machine: the first login is tried again for a few seconds.
        var attempts = 0
        var opened: PostgresConnection?
        while opened == nil {
            do {
                opened = try PostgresConnection(url: url)
            } catch {
                attempts += 1
                if attempts == 20 { throw error }
                usleep(250_000)
            }
        }
        let connection = opened!
        // (The passwords are UUIDs: nothing in them needs quoting.)
        // (CREATEROLE: setup gives the devices' role its timeouts.)
        try connection.query("CREATE ROLE sync_owner LOGIN CREATEROLE PASSWORD '\(passwords["sync_owner"]!)'")
        try connection.query("CREATE ROLE sync_device LOGIN PASSWORD '\(passwords["sync_device"]!)'")
        try connection.query("CREATE DATABASE sync OWNER sync_owner")
        try connection.query("REVOKE CONNECT ON DATABASE sync FROM PUBLIC")
        try connection.query("GRANT CONNECT ON DATABASE sync TO sync_owner, sync_device")
    }

    private static func binaryDirectory() throws -> URL {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = URL(fileURLWithPath: root).appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        throw HarnessError("PostgreSQL's server programs are not installed (make deps installs Debian's postgresql)")
    }

    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw HarnessError("cannot open a socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw HarnessError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a program (as `nobody` when this process is root, unless
    /// `asRoot`), and throws with its output when it fails. Its output goes
    /// to a file, not a pipe, which the server `pg_ctl` starts would keep open.
    private static func run(_ program: String, _ arguments: [String], in directory: URL? = nil, asRoot: Bool = false)
        throws
    {
        // (GNU env -C changes the directory: posix_spawn cannot, here.)
        let inDirectory = directory.map { ["/usr/bin/env", "-C", $0.path, program] } ?? [program]
        let command =
            getuid() == 0 && !asRoot
            ? ["/usr/sbin/runuser", "-u", "nobody", "--"] + inDirectory + arguments : inDirectory + arguments
        let finished = try ChildProcess.run(command[0], Array(command.dropFirst()), mergingErrors: true)
        guard finished.ending == .exited(0) else {
            throw HarnessError("\(URL(fileURLWithPath: program).lastPathComponent) \(finished.ending): \(finished.out)")
        }
    }

    private static func log(_ directory: URL) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
