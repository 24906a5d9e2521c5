import Foundation
import Trove

/// `trove import`: rows from JSON, JSON lines or CSV, checked first, written
/// in one transaction; nothing is written if any row is bad, unless `--skip-bad`.
enum Import {
    struct Row {
        let line: Int
        let values: [String: StoredValue]
    }

    struct BadRow: Error {
        let line: Int
        let reason: String
    }

    static func run(_ arguments: Arguments) throws {
        try arguments.allow(options: ["--type", "--format"], flags: ["--update", "--skip-bad"])
        guard arguments.positional.count == 2 else {
            throw UsageError("import takes FILE INPUT (INPUT may be - for standard input)")
        }
        guard let type = arguments.option("--type") else { throw UsageError("import needs --type T") }
        let (path, input) = (arguments.positional[0], arguments.positional[1])
        let data: Data
        if input == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: input) else {
                throw TroveError(.fileAccess, "cannot read \(input)")
            }
            data = contents
        }
        let format = arguments.option("--format") ?? URL(fileURLWithPath: input).pathExtension.lowercased()
        let db = try Commands.open(path, readOnly: false)
        let schema = try db.dynamicObjects(type).objectSchema
        var bad: [BadRow] = []
        let rows: [Row]
        switch format {
        case "json": rows = try parseJSONArray(data, schema: schema, bad: &bad)
        case "jsonl", "ndjson": rows = parseJSONLines(data, schema: schema, bad: &bad)
        case "csv": rows = try parseCSV(data, schema: schema, bad: &bad)
        default: throw UsageError("cannot tell the format of \(input); add --format json, jsonl or csv")
        }
        let skipBad = arguments.flags.contains("--skip-bad")
        let policy: UpdatePolicy = arguments.flags.contains("--update") ? .modified : .error
        if !bad.isEmpty && !skipBad { return report(bad, written: 0, path: path) }
        var written = 0
        var progress = Progress("imported", total: rows.count)
        defer { progress.finish() }
        try db.write {
            for row in rows {
                do {
                    try db.add(row.values, ofType: type, update: policy)
                    written += 1
                    progress.update(written)
                } catch let error as TroveError where error.kind == .primaryKeyExists {
                    bad.append(
                        BadRow(
                            line: row.line,
                            reason: "a \(type) with this primary key is already stored (add --update to overwrite it)"))
                } catch let error as TroveError where error.kind == .invalidValue || error.kind == .invalidPrimaryKey {
                    bad.append(BadRow(line: row.line, reason: error.message))
                }
            }
            if !bad.isEmpty && !skipBad {
                written = 0
                db.cancelWrite()
            }
        }
        if !bad.isEmpty && !skipBad { return report(bad, written: 0, path: path) }
        print(
            "imported \(written) \(type) object\(written == 1 ? "" : "s") into \(path)"
                + (bad.isEmpty ? "" : "; skipped \(bad.count) bad row(s)"))
        for row in bad { FileHandle.standardError.write(Data("skipped line \(row.line): \(row.reason)\n".utf8)) }
    }

    private static func report(_ bad: [BadRow], written: Int, path: String) {
        for row in bad.sorted(by: { $0.line < $1.line }) {
            FileHandle.standardError.write(Data("line \(row.line): \(row.reason)\n".utf8))
        }
        FileHandle.standardError.write(
            Data("trove: \(bad.count) bad row(s); nothing was written to \(path) (use --skip-bad to import the rest)\n".utf8))
        exit(1)
    }

    // MARK: Formats

    static func parseJSONArray(_ data: Data, schema: ObjectSchema, bad: inout [BadRow]) throws -> [Row] {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw TroveError(.invalidValue, "the input is not valid JSON: \(error.localizedDescription)")
        }
        guard let array = parsed as? [Any] else { throw TroveError(.invalidValue, "the JSON input must be an array of objects") }
        // Rows are numbered by their position in the array, starting at 1.
        return array.enumerated().compactMap { index, element in
            row(from: element, line: index + 1, schema: schema, bad: &bad)
        }
    }

    static func parseJSONLines(_ data: Data, schema: ObjectSchema, bad: inout [BadRow]) -> [Row] {
        let text = String(decoding: data, as: UTF8.self)
        var rows: [Row] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let element = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) else {
                bad.append(BadRow(line: index + 1, reason: "not a JSON object"))
                continue
            }
            if let row = row(from: element, line: index + 1, schema: schema, bad: &bad) { rows.append(row) }
        }
        return rows
    }

    private static func row(from element: Any, line: Int, schema: ObjectSchema, bad: inout [BadRow]) -> Row? {
        guard let object = element as? [String: Any] else {
            bad.append(BadRow(line: line, reason: "not a JSON object"))
            return nil
        }
        var values: [String: StoredValue] = [:]
        for (name, raw) in object {
            guard let property = schema[name] else {
                bad.append(BadRow(line: line, reason: "\(schema.name) has no property named '\(name)'"))
                return nil
            }
            do {
                values[name] = try value(raw, as: property)
            } catch let error as TroveError {
                bad.append(BadRow(line: line, reason: error.message))
                return nil
            } catch {
                bad.append(BadRow(line: line, reason: "\(error)"))
                return nil
            }
        }
        return Row(line: line, values: values)
    }

    /// A JSON value read as the property's type.
    static func value(_ raw: Any, as property: PropertySchema) throws -> StoredValue {
        if raw is NSNull {
            guard property.isOptional else {
                throw TroveError(.invalidValue, "\(property.name) is \(property.typeDescription) and cannot be null")
            }
            return .null
        }
        if let text = raw as? String { return try Formatting.parse(text, as: property) }
        if let number = raw as? NSNumber {
            let isBool = String(cString: number.objCType) == "c"  // how JSON booleans arrive, on every platform
            switch property.type {
            case .bool:
                guard isBool else { break }
                return .bool(number.boolValue)
            case .int, .int8, .int16, .int32:
                guard !isBool, let exact = Int64(exactly: number.doubleValue) else { break }
                return .int(exact)
            case .float: if !isBool { return .float(number.floatValue) }
            case .double: if !isBool { return .double(number.doubleValue) }
            case .decimal: if !isBool { return .decimal(number.decimalValue) }
            case .decimal128:
                if !isBool, let value = try? Decimal128(string: number.stringValue) { return .decimal128(value) }
            case .date: if !isBool { return .date(Date(timeIntervalSince1970: number.doubleValue)) }
            default: break
            }
        }
        throw TroveError(.invalidValue, "\(raw) is not a value of type \(property.typeDescription) (property \(property.name))")
    }

    static func parseCSV(_ data: Data, schema: ObjectSchema, bad: inout [BadRow]) throws -> [Row] {
        let records = CSV.parse(String(decoding: data, as: UTF8.self))
        guard let header = records.first else { return [] }
        let properties = try header.fields.map { name -> PropertySchema in
            guard let property = schema[name] else {
                throw TroveError(.invalidProperty, "the CSV header names '\(name)', which \(schema.name) does not have")
            }
            return property
        }
        var rows: [Row] = []
        for record in records.dropFirst() {
            guard record.fields.count == properties.count else {
                bad.append(BadRow(line: record.line, reason: "\(record.fields.count) fields, the header has \(properties.count)"))
                continue
            }
            var values: [String: StoredValue] = [:]
            var failed = false
            for (property, text) in zip(properties, record.fields) {
                if text.isEmpty, property.isOptional {
                    values[property.name] = .null
                    continue
                }
                do {
                    values[property.name] = try Formatting.parse(text, as: property)
                } catch let error as TroveError {
                    bad.append(BadRow(line: record.line, reason: error.message))
                    failed = true
                    break
                }
            }
            if !failed { rows.append(Row(line: record.line, values: values)) }
        }
        return rows
    }
}

/// RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks.
enum CSV {
    struct Record {
        let line: Int
        let fields: [String]
    }

    static func parse(_ text: String) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var recordLine = 1
        var iterator = Array(text).makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let character = pending {
                pending = nil
                return character
            }
            return iterator.next()
        }
        while let character = next() {
            if quoted {
                if character == "\"" {
                    if let following = next() {
                        if following == "\"" { field.append("\"") } else { quoted = false; pending = following }
                    } else {
                        quoted = false
                    }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"": quoted = true
            case ",":
                fields.append(field)
                field = ""
            case "\n", "\r\n", "\r":
                fields.append(field)
                if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(line: recordLine, fields: fields)) }
                fields = []
                field = ""
                line += 1
                recordLine = line
            default: field.append(character)
            }
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(field)
            records.append(Record(line: recordLine, fields: fields))
        }
        return records
    }
}
