import TroveStorage

/// What a handle tracks while its write transaction is open.
///
/// (Its fields skip Swift's dynamic exclusivity checks: a write is used by
/// one thread at a time, and each check cost ~76 instructions a commit paid
/// dozens of times. A finished write's state is parked for the handle's
/// next write, ``park()``: making one and freeing it cost ~900 instructions
/// a single-object commit.)
final class WriteState {
    /// The write's transaction.
    var transaction: WriteTransaction {
        guard let current else { preconditionFailure("Trove: a parked write state was used; this is a bug in Trove") }
        return current
    }
    /// nil while the state is parked.
    @exclusivity(unchecked) private var current: WriteTransaction?
    /// Types registered (tables created) in this transaction; published to the
    /// shared catalog only if it commits.
    @exclusivity(unchecked) var pendingTables: [String: TableInfo] = [:]
    /// Next object key (`seq:<Type>`) and auto-increment value (`auto:<Type>`)
    /// per type handed out in this transaction.
    @exclusivity(unchecked) var nextKeys: [String: UInt64] = [:]
    /// Per counter, one past the largest key or auto-increment value deleted
    /// in this transaction. Only then must the counter be stored: without
    /// deletes, the largest key in the table already says where to go on.
    @exclusivity(unchecked) var deletedBeyond: [String: UInt64] = [:]
    /// The stored counters as this transaction leaves them, where known
    /// (``Database/storedCounters``, for after the commit).
    @exclusivity(unchecked) var countersAfterCommit: [String: UInt64] = [:]
    /// A failure in a property setter (which cannot throw); `commitWrite` throws it.
    @exclusivity(unchecked) var deferredError: (any Error)?
    @exclusivity(unchecked) var recordWriter = RecordWriter()
    /// Observers the write must not notify (``Database/write(withoutNotifying:_:)``).
    @exclusivity(unchecked) var silenced: Set<Int> = []
    /// Per type, the link properties pointing at it (found once per transaction;
    /// a type none point at is only the last answer).
    @exclusivity(unchecked) var incomingLinks: [String: [(table: TableInfo, column: Int)]] = [:]
    /// The type asked about last and its answer: a loop of deletes asks again and again.
    @exclusivity(unchecked) var lastIncomingLinks: (type: String, links: [(table: TableInfo, column: Int)])?
    /// The transaction of a migration: objects may take new primary keys.
    @exclusivity(unchecked) var isMigration = false
    /// Embedded objects an upsert keeps while it stores their owner again
    /// (by type name and key): unlinked meanwhile, they are not deleted.
    @exclusivity(unchecked) var keptEmbedded: Set<EmbeddedPlace> = []
    /// What the transaction changed, for observers here and in other processes.
    let recorder: ChangeRecorder
    /// The snapshot the handle's observers last saw, kept open until they
    /// hear of this commit (nil when the handle has no observers).
    @exclusivity(unchecked) var previousSnapshot: ReadTransaction?
    /// Per full-text index (by table name), the postings not yet written.
    @exclusivity(unchecked) private(set) var fullText: [String: FullTextPending] = [:]

    /// A write through `transaction`, recording its changes in the handle's `recorder`.
    init(transaction: WriteTransaction, recorder: ChangeRecorder) {
        self.recorder = recorder
        // (Not weak: a weak reference gives the state a side table, paid at every retain and release. A
        // transaction forgets the closure when it ends, and the state holds its transaction.)
        writePendingHook = { [unowned(unsafe) self] in try self.writeFullText() }
        start(transaction)
    }

    /// ``writeFullText()`` as the transactions' `pendingWrites` (made once).
    @exclusivity(unchecked) private var writePendingHook: (() throws -> Void)!

    /// Forgets the finished write (its transaction, and what it noted), for
    /// the next ``start(_:)``.
    func park() {
        current = nil
        // (Emptied by dropping their storage: emptying a hash table in place visits every bucket.)
        if !pendingTables.isEmpty { pendingTables = [:] }
        if !nextKeys.isEmpty { nextKeys = [:] }
        if !deletedBeyond.isEmpty { deletedBeyond = [:] }
        if !countersAfterCommit.isEmpty { countersAfterCommit = [:] }
        deferredError = nil
        if !silenced.isEmpty { silenced = [] }
        if !incomingLinks.isEmpty { incomingLinks = [:] }
        lastIncomingLinks = nil
        isMigration = false
        if !keptEmbedded.isEmpty { keptEmbedded = [] }
        previousSnapshot = nil
        if !fullText.isEmpty { fullText = [:] }
    }

    /// Starts a write through `transaction` (in a new state, or one ``park()`` left).
    func start(_ transaction: WriteTransaction) {
        precondition(current == nil, "Trove: a write state started while in use; this is a bug in Trove")
        current = transaction
        recorder.reset()
        transaction.changeHook = recorder.changeHook
        transaction.changeHookForKeys = recorder.changeHookForKeys
    }

