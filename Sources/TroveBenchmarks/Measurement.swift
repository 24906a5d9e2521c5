import Foundation

/// One engine's figures for one workload row.
struct Figure: Codable {
    var value: Double
    var p50: Double?
    var p99: Double?
    var peakRSS: Int?
    var fileSize: Int?
    var compactedSize: Int?
}

/// One row of the table: a workload variant measured on each engine.
struct Row: Codable {
    var workload: String
    var title: String
    var size: Int
    var unit: String
    var durability: String
    var figures: [String: Figure]

    func ratio(_ engine: String, over other: String) -> Double? {
        guard let mine = figures[engine]?.value, let theirs = figures[other]?.value, theirs > 0 else { return nil }
        return mine / theirs
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
