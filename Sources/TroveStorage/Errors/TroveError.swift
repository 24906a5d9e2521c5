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
        /// A write needs more space than ``Configuration/maximumFileSize`` allows.
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

    public var description: String {
        var text = "TroveError.\(kind.rawValue): \(message)"
        if let path, !message.contains(path) { text += " (file: \(path))" }
        return text
    }

    public static var fileAccess: Kind { .fileAccess }
    public static var fileInUse: Kind { .fileInUse }
    public static var corruptFile: Kind { .corruptFile }
    public static var fileFormatTooNew: Kind { .fileFormatTooNew }
    public static var fileSizeLimitReached: Kind { .fileSizeLimitReached }
    public static var diskFull: Kind { .diskFull }
    public static var ioError: Kind { .ioError }
    public static var schemaMismatch: Kind { .schemaMismatch }
    public static var primaryKeyExists: Kind { .primaryKeyExists }
    public static var invalidPrimaryKey: Kind { .invalidPrimaryKey }
    public static var invalidQuery: Kind { .invalidQuery }
    public static var unsupportedPredicate: Kind { .unsupportedPredicate }
    public static var wrongEncryptionKey: Kind { .wrongEncryptionKey }
    public static var invalidProperty: Kind { .invalidProperty }
    public static var invalidValue: Kind { .invalidValue }
    public static var writeInProgress: Kind { .writeInProgress }
    public static var notInWriteTransaction: Kind { .notInWriteTransaction }
    public static var invalidObject: Kind { .invalidObject }
    public static var invalidModel: Kind { .invalidModel }
    public static var writeConflict: Kind { .writeConflict }
    public static var storage: Kind { .storage }
}

extension TroveError.Kind {
    /// Lets `catch TroveError.primaryKeyExists { }` match by kind.
    public static func ~= (kind: TroveError.Kind, error: any Error) -> Bool {
        (error as? TroveError)?.kind == kind
    }
}
