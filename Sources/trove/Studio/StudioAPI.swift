import Foundation
import Trove
import TroveSync

/// The studio's JSON API and page over one open file: every request is
/// checked for the token, then answered from the file's newest commit under
/// one lock (the handle is shared by the server's connection threads). The
/// endpoints are documented in `Assets/openapi.json`.
final class StudioAPI: @unchecked Sendable {
    let path: String
    let readOnly: Bool
    let token: String
    let events: CommitEvents
    private let db: Database
    private let lock = NSLock()
    /// Queries the grid pages through, by type, filter and sort: live
    /// results, so paging through one costs one evaluation per commit.
    private var queries: [String: Results<DynamicObject>] = [:]
    /// Queries evaluated whole (paged past their first page): their keys, and
    /// the commit they were read at, so that paging reads them once per commit.
    private var paged: [String: (commit: Int, keys: [UInt64])] = [:]
    /// The damaged objects of each type read, as of the commit shown: the
    /// API leaves them out of pages and answers 422 for them, so that a
    /// damaged file is shown, not a trap for every client.
    private let damaged: DamageCache
    /// Objects per page at most.
    static let maximumPage = 1_000
    /// Integers of at most this many values are charted a bar per value.
    static let distinctValues = 30

    init(database: Database, path: String, readOnly: Bool, token: String) {
        db = database
        damaged = DamageCache(database)
        self.path = path
        self.readOnly = readOnly
        self.token = token
        events = CommitEvents(commit: database.lastCommit)
    }

    /// A random token of 32 hex digits (128 bits) from the system's generator.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    // MARK: Requests

    /// The answer to a request that is refused on its head alone (before
    /// its body is read): one for another host, or without the token.
    func admit(_ request: HTTPRequest) -> HTTPResponse? {
        guard isLocal(request.header("Host")) else {
            return failure(421, "wrongHost", "the studio answers requests for 127.0.0.1 or localhost only")
        }
        guard authorized(request) else {
            return failure(401, "unauthorized", "a token is required: open the address trove studio printed")
        }
        return nil
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = admit(request) { return refusal }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch (request.method, parts.first ?? "") {
        case ("GET", "") where parts.isEmpty: return page()
        case ("GET", "studio.js") where parts.count == 1:
            return asset(PackageResources.studio_js, "text/javascript; charset=utf-8")
        case ("GET", "studio.css") where parts.count == 1: return asset(PackageResources.studio_css, "text/css; charset=utf-8")
        case ("GET", "api") where parts == ["api", "openapi.json"]:
            return asset(PackageResources.openapi_json, "application/json")
        case ("GET", "api") where parts == ["api", "events"]: return .events(events.stream())
        case (_, "api") where parts.count > 1: return locked { try api(request, Array(parts.dropFirst())) }
        case (_, "studio.js") where parts.count == 1, (_, "studio.css") where parts.count == 1, (_, "") where parts.isEmpty:
            return failure(405, "methodNotAllowed", "\(request.method) is not allowed on \(request.path)")
        default: return failure(404, "notFound", "no such page: \(request.path)")
        }
    }

    private func isLocal(_ host: String?) -> Bool {
        guard let host else { return false }
        let name = host.split(separator: ":", maxSplits: 1).first.map(String.init) ?? host
        return ["127.0.0.1", "localhost"].contains(name.lowercased())
    }

