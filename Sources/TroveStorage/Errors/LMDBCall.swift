import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one place that turns an `mdb_*` return code into a ``TroveError``.
///
/// Every LMDB call in TroveStorage goes through ``check(_:_:path:)``, so the
/// mapping from engine codes to error kinds lives here and nowhere else.
enum LMDBCall {
    @inline(__always)
    static func check(_ rc: Int32, _ operation: @autoclosure () -> String, path: String) throws {
        if rc != 0 { throw error(rc, operation(), path: path) }
    }

    static func error(_ rc: Int32, _ operation: String, path: String) -> TroveError {
        let reason = String(cString: mdb_strerror(rc))
        let kind: TroveError.Kind
        switch rc {
        case MDB_MAP_FULL: kind = .fileSizeLimitReached
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID, MDB_BAD_TXN, MDB_INCOMPATIBLE: kind = .corruptFile
        case MDB_VERSION_MISMATCH: kind = .fileFormatTooNew
        case ENOENT, EACCES, EPERM, EROFS, ENOTDIR, EISDIR, EBUSY, EAGAIN: kind = .fileAccess
        case ENOSPC, EDQUOT: kind = .diskFull
        case EIO: kind = .ioError
        default: kind = .storage
        }
        return TroveError(kind, "\(operation) failed on \(path): \(reason) (code \(rc))", path: path, code: rc)
    }
}
