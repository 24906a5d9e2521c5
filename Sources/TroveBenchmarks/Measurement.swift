import Foundation

/// One engine's figures for one workload row.
struct Figure: Codable {
    var value: Double
    var p50: Double?
    var p99: Double?
    var peakRSS: Int?
    var fileSize: Int?
    var compactedSize: Int?
    /// Iterating every object: how far anonymous memory (heap and stacks)
    /// and all resident memory (with the file pages a memory map touches)
    /// rose above what the process held before, in bytes.
    var iterationHeapGrowth: Int?
    var iterationResidentGrowth: Int?
}

/// One row of the table: a workload variant measured on each engine.
struct Row: Codable {
    var workload: String
    var title: String
    var size: Int
    var unit: String
    var durability: String
    var figures: [String: Figure]
    /// Trove's ratio to each other engine, round by round (rows whose
    /// engines run in rounds; others compare the medians).
    var ratios: [String: RatioSpread]? = nil

    /// Trove's ratio to `other`: the median of the rounds' ratios when the
    /// row has them, else the ratio of the median rates.
    func ratio(_ engine: String, over other: String) -> Double? {
        if engine == "Trove", let spread = ratios?[other] { return spread.median }
        guard let mine = figures[engine]?.value, let theirs = figures[other]?.value, theirs > 0 else { return nil }
        return mine / theirs
    }
}

/// The median and the range of a ratio measured in several rounds.
struct RatioSpread: Codable {
    var median: Double
    var low: Double
    var high: Double
    var rounds: Int

    init?(_ ratios: [Double]) {
        guard let low = ratios.min(), let high = ratios.max() else { return nil }
        self.median = TroveBenchmarks.median(ratios)
        self.low = low
        self.high = high
        self.rounds = ratios.count
    }
}

/// A bar from BENCHMARKS.md, checked against a row.
struct Bar: Codable {
    var workload: String
    var against: String
    var threshold: Double
    var measured: Double?
    var met: Bool
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Peak resident memory since the last ``resetPeakRSS()``, in bytes.
func peakRSS() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1024
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `RssAnon`...); nil off Linux.
func processStatus(_ field: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return nil }
    return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
}

/// Runs `body` while a thread samples the process's anonymous memory every
/// half millisecond; returns how far it and the resident peak rose above
/// their level before `body` (nil off Linux).
func memoryGrowth(during body: () throws -> Void) rethrows -> (heap: Int, resident: Int)? {
    guard let heapBefore = processStatus("RssAnon"), let residentBefore = processStatus("VmRSS") else {
        try body()
        return nil
    }
    resetPeakRSS()
    let sampler = MemorySampler()
    let thread = Thread { sampler.sample() }
    thread.start()
    defer { sampler.stop() }
    try body()
    sampler.stop()
    let heapPeak = max(sampler.peak, processStatus("RssAnon") ?? 0)
    return (max(0, heapPeak - heapBefore), max(0, peakRSS() - residentBefore))
}

/// The highest `RssAnon` seen until stopped.
private final class MemorySampler: @unchecked Sendable {  // its state is behind `lock`
    private let lock = NSLock()
    private var highest = 0
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    var peak: Int { lock.withLock { highest } }

    func sample() {
        while lock.withLock({ running }) {
            let now = processStatus("RssAnon") ?? 0
            lock.withLock { highest = max(highest, now) }
            usleep(500)
        }
        finished.signal()
    }

    func stop() {
        let wasRunning = lock.withLock {
            defer { running = false }
            return running
        }
        if wasRunning { finished.wait() }
    }
}

/// Resets the kernel's peak-RSS mark (Linux: writing 5 to clear_refs).
func resetPeakRSS() {
    if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
        handle.write(Data("5".utf8))
        try? handle.close()
    }
}

func makeScratchDirectory(_ label: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-\(getpid())").appendingPathComponent(
        "\(label)-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func removeScratch() {
    try? FileManager.default.removeItem(
        at: FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-\(getpid())"))
}
