import Foundation

/// The bars of BENCHMARKS.md: a row (by workload and title prefix), the
/// engine compared against, and the speed ratio Trove must reach.
let barDefinitions: [(workload: String, title: String, against: String, threshold: Double)] = [
    ("W1", "bulk insert, shape B", "SQLite", 1.5), ("W1", "bulk insert, shape B", "LMDB", 0.5),
    ("W2", "one object per transaction: insert", "SQLite", 1.0), ("W2", "one object per transaction: insert", "LMDB", 0.8),
    ("W3", "full scan", "SQLite", 2.0), ("W3", "full scan", "LMDB", 0.5),
    ("W4", "primary-key lookups", "SQLite", 3.0), ("W4", "primary-key lookups", "LMDB", 0.6),
    ("W5", "update one property on all objects", "SQLite", 2.5), ("W5", "update one property on all objects", "LMDB", 0.5),
    ("W6", "delete all", "SQLite", 8.0),
    ("W6", "delete a random 10%", "SQLite", 1.5), ("W6", "delete a random 10%", "LMDB", 0.5),
    ("W7", "equality on an indexed", "SQLite", 1.5),
    ("W7", "unindexed range: count", "SQLite", 25.0),
    ("W7", "unindexed range: sort, fetch", "SQLite", 3.0),
    ("W9", "follow to-many links", "SQLite", 2.0),
]

func evaluateBars(_ rows: [Row]) -> [Bar] {
    var bars: [Bar] = []
    for definition in barDefinitions {
        for row in rows
        where row.workload == definition.workload && row.title.hasPrefix(definition.title) && row.durability == "full" {
            let ratio = row.ratio("Trove", over: definition.against)
            bars.append(
                Bar(
                    workload: "\(row.workload) \(row.title)", against: definition.against, threshold: definition.threshold,
                    measured: ratio,
                    met: (ratio ?? 0) >= definition.threshold))
        }
    }
    if let open = rows.first(where: { $0.workload == "W8" }), let seconds = open.figures["Trove"]?.p50 {
        bars.append(
            Bar(
                workload: "W8 cold open + first query under 10 ms", against: "absolute (ms)", threshold: 10,
                measured: seconds * 1000, met: seconds < 0.010))
    }
    if let open = rows.first(where: { $0.workload == "W8" }), let heap = open.figures["Trove"]?.iterationHeapGrowth {
        let megabytes = Double(heap) / 1e6
        bars.append(
            Bar(
                workload: "W8 iterating every object: peak heap above baseline under 64 MB", against: "absolute (MB)",
                threshold: 64, measured: megabytes, met: megabytes < 64))
    }
    // "File size no larger than SQLite's for the same data (after compaction)": W6's file, compacted.
    if let files = rows.first(where: { $0.workload == "W6" && $0.title.hasPrefix("delete a random") }),
        let trove = files.figures["Trove"]?.compactedSize, let sqlite = files.figures["SQLite"]?.compactedSize, sqlite > 0
    {
        let ratio = Double(trove) / Double(sqlite)
        bars.append(
            Bar(
                workload: "W6 compacted file no larger than SQLite's", against: "absolute (size ratio)", threshold: 1,
                measured: ratio, met: ratio <= 1))
    }
    // "Persistable structs within 1.2× of classes": the class's rate over the struct's, from the
    // rounds in which they took turns (a STRUCT row's TroveClass), else from the plain row of the name.
    let structRows = [
        ("W1", "bulk insert, shape B"), ("W2", "one object per transaction: insert"), ("W3", "full scan, shape B"),
        ("W3", "fetch all into an array, shape B"),
    ]
    for (workload, title) in structRows {
        guard let structRow = rows.first(where: { $0.workload == "STRUCT" && $0.title == "Persistable struct: \(title)" })
        else { continue }
        let ratio: Double
        if let structOverClass = structRow.ratio("Trove", over: ClassTroveEngine.name), structOverClass > 0 {
            ratio = 1 / structOverClass
        } else if let classRow = rows.first(where: {
            $0.workload == workload && $0.title == title && $0.durability == Durability.full.rawValue
        }), let classRate = classRow.figures["Trove"]?.value, let structRate = structRow.figures["Trove"]?.value,
            structRate > 0
        {
            ratio = classRate / structRate
        } else {
            continue
        }
        bars.append(
            Bar(
                workload: "\(workload) \(title): Persistable struct within 1.2× of the class", against: "absolute (time ratio)",
                threshold: 1.2, measured: ratio, met: ratio <= 1.2))
    }
    return bars
}

