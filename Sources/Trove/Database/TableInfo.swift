import TroveStorage

/// One object type as stored in one file: its schema, the layout of its
/// records, and the LMDB tables that hold its objects and indexes.
///
/// This is the physical-layout boundary: the object layer reads and writes
/// records only through ``Database`` methods that use these tables, so the
/// layout can change (to column clusters) without touching objects.
final class TableInfo: @unchecked Sendable {
    let name: String
    let schema: ObjectSchema
    let layout: RecordLayout
    let objects: Table
    /// Primary key value -> object key (unique).
    let primaryKeyIndex: Table?
    let primaryKeyColumn: Int?
    /// Secondary indexes: value -> object keys.
    let indexes: [Int: Table]
    let columnIndex: [String: Int]
    /// The `meta` keys of this type's counters.
    let sequenceCounter: String
    let autoIncrementCounter: String
    /// Set when the write that created these tables was cancelled: LMDB closed
    /// the handles and may give their slots to other tables, so nothing may
    /// use them any more. Only the handle that registered them sees them then.
    var isRetired = false

    init(schema: ObjectSchema, objects: Table, primaryKeyIndex: Table?, indexes: [Int: Table]) {
        name = schema.name
        self.schema = schema
        layout = RecordLayout(schema)
        self.objects = objects
        self.primaryKeyIndex = primaryKeyIndex
        primaryKeyColumn = schema.properties.firstIndex { $0.isPrimaryKey }
        self.indexes = indexes
        var columns: [String: Int] = [:]
        for (index, property) in schema.properties.enumerated() { columns[property.name] = index }
        columnIndex = columns
        sequenceCounter = "seq:\(name)"
        autoIncrementCounter = "auto:\(name)"
    }

    static func objectsName(_ type: String) -> String { "obj:\(type)" }
    static func primaryKeyName(_ type: String) -> String { "pk:\(type)" }
    static func indexName(_ type: String, _ property: String) -> String {
        "\(Environment.multiValuePrefix)\(type).\(property)"
    }

    /// The index answering equality on `column`: the primary key index or a secondary one.
    func hasIndex(on column: Int) -> Bool {
        column == primaryKeyColumn || indexes[column] != nil
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
