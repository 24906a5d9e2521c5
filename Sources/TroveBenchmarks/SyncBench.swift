import Foundation
import Trove
import TroveStorage
import TroveSync

/// The synced type of the sync load run.
final class BenchNote: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var score = 0
}

/// The sync load run (`trove-bench --sync`, `make bench-sync`): many
/// simulated devices, each a Trove file with a `SyncClient`, against one
/// PostgreSQL on loopback (`scripts/with-postgres.sh` starts one and gives
/// its URLs). Bounded in count: `--devices`, `--changes` per device,
/// `--bootstrap` rows, `--seconds` of polling.
enum SyncBenchmark {
    struct Options: Sendable {
        var devices = 16
        var spaces = 4
        var changes = 1_000
        var bootstrap = 100_000
        var seconds = 3.0
        var latencyRounds = 30
    }

    static func run(_ arguments: [String]) throws {
        let options = try parse(arguments)
        try run(options)
    }

    private static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1].replacingOccurrences(of: "_", with: "") : ""
            switch arguments[index] {
            case "--devices": options.devices = Int(value) ?? options.devices
            case "--spaces": options.spaces = Int(value) ?? options.spaces
            case "--changes": options.changes = Int(value) ?? options.changes
            case "--bootstrap": options.bootstrap = Int(value) ?? options.bootstrap
            case "--seconds": options.seconds = Double(value) ?? options.seconds
            default: index -= 1
            }
            index += 2
        }
        // Every space has two devices at least (the latency pair is devices 0 and `spaces`).
        options.devices = max(2, options.devices)
        options.spaces = max(1, min(options.spaces, options.devices / 2))
        return options
    }

    private static func run(_ options: Options) throws {
        let environment = ProcessInfo.processInfo.environment
        guard let ownerURL = environment["TROVE_SYNC_OWNER_URL"], let deviceURL = environment["TROVE_SYNC_DEVICE_URL"] else {
            throw TroveError(
                .syncServer,
                "trove-bench --sync needs TROVE_SYNC_OWNER_URL and TROVE_SYNC_DEVICE_URL: run it through scripts/with-postgres.sh (make bench-sync)"
            )
        }
        let owner = try PostgresConnection(url: ownerURL)
        try ServerSchema.install(on: owner, deviceRole: "sync_device")
        let directory = makeScratchDirectory("sync")
        print(
            "sync load: \(options.devices) devices in \(options.spaces) spaces, \(options.changes) new objects each, release build, PostgreSQL on loopback"
        )
        print("| measure | value |")
        print("|---|---:|")

        // Devices: one file and one client each, made on the thread that uses them.
        let tokens = try (0..<options.devices).map { device in
            try ServerSchema.grantDevice(
                principal: "p\(device)", space: "s\(device % options.spaces)", readOnly: false, on: owner)
        }
        @Sendable func withDevice<T>(_ device: Int, _ body: (Database, SyncClient) throws -> T) throws -> T {
            let db = try Database(
                configuration: Configuration(
                    fileURL: directory.appendingPathComponent("d\(device).trove"), objectTypes: [BenchNote.self]))
            let client = try SyncClient(
                database: db,
                configuration: .init(
                    serverURL: deviceURL, token: tokens[device], space: "s\(device % options.spaces)", types: ["BenchNote"]))
            return try body(db, client)
        }
        let walBefore = try owner.query("SELECT pg_current_wal_lsn()::text")[0][0]!

        // 1. Push: every device makes its objects offline, then all sync at once.
        for device in 0..<options.devices {
            try withDevice(device) { db, _ in
                try db.write {
                    for index in 0..<options.changes {
                        let note = BenchNote()
                        note.id = "d\(device)-\(index)"
                        note.title = "note \(index) of device \(device)"
                        note.score = index
                        try db.add(note)
                    }
                }
            }
        }
        let pushTime = try concurrently(options.devices) { device in
            try withDevice(device) { _, client in _ = try client.sync() }
        }
        let pushed = options.devices * options.changes
        row("changes pushed per second (\(options.devices) devices at once)", Double(pushed) / pushTime)
        let walAfter = try owner.query("SELECT pg_current_wal_lsn()::text")[0][0]!
        let walBytes = try owner.query("SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", [walAfter, walBefore])[0][0]!
        row("server WAL bytes per change pushed", Double(Int(walBytes) ?? 0) / Double(pushed))
        let tableBytes = try owner.query("SELECT pg_total_relation_size('trove_data.\"BenchNote\"')")[0][0]!
        row("server table bytes per object (with clocks and indexes)", Double(Int(tableBytes) ?? 0) / Double(pushed))

        // 2. Pull: every device fetches what the others of its space made.
        let perSpace = options.devices / options.spaces
        let pullTime = try concurrently(options.devices) { device in
            try withDevice(device) { _, client in _ = try client.sync() }
        }
        row(
            "rows pulled and applied per second (\(options.devices) devices at once)",
            Double(options.devices * (perSpace - 1) * options.changes) / pullTime)

        // 3. Heads polls: as many pollers as devices, each on its own connection.
        let stop = Date(timeIntervalSinceNow: options.seconds)
        let polls = Counter()
        let pollTime = try concurrently(options.devices) { device in
            let connection = try PostgresConnection(url: deviceURL)
            while Date() < stop {
                try connection.call("heads", in: "trove_sync", [tokens[device], "{s\(device % options.spaces)}"])
                polls.add(1)
            }
        }
        row("heads polls per second (\(options.devices) pollers)", Double(polls.value) / pollTime)

        // 4. Device to device: one device edits and syncs; another of its space syncs until it sees the edit.
        var latencies: [Double] = []
        try withDevice(0) { db, client in
            try withDevice(options.spaces) { otherDB, other in
                for round in 0..<options.latencyRounds {
                    let started = Date()
                    try db.write { db.object(ofType: BenchNote.self, forPrimaryKey: "d0-0")!.score = -round - 1 }
                    try client.sync()
                    while otherDB.object(ofType: BenchNote.self, forPrimaryKey: "d0-0")?.score != -round - 1 {
                        try other.sync()
                    }
                    latencies.append(Date().timeIntervalSince(started) * 1000)
                }
            }
        }
        latencies.sort()
        row("device to device, median ms (edit, sync, other device syncs until it sees it)", latencies[latencies.count / 2])
        row("device to device, 95th percentile ms", latencies[latencies.count * 95 / 100])

        // 5. Bootstrap: a new device of a space the backend filled reads it all. (Each row its own sequence,
        // as a backend's INSERTs get them; the rows of one push share one.)
        if options.bootstrap > 0 {
            let token = try ServerSchema.grantDevice(principal: "boot", space: "boot", readOnly: false, on: owner)
            try owner.execute(
                """
                BEGIN;
                SELECT set_config('trove_sync.applying', 'on', true);
                UPDATE trove_sync.spaces SET seq = \(options.bootstrap) WHERE space = 'boot';
                INSERT INTO trove_data."BenchNote" (trove_space, id, trove_cl, trove_seq, title, "title:clock", score, "score:clock")
                    SELECT 'boot', 'b' || g, 1, g, 'bootstrap note ' || g, c, g, c
                    FROM generate_series(1, \(options.bootstrap)) g,
                        (SELECT trove_sync.clock_text(trove_sync.wall_clock(), '00000000-0000-0000-0000-000000000000') AS c) k;
                COMMIT;
                """)
            resetPeakRSS()
            let before = peakRSS()
            let db = try Database(
                configuration: Configuration(
                    fileURL: directory.appendingPathComponent("boot.trove"), objectTypes: [BenchNote.self]))
            var configuration = SyncClient.Configuration(
                serverURL: deviceURL, token: token, space: "boot", types: ["BenchNote"])
            configuration.batchSize = 1_250  // pages of 5,000 rows, the server's most
            let client = try SyncClient(database: db, configuration: configuration)
            let started = Date()
            let report = try client.sync()
            let seconds = Date().timeIntervalSince(started)
            guard report.pulled == options.bootstrap, db.objects(BenchNote.self).count == options.bootstrap else {
                throw TroveError(.syncServer, "the bootstrap pulled \(report.pulled) of \(options.bootstrap) rows")
            }
            row("bootstrap of \(options.bootstrap) objects, seconds", seconds)
            // The server's part alone: every page fetched, nothing decoded or applied.
            let reader = try PostgresConnection(url: deviceURL)
            let fetchStarted = Date()
            var cursor: (seq: String, type: String?, id: String?) = ("0", nil, nil)
            while true {
                let text = try reader.call(
                    "pull", in: "trove_sync", [token, "boot", cursor.seq, cursor.type, cursor.id, nil, "5000"])[0][0]!
                guard let page = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                    page["more"] as? Bool == true, let last = (page["rows"] as? [[String: Any]])?.last
                else { break }
                cursor = (String(last["seq"] as? Int ?? 0), last["t"] as? String, last["id"] as? String)
            }
            row(
                "bootstrap, the server's pages alone (fetched and parsed, not applied), seconds",
                Date().timeIntervalSince(fetchStarted))
            row("bootstrap rows per second", Double(options.bootstrap) / seconds)
            row("bootstrap peak memory growth, MB", Double(peakRSS() - before) / 1_048_576)
        }
    }

    private static func row(_ name: String, _ value: Double) {
        let text = value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
        print("| \(name) | \(text) |")
    }

    /// Runs `body` for 0..<count on as many threads at once; the wall time in seconds.
    private static func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
        let group = DispatchGroup()
        let failures = Failures()
        let started = Date()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                do { try body(index) } catch { failures.add(error) }
                group.leave()
            }
        }
        group.wait()
        if let error = failures.first { throw error }
        return Date().timeIntervalSince(started)
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [any Error] = []
        func add(_ error: any Error) { lock.withLock { errors.append(error) } }
        var first: (any Error)? { lock.withLock { errors.first } }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add(_ n: Int) { lock.withLock { count += n } }
        var value: Int { lock.withLock { count } }
    }
}
