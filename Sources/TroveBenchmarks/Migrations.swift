import Foundation
import Trove

/// Shape A models as a later app version would declare them, all stored as "BenchA".
enum AddedProperty {
    final class BenchA: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var v0: Int64 = 0
        @Persisted var v1: Int64 = 0
        @Persisted var v2: Int64 = 0
        @Persisted var v3: Int64 = 0
        @Persisted var v4: Int64 = 0
        @Persisted var v5: Int64 = 0
        @Persisted var v6: Int64 = 0
        @Persisted var v7: Int64 = 0
        @Persisted var v8: Int64 = 0
        @Persisted var v9: Int64 = 0
        @Persisted var note = "new"
    }
}

enum RenamedProperty {
    final class BenchA: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var first: Int64 = 0
        @Persisted var v1: Int64 = 0
        @Persisted var v2: Int64 = 0
        @Persisted var v3: Int64 = 0
        @Persisted var v4: Int64 = 0
        @Persisted var v5: Int64 = 0
        @Persisted var v6: Int64 = 0
        @Persisted var v7: Int64 = 0
        @Persisted var v8: Int64 = 0
        @Persisted var v9: Int64 = 0
    }
}

enum ChangedType {
    final class BenchA: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var v0 = 0.0
        @Persisted var v1: Int64 = 0
        @Persisted var v2: Int64 = 0
        @Persisted var v3: Int64 = 0
        @Persisted var v4: Int64 = 0
        @Persisted var v5: Int64 = 0
        @Persisted var v6: Int64 = 0
        @Persisted var v7: Int64 = 0
        @Persisted var v8: Int64 = 0
        @Persisted var v9: Int64 = 0
    }
}

extension Runner {
    /// What opening a file with a changed model costs: Trove only.
    func migrations() throws {
        let count = options.size(1_000_000)
        let rows = RowA.make(count)
        let cases: [(String, Object.Type, (@Sendable (Migration, UInt64) throws -> Void)?)] = [
            ("additive: a new property", AddedProperty.BenchA.self, nil),
            (
                "rename a property", RenamedProperty.BenchA.self,
                { migration, _ in
                    migration.renameProperty(onType: "BenchA", from: "v0", to: "first")
                }
            ),
            ("change a property's type (Int64 -> Double)", ChangedType.BenchA.self, nil),
        ]
        for (title, type, block) in cases {
            try run("MIG", "open with a migration: \(title)", size: count, unit: "objects/s", engines: [TroveEngine.self]) {
                engine in
                try engine.insertA(rows)
                let url = (engine as! TroveEngine).url
                var migrated = 0
                let seconds = try measure {
                    let db = try Database(
                        configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [type], migration: block))
                    migrated = try db.dynamicObjects("BenchA").count
                }
                guard migrated == count else {
                    throw BenchmarkFailure(description: "the migration kept \(migrated) of \(count) objects")
                }
                return Sample(seconds: seconds, operations: count, answer: "\(migrated)")
            }
        }
    }
}