    /// The postings waiting for the full-text index `index` in this write;
    /// the first ones make the transaction write them before anything
    /// reads the indexes, and before it commits (a write without them
    /// calls nothing).
    func fullTextPending(_ index: Table) -> FullTextPending {
        if let pending = fullText[index.name] { return pending }
        let pending = FullTextPending(table: index)
        if fullText.isEmpty { transaction.pendingWrites = writePendingHook }
        fullText[index.name] = pending
        return pending
    }

    /// Writes every pending full-text posting (before a read of the indexes, and before commit).
    func writeFullText() throws {
        for pending in fullText.values where !pending.isEmpty { try pending.write(transaction) }
    }
}

/// An ``Object`` subclass bound to its stored table in one handle: for each
/// `@Persisted` field, the record column it reads. Every managed object of
/// the class points at it; binding an object writes each field's column into
/// the field, where `@Persisted`'s accessor finds it (the value part of a
/// managed object's fields is never used).
@usableFromInline
final class ObjectBinding {
    let table: TableInfo
    /// The table's layout, kept alive by `table`.
    unowned(unsafe) let layout: RecordLayout
    let info: ModelInfo
    let columns: [Int]
    /// The class adopts ``ObservationTracked``: reads report to Observation.
    let isTracked: Bool
    /// For `add`: where each field's value sits, its type, and its column.
    let fieldReaders: [(valueOffset: Int, storable: any _TroveStorable.Type, column: Int)]
    /// For `add`: the links and collections, written once the object has its key.
    let relationFields: [(valueOffset: Int, storable: any _TroveStorable.Type, column: Int)]
    /// Where each field's column sits in an instance, and the column to write there.
    let columnStamps: [(offset: Int, column: Int)]
    /// The legacy fields (declared without `@Persisted`): where each sits, its type and its column.
    let legacyAttachments: [(offset: Int, type: any _TroveDeclaredWithPersisted.Type, column: Int)]
    private lazy var probe: Object = {
        let probe = info.type.init()
        probe.bindProbe(table: table, columns: columns, info: info)
        return probe
    }()

    init(table: TableInfo, info: ModelInfo, columns: [Int]) {
        self.table = table
        self.layout = table.layout
        self.info = info
        self.columns = columns
        isTracked = info.type is any ObservationTracked.Type
        let pairs = zip(info.fields, columns)
        fieldReaders = pairs.filter { $0.0.schema.isPlainValue }.map { ($0.valueOffset, $0.storable, $1) }
        relationFields = pairs.filter { !$0.0.schema.isPlainValue }.map { ($0.valueOffset, $0.storable, $1) }
        columnStamps = pairs.filter { $0.0.legacy == nil }.map { (field, column) in (field.columnOffset, column) }
        legacyAttachments = pairs.compactMap { field, column in field.legacy.map { (field.offset, $0, column) } }
    }

    @exclusivity(unchecked) private var userKeyPathColumns: [(key: ObjectIdentifier, column: Int)] = []

    /// The column a model key path (`\Person.age`) reads, or nil when it reads none.
    func column(forKeyPath keyPath: AnyKeyPath) -> Int? {
        let key = ObjectIdentifier(keyPath)
        for entry in userKeyPathColumns where entry.key == key { return entry.column }
        guard let recorder = probe._recorder else { return nil }
        recorder.reset()
        guard let value = probe[keyPath: keyPath] else { return nil }
        guard let column = recorder.columns.first else {
            // A field declared without @Persisted: known by the instance it holds.
            guard let legacy = info.legacyFieldIndex(holding: value, in: probe) else { return nil }
            return columns[legacy]
        }
        // `\.owner?.name` records the link column and reads on past it: not one column.
        if layout.types[column] == .link,
            (type(of: keyPath).valueType as? any _TroveStorable.Type)?._troveLinkTarget == nil
        {
            return nil
        }
        if userKeyPathColumns.count < 256 { userKeyPathColumns.append((key, column)) }
        return column
    }

    /// The property path a model key path reads, through links:
    /// `\Person.dog?.name` is `dog.name`; nil when it reads no property.
    func path(forKeyPath keyPath: AnyKeyPath) -> String? {
        guard let recorder = probe._recorder else { return nil }
        recorder.reset()
        guard let value = probe[keyPath: keyPath] else { return nil }
        let path = recorder.path
        recorder.reset()
        if path.isEmpty, let legacy = info.legacyFieldIndex(holding: value, in: probe) {
            return info.fields[legacy].schema.name
        }
        return path.isEmpty ? nil : path.joined(separator: ".")
    }

}

/// A ``Persistable`` struct bound to its stored table.
struct ValueBinding {
    let table: TableInfo
    let schema: ObjectSchema
    let columns: [Int]
    /// Each coding key's column in the record.
    let valueColumns: ValueColumns
    /// The struct's fields read and written in place, when they can be (``StructFields``).
    let fields: StructFields?

    init(table: TableInfo, schema: ObjectSchema, columns: [Int], fields: StructFields? = nil) {
        self.table = table
        self.schema = schema
        self.columns = columns
        self.fields = fields
        valueColumns = ValueColumns(names: schema.properties.map(\.name), columns: columns)
    }
}

/// An embedded object by its type's name and key.
struct EmbeddedPlace: Hashable {
    let typeName: String
    let key: UInt64
}
