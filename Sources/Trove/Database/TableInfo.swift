import Foundation
import TroveStorage

/// One object type as stored in one file: its schema, the layout of its
/// records, and the LMDB tables that hold its objects and indexes.
///
/// Its objects are reached only through ``store`` (``ObjectStore``), the
/// physical-layout boundary, so the layout can change (to column clusters)
/// without touching the rest of the object layer.
final class TableInfo: @unchecked Sendable {
    let name: String
    let schema: ObjectSchema
    let layout: RecordLayout
    /// The objects (``ObjectStore``); only it touches their table.
    let store: ObjectStore
    /// Primary key value -> object key (unique), for String and UUID keys.
    let primaryKeyIndex: Table?
    let primaryKeyColumn: Int?
    /// An integer primary key *is* the object key (like SQLite's INTEGER
    /// PRIMARY KEY): no separate index, one lookup instead of two.
    let keyIsPrimaryKey: Bool
    /// An optional integer primary key: nil is a key too, the smallest
    /// object key (the one `Int64.min` would have, which it then cannot take).
    let primaryKeyIsOptional: Bool
    /// Secondary indexes: value -> object keys.
    let indexes: [Int: Table]
    /// Full-text indexes of String columns (``FullTextIndex``).
    let fullTextIndexes: [Int: Table]
    let columnIndex: [String: Int]
    /// Per link column (and list of links): target key + source key -> how
    /// many times the source links to the target. Answers inverse links.
    let refs: [Int: Table]
    /// Per collection column (list, set, map): owner key ‖ position, value
    /// key or map key -> element. One owner's elements are adjacent.
    let collections: [Int: Table]
    /// How a collection's elements are encoded: a one-column record.
    let elementLayouts: [Int: RecordLayout]
    /// Whether the lists' tables hold chunks of elements (``ListChunk``):
    /// every file a handle writes does; a read-only handle on an older file
    /// reads one element per entry.
    let listsArePacked: Bool
    /// A collection's elements seen as a type of one property (named like the
    /// collection), so a query can bind a comparison to them.
    let elementTables: [Int: TableInfo]
    /// Whether any column is a link or a collection stored apart from the record.
    let hasRelations: Bool
    /// Per column: a fixed-size value nothing else follows (no index, link
    /// count or full-text index), so a write of it is a patch of its slot
    /// (``Database/writeColumn(_:_:of:table:)``).
    let patchesInPlace: [Bool]
    /// Per column: a value nothing else follows, fixed-size or not (no
    /// index, link count or full-text index, not a collection or a mixed
    /// value), so a setter changes its column in the cluster alone.
    let editsColumnAlone: [Bool]
    /// In a file with key tokens (``KeyTokens``): the tokens its index,
    /// primary key and set keys hold in place of values.
    let keyTokens: KeyTokens?
    /// The `meta` keys of this type's counters.
    let sequenceCounter: String
    let autoIncrementCounter: String
    /// Set when the write that created these tables was cancelled: LMDB closed
    /// the handles and may give their slots to other tables, so nothing may
    /// use them any more. Only the handle that registered them sees them then.
    var isRetired = false

