import CLMDB
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replacing the file under its own name (compaction), and the checks that
/// make it safe when other processes share the file.
///
/// Every process that has the file open holds LMDB's shared `fcntl` lock on
/// byte 0 of the lock file; a process that opens it waits for that byte while
/// someone holds it exclusively. Compaction takes the byte exclusively, which
/// succeeds only when no other process has the file open and keeps new
/// openers out until the compacted file is in place and the lock file has been
/// set up for it. A process that kept writing to a file renamed away would
/// write into an unlinked inode: that is how commits were lost before.
extension Environment {
    /// What ``compact(path:options:decide:)`` did.
    package enum CompactionOutcome: Sendable, Equatable {
        /// The file was replaced by its compacted copy.
        case compacted(before: Int, after: Int)
        /// `decide` answered false; the file is as it was.
        case declined
    }

    /// Rewrites the file at `path` without its free pages and renames the
    /// copy over it, keeping the file's mode and owner. `decide` sees the
    /// open environment and says whether to go on; `copy` writes the copy
    /// from the open environment into a new one (see ``copyTables(into:skipping:batch:prepare:)``).
    ///
    /// Throws ``TroveError/Kind/fileInUse`` when a handle of this process or
    /// another process has the file open; the file is then left alone.
    package static func compact(
        path: String, options: Options, decide: (Environment) throws -> Bool,
        copy: (_ from: Environment, _ into: Environment) throws -> Void
    ) throws -> CompactionOutcome {
        let key = try canonicalPath(path)
        try registry.withLock { registry in
            if registry.live[key]?.environment != nil || registry.closing.contains(key) {
                throw TroveError(
                    .fileInUse, "cannot compact \(path): this process has it open; close every handle on it first", path: path)
            }
            registry.closing.insert(key)  // opens in this process wait until compaction ends
        }
        defer { registry.withLock { _ = $0.closing.remove(key) } }

        // The exclusive lock on the data file itself: held by nobody else only
        // when no process has this very file open, whatever became of its
        // lock file (a deleted lock file is recreated empty, and a process
        // still writing through the old one would not show on the new one).
        let dataLock = try lockDataFileExclusively(key)
        defer { if dataLock >= 0 { close(dataLock) } }

        var options = options
        options.readOnly = false
        options.deleteOnClose = false
        options.sharesDataFileLock = false
        var environment: Environment? = try openUnregistered(path: key, options: options)
        let lockFile = openDescriptor(key + "-lock", O_RDWR | O_CLOEXEC)
        guard lockFile >= 0 else {
            let code = errno
            environment = nil
            throw TroveError(
                .fileAccess, "cannot open the lock file \(key)-lock: \(String(cString: strerror(code)))", path: path, code: code)
        }
        // fcntl locks belong to the process: closing any descriptor of the lock
        // file drops LMDB's lock too, so the environments close first.
        defer {
            environment = nil
            close(lockFile)
        }
        if let holder = otherProcessHoldingLock(lockFile) {
            let who = holder > 0 ? "process \(holder)" : "another process"
            throw TroveError(
                .fileInUse,
                "cannot compact \(path): \(who) has it open, and its later commits would go to the replaced file; close it there first",
                path: path)
        }
        guard try decide(environment!) else { return .declined }

        let before = currentSize(of: key)
        let temporary = key + ".compacting"
        unlink(temporary)
        do {
            unlink(temporary + "-lock")
            do {
                var copyOptions = options
                copyOptions.initialMapSize = max(options.initialMapSize, before)
                copyOptions.sharesDataFileLock = true  // the copy is in use until renamed
                copyOptions.maxTables = max(copyOptions.maxTables, environment!.options.maxTables)
                // The copy holds its keys as the file does, with the same tokens: they are copied as they are.
                copyOptions.tokenizesKeys = environment!.keyTokens != nil || options.upgradesKeys
                if environment!.keyTokens != nil { copyOptions.newFileSalt = environment!.salt }
                let target = try openUnregistered(path: temporary, options: copyOptions)
                try copy(environment!, target)
            }
            unlink(temporary + "-lock")
            try FileReplacement.adoptModeAndOwner(of: key, for: temporary)
            try FileReplacement.sync(temporary)
            guard rename(temporary, key) == 0 else {
                let code = errno
                throw TroveError(
                    .fileAccess, "cannot replace \(path) with its compacted copy: \(String(cString: strerror(code)))",
                    path: path, code: code)
            }
        } catch {
            unlink(temporary)
            unlink(temporary + "-lock")
            throw error
        }
        FileReplacement.syncDirectory(of: key)
        // The lock file still describes the old file (its last transaction id
        // picks the meta page readers use). An environment opened now finds the
        // byte held by this process, takes it as exclusive and sets the lock
        // file up for the new file before anyone waiting gets in.
        _ = try openUnregistered(path: key, options: options)
        return .compacted(before: before, after: currentSize(of: key))
    }