func markdownTable(_ rows: [Row], bars: [Bar]) -> String {
    var lines = [
        "| # | workload | size | durability | unit | Trove | SQLite | LMDB | Trove/SQLite | Trove/LMDB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    func cell(_ figure: Figure?) -> String {
        guard let figure else { return "—" }
        var text = formatRate(figure.value)
        if let p99 = figure.p99 { text += String(format: " (p50 %.1f µs, p99 %.1f µs)", (figure.p50 ?? 0) * 1e6, p99 * 1e6) }
        return text
    }
    func ratio(_ row: Row, _ other: String) -> String {
        guard let value = row.ratio("Trove", over: other) else { return "—" }
        let bar = bars.first { $0.workload == "\(row.workload) \(row.title)" && $0.against == other }
        let mark = bar.map { $0.met ? " ✅ (≥ \($0.threshold)×)" : " ❌ (≥ \($0.threshold)×)" } ?? ""
        let spread = row.ratios?[other].map { $0.rounds > 1 ? String(format: " [%.2f–%.2f]", $0.low, $0.high) : "" } ?? ""
        return String(format: "%.2f×", value) + spread + mark
    }
    for row in rows {
        lines.append(
            "| \(row.workload) | \(row.title) | \(row.size) | \(row.durability) | \(row.unit) | \(cell(row.figures["Trove"])) | \(cell(row.figures["SQLite"])) | \(cell(row.figures["LMDB"])) | \(ratio(row, "SQLite")) | \(ratio(row, "LMDB")) |"
        )
    }
    var extras: [String] = []
    for row in rows {
        for (engine, figure) in row.figures.sorted(by: { $0.key > $1.key }) {
            var parts: [String] = []
            if let rss = figure.peakRSS { parts.append("peak RSS \(rss / (1 << 20)) MiB") }
            if let size = figure.fileSize { parts.append("file \(size / 1024) KiB") }
            if let compacted = figure.compactedSize { parts.append("compacted \(compacted / 1024) KiB") }
            if row.workload == "W8", let p50 = figure.p50 { parts.append(String(format: "%.2f ms", p50 * 1000)) }
            if let heap = figure.iterationHeapGrowth, let resident = figure.iterationResidentGrowth {
                parts.append(
                    "iterating every object: heap +\(heap / (1 << 20)) MiB, resident +\(resident / (1 << 20)) MiB (with mapped file pages)"
                )
            }
            if !parts.isEmpty { extras.append("- \(row.workload) \(row.title), \(engine): \(parts.joined(separator: ", "))") }
        }
        if let theClass = row.figures[ClassTroveEngine.name], let spread = row.ratios?[ClassTroveEngine.name] {
            extras.append(
                String(
                    format: "- %@ %@: the class %@ %@, the struct %.2f× of it [%.2f–%.2f]", row.workload, row.title,
                    formatRate(theClass.value), row.unit, spread.median, spread.low, spread.high))
        }
    }
    lines.append("")
    lines.append(
        "Speed ratios: above 1 means Trove is faster. The engines take turns in each round; a ratio is the median of the rounds' ratios, [lowest–highest] round beside it."
    )
    lines.append("")
    lines.append(contentsOf: extras)
    lines.append("")
    lines.append("Bars: \(bars.filter(\.met).count) of \(bars.count) met.")
    for bar in bars where !bar.met {
        // Speed bars need at least the threshold; absolute ones (milliseconds, a size ratio) at most.
        let need = bar.against.hasPrefix("absolute") ? "at most" : "at least"
        lines.append(
            String(
                format: "- not met: %@ vs %@: %.2f (needs %@ %.2f)", bar.workload, bar.against, bar.measured ?? 0, need,
                bar.threshold))
    }
    return lines.joined(separator: "\n")
}

