import Foundation
import Trove

/// `trove shell FILE`: queries as `Type` or `Type where PREDICATE`, dot
/// commands for the rest. Prompts only on a terminal, so it reads a pipe too.
enum Shell {
    static let help = """
        Type                         every object of Type
        Type where PREDICATE         the objects matching PREDICATE (Realm query syntax)
        .types                       the stored types and their counts
        .schema [Type]               the stored schema
        .format table|json|jsonl|csv how results are shown (now: table)
        .history                     what you typed in this session; !N runs line N again
        .help                        this text
        .quit                        leave (or end of input)
        """

    static func run(_ arguments: Arguments) throws {
        try arguments.allow()
        guard arguments.positional.count == 1 else { throw UsageError("shell takes one FILE") }
        let db = try Commands.open(arguments.positional[0])
        let interactive = isatty(STDIN_FILENO) != 0
        var format = "table"
        var history: [String] = []
        if interactive { emit("trove shell on \(arguments.positional[0]); .help for help, .quit to leave") }
        while true {
            if interactive {
                FileHandle.standardOutput.write(Data("trove> ".utf8))
            }
            guard var line = readLine()?.trimmingCharacters(in: .whitespaces) else { break }
            if line.isEmpty { continue }
            if line.hasPrefix("!"), let number = Int(line.dropFirst()), history.indices.contains(number - 1) {
                line = history[number - 1]
                emit(line)
            }
            history.append(line)
            do {
                switch line.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "" {
                case ".quit", ".exit": return
                case ".help": emit(help)
                case ".history":
                    for (index, entry) in history.enumerated() { emit("\(index + 1)  \(entry)") }
                case ".types":
                    for schema in try db.storedSchemas() {
                        emit("\(schema.name): \(Commands.count(try db.dynamicObjects(schema.name).count, "object"))")
                    }
                case ".schema":
                    let name = line.split(separator: " ").dropFirst().first.map(String.init)
                    for schema in try db.storedSchemas() where name == nil || schema.name == name {
                        for line in Commands.describe(schema) { emit(line) }
                    }
                case ".format":
                    let value = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                    guard ["table", "json", "jsonl", "csv"].contains(value) else {
                        throw UsageError(".format takes table, json, jsonl or csv")
                    }
                    format = value
                default:
                    if line.hasPrefix(".") { throw UsageError("unknown command \(line); .help lists them") }
                    try query(line, db: db, format: format)
                }
            } catch let error as UsageError {
                FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            } catch let error as TroveError {
                FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            }
        }
    }

    private static func query(_ line: String, db: Database, format: String) throws {
        let parts = line.components(separatedBy: " where ")
        let type = parts[0].trimmingCharacters(in: .whitespaces)
        let damage = DamageCache(db)
        let damaged = try damage(type)
        for description in damaged.descriptions { emit("skipped \(type) \(description)") }
        try Commands.refuseLinkedDamage(
            db, type: type, damaged: { try damage($0) },
            query: [parts.count > 1 ? parts.dropFirst().joined(separator: " where ") : nil])
        var results = try db.dynamicObjects(type).excluding(damaged)
        if parts.count > 1 { results = try results.filter(parts.dropFirst().joined(separator: " where ")) }
        var (rows, _) = try Commands.checkedRows(of: results, type: type, in: db)
        if format == "table" { rows = try rows.map { try Commands.readable($0, in: db, damaged: damage) } }
        try Commands.write(rows, schema: results.objectSchema, format: format, to: FileHandle.standardOutput, db: db)
    }

    /// Writes a line straight to standard output, in order with query results.
    private static func emit(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
