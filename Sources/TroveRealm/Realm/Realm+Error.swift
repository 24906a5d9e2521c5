import Foundation
import Trove

extension Realm {
    /// Realm's error type (`Realm.Error`, `RLMError` in Realm Swift): a
    /// ``Code`` to match on, the file involved, and the ``TroveError`` it
    /// came from.
    ///
    /// ```swift
    /// do { _ = try Realm(configuration: config) }
    /// catch Realm.Error.fileNotFound { … }
    /// catch let error as Realm.Error where error.code == .schemaMismatch { … }
    /// ```
    public struct Error: Swift.Error, Equatable, CustomStringConvertible, LocalizedError {
        /// Realm's error codes, with Realm's raw values.
        public enum Code: Int, Sendable {
            case fail = 1
            case fileAccess = 2
            case filePermissionDenied = 3
            case fileExists = 4
            case fileNotFound = 5
            case fileFormatUpgradeRequired = 6
            case incompatibleLockFile = 8
            case addressSpaceExhausted = 9
            case schemaMismatch = 10
            case alreadyOpen = 12
            case invalidInput = 13
            case outOfDiskSpace = 14
            case unsupportedFileFormatVersion = 16
            case fileOperationFailed = 19
            case invalidDatabase = 20
        }

        /// What kind of failure this is.
        public let code: Code
        /// The file involved, when there is one.
        public var fileURL: URL? { underlying.path.map { URL(fileURLWithPath: $0) } }
        /// Trove's error, with its own kind and message.
        public let underlying: TroveError

        /// Realm's error for a Trove error.
        public init(_ error: TroveError) {
            underlying = error
            code = Error.code(for: error)
            realmWords = Error.realmWords(for: error, code: code)
        }

        /// An error of a code, as Realm code makes its own (`throw Realm.Error(.fail)`);
        /// `NSLocalizedDescriptionKey` in `userInfo` gives the message.
        ///
        /// ```swift
        /// throw Realm.Error(.invalidInput, userInfo: [NSLocalizedDescriptionKey: "no photo selected"])
        /// ```
        public init(_ code: Code, userInfo: [String: Any] = [:]) {
            self.code = code
            underlying = TroveError(.storage, userInfo[NSLocalizedDescriptionKey] as? String ?? "Realm.Error(\(code))")
            realmWords = nil
        }

        /// Realm's message for a file that cannot be opened, else nil (Trove's message is used).
        private let realmWords: String?

        /// The message, saying what went wrong and where: for a file that
        /// cannot be opened, in Realm's words (`Failed to open Realm file at
        /// path '…': No such file or directory`); else Trove's.
        public var localizedDescription: String { realmWords ?? underlying.message }
        /// The message, saying what went wrong and where (``localizedDescription``).
        public var errorDescription: String? { localizedDescription }
        /// `Realm.Error(<code>): <message>`.
        public var description: String { "Realm.Error(\(code)): \(localizedDescription)" }

        /// Realm's words for the failures to open a file that Realm names
        /// (a missing file, no permission, a parent that is not a directory,
        /// a file too small to be a database); nil for the others.
        private static func realmWords(for error: TroveError, code: Code) -> String? {
            guard let path = error.path else { return nil }
            let failed = "Failed to open Realm file at path '\(path)'"
            switch code {
            case .fileNotFound: return "\(failed): No such file or directory"
            case .filePermissionDenied:
                let reason = error.code == EACCES ? "Permission denied" : "Operation not permitted"
                return "\(failed): \(reason). Please use a path where your app has read-write permissions."
            case .fileOperationFailed where error.code == ENOTDIR:
                return "Failed to open file at path '\(path)': parent path is not a directory"
            case .invalidDatabase where error.kind == .corruptFile:
                // LMDB's two meta pages, a memory page each, are the smallest database there is.
                guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
                    size > 0, size < 2 * Int(sysconf(Int32(_SC_PAGESIZE)))
                else { return nil }
                return "\(failed): file is non-empty but too small (\(size) bytes) to be a valid Realm."
            default: return nil
            }
        }

        /// Two errors are equal when their codes are.
        public static func == (lhs: Error, rhs: Error) -> Bool { lhs.code == rhs.code }

