// trove-bench: BENCHMARKS.md's workloads on Trove, raw SQLite and raw LMDB,
// in one run, on the same data. See `trove-bench --help`.

import Foundation

do {
    if let flag = CommandLine.arguments.firstIndex(of: "--scale") {
        // The scale run: time and memory of the operations that must not grow with the file.
        let list = CommandLine.arguments.dropFirst(flag + 1).first ?? "10000,100000,1000000"
        let sizes = list.split(separator: ",").compactMap { Int($0.replacingOccurrences(of: "_", with: "")) }
        defer { removeScratch() }
        try ScaleBenchmark.run(sizes: sizes)
        exit(0)
    }
    if let flag = CommandLine.arguments.firstIndex(of: "--sync") {
        // The sync load run: many devices against one PostgreSQL (scripts/with-postgres.sh gives its URLs).
        defer { removeScratch() }
        try SyncBenchmark.run(Array(CommandLine.arguments.dropFirst(flag + 1)))
        exit(0)
    }
    if let flag = CommandLine.arguments.firstIndex(of: "--side-by-side") {
        // Trove's half of BENCHMARKS.md's realm-core side by side workload.
        defer { removeScratch() }
        try SideBySideBenchmark.run(Array(CommandLine.arguments.dropFirst(flag + 1)))
        exit(0)
    }
    if let flag = CommandLine.arguments.firstIndex(of: "--fts") {
        // The full-text row: Trove's index against SQLite FTS5.
        let count = CommandLine.arguments.dropFirst(flag + 1).first.flatMap { Int($0.replacingOccurrences(of: "_", with: "")) }
        let agreed = try FullTextBenchmark.run(count: count ?? 100_000)
        exit(agreed ? 0 : 1)
    }
    let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
    let runner = Runner(options: options)
    FileHandle.standardError.write(
        Data(
            "trove-bench: \(options.quick ? "quick" : options.large ? "large" : "default") sizes, \(options.repeats) repetition(s)\n"
                .utf8))
    defer { removeScratch() }
    try runner.runAll()
    let bars = evaluateBars(runner.rows)
    print(markdownTable(runner.rows, bars: bars))

    // A quick run, or one of chosen engines (under valgrind), writes no report
    // (and runs no helper processes, which hang under valgrind).
    if !options.quick && options.engines == nil {
        let report = Report(
            date: ISO8601DateFormatter().string(from: Date()),
            machine: .init(
                cores: ProcessInfo.processInfo.activeProcessorCount, memoryBytes: ProcessInfo.processInfo.physicalMemory,
                system: shell("uname -srm")),
            toolchain: shell("swift --version 2>&1 | head -1"), revision: shell("git rev-parse --short HEAD 2>/dev/null"),
            // The layout Trove ran with is part of what was run (column clusters unless TROVE_LAYOUT=records).
            options: ([ProcessInfo.processInfo.environment["TROVE_LAYOUT"].map { "TROVE_LAYOUT=\($0)" }].compactMap { $0 }
                + CommandLine.arguments.dropFirst()).joined(separator: " "), rows: runner.rows, bars: bars)
        let directory = URL(fileURLWithPath: options.outputDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: directory.appendingPathComponent("latest.json"))
        try svgChart(bars).write(to: directory.appendingPathComponent("latest.svg"), atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("wrote \(directory.path)/latest.json and latest.svg\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("trove-bench failed: \(error)\n".utf8))
    exit(1)
}