    /// Opens an environment outside the registry, again when the file was
    /// replaced between opening it and locking it (a read-only open reads the
    /// file before it takes the lock).
    static func openUnregistered(path: String, options: Options) throws -> Environment {
        var attempts = 0
        var staleLockAttempts = 0
        while true {
            do {
                return try Environment(path: path, options: options)
            } catch is StaleLockFile {
                // Alone, the next open takes the lock file exclusively and sets it up anew.
                staleLockAttempts += 1
                if staleLockAttempts == 50 {
                    throw TroveError(
                        .fileInUse,
                        "cannot open \(path): its lock file \(path)-lock describes an earlier file at this path (a compaction was stopped after it replaced the file, while other processes had it open); close every process that has \(path) open, then open it again",
                        path: path)
                }
                usleep(20_000)
            } catch is FileReplacedWhileOpening {
                attempts += 1
                if attempts == 100 {
                    throw TroveError(.fileAccess, "cannot open \(path): it kept being replaced while it was opened", path: path)
                }
                usleep(1000)
            }
        }
    }

    /// Throws when the file LMDB opened is no longer the one at `path`.
    static func checkSameFile(_ env: OpaquePointer, path: String) throws {
        var descriptor: Int32 = -1
        guard mdb_env_get_fd(env, &descriptor) == 0, descriptor >= 0 else { return }
        var opened = stat()
        var current = stat()
        guard fstat(descriptor, &opened) == 0 else { return }
        if stat(path, &current) != 0 || opened.st_dev != current.st_dev || opened.st_ino != current.st_ino {
            throw FileReplacedWhileOpening()
        }
    }

    /// Throws ``StaleLockFile`` when the lock file's last transaction is
    /// newer than any the file holds: the lock file was set up for a file
    /// this one replaced (a compaction killed between its rename and setting
    /// the lock file up again), and LMDB would read this file's pages by the
    /// other file's transaction ids.
    static func checkLockFileDescribesFile(_ env: OpaquePointer, path: String) throws {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0, let txn else { return }
        let lockFileTransaction = mdb_txn_id(txn)  // a reader's id is the lock file's last transaction
        mdb_txn_abort(txn)
        var info = MDB_envinfo()
        mdb_env_info(env, &info)  // the newest of the file's two meta pages, read after
        if lockFileTransaction > info.me_last_txnid { throw StaleLockFile() }
    }

    /// Narrows the file and its lock file to `mode` when they allow more.
    static func narrowPermissions(of path: String, to mode: mode_t) throws {
        for file in [path, path + "-lock"] {
            var info = stat()
            guard stat(file, &info) == 0, info.st_uid == geteuid() else { continue }
            let current = info.st_mode & 0o7777
            if current & ~mode != 0, chmod(file, current & mode) != 0 {
                let code = errno
                throw TroveError(
                    .fileAccess, "cannot restrict the permissions of \(file): \(String(cString: strerror(code)))", path: file,
                    code: code)
            }
        }
    }

