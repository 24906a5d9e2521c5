import Foundation

struct Options {
    var large = false
    var quick = false
    var repeats = 3
    var only: Set<String>?
    var outputDirectory = "bench-results"

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--large": options.large = true
            case "--quick": options.quick = true
            case "--repeat":
                guard let value = iterator.next().flatMap(Int.init), value > 0 else {
                    throw BenchmarkFailure(description: "--repeat needs a positive number")
                }
                options.repeats = value
            case "--only":
                guard let value = iterator.next() else { throw BenchmarkFailure(description: "--only needs a list like W3,W4") }
                options.only = Set(value.uppercased().split(separator: ",").map(String.init))
            case "--output":
                guard let value = iterator.next() else { throw BenchmarkFailure(description: "--output needs a directory") }
                options.outputDirectory = value
            case "--help", "-h":
                print(
                    """
                    usage: trove-bench [--quick | --large] [--only W1,W3] [--repeat N] [--output DIR]

                    Runs BENCHMARKS.md's workloads on Trove, raw SQLite and raw LMDB in one run, prints a
                    Markdown table with the speed ratios and the bars, and writes DIR/latest.json and DIR/latest.svg.
                      --quick    small sizes, one repetition: checks that every workload runs and agrees
                      --large    the 1M-object sizes
                    """)
                exit(0)
            default: throw BenchmarkFailure(description: "unknown option \(argument); see --help")
            }
        }
        if options.quick { options.repeats = 1 }
        return options
    }

    func size(_ normal: Int, large: Int? = nil) -> Int {
        if quick { return max(100, normal / 100) }
        return self.large ? (large ?? normal) : normal
    }

    func wants(_ workload: String) -> Bool { only?.contains(workload) ?? true }
}

/// What one timed run of a workload on one engine produced.
struct Sample {
    var seconds: Double
    var operations: Int
    /// Must be equal across engines, or the run fails.
    var answer: String
    var latencies: [Double] = []
    var fileSize: Int?
    var compactedSize: Int?
}

final class Runner {
    let options: Options
    var rows: [Row] = []
    static var allEngines: [any Engine.Type] { [TroveEngine.self, SQLiteEngine.self, LMDBEngine.self] }

    init(options: Options) { self.options = options }

    /// Runs `body` on each engine: one warm-up, then `repeats` timed runs, each
    /// on a fresh directory. Reports the median rate and checks the answers agree.
    func run(
        _ workload: String, _ title: String, size: Int, unit: String, durability: Durability = .full,
        engines: [any Engine.Type] = Runner.allEngines, body: (any Engine) throws -> Sample
    ) throws {
        var figures: [String: Figure] = [:]
        var answers: [String: String] = [:]
        for engineType in engines {
            var seconds: [Double] = []
            var last: Sample?
            var peak = 0
            for repetition in 0...options.repeats {
                if options.quick && repetition == 0 { continue }
                let directory = makeScratchDirectory("\(workload)-\(engineType.name)")
                defer { try? FileManager.default.removeItem(at: directory) }
                resetPeakRSS()
                let sample = try autoreleasepool {
                    let engine = try engineType.init(directory: directory, durability: durability)
                    return try body(engine)
                }
                peak = max(peak, peakRSS())
                if repetition > 0 || options.quick {
                    seconds.append(sample.seconds)
                    last = sample
                }
            }
            guard let last else { continue }
            let time = median(seconds)
            figures[engineType.name] = Figure(
                value: time > 0 ? Double(last.operations) / time : 0,
                p50: last.latencies.isEmpty ? nil : percentile(last.latencies, 0.5),
                p99: last.latencies.isEmpty ? nil : percentile(last.latencies, 0.99), peakRSS: peak, fileSize: last.fileSize,
                compactedSize: last.compactedSize)
            answers[engineType.name] = last.answer
        }
        if Set(answers.values).count > 1 {
            throw BenchmarkFailure(
                description: "\(workload) \(title): the engines disagree: "
                    + answers.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", "))
        }
        let row = Row(workload: workload, title: title, size: size, unit: unit, durability: durability.rawValue, figures: figures)
        rows.append(row)
        printProgress(row)
    }

    private func printProgress(_ row: Row) {
        let values = row.figures.sorted { $0.key > $1.key }.map { "\($0.key) \(formatRate($0.value.value))" }.joined(
            separator: ", ")
        FileHandle.standardError.write(Data("  \(row.workload) \(row.title): \(values)\n".utf8))
    }
}

func formatRate(_ value: Double) -> String {
    if value >= 1e6 { return String(format: "%.2fM", value / 1e6) }
    if value >= 1e3 { return String(format: "%.1fk", value / 1e3) }
    return String(format: "%.1f", value)
}

#if !canImport(ObjectiveC)
    @inline(__always)
    func autoreleasepool<R>(_ body: () throws -> R) rethrows -> R { try body() }
#endif
