import Foundation
import Trove

/// `trove export`: every object of one type (or of every type), written as
/// it is read from one snapshot, through a 64 KB buffer: memory stays flat
/// however big the file. The format is ``PortableText``'s, which `trove
/// import` reads back.
enum Export {
    static func run(_ arguments: Arguments) throws {
        try arguments.allow(options: ["--type", "--format", "-o", "--output"])
        guard arguments.positional.count == 1 else { throw UsageError("export takes one FILE") }
        guard let format = arguments.option("--format") else { throw UsageError("export needs --format json, jsonl or csv") }
        guard ["json", "jsonl", "csv"].contains(format) else {
            throw UsageError("unknown format \(format); use json, jsonl or csv")
        }
        let db = try Commands.open(arguments.positional[0])
        let schemas = try db.storedSchemas()
        // Embedded objects are written inside the objects that hold them.
        let embedded = Set(
            schemas.flatMap(\.properties).filter { $0.ownsTargets == true }.compactMap(\.objectType))
        let names = arguments.option("--type").map { [$0] } ?? schemas.map(\.name).filter { !embedded.contains($0) }
        // JSON lines of several types could not be told apart when read back: one type per file, as in CSV.
        if format != "json", names.count != 1 {
            throw UsageError(
                "\(format == "csv" ? "CSV" : "JSON lines") hold one type: add --type T (or --format json for every type, which import reads by type)"
            )
        }
        let text = PortableText(schemas: schemas)
        let out: OutputBuffer
        var descriptor: Int32?
        if let path = arguments.option("-o", "--output") {
            let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard opened >= 0 else {
                throw TroveError(.fileAccess, "cannot write \(path): \(String(cString: strerror(errno)))", path: path)
            }
            descriptor = opened
            out = OutputBuffer(descriptor: opened, name: path)
        } else {
            fflush(nil)  // what print() holds goes first
            out = OutputBuffer(descriptor: STDOUT_FILENO)
        }
        defer { if let descriptor { close(descriptor) } }
        // Several types in JSON: one object of arrays by type name.
        let several = format == "json" && names.count > 1
        var skipped = 0
        if several { out.append(UInt8(ascii: "{")) }
        for (index, name) in names.enumerated() {
            if several {
                out.append(index > 0 ? ",\n" : "\n")
                out.appendJSONString(name)
                out.append(": ")
            }
            skipped += try export(name, from: db, format: format, text: text, to: out)
            if format == "json" { out.append(several ? "" : "\n") }
        }
        if several { out.append("\n}\n") }
        try out.finish()
        if skipped > 0 {
            FileHandle.standardError.write(
                Data(
                    "trove: \(skipped) damaged object\(skipped == 1 ? " was" : "s were") left out; `trove verify` lists the damage\n"
                        .utf8))
            exit(1)
        }
    }

    /// The objects of one type: a JSON array, JSON lines, or a CSV header and
    /// records. Damaged objects are left out, each told on standard error (or
    /// to `skipped`); returns how many.
    @discardableResult
    static func export(
        _ name: String, from db: Database, format: String, text: PortableText, to out: OutputBuffer, showsProgress: Bool = true,
        skipped: @escaping (String) -> Void = { FileHandle.standardError.write(Data("trove: skipped \($0)\n".utf8)) }
    ) throws -> Int {
        let exporter = try ObjectExporter(database: db, typeName: name)
        var count = 0
        exporter.skipped = { type, detail in
            count += 1
            skipped("\(type) \(detail)")
        }
        let layout = try text.layout(name)
        var progress = Progress("exporting \(name):", total: try exporter.count, shown: showsProgress)
        defer { progress.finish() }
        var done = 0
        text.writeStart(format, layout, to: out)
        try exporter.forEach { values in
            text.writeRow(values, layout, format: format, isFirst: done == 0, to: out)
            done += 1
            progress.update(done)
            if let failure = out.failure { throw failure }  // a full disk or a closed pipe: stop reading
        }
        if format == "json" { out.append(done == 0 ? "]" : "\n]") }
        return count
    }
}
