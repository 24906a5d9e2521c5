/// The one error type Trove throws.
///
/// Every error carries a ``Kind`` to match on and a message that says what
/// went wrong and where: the file, the object type, the property, the key or
/// the query text and position, whichever apply.
///
/// ```swift
/// do {
///     try db.write { try db.add(duplicate) }
/// } catch TroveError.primaryKeyExists {
///     print("already saved")
/// } catch let error as TroveError {
///     print(error.kind, error.message)
/// }
/// ```
public struct TroveError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; match on it rather than on the message.
    public enum Kind: String, Sendable, Hashable {
        /// The database file cannot be created, opened or written (missing
        /// directory, permissions, read-only file system).
        case fileAccess
        /// Another handle or process has the file open, so an operation that
        /// replaces the file (compaction) was refused; the file is unchanged.
        case fileInUse
        /// The file is not a Trove database, or its contents are damaged.
        case corruptFile
        /// The file was written by a newer version of Trove.
        case fileFormatTooNew
        /// A write needs more space than `Configuration.maximumFileSize` allows.
        /// The write is rolled back; everything committed before is intact.
        case fileSizeLimitReached
        /// The disk is full. The write is rolled back.
        case diskFull
        /// The operating system reported an I/O error.
        case ioError
        /// The model in code and the schema stored in the file disagree.
        case schemaMismatch
        /// An object with the same primary key is already stored.
        case primaryKeyExists
        /// The value given for a primary key does not fit, or a type without a
        /// primary key was used where one is required.
        case invalidPrimaryKey
        /// A query string or its arguments could not be understood.
        case invalidQuery
        /// A Foundation `#Predicate` uses an expression Trove cannot run
        /// (the message names it); Trove refuses rather than answer wrongly.
        case unsupportedPredicate
        /// An encrypted file opened without its key or with another one, or
        /// a plain file opened with a key.
        case wrongEncryptionKey
        /// A property name that the object type does not have.
        case invalidProperty
        /// A value that cannot be stored (an index key too long, a wrong type).
        case invalidValue
        /// `write` was called while a write transaction is already open.
        case writeInProgress
        /// An operation that needs a write transaction was called outside one.
        case notInWriteTransaction
        /// The object was deleted, or belongs to another database.
        case invalidObject
        /// A model type that Trove cannot store.
        case invalidModel
        /// A delete blocked by a link declared with `deleteRule: .deny`.
        case deleteDenied
        /// The model differs from the file in a way that needs a migration
        /// (raise `Configuration.schemaVersion` and give a migration block), or
        /// the file is at a newer schema version than the model.
        case migrationRequired
        /// Another process changed the file while a write was being retried.
        case writeConflict
        /// Any other storage engine failure (the LMDB code is in ``code``).
        case storage
        /// The sync server could not be reached, or refused a call (the
        /// message says which, and never quotes a password or token).
        case syncServer
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// A sentence that says what went wrong, naming the things involved.
    public var message: String
    /// The database file involved, when there is one.
    public var path: String?
    /// The LMDB or system error code, when the failure came from the engine.
    public var code: Int32?
    /// The 0-based position in the query text, for ``Kind/invalidQuery``.
    public var position: Int?

    /// Makes an error; Trove's own layers use this.
    public init(_ kind: Kind, _ message: String, path: String? = nil, code: Int32? = nil, position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.code = code
        self.position = position
    }

    /// `TroveError.<kind>: <message>`, with the file added when the message does
    /// not name it.
    public var description: String {
        var text = "TroveError.\(kind.rawValue): \(message)"
        if let path, !message.contains(path) { text += " (file: \(path))" }
        return text
    }

    /// ``Kind/fileAccess``, so that `catch TroveError.fileAccess` matches it.
    public static var fileAccess: Kind { .fileAccess }
    /// ``Kind/fileInUse``, so that `catch TroveError.fileInUse` matches it.
    public static var fileInUse: Kind { .fileInUse }
    /// ``Kind/corruptFile``, so that `catch TroveError.corruptFile` matches it.
    public static var corruptFile: Kind { .corruptFile }
    /// ``Kind/fileFormatTooNew``, so that `catch TroveError.fileFormatTooNew` matches it.
    public static var fileFormatTooNew: Kind { .fileFormatTooNew }
    /// ``Kind/fileSizeLimitReached``, so that `catch TroveError.fileSizeLimitReached` matches it.
    public static var fileSizeLimitReached: Kind { .fileSizeLimitReached }
    /// ``Kind/diskFull``, so that `catch TroveError.diskFull` matches it.
    public static var diskFull: Kind { .diskFull }
    /// ``Kind/ioError``, so that `catch TroveError.ioError` matches it.
    public static var ioError: Kind { .ioError }
    /// ``Kind/schemaMismatch``, so that `catch TroveError.schemaMismatch` matches it.
    public static var schemaMismatch: Kind { .schemaMismatch }
    /// ``Kind/primaryKeyExists``, so that `catch TroveError.primaryKeyExists` matches it.
    public static var primaryKeyExists: Kind { .primaryKeyExists }
    /// ``Kind/invalidPrimaryKey``, so that `catch TroveError.invalidPrimaryKey` matches it.
    public static var invalidPrimaryKey: Kind { .invalidPrimaryKey }
    /// ``Kind/invalidQuery``, so that `catch TroveError.invalidQuery` matches it.
    public static var invalidQuery: Kind { .invalidQuery }
    /// ``Kind/unsupportedPredicate``, so that `catch TroveError.unsupportedPredicate` matches it.
    public static var unsupportedPredicate: Kind { .unsupportedPredicate }
    /// ``Kind/wrongEncryptionKey``, so that `catch TroveError.wrongEncryptionKey` matches it.
    public static var wrongEncryptionKey: Kind { .wrongEncryptionKey }
    /// ``Kind/invalidProperty``, so that `catch TroveError.invalidProperty` matches it.
    public static var invalidProperty: Kind { .invalidProperty }
    /// ``Kind/invalidValue``, so that `catch TroveError.invalidValue` matches it.
    public static var invalidValue: Kind { .invalidValue }
    /// ``Kind/writeInProgress``, so that `catch TroveError.writeInProgress` matches it.
    public static var writeInProgress: Kind { .writeInProgress }
    /// ``Kind/notInWriteTransaction``, so that `catch TroveError.notInWriteTransaction` matches it.
    public static var notInWriteTransaction: Kind { .notInWriteTransaction }
    /// ``Kind/invalidObject``, so that `catch TroveError.invalidObject` matches it.
    public static var invalidObject: Kind { .invalidObject }
    /// ``Kind/invalidModel``, so that `catch TroveError.invalidModel` matches it.
    public static var invalidModel: Kind { .invalidModel }
    /// ``Kind/deleteDenied``, so that `catch TroveError.deleteDenied` matches it.
    public static var deleteDenied: Kind { .deleteDenied }
    /// ``Kind/migrationRequired``, so that `catch TroveError.migrationRequired` matches it.
    public static var migrationRequired: Kind { .migrationRequired }
    /// ``Kind/writeConflict``, so that `catch TroveError.writeConflict` matches it.
    public static var writeConflict: Kind { .writeConflict }
    /// ``Kind/storage``, so that `catch TroveError.storage` matches it.
    public static var storage: Kind { .storage }
}

extension TroveError.Kind {
    /// Lets `catch TroveError.primaryKeyExists { }` match by kind.
    public static func ~= (kind: TroveError.Kind, error: any Error) -> Bool {
        (error as? TroveError)?.kind == kind
    }
}
