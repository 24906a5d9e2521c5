import Foundation

struct Options {
    var large = false
    var quick = false
    var repeats = 3
    var only: Set<String>?
    var engines: Set<String>?
    var titles: [String]?
    var divisor = 1
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
            case "--engines":
                guard let value = iterator.next() else {
                    throw BenchmarkFailure(description: "--engines needs a list like Trove,SQLite")
                }
                options.engines = Set(value.lowercased().split(separator: ",").map(String.init))
            case "--title":
                guard let value = iterator.next() else {
                    throw BenchmarkFailure(description: "--title needs the start of a row's title")
                }
                options.titles = (options.titles ?? []) + [value]
            case "--divide":
                guard let value = iterator.next().flatMap(Int.init), value > 0 else {
                    throw BenchmarkFailure(description: "--divide needs a positive number")
                }
                options.divisor = value
            case "--output":
                guard let value = iterator.next() else { throw BenchmarkFailure(description: "--output needs a directory") }
                options.outputDirectory = value
            case "--help", "-h":
                print(
                    """
                    usage: trove-bench [--quick | --large] [--only W1,W3] [--engines Trove,SQLite] [--divide N]
                                       [--title TEXT] [--repeat N] [--output DIR]
                           trove-bench --side-by-side [--op 1,5b,9] [--runs K]

                    Runs BENCHMARKS.md's workloads on Trove, raw SQLite and raw LMDB in one run, prints a
                    Markdown table with the speed ratios and the bars, and writes DIR/latest.json and DIR/latest.svg.
                      --quick    small sizes, one repetition: checks that every workload runs and agrees
                      --large    the 1M-object sizes
                      --engines  only engines whose names start so (for counting one engine's instructions;
                                 Trove takes in TroveClass, the class beside the STRUCT rows' struct)
                      --divide   every size divided by N (for runs under valgrind)
                      --title    only rows whose title starts with TEXT (repeatable)
                      --side-by-side  Trove's half of BENCHMARKS.md's realm-core side by side workload
                                 (ops 1-9, 5a, 5b; the median of K fresh-file runs and each op's answer)
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
        return max(100, (self.large ? (large ?? normal) : normal) / divisor)
    }

    func wants(_ workload: String) -> Bool { only?.contains(workload) ?? true }

    func wantsRow(_ title: String) -> Bool { titles.map { $0.contains { title.hasPrefix($0) } } ?? true }

    /// Whether `engine` runs: `EncryptedTrove` counts as Trove.
    func wantsEngine(_ engine: String) -> Bool {
        engines.map { wanted in wanted.contains { engine.lowercased().hasPrefix($0) } } ?? true
    }
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

    /// Runs `body` on each engine: one warm-up round, then `repeats` timed
    /// rounds, each on a fresh directory. The engines take turns inside each
    /// round, so load on the machine that drifts over the run hits all of
    /// them alike, and each round starts with the next engine, so none
    /// always runs right after another's files were written and deleted;
    /// the row keeps each engine's median rate and, from the
    /// rounds, the median and spread of Trove's ratio to each other engine.
    /// The answers must agree.
    func run(
        _ workload: String, _ title: String, size: Int, unit: String, durability: Durability = .full,
        engines: [any Engine.Type] = Runner.allEngines, body: (any Engine) throws -> Sample
    ) throws {
        guard options.wantsRow(title) else { return }
        let engines = engines.filter { options.wantsEngine($0.name) }
        var rates: [String: [Double]] = [:]
        var last: [String: Sample] = [:]
        var peak: [String: Int] = [:]
        for repetition in 0...options.repeats {
            if options.quick && repetition == 0 { continue }
            let first = repetition % max(engines.count, 1)
            for engineType in engines[first...] + engines[..<first] {
                let directory = makeScratchDirectory("\(workload)-\(engineType.name)")
                defer { try? FileManager.default.removeItem(at: directory) }
                resetPeakRSS()
                let sample = try autoreleasepool {
                    let engine = try engineType.init(directory: directory, durability: durability)
                    return try body(engine)
                }
                peak[engineType.name] = max(peak[engineType.name] ?? 0, peakRSS())
                if repetition > 0 || options.quick {
                    rates[engineType.name, default: []].append(
                        sample.seconds > 0 ? Double(sample.operations) / sample.seconds : 0)
                    last[engineType.name] = sample
                }
            }
        }
        var figures: [String: Figure] = [:]
        for (name, sample) in last {
            figures[name] = Figure(
                value: median(rates[name] ?? []),
                p50: sample.latencies.isEmpty ? nil : percentile(sample.latencies, 0.5),
                p99: sample.latencies.isEmpty ? nil : percentile(sample.latencies, 0.99), peakRSS: peak[name],
                fileSize: sample.fileSize, compactedSize: sample.compactedSize)
        }
        let trove = engines.first { $0.name.contains("Trove") }?.name
        var spreads: [String: RatioSpread] = [:]
        if let trove, let mine = rates[trove] {
            for (name, theirs) in rates where name != trove {
                let ratios = zip(mine, theirs).compactMap { $1 > 0 ? $0 / $1 : nil }
                if let spread = RatioSpread(ratios) { spreads[name] = spread }
            }
        }
        let answers = last.mapValues(\.answer)
        if Set(answers.values).count > 1 {
            throw BenchmarkFailure(
                description: "\(workload) \(title): the engines disagree: "
                    + answers.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: ", "))
        }
        var row = Row(workload: workload, title: title, size: size, unit: unit, durability: durability.rawValue, figures: figures)
        row.ratios = spreads
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
