// trove-bench: BENCHMARKS.md's workloads on Trove, raw SQLite and raw LMDB,
// in one run, on the same data. See `trove-bench --help`.

import Foundation

do {
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

    // A quick run writes no report (and runs no helper processes, which hang under valgrind).
    if !options.quick {
        let report = Report(
            date: ISO8601DateFormatter().string(from: Date()),
            machine: .init(
                cores: ProcessInfo.processInfo.activeProcessorCount, memoryBytes: ProcessInfo.processInfo.physicalMemory,
                system: shell("uname -srm")),
            toolchain: shell("swift --version 2>&1 | head -1"), revision: shell("git rev-parse --short HEAD 2>/dev/null"),
            options: CommandLine.arguments.dropFirst().joined(separator: " "), rows: runner.rows, bars: bars)
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
