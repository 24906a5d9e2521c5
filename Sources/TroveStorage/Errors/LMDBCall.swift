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
        if rc == MDB_DBS_FULL {
            return TroveError(
                kind,
                "\(operation) failed on \(path): the file needs more tables than this process opened it with room for (room for twice the tables the file had and 64 more, at least 1,024 and enough for the types in Configuration.objectTypes; each stored type uses two, and one more for each index, link and list, set or map property): list every type in Configuration.objectTypes, or close every handle on the file and open it again (code \(rc))",
                path: path, code: rc)
        }
        return TroveError(kind, "\(operation) failed on \(path): \(reason) (code \(rc))", path: path, code: rc)
    }

    /// The error of a failed commit. LMDB reports a write that the disk took
    /// only part of (a full disk) as `EIO`, like a failing disk: an `EIO`
    /// while the file system holding `path` has (next to) no room left is
    /// reported as ``TroveError/Kind/diskFull``.
    static func commitError(_ rc: Int32, _ operation: String, path: String) -> TroveError {
        guard rc == EIO, let free = freeBytes(at: path), free < 1 << 20 else { return error(rc, operation, path: path) }
        return TroveError(
            .diskFull,
            "\(operation) failed on \(path): the disk is full (\(free) bytes free; the write was cut short); nothing of the transaction was committed — free some space and write again",
            path: path, code: ENOSPC)
    }

    /// The bytes this process may still write on the file system holding `path`.
    static func freeBytes(at path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let blocks = geteuid() == 0 ? info.f_bfree : info.f_bavail  // root may use the reserved blocks
        return Int(blocks) * Int(info.f_frsize)
    }
}
