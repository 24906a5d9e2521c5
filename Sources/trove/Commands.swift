import Foundation
import Trove

/// The `trove` subcommands. Each returns its exit code; failures throw.
enum Commands {
    static let version = "trove 0.1.0 (reads and writes file formats up to \(Database.newestFileFormatVersion))"

    static let usage = """
        usage: trove <command> FILE [arguments]

        Browse and export any Trove database, without the app's model code.

        commands:
          info FILE                      format, versions, sizes, objects per type, indexes, readers
          schema FILE [--swift]          the stored schema; --swift prints matching model classes
          query FILE TYPE [PREDICATE]    objects of TYPE matching a Realm-style predicate
                [--sort KEY[:desc]] [--limit N] [--format table|json|jsonl|csv]
          export FILE [--type T] --format json|jsonl|csv [-o OUT]
                                         every object, written as it is read (the form import reads)
          set FILE TYPE PRIMARYKEY PROPERTY VALUE
                                         change one property of one object (VALUE nil for optionals)
          delete FILE TYPE PREDICATE [--yes]
                                         delete the matching objects (asks first on a terminal)
          verify FILE                    check every record and index; exit code 1 on any problem
          import FILE --type T INPUT [--update] [--skip-bad] [--batch N] [--format json|jsonl|csv]
                                         what export writes, in one transaction: nothing written if any
                                         row is bad (--batch N: a transaction per N rows)
          import FILE INPUT --format realm-studio [--update]
                                         a whole Realm file as Realm Studio saves it as JSON
          shell FILE                     an interactive prompt: `Type where PREDICATE`, .help, .types, .schema
          copy FILE DEST [--decrypt]     a consistent, compacted copy; with TROVE_NEW_ENCRYPTION_KEY set,
                                         encrypted (or re-keyed) with that key; --decrypt: a plain copy
          compact FILE                   rewrite FILE without its free pages, keeping its permissions
                                         (refused, exit 1, while another process has FILE open)
          convert FILE                   store every type in column clusters (fast filters, counts, sums
                                         and bulk updates), one transaction per type, with a progress bar;
                                         an encrypted file from before key tokens gets them (file format 5)
          studio FILE [--port N] [--read-only]
                                         browse, query and edit FILE in a web browser (127.0.0.1 only)
          sync setup|grant|revoke [URL]  set up a PostgreSQL as a sync server, give devices tokens
          sync FILE --space S            sync FILE with a space once; sync status FILE: where it stands

        options: --help (on every command), --version, --json (machine-readable info/schema),
                 --trust (skip checking every page of FILE before use: for big files you know are sound)
        encrypted files: set TROVE_ENCRYPTION_KEY to the 64-byte key as 128 hex digits
                         (an environment variable, so the key never shows in the process list)
        exit codes: 0 ok, 1 failure, 2 usage

        example: trove query photos.trove PhotoData "date == '2024-05-01'" --sort dateAdded:desc --limit 5
        """