    /// The token as `?token=`, `Authorization: Bearer` or `X-Trove-Token`
    /// (any of them, when a client sends several), compared in constant time.
    private func authorized(_ request: HTTPRequest) -> Bool {
        let bearer = request.header("Authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let expected = Array(token.utf8)
        return [request.argument("token"), request.header("X-Trove-Token"), bearer].contains { given in
            guard let given = given.map({ Array($0.utf8) }), given.count == expected.count else { return false }
            return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    private func page() -> HTTPResponse {
        let html = String(decoding: PackageResources.index_html, as: UTF8.self)
            .replacingOccurrences(of: "{{TOKEN}}", with: token)
        return HTTPResponse(
            status: 200, contentType: "text/html; charset=utf-8", body: Array(html.utf8),
            headers: [
                (
                    "Content-Security-Policy",
                    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
                )
            ])
    }

    private func asset(_ bytes: [UInt8], _ type: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: type, body: bytes)
    }

    /// Runs `body` on the file's newest commit, one request at a time, and
    /// turns what it throws into the API's error answers.
    private func locked(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        lock.lock()
        defer { lock.unlock() }
        // Only when there is a newer commit: a refresh starts every query over,
        // and the grid's next page should not evaluate its query again.
        if db.lastCommit != db.visibleCommit {
            db.refresh()
            // Made again: the commit may have changed a type's schema (the app's new version).
            queries.removeAll()
            paged.removeAll()
        }
        do {
            return try body()
        } catch let error as TroveError {
            if db.isInWriteTransaction { db.cancelWrite() }
            return failure(status(of: error), error.kind.rawValue, error.message, position: error.position)
        } catch let error as JSONError {
            return failure(400, "invalidJSON", "the body is not JSON: \(error.message) (at byte \(error.offset))")
        } catch let error as APIError {
            return failure(error.status, error.kind, error.message)
        } catch {
            if db.isInWriteTransaction { db.cancelWrite() }
            return failure(500, "internal", "\(error)")
        }
    }

    private func status(of error: TroveError) -> Int {
        switch error.kind {
        case .invalidModel: 404
        case .primaryKeyExists: 409
        case .invalidQuery, .unsupportedPredicate, .invalidValue, .invalidProperty, .invalidPrimaryKey, .invalidObject,
            .deleteDenied:
            400
        case .diskFull, .fileSizeLimitReached: 507
        case .corruptFile: 422
        default: 500
        }
    }

    // MARK: The API

    /// `parts`: the path after `/api`.
    private func api(_ request: HTTPRequest, _ parts: [String]) throws -> HTTPResponse {
        let method = request.method
        /// The path's parts in the places `pattern` has `*`, when it matches.
        func match(_ pattern: String...) -> [String]? {
            guard parts.count == pattern.count else { return nil }
            var captured: [String] = []
            for (part, expected) in zip(parts, pattern) {
                if expected == "*" { captured.append(part) } else if part != expected { return nil }
            }
            return captured
        }
        func allowing(_ methods: String...) throws {
            guard methods.contains(method) else {
                throw APIError(405, "methodNotAllowed", "\(method) is not allowed on \(request.path)")
            }
        }
        if match("info") != nil {
            try allowing("GET")
            return json(try info())
        }
        if match("types") != nil {
            try allowing("GET")
            return json(try types())
        }
        if match("schema") != nil {
            try allowing("GET")
            return json(try schema())
        }
        if match("verify") != nil {
            try allowing("GET")
            return json(try verify())
        }
        if let found = match("types", "*", "objects") {
            try allowing("GET", "POST")
            return method == "GET" ? json(try objects(found[0], request)) : json(try create(found[0], request.body), status: 201)
        }
        if let found = match("types", "*", "objects", "*") {
            try allowing("GET", "PATCH", "DELETE")
            switch method {
            case "GET": return json(try objectJSON(try object(found[0], found[1])))
            case "PATCH": return json(try update(found[0], found[1], request.body))
            default: return json(try delete(found[0], found[1]))
            }
        }
        if let found = match("types", "*", "objects", "*", "*") {
            try allowing("GET")
            return json(try related(found[0], found[1], found[2], request))
        }
        if let found = match("types", "*", "objects", "*", "*", "data") {
            try allowing("GET")
            return try data(found[0], found[1], found[2])
        }
        if let found = match("types", "*", "chart", "*") {
            try allowing("GET")
            return json(try chart(found[0], found[1], request))
        }
        if let found = match("types", "*", "export") {
            try allowing("GET")
            return try export(found[0], request)
        }
        throw APIError(404, "notFound", "no such endpoint: \(request.path)")
    }

    private func info() throws -> String {
        "{\"file\":\(Formatting.jsonString(path)),\"readOnly\":\(readOnly),\"formatVersion\":\(db.fileFormatVersion),"
            + "\"schemaVersion\":\(db.storedSchemaVersion),\"fileSize\":\(Commands.fileSize(path)),\"usedSize\":\(db.usedFileSize),"
            + "\"commit\":\(db.lastCommit),\"sync\":\(try syncStatus())}"
    }

    /// Where the file stands with sync (TroveSync's bookkeeping, no server asked); `null` when it does not sync.
    private func syncStatus() throws -> String {
        guard let status = try SyncClient.status(of: db) else { return "null" }
        return "{\"space\":\(Formatting.jsonString(status.space ?? "")),\"device\":\(Formatting.jsonString(status.device ?? "")),"
            + "\"types\":[\(status.types.map(Formatting.jsonString).joined(separator: ","))],"
            + "\"pendingChanges\":\(status.pendingChanges),\"pulledThrough\":\(status.pulledThrough)}"
    }

    private func types() throws -> String {
        let schemas = try db.storedSchemas()
        let embedded = embeddedTypes(schemas)
        let types = try schemas.map { schema in
            "{" + typeMembers(schema, embedded) + ",\"count\":\(try db.dynamicObjects(schema.name).count)}"
        }
        return "{\"types\":[" + types.joined(separator: ",") + "]}"
    }

    private func schema() throws -> String {
        let schemas = try db.storedSchemas()
        let embedded = embeddedTypes(schemas)
        let types = schemas.map { schema in
            "{" + typeMembers(schema, embedded) + ",\"properties\":["
                + schema.properties.map(StudioJSON.property).joined(separator: ",") + "]}"
        }
        return "{\"types\":[" + types.joined(separator: ",") + "]}"
    }

    /// What both type listings say of a type: its name, primary key and whether it is embedded.
    private func typeMembers(_ schema: ObjectSchema, _ embedded: Set<String>) -> String {
        "\"name\":\(Formatting.jsonString(schema.name)),"
            + "\"primaryKey\":\(schema.primaryKey.map { Formatting.jsonString($0.name) } ?? "null"),"
            + "\"embedded\":\(embedded.contains(schema.name))"
    }

    private func embeddedTypes(_ schemas: [ObjectSchema]) -> Set<String> {
        Set(schemas.flatMap(\.properties).filter { $0.ownsTargets == true }.compactMap(\.objectType))
    }

    private func verify() throws -> String {
        let report = try db.verify()
        let problems = report.problems.map {
            "{\"type\":\(Formatting.jsonString($0.typeName)),\"kind\":\"\($0.kind.rawValue)\",\"detail\":\(Formatting.jsonString($0.detail))}"
        }
        return
            "{\"valid\":\(report.isValid),\"pages\":\(report.pagesChecked),\"objects\":\(report.objectsChecked),\"indexEntries\":\(report.indexEntriesChecked),\"problems\":[\(problems.joined(separator: ","))]}"
    }

    // MARK: Objects

    /// A page of the objects of `type` matching `filter`, sorted by `sort`.
    private func objects(_ type: String, _ request: HTTPRequest) throws -> String {
        let (filter, sort) = (request.argument("filter"), request.argument("sort"))
        let ascending = try flag(request, "ascending", default: true)
        let results = try query(type, filter: filter, sort: sort, ascending: ascending)
        let key = queryKey(type, filter: filter, sort: sort, ascending: ascending)
        let offset = try number(request, "offset", default: 0)
        let limit = min(try number(request, "limit", default: 100), Self.maximumPage)
        let total = results.count
        var rows: [String] = []
        if offset == 0, paged[key] == nil {
            // The first page of a query not paged through yet: read only its
            // first objects (a sort keeps the first `limit` while it reads)
            // instead of every match; the next page evaluates the query whole.
            // (An object a damaged index names but the file does not hold is left out.)
            for objectKey in try results.prefix(limit).checkedKeys() {
                guard let object = try db.dynamicObject(ofType: type, objectKey: objectKey) else { continue }
                rows.append(try objectJSON(object, cutting: true))
            }
        } else if offset < total {
            let commit = db.visibleCommit
            let keys: [UInt64]
            if let known = paged[key], known.commit == commit {
                keys = known.keys
            } else {
                keys = try results.checkedKeys()
                paged[key] = (commit, keys)
            }
            for objectKey in keys.dropFirst(offset).prefix(limit) {
                guard let object = try db.dynamicObject(ofType: type, objectKey: objectKey) else { continue }
                rows.append(try objectJSON(object, cutting: true))
            }
        }
        return "{\"type\":\(Formatting.jsonString(type)),\"total\":\(total),\"offset\":\(offset),\"objects\":["
            + rows.joined(separator: ",") + "]}"
    }

    private func queryKey(_ type: String, filter: String?, sort: String?, ascending: Bool) -> String {
        [type, filter ?? "", sort ?? "", ascending ? "a" : "d"].joined(separator: "\u{0}")
    }

    /// The live results of a query, kept for the next page.
    private func query(_ type: String, filter: String?, sort: String?, ascending: Bool) throws -> Results<DynamicObject> {
        let cacheKey = queryKey(type, filter: filter, sort: sort, ascending: ascending)
        if let known = queries[cacheKey] { return known }
        try Commands.refuseLinkedDamage(db, type: type, damaged: { try self.damaged($0) }, query: [filter, sort])
        var results = try db.dynamicObjects(type).excluding(try damaged(type))
        if let filter, !filter.trimmingCharacters(in: .whitespaces).isEmpty { results = try results.filter(filter) }
        if let sort, !sort.isEmpty {
            guard let property = results.objectSchema[sort] else {
                throw TroveError(.invalidProperty, "\(type) has no property named '\(sort)' to sort by")
            }
            guard property.collection == nil, property.type != .link, property.type != .mixed else {
                throw TroveError(
                    .invalidProperty, "\(type).\(sort) is a \(property.typeDescription); sort by a property holding one value")
            }
            results = results.sorted(byKeyPath: sort, ascending: ascending)
        }
        if queries.count >= 16 {
            queries.removeAll()
            paged.removeAll()
        }
        queries[cacheKey] = results
        return results
    }

    private func number(_ request: HTTPRequest, _ name: String, default value: Int) throws -> Int {
        guard let text = request.argument(name) else { return value }
        guard let number = Int(text), number >= 0 else {
            throw APIError(400, "invalidArgument", "\(name) must be a whole number of 0 or more, not '\(text)'")
        }
        return number
    }

    private func flag(_ request: HTTPRequest, _ name: String, default value: Bool) throws -> Bool {
        guard let text = request.argument(name) else { return value }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError(400, "invalidArgument", "\(name) must be true or false, not '\(text)'")
        }
    }

    /// The object of `type` with the object key `key`.
    private func object(_ type: String, _ key: String) throws -> DynamicObject {
        guard let objectKey = UInt64(key) else {
            throw APIError(400, "invalidArgument", "an object key is a whole number, not '\(key)'")
        }
        if let part = try damaged(type).parts.first(where: { $0.keys?.contains(objectKey) ?? false }) {
            throw APIError(
                422, "damagedObject", "\(type) object \(key) is damaged: \(part.detail); `trove verify` lists the damage")
        }
        guard let object = try db.dynamicObject(ofType: type, objectKey: objectKey) else {
            throw APIError(404, "notFound", "\(type) has no object with key \(key)")
        }
        return object
    }

    /// An object's stored values, read so that a file that does not read
    /// is an error answer, not a trap.
    private func storedValues(of object: DynamicObject) throws -> [StoredValue] {
        guard let values = try db.checkedStoredValues(ofType: object.objectSchema.name, objectKey: object.objectKey) else {
            throw APIError(404, "notFound", "\(object.objectSchema.name) has no object with key \(object.objectKey)")
        }
        return values
    }

    /// Refuses a write to a type with damaged objects: rewriting a cluster
    /// reads all of its values, the damaged ones too.
    private func refuseWritesToDamaged(_ type: String) throws {
        if let first = try damaged(type).descriptions.first {
            throw APIError(
                422, "damagedObject",
                "\(type) has damaged objects (\(type) \(first)); writes to it are refused until the file is restored from a copy")
        }
    }

    /// `{"key": "…", "values": [...]}`: one value per property, in the schema's order.
    /// An object's values; with `cutting`, long strings are cut (for pages of objects).
    private func objectJSON(_ object: DynamicObject, cutting: Bool = false) throws -> String {
        let schema = object.objectSchema
        let values = try storedValues(of: object)
        var parts: [String] = []
        parts.reserveCapacity(values.count)
        for (column, property) in schema.properties.enumerated() {
            switch property.collection {
            case nil where property.type == .link:
                if case .int(let key) = values[column] {
                    let declared = property.objectType ?? ""
                    let target = try db.linkedTypeName(UInt64(bitPattern: key), declaredAs: declared) ?? declared
                    parts.append(
                        StudioJSON.link(
                            target, key: UInt64(bitPattern: key), label: try label(target, key: UInt64(bitPattern: key))))
                } else {
                    parts.append("null")
                }
            case nil:
                parts.append(try valueJSON(values[column], cutting: cutting))
            case .linkingObjects?:
                parts.append("{\"$count\":\(linkingObjects(of: object, property).count)}")
            case let kind?:
                parts.append(
                    "{\"$count\":\(try db.count(of: object, property: property.name)),\"collection\":\"\(kind.rawValue)\"}"
                )
            }
        }
        return "{\"key\":\"\(object.objectKey)\",\"type\":\(Formatting.jsonString(schema.name)),\"values\":["
            + parts.joined(separator: ",") + "]}"
    }

    /// ``StudioJSON/value(_:cutting:)``, with a link a mixed value holds
    /// labelled by its target's primary key, as a link property's is.
    private func valueJSON(_ value: StoredValue, cutting: Bool) throws -> String {
        guard case .object(let type, let key) = value else { return StudioJSON.value(value, cutting: cutting) }
        return StudioJSON.link(type, key: key, label: try label(type, key: key))
    }

    /// What a link cell shows: the target's primary key.
    private func label(_ type: String, key: UInt64) throws -> String? {
        try Commands.primaryKeyText(type, key, in: db, damaged: damaged)
    }

    /// The objects linking here through `property`'s origin, as the model's
    /// `LinkingObjects` reads them: from the inverse links the file keeps.
    private func linkingObjects(of object: DynamicObject, _ property: PropertySchema) -> LinkingObjects<DynamicObject> {
        guard let sources = object[property.name] as? LinkingObjects<DynamicObject> else {
            preconditionFailure("Trove: \(object.objectSchema.name).\(property.name) did not read as linking objects")
        }
        return sources
    }

    // MARK: Writes

    private func requireWritable() throws {
        if readOnly {
            throw APIError(403, "readOnly", "the studio opened \(path) read-only (--read-only); nothing is written")
        }
    }

    /// Adds an object from its values in the form `trove export` writes.
    private func create(_ type: String, _ body: [UInt8]) throws -> String {
        try requireWritable()
        try refuseWritesToDamaged(type)
        let json = try body.withUnsafeBufferPointer { try JSONValue.parse($0) }
        let text = try portableText()
        let values = try text.values(fromJSON: json, try text.layout(type))
        let importer = try ObjectImporter(database: db, typeName: type)
        let key = try db.write { () -> UInt64 in
            let key = try importer.add(values, update: .error, line: 1)
            if let (_, error) = try importer.resolvePendingLinks(removingUnresolved: false).first { throw error }
            return key
        }
        return try objectJSON(try object(type, String(key)))
    }

    /// Sets one property: `{"property": "memo", "value": …}`, the value in
    /// the form `trove export` writes (a link as the target's primary key, or
    /// its object key when its type has none).
    private func update(_ type: String, _ key: String, _ body: [UInt8]) throws -> String {
        try requireWritable()
        try refuseWritesToDamaged(type)
        let target = try object(type, key)
        guard case .object(let members) = try body.withUnsafeBufferPointer({ try JSONValue.parse($0) }),
            case .string(let name)? = members.first(where: { $0.key == "property" })?.value,
            let value = members.first(where: { $0.key == "value" })?.value
        else {
            throw APIError(400, "invalidBody", "the body must be {\"property\": NAME, \"value\": VALUE}")
        }
        guard let property = target.objectSchema[name] else {
            throw TroveError(.invalidProperty, "\(type) has no property named '\(name)'")
        }
        guard property.collection == nil, property.ownsTargets != true else {
            throw APIError(
                400, "notEditable",
                "\(type).\(name) is a \(property.typeDescription); the studio edits properties holding one value or one link")
        }
        let text = try portableText()
        let values = try text.values(fromJSON: .object([JSONMember(key: name, value: value)]), try text.layout(type))
        guard let column = target.objectSchema.properties.firstIndex(where: { $0.name == name }),
            case .value(var stored)? = values[column]
        else {
            throw APIError(400, "notEditable", "\(type).\(name) cannot be set to \(value.summary)")
        }
        if property.type == .mixed {
            throw APIError(400, "notEditable", "\(type).\(name) is a mixed value; the studio does not edit those yet")
        }
        if property.type == .link, !stored.isNull {
            let targetType = property.objectType ?? ""
            let hasKey = try text.layout(targetType).schema.primaryKey != nil
            let objectKey: UInt64?
            if hasKey {
                objectKey = try db.objectKey(ofType: targetType, primaryKey: stored)
            } else if case .int(let key) = stored {
                objectKey = UInt64(exactly: key)
            } else {
                objectKey = nil
            }
            guard let objectKey else {
                throw TroveError(.invalidValue, "\(type).\(name) links to \(targetType), which has no object \(value.summary)")
            }
            stored = .int(Int64(bitPattern: objectKey))
        }
        try db.write { _ = try db.setValue(stored, forProperty: name, of: target) }
        return try objectJSON(target)
    }

    private func delete(_ type: String, _ key: String) throws -> String {
        try requireWritable()
        try refuseWritesToDamaged(type)
        let target = try object(type, key)
        try db.write { try db.delete(target) }
        return "{\"deleted\":true,\"key\":\"\(key)\"}"
    }

    /// Made for each request: another process may have changed the schema since.
    private func portableText() throws -> PortableText {
        PortableText(schemas: try db.storedSchemas())
    }

    // MARK: Relations, data, charts, export

    /// What a link, list, set, map or linking-objects property of one object holds, a page at a time.
    private func related(_ type: String, _ key: String, _ name: String, _ request: HTTPRequest) throws -> String {
        let owner = try object(type, key)
        guard let property = owner.objectSchema[name] else {
            throw TroveError(.invalidProperty, "\(type) has no property named '\(name)'")
        }
        let offset = try number(request, "offset", default: 0)
        let limit = min(try number(request, "limit", default: 100), Self.maximumPage)
        let target = property.objectType ?? ""
        func page(_ keys: [UInt64]) throws -> String {
            let sound = try damaged(target)
            let shown = keys.dropFirst(offset).prefix(limit).filter { !sound.covers($0) }
            // A link declared with a class may hold its subclasses' objects: each is read from its own type.
            let objects = try shown.compactMap { key in
                try db.dynamicObject(ofType: try db.linkedTypeName(key, declaredAs: target) ?? target, objectKey: key)
            }.map { try objectJSON($0, cutting: true) }
            return "\"type\":\(Formatting.jsonString(target)),\"total\":\(keys.count),\"offset\":\(offset),\"objects\":["
                + objects.joined(separator: ",") + "]"
        }
        switch property.collection {
        case nil where property.type == .link:
            let keys: [UInt64] =
                if case .int(let linked) = try storedValues(of: owner)[
                    owner.objectSchema.properties.firstIndex { $0.name == name }!]
                {
                    [UInt64(bitPattern: linked)]
                } else { [] }
            return "{\"kind\":\"link\"," + (try page(keys)) + "}"
        case nil:
            throw APIError(400, "notARelation", "\(type).\(name) is a \(property.typeDescription), not a link or collection")
        case .linkingObjects?:
            let sources = linkingObjects(of: owner, property)
            return "{\"kind\":\"linkingObjects\"," + (try page(sources.map(\.objectKey))) + "}"
        case let kind?:
            let entries = try db.entries(of: owner, property: name)
            if property.type == .link {
                if kind == .map {
                    let shown = try entries.dropFirst(offset).prefix(limit).map { entry -> String in
                        guard case .int(let linked) = entry.value else { return entryJSON(entry.key, "null") }
                        let key = UInt64(bitPattern: linked)
                        let type = try db.linkedTypeName(key, declaredAs: target) ?? target
                        return entryJSON(entry.key, StudioJSON.link(type, key: key, label: try label(type, key: key)))
                    }
                    return
                        "{\"kind\":\"map\",\"type\":\(Formatting.jsonString(target)),\"total\":\(entries.count),\"offset\":\(offset),\"entries\":["
                        + shown.joined(separator: ",") + "]}"
                }
                let keys = entries.compactMap { entry -> UInt64? in
                    if case .int(let linked) = entry.value { return UInt64(bitPattern: linked) }
                    return nil
                }
                return "{\"kind\":\"\(kind.rawValue)\"," + (try page(keys)) + "}"
            }
            let shown = try entries.dropFirst(offset).prefix(limit).map {
                entryJSON($0.key, try valueJSON($0.value, cutting: true))
            }
            return "{\"kind\":\"\(kind.rawValue)\",\"total\":\(entries.count),\"offset\":\(offset),\"entries\":["
                + shown.joined(separator: ",") + "]}"
        }
    }

    /// One entry of a collection: its key (a map's key, or the position) and its value as JSON.
    private func entryJSON(_ key: String, _ value: String) -> String {
        "{\"key\":\(Formatting.jsonString(key)),\"value\":\(value)}"
    }

    /// The bytes of a data property, typed when they are an image (what the page's image cells load).
    private func data(_ type: String, _ key: String, _ name: String) throws -> HTTPResponse {
        let owner = try object(type, key)
        guard let column = owner.objectSchema.properties.firstIndex(where: { $0.name == name }) else {
            throw TroveError(.invalidProperty, "\(type) has no property named '\(name)'")
        }
        switch try storedValues(of: owner)[column] {
        case .data(let bytes):
            return HTTPResponse(
                status: 200, contentType: StudioJSON.imageType(bytes) ?? "application/octet-stream", body: Array(bytes),
                headers: [("Content-Disposition", "inline")])
        case .string(let text):
            // The whole of a string the pages cut.
            return HTTPResponse(
                status: 200, contentType: "text/plain; charset=utf-8", body: Array(text.utf8),
                headers: [("Content-Disposition", "inline")])
        case .null: throw APIError(404, "notFound", "\(type).\(name) of object \(key) is nil")
        default: throw APIError(400, "notData", "\(type).\(name) is not a data or string property")
        }
    }

    /// A histogram of a numeric or date property, or the counts of each
    /// value of any other single-value property, over the objects matching `filter`.
    private func chart(_ type: String, _ name: String, _ request: HTTPRequest) throws -> String {
        let results = try query(type, filter: request.argument("filter"), sort: nil, ascending: true)
        guard let column = results.objectSchema.properties.firstIndex(where: { $0.name == name }) else {
            throw TroveError(.invalidProperty, "\(type) has no property named '\(name)'")
        }
        let property = results.objectSchema.properties[column]
        guard property.collection == nil else {
            throw APIError(
                400, "notChartable", "\(type).\(name) is a \(property.typeDescription); chart a property holding one value")
        }
        var numbers: [Double] = []
        var integers: [Int64: Int] = [:]
        var counts: [String: Int] = [:]
        var nulls = 0
        let numeric: Bool
        switch property.type {
        case .int, .int8, .int16, .int32, .float, .double, .date, .decimal, .decimal128: numeric = true
        default: numeric = false
        }
        for objectKey in try results.checkedKeys() {
            guard let value = try db.checkedStoredValues(ofType: type, objectKey: objectKey)?[column] else { continue }
            switch value {
            case .null: nulls += 1
            case .int(let v) where numeric:
                numbers.append(Double(v))
                if integers.count <= Self.distinctValues { integers[v, default: 0] += 1 }
            case .float(let v): numbers.append(Double(v))
            case .double(let v): numbers.append(v)
            case .date(let v): numbers.append(v.timeIntervalSince1970)
            case .decimal(let v): numbers.append(NSDecimalNumber(decimal: v).doubleValue)
            case .decimal128(let v): numbers.append(Double(v.description) ?? .nan)
            default: counts[Formatting.plain(value), default: 0] += 1
            }
        }
        // Integers of a few values (an enum's raw values, a rating): a count per value.
        if !integers.isEmpty, integers.count <= Self.distinctValues {
            let shown = integers.sorted { $0.key < $1.key }.map { "{\"value\":\"\($0.key)\",\"count\":\($0.value)}" }
            return
                "{\"kind\":\"counts\",\"property\":\(Formatting.jsonString(name)),\"values\":[\(shown.joined(separator: ","))],"
                + "\"others\":0,\"nulls\":\(nulls)}"
        }
        if numeric {
            let finite = numbers.filter(\.isFinite)
            guard let low = finite.min(), let high = finite.max() else {
                return "{\"kind\":\"histogram\",\"property\":\(Formatting.jsonString(name)),\"buckets\":[],\"nulls\":\(nulls)}"
            }
            let bucketCount = high == low ? 1 : 20
            let width = (high - low) / Double(bucketCount)
            var buckets = [Int](repeating: 0, count: bucketCount)
            for value in finite {
                let index = width == 0 ? 0 : min(bucketCount - 1, Int((value - low) / width))
                buckets[index] += 1
            }
            let parts = buckets.enumerated().map { index, count in
                "{\"from\":\(low + Double(index) * width),\"to\":\(index == bucketCount - 1 ? high : low + Double(index + 1) * width),\"count\":\(count)}"
            }
            return "{\"kind\":\"histogram\",\"property\":\(Formatting.jsonString(name)),\"date\":\(property.type == .date),"
                + "\"buckets\":[\(parts.joined(separator: ","))],\"nulls\":\(nulls)}"
        }
        let sorted = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let shown = sorted.prefix(30).map { "{\"value\":\(Formatting.jsonString($0.key)),\"count\":\($0.value)}" }
        let others = sorted.dropFirst(30).reduce(0) { $0 + $1.value }
        return "{\"kind\":\"counts\",\"property\":\(Formatting.jsonString(name)),\"values\":[\(shown.joined(separator: ","))],"
            + "\"others\":\(others),\"nulls\":\(nulls)}"
    }

    /// Every object of a type in the form `trove export` writes (json, jsonl or csv).
    private func export(_ type: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let format = request.argument("format") ?? "json"
        guard ["json", "jsonl", "csv"].contains(format) else {
            throw APIError(400, "invalidArgument", "format must be json, jsonl or csv, not '\(format)'")
        }
        let out = OutputBuffer(descriptor: nil)
        try Export.export(type, from: db, format: format, text: try portableText(), to: out, showsProgress: false)
        if format == "json" { out.append("\n") }
        let types = ["json": "application/json", "jsonl": "application/jsonl", "csv": "text/csv; charset=utf-8"]
        return HTTPResponse(
            status: 200, contentType: types[format]!, body: Array(out.bytes),
            headers: [("Content-Disposition", "attachment; filename=\"\(type).\(format)\"")])
    }

    // MARK: Answers

    private func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json; charset=utf-8", body: Array(text.utf8))
    }

    private func failure(_ status: Int, _ kind: String, _ message: String, position: Int? = nil) -> HTTPResponse {
        json(StudioJSON.error(kind: kind, message: message, position: position), status: status)
    }
}

/// An answer other than a ``TroveError``'s: a status, a kind and a message.
struct APIError: Error {
    let status: Int
    let kind: String
    let message: String

    init(_ status: Int, _ kind: String, _ message: String) {
        self.status = status
        self.kind = kind
        self.message = message
    }
}
