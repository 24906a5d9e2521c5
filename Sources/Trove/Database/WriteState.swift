import TroveStorage

/// What a handle tracks while its write transaction is open.
final class WriteState {
    let transaction: WriteTransaction
    /// Types registered (tables created) in this transaction; published to the
    /// shared catalog only if it commits.
    var pendingTables: [String: TableInfo] = [:]
    /// Next object key per type, written back to `meta` at commit.
    var nextKeys: [String: UInt64] = [:]
    /// A failure in a property setter (which cannot throw); `commitWrite` throws it.
    var deferredError: (any Error)?
    var recordWriter = RecordWriter()

    init(transaction: WriteTransaction) {
        self.transaction = transaction
    }
}

/// An ``Object`` subclass bound to its stored table: for each `@Persisted`
/// field, the record column it reads.
struct ObjectBinding {
    let table: TableInfo
    let info: ModelInfo
    let columns: [Int]
}

/// A ``Persistable`` struct bound to its stored table.
struct ValueBinding {
    let table: TableInfo
    let schema: ObjectSchema
    let columns: [Int]
}
