import Foundation
import Testing
import TroveStorage

@testable import TroveSync

#if canImport(Glibc)
    import Glibc
#endif

/// Three device processes and a backend change the same ten objects at
/// random, concurrently, through a proxy that cuts connections, while the
/// test kills devices (at named points of a sync and at random moments),
/// terminates their server sessions and restarts the server. At the end,
/// after every device synced twice, every file and the server's table must
/// hold exactly the fold of every committed change under the rules: per
/// property the value with the greatest clock within the object's greatest
/// causal length, the object gone when that length is even.
///
/// Each device journals what its file records after each write (value and
/// clock per property, causal length), and again for every object when it
/// starts (a write that committed just before a SIGKILL); the backend's
/// writes are journaled from the row the server stamped.
@Suite("Convergence of three devices and a backend")
struct ConvergenceTests {
    static let properties = ["title", "score", "tag", "tags"]
    static let defaults: [String: String?] = ["title": "", "score": "0", "tag": nil, "tags": ""]
    /// A set's members journal as properties named `labels` U+0001 member, valued "in" or "out".
    static let memberPrefix = "labels\u{1}"
    static let points = ["push-sending", "push-answered", "pull-page", "apply"]

    /// What one writer recorded of one object.
    struct Entry {
        let origin: String
        let id: String
        let cl: Int
        /// Per property: its value and clock (the server's text form).
        let values: [String: (value: String?, clock: String)]
    }