    init(
        schema: ObjectSchema, objects: Table, primaryKeyIndex: Table?, indexes: [Int: Table], refs: [Int: Table] = [:],
        collections: [Int: Table] = [:], fullTextIndexes: [Int: Table] = [:], keyTokens: KeyTokens? = nil,
        integerKeysAreIndexed: Bool = false, listsArePacked: Bool
    ) {
        name = schema.name
        self.listsArePacked = listsArePacked
        self.keyTokens = keyTokens
        self.schema = schema
        layout = RecordLayout(schema)
        store = ObjectStore(table: objects, layout: layout)
        self.primaryKeyIndex = primaryKeyIndex
        primaryKeyColumn = schema.properties.firstIndex { $0.isPrimaryKey }
        keyIsPrimaryKey = TableInfo.keysByPrimaryKey(schema, integerKeysAreIndexed: integerKeysAreIndexed)
        primaryKeyIsOptional = primaryKeyColumn.map { schema.properties[$0].isOptional } ?? false
        self.indexes = indexes
        self.fullTextIndexes = fullTextIndexes
        self.refs = refs
        self.collections = collections
        var elementTables: [Int: TableInfo] = [:]
        for (column, table) in collections {
            var element = schema.properties[column]
            element.collection = nil
            element.defaultValue = nil
            element.isIndexed = false
            element.isFullTextIndexed = false
            element.isPrimaryKey = false
            elementTables[column] = TableInfo(
                schema: ObjectSchema(name: "\(schema.name).\(element.name)", properties: [element]), objects: table,
                primaryKeyIndex: nil, indexes: [:], keyTokens: keyTokens, listsArePacked: listsArePacked)
        }
        self.elementTables = elementTables
        elementLayouts = elementTables.mapValues(\.layout)
        hasRelations = !refs.isEmpty || !collections.isEmpty
        patchesInPlace = schema.properties.indices.map { column in
            !schema.properties[column].type.isVariableSize && schema.properties[column].collection == nil
                && indexes[column] == nil && refs[column] == nil && fullTextIndexes[column] == nil
        }
        editsColumnAlone = schema.properties.indices.map { column in
            schema.properties[column].collection == nil && schema.properties[column].type != .mixed
                && indexes[column] == nil && refs[column] == nil && fullTextIndexes[column] == nil
        }
        var columns: [String: Int] = [:]
        for (index, property) in schema.properties.enumerated() { columns[property.name] = index }
        columnIndex = columns
        sequenceCounter = "seq:\(schema.keySpace)"
        autoIncrementCounter = "auto:\(name)"
    }

    static func objectsName(_ type: String) -> String { "obj:\(type)" }
    /// The table of a type whose objects are in column clusters (``ClusterTable``).
    static func clustersName(_ type: String) -> String { "\(ObjectStore.clusterPrefix)\(type)" }
    /// Whether handles store types in column clusters unless configured
    /// otherwise: yes, unless `TROVE_LAYOUT=records` is in the environment
    /// (the test suite's second pass runs the record layout that way).
    static let clustersForNewTypes = ProcessInfo.processInfo.environment["TROVE_LAYOUT"] != "records"
    static func primaryKeyName(_ type: String) -> String { "pk:\(type)" }
    static func indexName(_ type: String, _ property: String) -> String {
        "\(Environment.multiValuePrefix)\(type).\(property)"
    }
    static func refsName(_ type: String, _ property: String) -> String { "ref:\(type).\(property)" }
    /// The table of a list, set or map property.
    static func collectionName(_ type: String, _ property: PropertySchema) -> String? {
        switch property.collection {
        case .list: return "list:\(type).\(property.name)"
        case .set: return "set:\(type).\(property.name)"
        case .map: return "map:\(type).\(property.name)"
        case .linkingObjects, nil: return nil
        }
    }

    /// Every LMDB table a stored type uses, with whether it holds several values per key.
    static func tableNames(for schema: ObjectSchema, integerKeysAreIndexed: Bool) -> [(name: String, isMultiValue: Bool)] {
        var names = [(objectsName(schema.name), false), (clustersName(schema.name), false)]
        if schema.primaryKey != nil, !keysByPrimaryKey(schema, integerKeysAreIndexed: integerKeysAreIndexed) {
            names.append((primaryKeyName(schema.name), false))
        }
        for property in schema.properties {
            if property.isIndexed, !property.isPrimaryKey { names.append((indexName(schema.name, property.name), true)) }
            if property.isFullTextIndexed {
                names.append((FullTextIndex.tableName(schema.name, property.name), false))
            }
            if property.isLink { names.append((refsName(schema.name, property.name), false)) }
            if let name = collectionName(schema.name, property) { names.append((name, false)) }
        }
        return names
    }

