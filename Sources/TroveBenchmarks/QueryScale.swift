import Foundation

/// W10: queries that used to read far more than they return — a
/// range with both bounds on an indexed String, the first few of a sort —
/// and substring scans over memos of mixed Korean and English.
extension Runner {
    func w10() throws {
        let count = options.size(100_000, large: 1_000_000)
        let rows = RowC.make(count)
        let engines: [any Engine.Type] = [TroveEngine.self, SQLiteEngine.self]
        let repeats = options.quick ? 3 : 20
        func queryRow(_ title: String, _ n: Int, _ query: @escaping (any Engine, Int) throws -> Int) throws {
            try run("W10", title, size: count, unit: "queries/s", engines: engines) { engine in
                try engine.insertC(rows)
                var answer = 0
                var latencies: [Double] = []
                for index in 0..<n {
                    let start = now()
                    answer &+= try measuredSection { try query(engine, index) }
                    latencies.append(Double(now() - start) / 1e9)
                }
                return Sample(seconds: latencies.reduce(0, +), operations: n, answer: "\(answer)", latencies: latencies)
            }
        }
        // Names are "person<n>": each range holds the names of one two-digit prefix (about 1% of them).
        try queryRow("range on an indexed String, both bounds: count", repeats) { engine, index in
            let prefix = 10 + index * 7 % 90
            return try engine.countNameRange("person\(prefix)", "person\(prefix + 1)")
        }
        try queryRow("sort by an unindexed Int, first 10", options.quick ? 2 : 5) { engine, _ in
            let result = try engine.firstByScore(limit: 10)
            return result.count &+ result.checksum
        }
        try queryRow("sort by two properties, first 10", options.quick ? 2 : 5) { engine, _ in
            let result = try engine.firstByCityAndScore(limit: 10)
            return result.count &+ result.checksum
        }
        // Every object: the whole sort, as a live result's first evaluation runs it.
        try queryRow("sort by two properties, every object", options.quick ? 1 : 3) { engine, _ in
            let result = try engine.firstByScoreAndCity(limit: count)
            return result.count &+ result.checksum
        }
        try queryRow("sort by an indexed String, then an Int, first 10", options.quick ? 2 : 20) { engine, _ in
            let result = try engine.firstByNameAndScore(limit: 10)
            return result.count &+ result.checksum
        }

        let memoCount = options.size(100_000)
        let memos = RowMemo.make(memoCount)
        let scans = options.quick ? 2 : 10
        for (caseInsensitive, title) in [
            (true, "substring scan of memos, case-insensitive: CONTAINS[c] vs LIKE '%…%'"),
            (false, "substring scan of memos, case-sensitive: CONTAINS vs instr() > 0"),
        ] {
            try run("W10", title, size: memoCount, unit: "objects/s", engines: engines) { engine in
                try engine.insertMemos(memos)
                var answer = 0
                let seconds = try measure {
                    for _ in 0..<scans {
                        answer &+= try engine.countMemos(containing: "COFFEE 서울", caseInsensitive: caseInsensitive)
                    }
                }
                return Sample(seconds: seconds, operations: memoCount * scans, answer: "\(answer)")
            }
        }
    }
}
