import Foundation
import Testing

@testable import TroveStorage

@Suite("Write transaction")
struct WriteTransactionTests {
    /// Every entry of `table`, in key order, as (key, value).
    private func entries(of table: Table, in transaction: Transaction) throws -> [(UInt64, [UInt8])] {
        try transaction.withCursor(on: table) { cursor in
            var found: [(UInt64, [UInt8])] = []
            var entry = try cursor.first()
            while let current = entry {
                found.append((UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self)), Array(current.value)))
                entry = try cursor.next()
            }
            return found
        }
    }

    private func expectMatches(_ model: [UInt64: [UInt8]], _ table: Table, in transaction: Transaction) throws {
        let stored = try entries(of: table, in: transaction)
        #expect(stored.map(\.0) == model.keys.sorted())
        for (key, value) in stored where model[key] != value {
            Issue.record("key \(key): \(value.count) bytes stored, \(model[key]?.count ?? -1) expected")
        }
    }

    @Test(
        "puts that go through a table's cursor land as puts by key do: overwrites, insert-only, deletes, a deleted run, a clear, two tables, map growth",
        arguments: [false, true])
    func putsThroughCursorsMatchAModel(growing: Bool) throws {
        var options = Environment.Options()
        if growing {
            options.initialMapSize = 1 << 20
            options.reservesMap = false
        }
        let path = makeTemporaryDirectory().appendingPathComponent("cursors.trove").path
        let environment = try Environment.open(path: path, options: options)
        var random = SeededGenerator(seed: growing ? 11 : 12)
        var models: [[UInt64: [UInt8]]] = [[:], [:]]
        for commit in 0..<4 {
            let write = try WriteTransaction(environment: environment)
            let tables = [try #require(try write.openTable("a")), try #require(try write.openTable("b"))]
            for step in 0..<3_000 {
                let which = Int.random(in: 0...1, using: &random)
                let table = tables[which]
                // Neighbouring keys most of the time (a cursor's leaf), anywhere sometimes.
                let key = UInt64.random(in: 0..<(step % 7 == 0 ? 5_000 : 300), using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    // Small values in the leaves, large ones in overflow pages.
                    let size =
                        Bool.random(using: &random)
                        ? Int.random(in: 0..<64, using: &random) : Int.random(in: 0..<5_000, using: &random)
                    let value = pattern(size, seed: UInt8(truncatingIfNeeded: step))
                    try value.withUnsafeBytes { _ = try write.put(table, key: key, value: $0) }
                    models[which][key] = value
                case 6:
                    let value = pattern(10, seed: UInt8(truncatingIfNeeded: step &+ 1))
                    let stored = try value.withUnsafeBytes { try write.put(table, key: key, value: $0, mode: .insertOnly) }
                    #expect(stored == (models[which][key] == nil))
                    if stored { models[which][key] = value }
                case 7, 8:
                    #expect(try write.delete(table, key: key) == (models[which][key] != nil))
                    models[which][key] = nil
                default:
                    let first = key
                    let last = key + UInt64.random(in: 0..<20, using: &random)
                    let removed = try withUnsafeBytes(of: first.bigEndian) { start in
                        try write.deleteRun(table, from: start) { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) <= last }
                    }
                    let expected = models[which].keys.filter { $0 >= first && $0 <= last }
                    #expect(removed == expected.count)
                    for key in expected { models[which][key] = nil }
                }
                if commit == 2, step == 1_500 {
                    try write.clear(tables[0])
                    models[0] = [:]
                }
            }
            try expectMatches(models[0], tables[0], in: write)
            try expectMatches(models[1], tables[1], in: write)
            try write.commit()
            let read = try ReadTransaction(environment: environment)
            try expectMatches(models[0], tables[0], in: read)
            try expectMatches(models[1], tables[1], in: read)
        }
        if growing { #expect(environment.mapSize > 1 << 20) }
    }
}
