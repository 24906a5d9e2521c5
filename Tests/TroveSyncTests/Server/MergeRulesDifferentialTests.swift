import Foundation
import Testing
import TroveStorage

@testable import TroveSync

/// The merge rules as a few lines of Swift, and the server's SQL checked
/// against them on random batches from several devices: whatever order the
/// batches arrive in, and however often one is sent again, the server's rows
/// equal the model's fold of every change.
@Suite("The server's merge rules against a model in Swift")
struct MergeRulesDifferentialTests {
    /// One object as the rules see it.
    struct Row: Equatable, CustomStringConvertible {
        var cl: Int
        /// property → (value, clock text)
        var values: [String: (String?, String)]

        static func == (a: Row, b: Row) -> Bool {
            a.cl == b.cl && a.values.count == b.values.count
                && a.values.allSatisfy { key, entry in b.values[key].map { $0.0 == entry.0 && $0.1 == entry.1 } ?? false }
        }

        var description: String {
            "cl \(cl) "
                + values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.0 ?? "nil")@\($0.value.1.prefix(20))" }
                .joined(separator: " ")
        }
    }

    /// The rules: a larger causal length starts a new life with no values; a
    /// smaller one is ignored; otherwise each property takes the later clock.
    static func apply(
        _ change: (id: String, cl: Int, set: [String: (String?, Int64)]), device: String, bound: Int64,
        to rows: inout [String: Row]
    ) {
        var row = rows[change.id] ?? Row(cl: 0, values: [:])
        guard change.cl >= row.cl else { return }
        if change.cl > row.cl { row = Row(cl: change.cl, values: [:]) }
        if change.cl % 2 == 1 {
            for (property, (value, hlc)) in change.set {
                let clock = PropertyClock(hlc: UInt64(min(hlc, bound)), device: UUID(uuidString: device)!).text
                if let held = row.values[property]?.1, !(clock > held) { continue }
                row.values[property] = (value, clock)
            }
        }
        rows[change.id] = row
    }

    @Test("random batches from three devices, in random order and some sent twice, leave the rows the model folds")
    func serverAgreesWithTheModel() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let connection = try server.deviceConnection()
        let devices = try (0..<3).map { DeviceCalls(connection: connection, token: try server.grant("p\($0)", "s"), space: "s") }
        let ids = try devices.map { try #require($0.hello()["device"] as? String) }
        _ = try devices[0].define("Note", primaryKey: "id", ["id": "string", "title": "string", "score": "int"])
        let seed = UInt64(ProcessInfo.processInfo.environment["TROVE_MERGE_SEED"].flatMap(UInt64.init) ?? 20_261_204)
        var random = SeededGenerator(seed: seed)
        let rounds = Int(ProcessInfo.processInfo.environment["TROVE_MERGE_ROUNDS"] ?? "") ?? 300
        var model: [String: Row] = [:]
        let base = hlcNow(plus: -3_600)
        let bound = hlcNow(plus: 3_600)  // nothing here is clamped
        var nextCid = [1, 1, 1]
        var sent: [[Int: [[String: Any]]]] = [[:], [:], [:]]
        for round in 0..<rounds {
            let device = Int.random(in: 0..<3, using: &random)
            var batch: [[String: Any]] = []
            var changes: [(id: String, cl: Int, set: [String: (String?, Int64)])] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let id = "n\(Int.random(in: 0..<6, using: &random))"
                // A device knows some causal length: the current one, one behind, or one ahead (a delete or re-create).
                let current = model[id]?.cl ?? 1
                let cl = max(1, current + Int.random(in: -1...1, using: &random))
                var set: [String: (String?, Int64)] = [:]
                // Equal clocks from two devices happen too (a small range of times).
                let hlc = base + Int64.random(in: 0..<40, using: &random) << 16
                if Bool.random(using: &random) { set["title"] = (Bool.random(using: &random) ? "t\(round)" : nil, hlc) }
                if Bool.random(using: &random) { set["score"] = (String(Int.random(in: -5...5, using: &random)), hlc + 1) }
                changes.append((id, cl, set))
                batch.append(change(nextCid[device], "Note", id, cl: cl, set))
                nextCid[device] += 1
            }
            _ = try devices[device].push(batch)
            for change in changes { Self.apply(change, device: ids[device], bound: bound, to: &model) }
            sent[device][round] = batch
            // Now and then a batch arrives again (a retry after a lost answer): applied once.
            if Int.random(in: 0..<10, using: &random) == 0, let old = sent[device].values.randomElement(using: &random) {
                let again = try devices[device].push(old)
                #expect(again["applied"] as? Int == 0, "seed \(seed) round \(round): a batch sent again was applied")
            }
        }
        var stored: [String: Row] = [:]
        for row in try devices[0].pullAll().rows {
            let values = row["v"] as? [String: Any] ?? [:]
            let clocks = row["c"] as? [String: Any] ?? [:]
            var entries: [String: (String?, String)] = [:]
            for (property, clock) in clocks {
                guard let clock = clock as? String else { continue }
                entries[property] = (values[property] as? String, clock)
            }
            stored[row["id"] as! String] = Row(cl: row["cl"] as! Int, values: entries)
        }
        for id in Set(model.keys).union(stored.keys).sorted() {
            #expect(
                stored[id] == model[id],
                "seed \(seed): \(id): server \(stored[id].map(String.init(describing:)) ?? "none"), model \(model[id].map(String.init(describing:)) ?? "none")"
            )
        }
    }
}