    /// The key of `value` of `column` in `index` (its primary key table,
    /// index or set table): see ``IndexKey/stored(_:type:in:tokens:)``.
    func indexKey(_ value: StoredValue, column: Int, in index: Table) -> (bytes: [UInt8], exact: Bool) {
        IndexKey.stored(value, type: layout.types[column], in: index.name, tokens: keyTokens)
    }

    /// Whether an index of `column` keeps values in order: not in a file
    /// with key tokens, where only the objects (keyed by an integer
    /// primary key) are ordered.
    func indexIsOrdered(_ column: Int) -> Bool {
        keyTokens == nil || (column == primaryKeyColumn && keyIsPrimaryKey)
    }

    /// Whether the entries of collection `column` are keyed by tokens: a
    /// set or map in a file with key tokens. Its entries are then visited
    /// sorted once read (``Database/forEachCollectionEntry``), and a map's
    /// entry holds its key before the element (``mapEntry(_:)``).
    func tokenizesEntries(_ column: Int) -> Bool {
        keyTokens != nil && [.set, .map].contains(schema.properties[column].collection)
    }

    /// A stored map entry of a file with key tokens split into its key
    /// (2 bytes of length, little-endian, then the UTF-8) and its element
    /// record; nil when the length runs past the entry (damage).
    static func mapEntry(_ stored: UnsafeRawBufferPointer) -> (key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)? {
        guard stored.count >= 2 else { return nil }
        let length = Int(UInt16(littleEndian: stored.loadUnaligned(as: UInt16.self)))
        guard 2 + length <= stored.count else { return nil }
        return (
            UnsafeRawBufferPointer(rebasing: stored[2..<(2 + length)]), UnsafeRawBufferPointer(rebasing: stored[(2 + length)...])
        )
    }

    /// The element record of a stored entry of collection `column` (a
    /// damaged map entry's reads as empty, which fails the record check).
    func elementRecord(_ stored: UnsafeRawBufferPointer, column: Int) -> UnsafeRawBufferPointer {
        guard keyTokens != nil, schema.properties[column].collection == .map else { return stored }
        return TableInfo.mapEntry(stored)?.record ?? UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Whether a schema keys its objects by its integer primary key: not a
    /// subclass, whose objects take keys from the hierarchy's shared counter.
    static func keysByPrimaryKey(_ schema: ObjectSchema, integerKeysAreIndexed: Bool) -> Bool {
        !integerKeysAreIndexed && schema.ancestors == nil && (schema.primaryKey.map { $0.type.isInteger } ?? false)
    }

    /// The object key of an integer primary key value (order-preserving).
    @inline(__always)
    static func objectKey(forInteger value: Int64) -> UInt64 {
        UInt64(bitPattern: value) ^ (1 << 63)
    }

    /// The object key of nil in a table keyed by an optional integer primary key.
    static let nilPrimaryKey = objectKey(forInteger: .min)

    /// The object key of a primary key value in a table keyed by its integer
    /// primary key; nil for a value that cannot be one.
    func objectKey(forPrimaryKey value: StoredValue) -> UInt64? {
        switch value {
        case .int(let integer): return TableInfo.objectKey(forInteger: integer)
        case .null where primaryKeyIsOptional: return TableInfo.nilPrimaryKey
        default: return nil
        }
    }

    /// The integer primary key of an object key of a table keyed by it.
    @inline(__always)
    static func integer(forObjectKey key: UInt64) -> Int64 {
        Int64(bitPattern: key ^ (1 << 63))
    }

    /// The closest property name to `name`, for "did you mean" messages.
    func suggestion(for name: String) -> String? {
        schema.properties.map(\.name).min { editDistance($0, name) < editDistance($1, name) }
            .flatMap { editDistance($0, name) <= max(2, name.count / 2) ? $0 : nil }
    }

    func unknownProperty(_ name: String) -> TroveError {
        var message = "\(self.name) has no property named '\(name)'"
        if let suggestion = suggestion(for: name) { message += "; did you mean '\(suggestion)'?" }
        return TroveError(.invalidProperty, message)
    }
}

/// Levenshtein distance, for suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