    /// Removes the copies a compaction of `path` (`.compacting`) or a
    /// `writeCopy` to it (`.partial`) left when its process was killed, with
    /// their lock files: nothing else reclaims their space. A copy still
    /// being written is kept: its writer holds a shared lock on it.
    static func removeAbandonedCopies(of path: String) {
        for copy in [path + ".compacting", path + ".partial"] {
            let descriptor = openDescriptor(copy, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            unlink(copy)
            unlink(copy + "-lock")
        }
    }

    /// Takes a shared `flock` on the data file LMDB opened for `env`
    /// (waiting while a compaction holds it exclusively) and returns the
    /// descriptor that holds it, or -1 where the file system has no such
    /// locks. The descriptor is opened by path, close-on-exec, and checked
    /// to be the very file LMDB has (``FileReplacedWhileOpening`` when the
    /// path names another by now).
    ///
    /// Not a duplicate of LMDB's descriptor: LMDB opens its data file
    /// without close-on-exec, so a process another thread starts before that
    /// is fixed here keeps LMDB's open file, and a lock taken on it would
    /// stay held for as long as that process runs (compaction would refuse
    /// the file after the app closed it). LMDB's descriptor is made
    /// close-on-exec too, so later processes do not keep the file at all.
    static func lockDataFileShared(_ env: OpaquePointer, path: String) throws -> Int32 {
        var lmdbDescriptor: Int32 = -1
        guard mdb_env_get_fd(env, &lmdbDescriptor) == 0, lmdbDescriptor >= 0 else { return -1 }
        let flags = fcntl(lmdbDescriptor, F_GETFD)
        if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(lmdbDescriptor, F_SETFD, flags | FD_CLOEXEC) }
        let descriptor = openDescriptor(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw TroveError(.fileAccess, "cannot open \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
        var lmdbFile = stat()
        var ours = stat()
        if fstat(lmdbDescriptor, &lmdbFile) == 0, fstat(descriptor, &ours) == 0,
            lmdbFile.st_dev != ours.st_dev || lmdbFile.st_ino != ours.st_ino
        {
            close(descriptor)
            throw FileReplacedWhileOpening()
        }
        while flock(descriptor, LOCK_SH) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(descriptor)
            if code == ENOLCK || code == EOPNOTSUPP || code == ENOTSUP || code == ENOSYS { return -1 }
            throw TroveError(
                .fileAccess, "cannot lock \(path) for sharing: \(String(cString: strerror(code)))", path: path, code: code)
        }
        return descriptor
    }

    /// Takes the exclusive `flock` on the data file at `path` without
    /// waiting, or throws ``TroveError/Kind/fileInUse`` when any process
    /// (this one included) has the file open.
    private static func lockDataFileExclusively(_ path: String) throws -> Int32 {
        let descriptor = openDescriptor(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw TroveError(.fileAccess, "cannot open \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(descriptor)
            if code == EWOULDBLOCK {
                let holder = processHoldingLockFile(of: path)
                let who = holder.map { "process \($0)" } ?? "another process"
                throw TroveError(
                    .fileInUse,
                    "cannot compact \(path): \(who) has it open, and its later commits would go to the replaced file; close it there first",
                    path: path)
            }
            if code == ENOLCK || code == EOPNOTSUPP || code == ENOTSUP || code == ENOSYS { return -1 }
            throw TroveError(
                .fileAccess, "cannot lock \(path) for compaction: \(String(cString: strerror(code)))", path: path, code: code)
        }
        return descriptor
    }

    /// The process that holds LMDB's lock on the lock file of `path`, when
    /// the system says (for a message; nothing is locked). Only called while
    /// this process has no environment on the file: closing a descriptor of
    /// the lock file would drop this process's own `fcntl` locks on it.
    private static func processHoldingLockFile(of path: String) -> pid_t? {
        let descriptor = openDescriptor(path + "-lock", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(descriptor, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK), probe.l_pid > 0 else { return nil }
        return probe.l_pid
    }

    /// The id of a process other than this one that holds a lock on byte 0
    /// of the lock file (0 when the system does not say which), or nil when
    /// this process could take it exclusively — and then it holds it.
    private static func otherProcessHoldingLock(_ lockFile: Int32) -> pid_t? {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        while fcntl(lockFile, F_SETLK, &lock) != 0 {
            if errno == EINTR { continue }
            var probe = flock()
            probe.l_type = Int16(F_WRLCK)
            probe.l_whence = Int16(SEEK_SET)
            probe.l_start = 0
            probe.l_len = 1
            if fcntl(lockFile, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) { return probe.l_pid }
            return 0
        }
        return nil
    }

}

/// `open(2)` (the name `open` is taken inside types that have an `open` method).
func openDescriptor(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, flags, mode)
    #else
        Darwin.open(path, flags, mode)
    #endif
}

/// The file at a path was swapped for another (compacted) one while LMDB opened it.
struct FileReplacedWhileOpening: Error {}

/// The lock file describes a file that was replaced at its path.
struct StaleLockFile: Error {}

/// Writing a file that replaces or copies another: same mode and owner, on disk before the rename.
package enum FileReplacement {
    /// Gives `path` the permission bits and owner of `original` (the owner
    /// only where the system lets this process change it).
    package static func adoptModeAndOwner(of original: String, for path: String) throws {
        try adoptMode(of: original, for: path)
        var info = stat()
        guard stat(original, &info) == 0 else { return }
        var copy = stat()
        if stat(path, &copy) == 0, copy.st_uid != info.st_uid || copy.st_gid != info.st_gid {
            _ = chown(path, info.st_uid, info.st_gid)  // permitted to root only; the mode above still holds
        }
    }

    /// Gives the copy `path` the permission bits of `original` (a copy of
    /// a `0o600` file is `0o600` too); the owner stays this process's user.
    package static func adoptMode(of original: String, for path: String) throws {
        var info = stat()
        guard stat(original, &info) == 0 else { return }
        if chmod(path, info.st_mode & 0o777) != 0 {
            let code = errno
            throw TroveError(
                .fileAccess, "cannot set the permissions of \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
    }

    /// Creates an empty file at `path` with `0o600`, failing when anything —
    /// a file, a link, a dangling link — is there already.
    package static func createExclusively(_ path: String) throws {
        let descriptor = openDescriptor(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw TroveError(.fileAccess, "cannot create \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
        close(descriptor)
    }

    /// Flushes the file's contents to disk.
    package static func sync(_ path: String) throws {
        let descriptor = openDescriptor(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw TroveError(.fileAccess, "cannot open \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 {
            let code = errno
            throw TroveError(.ioError, "cannot flush \(path) to disk: \(String(cString: strerror(code)))", path: path, code: code)
        }
    }

    /// Flushes the directory holding `path`, so a rename in it survives a power cut.
    package static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let descriptor = openDescriptor(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