        private static func code(for error: TroveError) -> Code {
            switch error.kind {
            case .fileAccess:
                switch error.code {
                case EACCES, EPERM, EROFS: return .filePermissionDenied
                case ENOENT: return .fileNotFound
                case EEXIST: return .fileExists
                default:
                    if error.message.contains("does not exist") { return .fileNotFound }
                    if error.message.contains("the destination exists") { return .fileExists }
                    // Another operating-system failure (not a directory, a loop, a name too long…).
                    if let code = error.code, code > 0 { return .fileOperationFailed }
                    return .fileAccess
                }
            case .fileInUse: return .alreadyOpen
            case .corruptFile, .wrongEncryptionKey: return .invalidDatabase
            case .fileFormatTooNew: return .unsupportedFileFormatVersion
            case .fileSizeLimitReached: return .addressSpaceExhausted
            case .diskFull: return .outOfDiskSpace
            case .ioError: return .fileOperationFailed
            case .schemaMismatch, .migrationRequired: return .schemaMismatch
            case .invalidValue, .invalidQuery, .invalidProperty, .invalidPrimaryKey: return .invalidInput
            default: return .fail
            }
        }

        /// ``Code/fail``, so that `catch Realm.Error.fail` matches it.
        public static var fail: Code { .fail }
        /// ``Code/fileAccess``, so that `catch Realm.Error.fileAccess` matches it.
        public static var fileAccess: Code { .fileAccess }
        /// ``Code/filePermissionDenied``, so that `catch Realm.Error.filePermissionDenied` matches it.
        public static var filePermissionDenied: Code { .filePermissionDenied }
        /// ``Code/fileExists``, so that `catch Realm.Error.fileExists` matches it.
        public static var fileExists: Code { .fileExists }
        /// ``Code/fileNotFound``, so that `catch Realm.Error.fileNotFound` matches it.
        public static var fileNotFound: Code { .fileNotFound }
        /// ``Code/schemaMismatch``, so that `catch Realm.Error.schemaMismatch` matches it.
        public static var schemaMismatch: Code { .schemaMismatch }
        /// ``Code/alreadyOpen``, so that `catch Realm.Error.alreadyOpen` matches it.
        public static var alreadyOpen: Code { .alreadyOpen }
        /// ``Code/invalidDatabase``, so that `catch Realm.Error.invalidDatabase` matches it.
        public static var invalidDatabase: Code { .invalidDatabase }
        /// ``Code/unsupportedFileFormatVersion``, so that `catch Realm.Error.unsupportedFileFormatVersion` matches it.
        public static var unsupportedFileFormatVersion: Code { .unsupportedFileFormatVersion }
        /// ``Code/outOfDiskSpace``, so that `catch Realm.Error.outOfDiskSpace` matches it.
        public static var outOfDiskSpace: Code { .outOfDiskSpace }
        /// ``Code/fileOperationFailed``, so that `catch Realm.Error.fileOperationFailed` matches it.
        public static var fileOperationFailed: Code { .fileOperationFailed }
        /// ``Code/invalidInput``, so that `catch Realm.Error.invalidInput` matches it.
        public static var invalidInput: Code { .invalidInput }
        /// ``Code/addressSpaceExhausted``, so that `catch Realm.Error.addressSpaceExhausted` matches it.
        public static var addressSpaceExhausted: Code { .addressSpaceExhausted }
        /// ``Code/fileFormatUpgradeRequired``, so that `catch Realm.Error.fileFormatUpgradeRequired` matches it.
        public static var fileFormatUpgradeRequired: Code { .fileFormatUpgradeRequired }
        /// ``Code/incompatibleLockFile``, so that `catch Realm.Error.incompatibleLockFile` matches it.
        public static var incompatibleLockFile: Code { .incompatibleLockFile }
    }
}

extension Realm.Error.Code {
    /// Lets `catch Realm.Error.fileNotFound { }` match a `Realm.Error` by code.
    public static func ~= (code: Realm.Error.Code, error: any Swift.Error) -> Bool {
        (error as? Realm.Error)?.code == code
    }
}

/// Runs `body`, turning a Trove error into Realm's.
@inline(__always)
func realmErrors<R>(_ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as TroveError {
        throw Realm.Error(error)
    }
}
