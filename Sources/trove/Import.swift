import Foundation
import Trove

/// `trove import`: objects from JSON, JSON lines or CSV in the form `trove
/// export` writes (``PortableText``), read and written a row at a time.
///
/// By default every row goes into one write transaction: if any row is bad,
/// nothing is written. With `--batch N`, every N rows are a transaction of
/// their own: the batches committed before a bad row stay, nothing from the
/// batch holding it on is written. With `--skip-bad`, bad rows are left out
/// and the rest is written. Either way the whole input is read, and every bad
/// row is reported with its line.
enum Import {
    static func run(_ arguments: Arguments) throws {
        try arguments.allow(options: ["--type", "--format", "--batch"], flags: ["--update", "--skip-bad"])
        guard arguments.positional.count == 2 else {
            throw UsageError("import takes FILE INPUT (INPUT may be - for standard input)")
        }
        let (path, inputPath) = (arguments.positional[0], arguments.positional[1])
        let format = (arguments.option("--format") ?? URL(fileURLWithPath: inputPath).pathExtension).lowercased()
        if format == "realm-studio" {
            for option in ["--type", "--batch"] where arguments.option(option) != nil {
                throw UsageError(
                    "\(option) does not go with --format realm-studio: an export of a whole Realm file is imported whole")
            }
            if arguments.flags.contains("--skip-bad") {
                throw UsageError(
                    "--skip-bad does not go with --format realm-studio: an export of a whole Realm file is imported whole")
            }
            return try RealmStudioImport.run(path: path, inputPath: inputPath, update: arguments.flags.contains("--update"))
        }
        guard ["json", "jsonl", "ndjson", "csv"].contains(format) else {
            throw UsageError("cannot tell the format of \(inputPath); add --format json, jsonl, csv or realm-studio")
        }
        guard let type = arguments.option("--type") else {
            throw UsageError("import needs --type T (or --format realm-studio for Realm Studio's JSON export of a whole file)")
        }
        var batchSize: Int?
        if let text = arguments.option("--batch") {
            guard let size = Int(text), size > 0 else { throw UsageError("--batch needs a number of rows above 0, not \(text)") }
            batchSize = size
        }
        let db = try Commands.open(path, readOnly: false)
        let importer = try ObjectImporter(database: db, typeName: type)
        let schemas = try db.storedSchemas()
        let text = PortableText(schemas: schemas)
        let layout = try text.layout(type)
        let input = try InputReader(path: inputPath)
        let session = Session(
            db: db, importer: importer, type: type, path: path, batchSize: batchSize,
            policy: arguments.flags.contains("--update") ? .modified : .error,
            skipBad: arguments.flags.contains("--skip-bad"), inputSize: input.size ?? 0,
            schema: schemas.first { $0.name == type })
        // Ctrl-C stops at the next row: what was committed is said, and how to
        // go on. (Unblocked: a process started from a thread that blocks it inherits the mask.)
        signal(SIGINT) { _ in Import.interrupted = true }
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, nil)
        do {
            try input.skipByteOrderMark()
            switch format {
            case "csv": try readCSV(input, layout: layout, text: text, session: session)
            case "json": try readJSON(input, type: type, layout: layout, text: text, session: session)
            default: try readJSONLines(input, layout: layout, text: text, session: session)
            }
            try session.finish()
        } catch let error as UnreadableInput {
            // Input that cannot be read on from this point: the import fails there, --skip-bad or not.
            session.bad(line: error.line, error.message, stopping: true)
            try session.finish()
        } catch let stop as Interrupted {
            session.stopInterrupted(at: stop.line)
        } catch {
            if db.isInWriteTransaction { db.cancelWrite() }
            throw error
        }
    }

    /// Set by the SIGINT handler: the import stops before its next row.
    nonisolated(unsafe) static var interrupted = false

    /// The import was interrupted before the row at `line`.
    struct Interrupted: Error {
        let line: Int
    }

    /// Input that cannot be read past `line` (broken JSON inside an array).
    struct UnreadableInput: Error {
        let line: Int
        let message: String
    }

    // MARK: Formats

    /// One JSON object per line; blank lines are skipped.
    static func readJSONLines(_ input: InputReader, layout: PortableText.Layout, text: PortableText, session: Session) throws {
        while true {
            var bytes = input.available
            var newline = bytes.baseAddress.flatMap { base in
                memchr(base, 0x0A, bytes.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
            }
            if newline == nil {
                if try input.fill() { continue }
                bytes = input.available  // the last line, without a line break
                newline = nil
            }
            let length = newline ?? bytes.count
            if length == 0, newline == nil { break }
            var lineBytes = UnsafeBufferPointer(rebasing: bytes[..<length])
            while let last = lineBytes.last, last == 0x0D || last == 0x20 || last == 0x09 {
                lineBytes = UnsafeBufferPointer(rebasing: lineBytes[..<(lineBytes.count - 1)])
            }
            let line = input.line
            if lineBytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) {
                try session.row(line: line, input: input) {
                    var parser = JSONParser(lineBytes, isComplete: true)
                    let json: JSONValue
                    do {
                        json = try parser.value()
                        try parser.expectEnd()
                    } catch let error as JSONError {
                        throw TroveError(.invalidValue, "not a JSON object (\(error.message), column \(error.offset + 1))")
                    }
                    return try text.values(fromJSON: json, layout)
                }
            }
            input.consume(newline.map { $0 + 1 } ?? length, lineBreaks: newline == nil ? 0 : 1)
            if newline == nil { break }
        }
    }

    /// An array of objects, or an export of several types (an object of
    /// arrays by type name), of which the array of `type` is read.
    static func readJSON(
        _ input: InputReader, type: String, layout: PortableText.Layout, text: PortableText, session: Session
    ) throws {
        switch try input.nextByte() {
        case UInt8(ascii: "["):
            try readElements(input) { line, json in
                try session.row(line: line, input: input) { try text.values(fromJSON: json, layout) }
            }
        case UInt8(ascii: "{"):
            input.consume(1)
            var names: [String] = []
            var found = false
            while try input.nextByte() == UInt8(ascii: "\"") {
                let line = input.line
                guard case .string(let name) = try readValue(input) else { break }
                names.append(name)
                guard try input.nextByte() == UInt8(ascii: ":") else {
                    throw UnreadableInput(line: line, message: "expected ':' after \"\(name)\"")
                }
                input.consume(1)
                guard try input.nextByte() == UInt8(ascii: "[") else {
                    throw UnreadableInput(line: input.line, message: "\"\(name)\" must hold an array of objects")
                }
                if name == type {
                    found = true
                    try readElements(input) { line, json in
                        try session.row(line: line, input: input) { try text.values(fromJSON: json, layout) }
                    }
                    break
                }
                try readElements(input) { _, _ in }
                guard try input.nextByte() == UInt8(ascii: ",") else { break }
                input.consume(1)
            }
            if !found {
                throw TroveError(
                    .invalidValue,
                    "the JSON input has no array of \(type) objects"
                        + (names.isEmpty ? "" : " (it has \(names.joined(separator: ", ")))"))
            }
        default:
            throw TroveError(
                .invalidValue,
                "the JSON input must be an array of \(type) objects (or an export of several types: an object of arrays by type name)"
            )
        }
    }

    /// The elements of the array that starts at the next byte, each with the line it starts on.
    private static func readElements(_ input: InputReader, _ body: (Int, JSONValue) throws -> Void) throws {
        input.consume(1)  // [
        if try input.nextByte() == UInt8(ascii: "]") {
            input.consume(1)
            return
        }
        while true {
            guard try input.nextByte() != nil else {
                throw UnreadableInput(line: input.line, message: "the input ends inside the array")
            }
            let line = input.line
            let value = try readValue(input)
            try body(line, value)
            switch try input.nextByte() {
            case UInt8(ascii: ","): input.consume(1)
            case UInt8(ascii: "]"):
                input.consume(1)
                return
            case let byte:
                throw UnreadableInput(
                    line: input.line,
                    message: byte == nil ? "the input ends inside the array" : "expected ',' or ']' after an element of the array"
                )
            }
        }
    }

    /// The JSON value at the next byte, reading more input until it is whole.
    private static func readValue(_ input: InputReader) throws -> JSONValue {
        while true {
            var parser = JSONParser(input.available, isComplete: input.isAtEnd)
            do {
                let value = try parser.value()
                input.consume(parser.position)
                return value
            } catch let error as JSONError where error.offset < 0 {
                guard try input.fill() else { continue }  // ended: parsed again as complete input
            } catch let error as JSONError {
                let before = input.available.prefix(error.offset).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                throw UnreadableInput(line: input.line + before, message: "not valid JSON: \(error.message)")
            }
        }
    }

    /// A header naming properties, then one object per record.
    static func readCSV(_ input: InputReader, layout: PortableText.Layout, text: PortableText, session: Session) throws {
        func nextRecord() throws -> CSV.Record? {
            while true {
                if let record = CSV.record(in: input.available, isComplete: input.isAtEnd) { return record }
                guard try input.fill() else {
                    return CSV.record(in: input.available, isComplete: true)
                }
            }
        }
        guard let header = try nextRecord() else { return }
        let headerLine = input.line
        input.consume(header.length, lineBreaks: header.lineBreaks)
        if let column = header.invalidUTF8Field {
            throw TroveError(.invalidValue, "the CSV header (line \(headerLine)) is not valid UTF-8 in column \(column)")
        }
        var columns: [String: Int] = [:]
        for (index, name) in header.fields.enumerated() {
            if let first = columns.updateValue(index + 1, forKey: name.text) {
                throw TroveError(
                    .invalidProperty,
                    "the CSV header (line \(headerLine)) names '\(name.text)' twice, in columns \(first) and \(index + 1)")
            }
        }
        let fields = try header.fields.map { name -> PortableText.Field? in
            if let index = layout.fieldsByName[name.text] { return layout.fields[index] }
            if layout.computed.contains(name.text) { return nil }
            throw TroveError(
                .invalidProperty, "the CSV header names '\(name.text)', which \(layout.schema.name) does not have")
        }
        while let record = try nextRecord() {
            let line = input.line
            input.consume(record.length, lineBreaks: record.lineBreaks)
            if record.isBlank { continue }
            try session.row(line: line, input: input) {
                if let column = record.invalidUTF8Field {
                    throw TroveError(.invalidValue, "field \(column) is not valid UTF-8")
                }
                guard record.fields.count == fields.count else {
                    throw TroveError(.invalidValue, "\(record.fields.count) fields, the header has \(fields.count)")
                }
                return try text.values(fromCSV: record.fields, fields: fields, layout)
            }
        }
    }

    // MARK: Writing

    /// Rows on their way into the file: transactions, bad rows, the report.
    final class Session {
        let db: Database
        let importer: ObjectImporter
        let type: String
        let path: String
        let batchSize: Int?
        let policy: UpdatePolicy
        let skipBad: Bool
        var progress: Progress
        /// Rows read, good and bad.
        private var rows = 0
        /// Objects written by committed transactions.
        private var written = 0
        /// Objects written by the open transaction.
        private var inTransaction = 0
        private var batches = 0
        private var batchStartLine = 1
        private var badRows = 0
        /// After a bad row (without `--skip-bad`) nothing more is written; the rest is only checked.
        private var failed = false
        /// With `--batch`: the first line of the batch that was not committed.
        private var uncommittedFrom: Int?
        /// Where the input stopped making sense (nothing after it was read).
        private var unreadableFrom: Int?
        private static let reportedRows = 100

        /// The type's stored schema (for what rows leave out).
        let schema: ObjectSchema?
        /// Per property: the rows written without a value for it.
        private var leftOut: [Int: Int] = [:]

        init(
            db: Database, importer: ObjectImporter, type: String, path: String, batchSize: Int?, policy: UpdatePolicy,
            skipBad: Bool, inputSize: Int, schema: ObjectSchema?
        ) {
            self.db = db
            self.importer = importer
            self.type = type
            self.path = path
            self.batchSize = batchSize
            self.policy = policy
            self.skipBad = skipBad
            self.schema = schema
            progress = Progress("importing \(type):", total: inputSize)
        }

        /// One row: `values` reads it (throwing `TroveError` for a bad one).
        func row(line: Int, input: InputReader, _ values: () throws -> [PortableValue?]) throws {
            if Import.interrupted { throw Interrupted(line: line) }
            rows += 1
            progress.update(rows: rows, bytes: input.consumed)
            let objectValues: [PortableValue?]
            do {
                objectValues = try values()
            } catch let error as TroveError {
                return bad(line: line, error.message)
            }

            if failed {
                do {
                    try importer.check(objectValues)
                } catch let error as TroveError {
                    bad(line: line, error.message)
                }
                return
            }
            if !db.isInWriteTransaction {
                try db.beginWrite()
                batchStartLine = line
            }
            do {
                try importer.add(objectValues, update: policy, line: line)
                inTransaction += 1
                noteLeftOut(objectValues)
            } catch let error as TroveError where Session.rowFailures.contains(error.kind) {
                bad(
                    line: line,
                    error.kind == .primaryKeyExists
                        ? "a \(type) with this primary key is already stored (add --update to overwrite it)" : error.message)
                return
            }
            if let batchSize, inTransaction == batchSize { try commit() }
        }

        /// Counts the Date properties a row written gave no value.
        private func noteLeftOut(_ values: [PortableValue?]) {
            guard let schema else { return }
            for (column, property) in schema.properties.enumerated()
            where property.type == .date && property.collection == nil && (column >= values.count || values[column] == nil) {
                leftOut[column, default: 0] += 1
            }
        }

        /// Kinds of failure that make one row bad (others stop the import).
        private static let rowFailures: Set<TroveError.Kind> = [
            .invalidValue, .invalidProperty, .invalidPrimaryKey, .primaryKeyExists, .invalidObject,
        ]

        /// Reports a bad row; without `--skip-bad` (or `stopping`: input that
        /// cannot be read on), the open transaction is dropped and nothing more is written.
        func bad(line: Int, _ reason: String, stopping: Bool = false) {
            badRows += 1
            if badRows <= Session.reportedRows || stopping {
                progress.clear()
                let skipped = skipBad && !stopping ? "skipped " : ""
                FileHandle.standardError.write(Data("\(skipped)line \(line): \(reason)\n".utf8))
            }
            if stopping { unreadableFrom = line }
            guard !skipBad || stopping, !failed else { return }
            failed = true
            let open = db.isInWriteTransaction
            if open {
                db.cancelWrite()
                importer.discardPendingLinks()
            }
            if batches > 0 { uncommittedFrom = open ? batchStartLine : line }
            inTransaction = 0
        }

        /// Makes the links to objects imported later, then commits.
        private func commit() throws {
            let failures = try importer.resolvePendingLinks(removingUnresolved: skipBad)
            for failure in failures { bad(line: failure.line, failure.error.message) }
            guard db.isInWriteTransaction else { return }  // a failure dropped it
            try db.commitWrite()
            written += inTransaction - Set(failures.map(\.line)).count
            inTransaction = 0
            batches += 1
        }

        /// Commits what is open and reports; exits 1 when bad rows stopped the import.
        func finish() throws {
            if db.isInWriteTransaction { try commit() }
            progress.finish()
            if badRows > Session.reportedRows {
                FileHandle.standardError.write(Data("… and \(badRows - Session.reportedRows) more bad rows\n".utf8))
            }
            let rowsText = "\(badRows) bad row\(badRows == 1 ? "" : "s")"
            if failed {
                let kept =
                    uncommittedFrom.map {
                        "the \(Commands.count(written, "\(type) object")) of the \(batches) batch\(batches == 1 ? "" : "es") before line \($0) were committed and stay; nothing from line \($0) on was written to \(path)"
                    } ?? "nothing was written to \(path)"
                let advice =
                    unreadableFrom.map { "the input cannot be read past line \($0): mend it and import again" }
                    ?? "use --skip-bad to import the rest"
                let again =
                    uncommittedFrom == nil
                    ? ""
                    : "; to import again from the start, add --update: the rows committed are written again with the same values"
                FileHandle.standardError.write(Data("trove: \(rowsText); \(kept) (\(advice)\(again))\n".utf8))
                exit(1)
            }
            print(
                "imported \(Commands.count(written, "\(type) object")) into \(path)"
                    + (badRows == 0 ? "" : "; skipped \(rowsText)")
                    + (batchSize == nil ? "" : " in \(Commands.count(batches, "transaction"))"))
            noteLeftOutDates()
        }

        /// Says which Date properties rows left out: each such object took the
        /// property's stored default, one and the same moment for all of them
        /// (the tool has no model code to run a `Date()` default per object).
        private func noteLeftOutDates() {
            guard let schema, written > 0 else { return }
            for (column, count) in leftOut.sorted(by: { $0.key < $1.key }) {
                let property = schema.properties[column]
                let stored = property.defaultValue ?? (property.isOptional ? nil : .date(Date(timeIntervalSinceReferenceDate: 0)))
                let value: String
                switch stored {
                case .date(let date)?: value = DateText.format(date) ?? "\(date)"
                default: value = "nil"
                }
                let rowCount = count == 1 ? "1 row" : "\(count) rows"
                print(
                    "note: \(rowCount) had no \(property.name): \(count == 1 ? "it" : "each") got \(value); give the column a value per row to set it"
                )
            }
        }

        /// Stops after Ctrl-C: the open transaction is dropped; what earlier batches committed stays, and is said.
        func stopInterrupted(at line: Int) {
            if db.isInWriteTransaction {
                db.cancelWrite()
                importer.discardPendingLinks()
            }
            progress.clear()
            let kept =
                batches == 0
                ? "nothing was written to \(path)"
                : "the \(Commands.count(written, "\(type) object")) of the \(batches) batch\(batches == 1 ? "" : "es") before line \(batchStartLine) were committed and stay; nothing from line \(batchStartLine) on was written to \(path). To go on, import again with --update (the committed rows are written again with the same values)"
            FileHandle.standardError.write(Data("trove: interrupted at line \(line); \(kept)\n".utf8))
            exit(130)
        }
    }
}