    @Test("every file and the server end with the fold of all committed changes: nothing lost, nothing applied twice")
    func convergence() throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = Int(environment["TROVE_CONVERGENCE_ROUNDS"] ?? "") ?? 300
        let seed = UInt64(environment["TROVE_CONVERGENCE_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970 * 1000)
        let context = "seed \(seed) (TROVE_CONVERGENCE_SEED), \(rounds) rounds"
        var random = SeededGenerator(seed: seed)
        func chance(_ probability: Double) -> Bool { Double(random.next() % 10_000) < probability * 10_000 }

        let server = try TestSyncServer()
        defer { server.stop() }
        let superuser = { try PostgresConnection(url: server.postgres.url("postgres", database: "sync")) }
        // The server must not lose commits it acknowledged when it is killed and restarted.
        try superuser().query("ALTER SYSTEM SET synchronous_commit = on")
        try superuser().query("SELECT pg_reload_conf()")
        let proxy = try DroppingProxy(target: server.postgres.syncPort, seed: seed)
        defer { proxy.stop() }
        let deviceURL = server.postgres.url("sync_device", database: "sync")
            .replacingOccurrences(of: ":\(server.postgres.syncPort)/", with: ":\(proxy.port)/")
        let directory = try SyncClientTests.directory()
        defer {
            // TROVE_CONVERGENCE_KEEP=1 keeps the files and journals to look into.
            if environment["TROVE_CONVERGENCE_KEEP"] == "1" {
                print("convergence: files and journals kept in \(directory.path)")
            } else {
                try? FileManager.default.removeItem(at: directory)
            }
        }

        var devices: [DeviceProcess] = []
        for name in ["a", "b", "c"] {
            devices.append(
                try DeviceProcess(
                    name: name, file: directory.appendingPathComponent("\(name).trove").path, url: deviceURL,
                    token: try server.grant(name, "shared"), space: "shared",
                    journal: directory.appendingPathComponent("\(name).journal").path))
        }
        defer { devices.forEach { $0.quit() } }

        var backend = try PostgresConnection(url: server.postgres.url("sync_owner", database: "sync"))
        var backendEntries: [Entry] = []
        var counts: [String: Int] = [:]
        // Devices the test killed (the death shows at the next command when it had already answered).
        var killedByTest: Set<Int> = []
        func startKilled() throws {
            for index in killedByTest.sorted() {
                // Killed after it had answered: started again before it is given anything.
                #expect(devices[index].died() == "SIGKILL")
                counts["killed at random", default: 0] += 1
                try devices[index].start()
            }
            killedByTest = []
        }
        for round in 0..<rounds {
            if round > 0 && round % 70 == 0 {
                try server.postgres.restart()
                backend = try PostgresConnection(url: server.postgres.url("sync_owner", database: "sync"))
                counts["server restarts", default: 0] += 1
            }
            try startKilled()
            proxy.setDropChance(chance(0.3) ? 0.3 : 0)
            var commands: [String?] = []
            var armed: [String?] = []
            for device in devices {
                let pick = random.next() % 100
                var point: String?
                if pick < 45 {
                    commands.append("write \(random.next() % 1_000_000_000) \(1 + random.next() % 4)")
                } else if pick < 90 {
                    if chance(0.15) {
                        point = Self.points[Int(random.next() % UInt64(Self.points.count))]
                        #expect(device.ask("arm \(point!)") == "ok")
                    }
                    commands.append("sync")
                } else {
                    commands.append(nil)
                }
                armed.append(point)
            }
            for (device, command) in zip(devices, commands) {
                if let command { device.send(command) }
            }
            if chance(0.2), let entry = try? Self.backendWrite(backend, round: round, &random) {
                backendEntries.append(entry)
                counts["backend writes", default: 0] += 1
            }
            if chance(0.06) {
                usleep(useconds_t(random.next() % 30_000))
                let killed = try superuser().query(
                    "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'sync_device') t"
                )
                counts["sessions terminated", default: 0] += Int(killed.first?.first??.description ?? "0") ?? 0
            }
            if chance(0.04) {
                let victim = Int(random.next() % 3)
                if commands[victim] != nil {
                    usleep(useconds_t(random.next() % 20_000))
                    devices[victim].kill()
                    killedByTest.insert(victim)
                }
            }
            for (index, device) in devices.enumerated() {
                guard let command = commands[index] else { continue }
                guard let answer = device.readLine() else {
                    let how = device.died()
                    guard how == "SIGKILL" else {
                        Issue.record("device \(device.name) died in round \(round) (\(command)): \(how); \(context)")
                        return
                    }
                    counts[killedByTest.contains(index) ? "killed at random" : "killed at \(armed[index] ?? "?")", default: 0] +=
                        1
                    killedByTest.remove(index)
                    try device.start()
                    continue
                }
                if command == "sync" {
                    if answer.hasPrefix("error") {
                        counts["syncs failed (connection cut, session ended, server down)", default: 0] += 1
                    } else {
                        let parts = answer.split(separator: " ", maxSplits: 4)
                        #expect(parts.count >= 4 && parts[3] == "0", "rejections in round \(round): \(answer); \(context)")
                        counts["syncs", default: 0] += 1
                        counts["changes pushed", default: 0] += Int(parts[1]) ?? 0
                    }
                    if armed[index] != nil && !killedByTest.contains(index) { #expect(device.ask("arm") == "ok") }
                } else {
                    #expect(answer == "ok", "device \(device.name), round \(round), \(command): \(answer); \(context)")
                }
            }
        }

        // Everyone syncs twice, with nothing in the way.
        try startKilled()
        proxy.setDropChance(0)
        for _ in 0..<2 {
            for device in devices {
                var answer: String?
                for _ in 0..<4 {
                    answer = device.ask("sync")
                    if answer?.hasPrefix("ok") == true { break }
                }
                #expect(answer?.hasPrefix("ok") == true, "final sync of \(device.name): \(answer ?? "died"); \(context)")
            }
        }
        counts["proxy connections cut"] = proxy.dropped

        var entries = backendEntries
        for device in devices {
            let text = try String(contentsOf: directory.appendingPathComponent("\(device.name).journal"), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let id = object["id"] as? String, let cl = object["cl"] as? Int
                else { continue }
                var values: [String: (String?, String)] = [:]
                for (property, pair) in object["p"] as? [String: [Any]] ?? [:] where pair.count == 2 {
                    values[property] = (pair[0] as? String, pair[1] as? String ?? "")
                }
                entries.append(Entry(origin: device.name, id: id, cl: cl, values: values))
            }
        }
        let expected = try Self.fold(entries, context: context)
        for device in devices {
            let dump = try #require(device.ask("dump"))
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: [String: Any]])
            let held = objects.mapValues { fields in
                (Self.properties + ["labels"]).reduce(into: [String: String?]()) { $0[$1] = fields[$1] as? String }
            }
            #expect(
                held == expected, "device \(device.name) differs from the fold; \(context)\n\(Self.difference(held, expected))")
        }
        let rows = try backend.query(
            "SELECT id, trove_cl, title, score::text, tag, tags::text, labels::text FROM trove_data.\"Item\" WHERE trove_space = 'shared'"
        )
        var onServer: [String: [String: String?]] = [:]
        for row in rows where (Int(row[1] ?? "0") ?? 0) % 2 == 1 {
            onServer[row[0]!] = [
                "title": row[2] ?? "", "score": row[3] ?? "0", "tag": row[4], "tags": Self.joined(row[5]),
                "labels": Self.joined(row[6], sorted: true),
            ]
        }
        #expect(onServer == expected, "the server differs from the fold; \(context)\n\(Self.difference(onServer, expected))")
        #expect(counts["syncs", default: 0] > rounds / 2, "too few syncs went through to test anything: \(counts)")
        print("convergence, \(context): \(entries.count) journaled states, \(counts.sorted { $0.key < $1.key })")
    }

    /// The elements of a JSON array of strings, joined with commas.
    static func joined(_ json: String?, sorted: Bool = false) -> String {
        guard let json, let array = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] else { return "" }
        return (sorted ? array.sorted() : array).joined(separator: ",")
    }

    /// One write of the backend through SQL on a random object, as the
    /// server stamped it: an update or delete of a live row, or an insert.
    static func backendWrite(_ connection: PostgresConnection, round: Int, _ random: inout SeededGenerator) throws -> Entry {
        let id = "o\(random.next() % 10)"
        let title = "backend-\(round)"
        let table = "trove_data.\"Item\""
        try connection.query("BEGIN")
        do {
            let cl = try connection.query(
                "SELECT trove_cl FROM \(table) WHERE trove_space = 'shared' AND id = $1 FOR UPDATE", [id]
            )
            .first.flatMap { $0[0] }.flatMap { Int($0) }
            if let cl, cl % 2 == 1 {
                if random.next() % 4 == 0 {
                    try connection.query("DELETE FROM \(table) WHERE trove_space = 'shared' AND id = $1", [id])
                } else {
                    let labels = (0..<5).filter { _ in random.next() % 2 == 0 }.map { "\"l\($0)\"" }
                    try connection.query(
                        "UPDATE \(table) SET title = $2, score = $3, labels = $4::jsonb WHERE trove_space = 'shared' AND id = $1",
                        [id, title, String(random.next() % 1000), "[" + labels.joined(separator: ",") + "]"])
                }
            } else {
                try connection.query(
                    "INSERT INTO \(table) (trove_space, id, title, score) VALUES ('shared', $1, $2, $3)",
                    [id, title, String(random.next() % 1000)])
            }
            let row = try #require(
                try connection.query(
                    "SELECT trove_cl, title, \"title:clock\", score::text, \"score:clock\", tag, \"tag:clock\", tags::text, \"tags:clock\", \"labels:clock\" FROM \(table) WHERE trove_space = 'shared' AND id = $1",
                    [id]
                ).first)
            try connection.query("COMMIT")
            var values: [String: (String?, String)] = [:]
            for (offset, property) in properties.enumerated() {
                guard let clock = row[2 + offset * 2] else { continue }
                values[property] = (property == "tags" ? joined(row[1 + offset * 2]) : row[1 + offset * 2], clock)
            }
            let members =
                (try? JSONSerialization.jsonObject(with: Data((row[9] ?? "{}").utf8)) as? [String: [Any]]) ?? [:]
            for (member, entry) in members {
                guard let clock = entry.first as? String, let alive = entry.dropFirst().first as? Bool else { continue }
                values[memberPrefix + member] = (alive ? "in" : "out", clock)
            }
            return Entry(origin: "backend", id: id, cl: Int(row[0] ?? "0") ?? 0, values: values)
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }

    /// The state every replica must reach: per object the greatest causal
    /// length; when odd, per property the value of the greatest clock
    /// written in that life (the default when none was). A clock seen with
    /// two different values is a failure by itself.
    static func fold(_ entries: [Entry], context: String) throws -> [String: [String: String?]] {
        var result: [String: [String: String?]] = [:]
        var valueOfClock: [String: String?] = [:]
        for entry in entries {
            for (property, pair) in entry.values where !pair.clock.hasPrefix("0000000000000000") {
                let key = "\(entry.id).\(property)@\(entry.cl)@\(pair.clock)"
                if let seen = valueOfClock[key], seen != pair.value {
                    Issue.record(
                        "\(key) was seen with two values, \(seen ?? "nil") and \(pair.value ?? "nil") (from \(entry.origin)); \(context)"
                    )
                }
                valueOfClock[key] = pair.value
            }
        }
        for (id, group) in Dictionary(grouping: entries, by: \.id) {
            let cl = group.map(\.cl).max() ?? 0
            guard cl % 2 == 1 else { continue }
            var object: [String: String?] = [:]
            let life = group.filter { $0.cl == cl }
            for property in properties {
                let written = life.compactMap { $0.values[property] }.filter { !$0.clock.hasPrefix("0000000000000000") }
                object[property] = written.max { $0.clock < $1.clock }.map(\.value) ?? defaults[property]!
            }
            // Each member: in or out as its latest clock says.
            var members: [String: (value: String?, clock: String)] = [:]
            for entry in life {
                for (name, pair) in entry.values where name.hasPrefix(memberPrefix) && !pair.clock.hasPrefix("0000000000000000") {
                    if let known = members[name], known.clock >= pair.clock { continue }
                    members[name] = pair
                }
            }
            object["labels"] = members.filter { $0.value.value == "in" }.keys.map { String($0.dropFirst(memberPrefix.count)) }
                .sorted().joined(separator: ",")
            result[id] = object
        }
        return result
    }

    static func difference(_ held: [String: [String: String?]], _ expected: [String: [String: String?]]) -> String {
        Set(held.keys).union(expected.keys).sorted().compactMap { id in
            held[id] == expected[id]
                ? nil : "\(id): holds \(held[id].map { "\($0)" } ?? "nothing"), fold \(expected[id].map { "\($0)" } ?? "nothing")"
        }.joined(separator: "\n")
    }
}