struct Report: Codable {
    struct Machine: Codable {
        var cores: Int
        var memoryBytes: UInt64
        var system: String
    }
    var date: String
    var machine: Machine
    var toolchain: String
    var revision: String
    var options: String
    var rows: [Row]
    var bars: [Bar]
}

func shell(_ command: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try? process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A bar chart of the ratios (log scale), one group per bar, with the bar line drawn.
func svgChart(_ bars: [Bar]) -> String {
    let rowHeight = 26.0
    let left = 420.0
    let width = 900.0
    let plot = width - left - 40
    let height = Double(bars.count) * rowHeight + 70
    let maxRatio = max(100.0, (bars.compactMap(\.measured).max() ?? 1) * 1.2)
    let minRatio = 0.1
    func x(_ ratio: Double) -> Double {
        left + plot * (log10(max(ratio, minRatio)) - log10(minRatio)) / (log10(maxRatio) - log10(minRatio))
    }
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="10" y="20" font-size="15" font-weight="bold">Trove speed ratios (log scale; above 1 = Trove faster). Black line: the bar.</text>

        """
    for tick in [0.1, 0.5, 1, 2, 5, 10, 25, 100] where tick <= maxRatio {
        svg += "<line x1=\"\(x(tick))\" y1=\"35\" x2=\"\(x(tick))\" y2=\"\(height - 25)\" stroke=\"#ddd\"/>"
        svg += "<text x=\"\(x(tick))\" y=\"\(height - 10)\" text-anchor=\"middle\" fill=\"#555\">\(tick)×</text>\n"
    }
    for (index, bar) in bars.enumerated() {
        let y = 40 + Double(index) * rowHeight
        let ratio = bar.measured ?? 0
        let label = "\(bar.workload) vs \(bar.against)".replacingOccurrences(of: "&", with: "&amp;")
        svg += "<text x=\"\(left - 8)\" y=\"\(y + 14)\" text-anchor=\"end\">\(label)</text>"
        if bar.against.hasPrefix("absolute") {
            let figure =
                bar.against.contains("size")
                ? String(format: "%.2f× SQLite's size (bar: at most %.0f×)", ratio, bar.threshold)
                : bar.against.contains("MB")
                    ? String(format: "%.1f MB (bar: under %.0f MB)", ratio, bar.threshold)
                    : String(format: "%.2f ms (bar: under %.0f ms)", ratio, bar.threshold)
            svg += "<text x=\"\(left + 4)\" y=\"\(y + 14)\">\(figure) \(bar.met ? "met" : "not met")</text>\n"
            continue
        }
        svg +=
            "<rect x=\"\(x(minRatio))\" y=\"\(y + 3)\" width=\"\(max(1, x(ratio) - x(minRatio)))\" height=\"16\" fill=\"\(bar.met ? "#3a7" : "#d54")\"/>"
        svg +=
            "<line x1=\"\(x(bar.threshold))\" y1=\"\(y)\" x2=\"\(x(bar.threshold))\" y2=\"\(y + 22)\" stroke=\"black\" stroke-width=\"2\"/>"
        svg += "<text x=\"\(x(ratio) + 4)\" y=\"\(y + 15)\" fill=\"#222\">\(String(format: "%.2f×", ratio))</text>\n"
    }
    svg += "</svg>\n"
    return svg
}