    static let help: [String: String] = [
        "sync": SyncCommands.help,
        "info": "usage: trove info FILE [--json]\nexample: trove info .trove-demo/photos.trove",
        "schema": "usage: trove schema FILE [--swift] [--json]\nexample: trove schema .trove-demo/photos.trove --swift",
        "query":
            "usage: trove query FILE TYPE [PREDICATE] [--sort KEY[:desc]] [--limit N] [--format table|json|jsonl|csv]\nexample: trove query .trove-demo/inventory.trove Person \"age > 20\" --sort age:desc",
        "export": """
        usage: trove export FILE [--type T] --format json|jsonl|csv [-o OUT]
        Writes every object of T as it reads it, from one snapshot (without --type: every type but
        embedded ones, which are written inside their owners; in JSON an object of arrays by type name).
          lists and sets are JSON arrays, maps JSON objects, embedded objects nested objects;
          a link is the linked object's primary key (its object key when its type has none: that
          names the same object only in this file and its copies); linking objects are left out;
          dates are ISO 8601 in UTC (exact to the nanosecond), data base64, UUIDs, ObjectIds and
          Decimal128s strings; a mixed value JSON has no type for is tagged: {"$date": "…"},
          {"$data": "…"}, {"$uuid": "…"}, {"$oid": "…"}, {"$decimal128": "…"}, {"$decimal": "…"},
          {"$float": 1.5}, {"$double": "inf"}, a link {"$link": "Type", "key": primary key}.
          CSV: a cell of a list, set, map, embedded object or mixed value holds its JSON text;
          an empty unquoted cell is null (an empty collection), an empty string is written "".
        example: trove export .trove-demo/photos.trove --type PhotoData --format csv -o photos.csv
        """,
        "copy":
            "usage: trove copy FILE DEST [--decrypt]   (TROVE_NEW_ENCRYPTION_KEY=<128 hex digits> encrypts the copy)\nexample: TROVE_NEW_ENCRYPTION_KEY=$(cat key.hex) trove copy photos.trove sealed.trove",
        "shell":
            "usage: trove shell FILE\nexample: echo \"PhotoData where mood == 'happy'\" | trove shell .trove-demo/photos.trove",
        "verify": "usage: trove verify FILE [--json]\nexample: trove verify photos.trove",
        "import": """
        usage: trove import FILE --type T INPUT [--update] [--skip-bad] [--batch N] [--format json|jsonl|csv]
        Reads objects of T in the form trove export writes (see trove export --help), a row at a time;
        INPUT - is standard input (give --format). A JSON file may be a several-type export: its
        array of T is read. Import the types T links to first; a link to an object of T that a later
        row holds is made when the transaction commits. Properties a row leaves out take their defaults.
          By default every row goes into one transaction: if any row is bad, nothing is written, and
          every bad row is reported with its line and property. That transaction keeps what it writes
          in memory until it commits (about twice the data): for big inputs, use --batch N.
          --batch N   commit every N rows; on a bad row, the batches before it stay and nothing from
                      its batch on is written (a link must point at an object of its batch or before)
          --skip-bad  write the good rows, report the bad ones (exit 0)
          --update    replace a stored object with the same primary key (collections included)
        example: trove import .trove-demo/inventory.trove --type Person people.csv --update

        usage: trove import FILE INPUT --format realm-studio [--update]
        Reads a whole Realm file as Realm Studio saves it (File > Save Data > JSON): every type's
        objects, with their links (cycles too), lists, sets, maps and embedded objects, into FILE,
        made by the app whose models declare the same types. One transaction: if any object is bad,
        nothing is written, and every bad object is reported by type, index and property. Studio
        writes binary data as {} (its bytes are not in the export): such values are stored as no
        data, and said. See the guide "Moving your data from Realm".
          --update    replace a stored object with the same primary key
        example: trove import app.trove realm-export.json --format realm-studio
        """,
        "set":
            "usage: trove set FILE TYPE PRIMARYKEY PROPERTY VALUE\nexample: trove set .trove-demo/inventory.trove Person 2 age 38",
        "delete":
            "usage: trove delete FILE TYPE PREDICATE [--yes]\nexample: trove delete .trove-demo/photos.trove PhotoData \"date < '2024-05-02'\" --yes",
        "studio": """
        usage: trove studio FILE [--port N] [--read-only]
        Serves Trove Studio on 127.0.0.1 (port 8723, or N; 0 takes any free port) and prints its
        address, with the token every request needs; Ctrl-C stops it. The page shows the types, a
        grid of objects with Realm queries, sorting, links, edits, a schema diagram and charts, and
        follows commits from any process. --read-only opens FILE read-only.
        The JSON API it serves is described in Sources/trove/Studio/Assets/openapi.json.
        example: trove studio .trove-demo/photos.trove
        """,
        "convert":
            "usage: trove convert FILE   (every type in column clusters; a type already there is left alone;\n       an interrupted conversion leaves the type as it was;\n       an encrypted file whose keys still hold values and names gets tokens in their place)\nexample: trove convert photos.trove",
        "compact":
            "usage: trove compact FILE   (refused while another process, an app or its extension, has FILE open:\n       its later commits would go to the replaced file)\nexample: trove compact photos.trove",
    ]

    /// Whether files are page-checked before use (`--trust` turns it off):
    /// the tool opens files from anywhere, and LMDB trusts what it reads.
    nonisolated(unsafe) static var checksEveryPage = true

    static func open(_ path: String, readOnly: Bool = true) throws -> Database {
        try requireDatabaseFile(path)
        var configuration = Configuration(fileURL: URL(fileURLWithPath: path))
        configuration.readOnly = readOnly
        configuration.checksEveryPageOnOpen = checksEveryPage
        configuration.acceptsAnySchemaVersion = true  // the tool has no model: it reads the file as it is
        configuration.encryptionKey = try encryptionKey()
        do {
            return try Database(configuration: configuration)
        } catch let error as TroveError where error.kind == .wrongEncryptionKey {
            throw TroveError(
                .wrongEncryptionKey,
                error.message
                    + (configuration.encryptionKey == nil
                        ? "; set TROVE_ENCRYPTION_KEY to its key (128 hex digits)"
                        : " (the key came from TROVE_ENCRYPTION_KEY)"),
                path: path)
        }
    }

    /// The tool works on databases that exist: an empty file is a failed
    /// copy or a full disk, never a new database to start.
    static func requireDatabaseFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TroveError(
                .fileAccess,
                "\(path) does not exist: trove works on databases your app made (its model types give the schema); run the app once to create the file, then use trove on it",
                path: path)
        }
        if info.st_size == 0 {
            throw TroveError(
                .corruptFile,
                "\(path) is empty (0 bytes), not a Trove database: a failed copy or a full disk leaves such files; restore it from a copy",
                path: path)
        }
    }

    /// The key in an environment variable (128 hex digits), or nil when it is not set.
    /// A bad key is reported by its variable and the position of the first
    /// character that is not a hex digit, never by its contents.
    static func encryptionKey(variable: String = "TROVE_ENCRYPTION_KEY") throws -> Data? {
        guard let hex = ProcessInfo.processInfo.environment[variable], !hex.isEmpty else { return nil }
        let digits = Array(hex.utf8)
        guard digits.count == 128 else {
            throw UsageError("\(variable) must be 128 hex digits (a 64-byte key), not \(digits.count) characters")
        }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var key = Data(capacity: 64)
        for index in stride(from: 0, to: 128, by: 2) {
            guard let high = value(digits[index]) else {
                throw UsageError("\(variable) has a character that is not a hex digit at position \(index + 1)")
            }
            guard let low = value(digits[index + 1]) else {
                throw UsageError("\(variable) has a character that is not a hex digit at position \(index + 2)")
            }
            key.append(high << 4 | low)
        }
        return key
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    // MARK: info

    static func info(_ arguments: Arguments) throws {
        try arguments.allow()
        guard arguments.positional.count == 1 else { throw UsageError("info takes one FILE") }
        let path = arguments.positional[0]
        let db = try open(path)
        let schemas = try db.storedSchemas()
        let counts = try schemas.map { try db.dynamicObjects($0.name).count }
        if arguments.flags.contains("--json") {
            let types = zip(schemas, counts).map { schema, count in
                "{\"name\":\(Formatting.jsonString(schema.name)),\"objects\":\(count),\"indexes\":["
                    + schema.properties.filter(\.isIndexed).map { Formatting.jsonString($0.name) }.joined(separator: ",")
                    + "],\"fullTextIndexes\":["
                    + schema.properties.filter(\.isFullTextIndexed).map { Formatting.jsonString($0.name) }.joined(separator: ",")
                    + "]}"
            }
            print(
                "{\"file\":\(Formatting.jsonString(path)),\"formatVersion\":\(db.fileFormatVersion),\"schemaVersion\":\(db.storedSchemaVersion),"
                    + "\"fileSize\":\(fileSize(path)),\"usedSize\":\(db.usedFileSize),\"openReaders\":\(db.openReaders),\"readers\":[\(db.readers.map { "{\"pid\":\($0.processID),\"commitsBehind\":\($0.commitsBehind.map(String.init) ?? "null")}" }.joined(separator: ","))],\"types\":[\(types.joined(separator: ","))]}"
            )
            return
        }
        print("file:            \(path)")
        print("format version:  \(db.fileFormatVersion)")
        print("schema version:  \(db.storedSchemaVersion)")
        print("file size:       \(fileSize(path)) bytes (\(db.usedFileSize) in use)")
        let others = db.readers.filter { $0.processID != getpid() }
        print("open readers:    \(others.count) in other processes")
        for reader in others {
            guard let behind = reader.commitsBehind else {
                print("  process \(reader.processID): idle")
                continue
            }
            let note = behind >= 1_000 ? " — stuck or long-running: the file cannot reuse pages freed since" : ""
            print("  process \(reader.processID): reading a snapshot \(count(behind, "commit")) old\(note)")
        }
        print("types:")
        for (schema, count) in zip(schemas, counts) {
            let indexes = schema.properties.filter(\.isIndexed).map { $0.isPrimaryKey ? "\($0.name) (primary key)" : $0.name }
            let fullText = schema.properties.filter(\.isFullTextIndexed).map(\.name)
            let clustered = (try? db.storageLayout(ofType: schema.name)) == .columnClusters
            print(
                "  \(schema.name): \(Commands.count(count, "object"))" + (clustered ? " in column clusters" : "")
                    + (indexes.isEmpty ? "" : "; indexed: \(indexes.joined(separator: ", "))")
                    + (fullText.isEmpty ? "" : "; full-text: \(fullText.joined(separator: ", "))"))
        }
    }

    // MARK: schema

    static func schema(_ arguments: Arguments) throws {
        try arguments.allow(flags: ["--swift"])
        guard arguments.positional.count == 1 else { throw UsageError("schema takes one FILE") }
        let db = try open(arguments.positional[0])
        let schemas = try db.storedSchemas()
        if arguments.flags.contains("--json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(schemas), as: UTF8.self))
            return
        }
        if arguments.flags.contains("--swift") {
            print("import Foundation\nimport Trove\n")
            // A class's bases come before it; a subclass declares only what it adds.
            let stored = Dictionary(schemas.map { ($0.name, $0) }) { first, _ in first }
            let bases = Set(schemas.compactMap(\.superclassName))
            let embedded = Set(schemas.flatMap(\.properties).filter { $0.ownsTargets == true }.compactMap(\.objectType))
            for schema in schemas.enumerated().sorted(by: {
                ($0.element.ancestors?.count ?? 0, $0.offset) < ($1.element.ancestors?.count ?? 0, $1.offset)
            }).map(\.element) {
                let base = schema.superclassName.flatMap { stored[$0] }
                let parent = base?.name ?? (embedded.contains(schema.name) ? "EmbeddedObject" : "Object")
                print("\(bases.contains(schema.name) ? "class" : "final class") \(schema.name): \(parent) {")
                let inherited = Set(base?.properties.map(\.name) ?? [])
                for property in schema.properties where !inherited.contains(property.name) {
                    var options: [String] = []
                    if property.isPrimaryKey { options.append("primaryKey: true") }
                    if property.isFullTextIndexed {
                        options.append("indexed: .fullText")
                    } else if property.isIndexed && !property.isPrimaryKey {
                        options.append("indexed: true")
                    }
                    if property.isAutoIncrement { options.append("autoIncrement: true") }
                    let wrapper = options.isEmpty ? "@Persisted" : "@Persisted(\(options.joined(separator: ", ")))"
                    print("    \(wrapper) var \(property.name): \(property.typeDescription)")
                }
                print("}\n")
            }
            return
        }
        for schema in schemas { for line in describe(schema) { print(line) } }
    }

    /// A type's schema as `trove schema` and the shell's `.schema` print it.
    static func describe(_ schema: ObjectSchema) -> [String] {
        [schema.name]
            + schema.properties.map { property in
                var notes: [String] = []
                if property.isPrimaryKey { notes.append("primary key") }
                if property.isIndexed && !property.isPrimaryKey { notes.append("indexed") }
                if property.isFullTextIndexed { notes.append("full-text indexed") }
                if property.isAutoIncrement { notes.append("auto-increment") }
                return "  \(property.name): \(property.typeDescription)"
                    + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))")
            }
    }

    /// "1 object", "2 objects".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    // MARK: query and export

    static func query(_ arguments: Arguments) throws {
        try arguments.allow(options: ["--sort", "--limit", "--format"])
        guard (2...3).contains(arguments.positional.count) else { throw UsageError("query takes FILE TYPE [PREDICATE]") }
        let db = try open(arguments.positional[0])
        // Damaged objects are told and left out before anything reads a record.
        let damage = DamageCache(db)
        let damaged = try damage(arguments.positional[1])
        for description in damaged.descriptions {
            FileHandle.standardError.write(Data("trove: skipped \(arguments.positional[1]) \(description)\n".utf8))
        }
        try refuseLinkedDamage(
            db, type: arguments.positional[1], damaged: { try damage($0) },
            query: [arguments.positional.count == 3 ? arguments.positional[2] : nil, arguments.option("--sort")])
        var results = try db.dynamicObjects(arguments.positional[1]).excluding(damaged)
        if arguments.positional.count == 3 { results = try results.filter(arguments.positional[2]) }
        if let sort = arguments.option("--sort") {
            let parts = sort.split(separator: ":", maxSplits: 1).map(String.init)
            guard let key = parts.first, results.objectSchema[key] != nil else {
                throw TroveError(
                    .invalidProperty, "\(arguments.positional[1]) has no property named '\(parts.first ?? "")' to sort by")
            }
            guard parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
                throw UsageError("--sort takes KEY, KEY:asc or KEY:desc")
            }
            results = results.sorted(byKeyPath: key, ascending: parts.count == 1 || parts[1] == "asc")
        }
        if let text = arguments.option("--limit") {
            guard let limit = Int(text), limit >= 0 else { throw UsageError("--limit needs a number, not \(text)") }
            // Stops reading at the last match shown; a sort keeps only the first ones.
            results = results.prefix(limit)
        }
        let format = arguments.option("--format") ?? "table"
        var (rows, missing) = try checkedRows(of: results, type: arguments.positional[1], in: db)
        if format == "table" { rows = try rows.map { try readable($0, in: db, damaged: damage) } }
        try write(rows, schema: results.objectSchema, format: format, to: FileHandle.standardOutput, db: db)
        if !damaged.isEmpty || missing > 0 {
            FileHandle.standardError.write(
                Data("trove: damaged objects were left out; `trove verify` lists the damage\n".utf8))
            exit(1)
        }
    }

    /// Refuses a filter or sort that follows links (a key path, `@links`, a
    /// subquery) when a type it may reach has damaged objects: evaluating it
    /// would read their records, which are not checked there.
    /// `damaged` gives a type's damaged objects (the caller's, when it knows them).
    static func refuseLinkedDamage(
        _ db: Database, type: String, damaged: (String) throws -> DamagedObjects, query: [String?]
    ) throws {
        let texts = query.compactMap { $0 }
        guard texts.contains(where: followsLinks) else { return }
        let schemas = Dictionary(try db.storedSchemas().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // The queried type too: a link from a sound object may lead to a damaged one of its own type.
        var reached: Set<String> = [type]
        var pending = [type]
        while let name = pending.popLast() {
            for property in schemas[name]?.properties ?? [] {
                if let target = property.objectType, reached.insert(target).inserted { pending.append(target) }
            }
        }
        for name in reached.sorted() {
            if let first = try damaged(name).descriptions.first {
                throw TroveError(
                    .corruptFile,
                    "the query follows links into \(name), which has damaged objects (\(name) \(first)); query without following links, or restore the file from a copy (`trove verify` lists the damage)"
                )
            }
        }
    }

    /// Whether a predicate or sort key may follow a link: a key path outside quotes, `@links`, a subquery.
    private static func followsLinks(_ text: String) -> Bool {
        var quote: Character?
        var previous: Character = " "
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "@" || (character == "." && !previous.isNumber) {
                return true  // (a dot after a digit is a number's: 1.5)
            }
            previous = character
        }
        return text.uppercased().contains("SUBQUERY")
    }

    /// The rows of `results`, read through the checked path: where the file
    /// does not read, an error, not a trap. An object a damaged index names
    /// but the file does not hold is told on standard error and left out
    /// (`missing` counts them).
    static func checkedRows(of results: Results<DynamicObject>, type: String, in db: Database) throws -> (
        rows: [Row], missing: Int
    ) {
        var rows: [Row] = []
        var missing = 0
        for key in try results.checkedKeys() {
            guard let values = try db.checkedStoredValues(ofType: type, objectKey: key),
                let object = try db.dynamicObject(ofType: type, objectKey: key)
            else {
                missing += 1
                FileHandle.standardError.write(
                    Data("trove: skipped \(type) object \(key), which an index names but the file does not hold\n".utf8))
                continue
            }
            rows.append(Row(object, values: values))
        }
        return (rows, missing)
    }

    /// For the table: links (in link properties and mixed values) as their
    /// target's type and primary key (`Type#key` for a type without one, or
    /// a damaged target), collections as their first elements.
    static func readable(_ row: Row, in db: Database, damaged: DamageCache) throws -> Row {
        var row = row
        for (column, property) in row.object.objectSchema.properties.enumerated()
        where property.type == .link || property.type == .mixed || property.collection != nil {
            let target = property.objectType ?? ""
            switch property.collection {
            case nil:
                if case .int(let key) = row.values[column], property.type == .link {
                    let key = UInt64(bitPattern: key)
                    row.values[column] = .string(
                        try linkText(try db.linkedTypeName(key, declaredAs: target) ?? target, key, in: db, damaged: damaged))
                } else if case .object(let type, let key) = row.values[column] {
                    row.values[column] = .string(try linkText(type, key, in: db, damaged: damaged))
                }
            case .linkingObjects:
                row.values[column] = .string("← \(target).\(property.originProperty ?? "")")
            case .list, .set, .map:
                let entries = try db.entries(of: row.object, property: property.name)
                let shown = try entries.prefix(5).map { entry -> String in
                    let value: String
                    if property.type == .link, case .int(let key) = entry.value {
                        let key = UInt64(bitPattern: key)
                        value = try linkText(
                            try db.linkedTypeName(key, declaredAs: target) ?? target, key, in: db, damaged: damaged)
                    } else if case .object(let type, let key) = entry.value {
                        value = try linkText(type, key, in: db, damaged: damaged)
                    } else {
                        value = Formatting.plain(entry.value)
                    }
                    return property.collection == .map ? "\(entry.key): \(value)" : value
                }
                let more = entries.count > 5 ? ", … (\(entries.count))" : ""
                row.values[column] = .string("[" + shown.joined(separator: ", ") + more + "]")
            }
        }
        return row
    }

    /// A link as the table shows it: `Type key` by the target's primary key,
    /// `Type#key` (its object key) for a type without one or a target not read.
    static func linkText(_ type: String, _ key: UInt64, in db: Database, damaged: DamageCache) throws -> String {
        try primaryKeyText(type, key, in: db, damaged: damaged).map { "\(type) \($0)" } ?? "\(type)#\(key)"
    }

    /// The primary key of the `type` object with `key`, as text; nil for a
    /// type without one, an object not stored, or a damaged one (never read).
    static func primaryKeyText(_ type: String, _ key: UInt64, in db: Database, damaged: DamageCache) throws -> String? {
        guard try !damaged(type).covers(key), let target = try db.dynamicObject(ofType: type, objectKey: key),
            let column = target.objectSchema.properties.firstIndex(where: \.isPrimaryKey),
            let values = try db.checkedStoredValues(ofType: type, objectKey: key)
        else { return nil }
        return Formatting.plain(values[column])
    }

    /// Rows in a format: the table, or (json, jsonl, csv) the form `trove export` writes.
    static func write(
        _ objects: [Row], schema: ObjectSchema, format: String, to output: FileHandle, db: Database
    ) throws {
        guard format != "table" else {
            let text =
                Formatting.table(objects, schema: schema, terminalWidth: Formatting.terminalWidth) + "\n"
                + "(\(objects.count) \(schema.name) object\(objects.count == 1 ? "" : "s"))\n"
            return output.write(Data(text.utf8))
        }
        guard ["json", "jsonl", "csv"].contains(format) else {
            throw UsageError("unknown format \(format); use table, json, jsonl or csv")
        }
        let exporter = try ObjectExporter(database: db, typeName: schema.name)
        let text = PortableText(schemas: try db.storedSchemas())
        let layout = try text.layout(schema.name)
        let out = OutputBuffer(descriptor: nil)
        text.writeStart(format, layout, to: out)
        for (index, row) in objects.enumerated() {
            text.writeRow(try exporter.values(of: row.object), layout, format: format, isFirst: index == 0, to: out)
        }
        if format == "json" { out.append(objects.isEmpty ? "]\n" : "\n]\n") }
        output.write(Data(out.bytes))
    }

    // MARK: set and delete

    static func set(_ arguments: Arguments) throws {
        try arguments.allow()
        guard arguments.positional.count == 5 else { throw UsageError("set takes FILE TYPE PRIMARYKEY PROPERTY VALUE") }
        let (path, type, key, property, text) = (
            arguments.positional[0], arguments.positional[1], arguments.positional[2], arguments.positional[3],
            arguments.positional[4]
        )
        let db = try open(path, readOnly: false)
        let schema = try db.dynamicObjects(type).objectSchema
        guard let primaryKey = schema.primaryKey else {
            throw TroveError(.invalidPrimaryKey, "\(type) has no primary key; use `trove query` to find objects instead")
        }
        guard let target = schema[property] else {
            throw TroveError(.invalidProperty, "\(type) has no property named '\(property)'")
        }
        let value = try Formatting.parse(text, as: target)
        let keyValue = try Formatting.parse(key, as: primaryKey)
        let found = try db.write { try db.setValue(value, forProperty: property, ofType: type, primaryKey: keyValue) }
        guard found else { throw TroveError(.invalidObject, "\(path) has no \(type) with \(primaryKey.name) = \(key)") }
        print("set \(type)[\(key)].\(property) = \(Formatting.cell(value, width: 60))")
    }

    static func delete(_ arguments: Arguments) throws {
        try arguments.allow(flags: ["--yes", "-y"])
        guard arguments.positional.count == 3 else { throw UsageError("delete takes FILE TYPE PREDICATE") }
        let (path, type, predicate) = (arguments.positional[0], arguments.positional[1], arguments.positional[2])
        let db = try open(path, readOnly: false)
        let matches = try db.dynamicObjects(type).filter(predicate)
        let count = matches.count
        if count == 0 {
            print("no \(type) matches \(predicate); nothing deleted")
            return
        }
        if !arguments.flags.contains("--yes") && !arguments.flags.contains("-y") {
            guard isatty(STDIN_FILENO) != 0 else {
                throw UsageError("delete would remove \(count) \(type) object(s); add --yes to confirm when not on a terminal")
            }
            FileHandle.standardError.write(
                Data("delete \(count) \(type) object\(count == 1 ? "" : "s") from \(path)? [y/N] ".utf8))
            guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                print("nothing deleted")
                return
            }
        }
        try db.write { try db.delete(matches) }
        print("deleted \(count) \(type) object\(count == 1 ? "" : "s")")
    }

    // MARK: verify

    /// Exits 1 when the file has any problem.
    static func verify(_ arguments: Arguments) throws {
        try arguments.allow()
        guard arguments.positional.count == 1 else { throw UsageError("verify takes one FILE") }
        let report = try open(arguments.positional[0]).verify()
        if arguments.flags.contains("--json") {
            let problems = report.problems.map {
                "{\"type\":\(Formatting.jsonString($0.typeName)),\"kind\":\"\($0.kind.rawValue)\",\"detail\":\(Formatting.jsonString($0.detail))}"
            }
            print(
                "{\"valid\":\(report.isValid),\"pages\":\(report.pagesChecked),\"objects\":\(report.objectsChecked),\"indexEntries\":\(report.indexEntriesChecked),\"problems\":[\(problems.joined(separator: ","))]}"
            )
        } else {
            print("\(arguments.positional[0]): \(report)")
        }
        if !report.isValid { exit(1) }
    }

    // MARK: copy and compact

    static func copy(_ arguments: Arguments) throws {
        try arguments.allow(flags: ["--decrypt"])
        guard arguments.positional.count == 2 else { throw UsageError("copy takes FILE DEST") }
        let db = try open(arguments.positional[0])
        let destination = URL(fileURLWithPath: arguments.positional[1])
        let newKey = try encryptionKey(variable: "TROVE_NEW_ENCRYPTION_KEY")
        if arguments.flags.contains("--decrypt"), newKey != nil {
            throw UsageError("--decrypt and TROVE_NEW_ENCRYPTION_KEY ask for opposite copies; choose one")
        }
        if arguments.flags.contains("--decrypt") || newKey != nil {
            try db.writeCopy(to: destination, encryptionKey: newKey)
        } else {
            try db.writeCopy(to: destination)
        }
        let how = arguments.flags.contains("--decrypt") ? ", decrypted" : newKey != nil ? ", encrypted with the new key" : ""
        print(
            "copied \(arguments.positional[0]) to \(arguments.positional[1]) (\(fileSize(arguments.positional[1])) bytes\(how))")
    }

    /// The settings of the commands that rewrite the one FILE they are given (convert, compact).
    static func rewritingConfiguration(_ command: String, _ arguments: Arguments) throws -> Configuration {
        try arguments.allow()
        guard arguments.positional.count == 1 else { throw UsageError("\(command) takes one FILE") }
        try requireDatabaseFile(arguments.positional[0])
        var configuration = Configuration(fileURL: URL(fileURLWithPath: arguments.positional[0]))
        configuration.encryptionKey = try encryptionKey()
        configuration.checksEveryPageOnOpen = checksEveryPage
        configuration.acceptsAnySchemaVersion = true
        return configuration
    }

    static func convert(_ arguments: Arguments) throws {
        var configuration = try rewritingConfiguration("convert", arguments)
        let path = arguments.positional[0]
        configuration.storageLayout = .columnClusters
        // Told on this thread, as each type is opened.
        final class Bar: @unchecked Sendable { var progress = Progress("converting", total: 0) }
        let bar = Bar()
        configuration.conversionProgress = { progress in
            if bar.progress.label != "converting \(progress.typeName)" {
                bar.progress.finish()
                bar.progress = Progress("converting \(progress.typeName)", total: progress.total)
            }
            bar.progress.update(progress.converted)
        }
        var db: Database? = try Database(configuration: configuration)
        let converted = try db!.convertStoredTypes()
        bar.progress.finish()
        let format = db!.fileFormatVersion
        let upgradesKeys = db!.keysHoldPlainData
        db = nil
        if converted.isEmpty {
            print("\(path): every type is already in column clusters")
        } else {
            print("converted \(converted.joined(separator: ", ")) in \(path) to column clusters (file format \(format))")
        }
        if upgradesKeys, try Database.upgradeKeys(configuration: configuration) {
            print(
                "\(path): its keys now hold tokens, not values and names (file format \(try Database(configuration: configuration).fileFormatVersion))"
            )
        }
    }

    static func compact(_ arguments: Arguments) throws {
        let configuration = try rewritingConfiguration("compact", arguments)
        let path = arguments.positional[0]
        let (before, after) = try Database.compact(configuration: configuration)
        print("compacted \(path): \(before) -> \(after) bytes")
    }
}
