import CLMDB
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    /// Creates the file at `path` so that a power cut never leaves half of it.
    ///
    /// LMDB creates a file in place: it writes two meta pages and makes them
    /// durable only with the first commit's sync. A power cut in between can
    /// leave one meta page empty, and LMDB then refuses the file as "not an
    /// LMDB file" (found by the power-loss tests). Here the file is made
    /// beside `path`, synced, and linked to `path`, then the directory is
    /// synced: after a cut the path holds a whole empty database or nothing.
    /// A link, unlike a rename, never replaces a file: when another process
    /// created `path` first, its file is kept.
    static func createFile(at path: String, mode: mode_t) throws {
        removeAbandonedCreations(of: path)
        let temporary = path + ".creating-\(getpid())"
        unlink(temporary)
        defer { unlink(temporary) }
        var env: OpaquePointer?
        try LMDBCall.check(mdb_env_create(&env), "mdb_env_create", path: path)
        guard let env else { throw TroveError(.storage, "mdb_env_create returned no environment for \(path)", path: path) }
        do {
            defer { mdb_env_close(env) }
            // No lock file: nobody else knows this name.
            try LMDBCall.check(
                mdb_env_open(env, temporary, UInt32(MDB_NOSUBDIR | MDB_NOLOCK), mode), "creating the database", path: path)
            try LMDBCall.check(mdb_env_sync(env, 1), "syncing the new database", path: path)
        }
        guard link(temporary, path) == 0 || errno == EEXIST else {
            let code = errno
            throw TroveError(
                .fileAccess, "cannot create \(path): \(String(cString: strerror(code)))", path: path, code: code)
        }
        FileReplacement.syncDirectory(of: path)
    }

    /// Deletes what a process that died while creating `path` left beside it
    /// (`path.creating-<pid>` of a process that no longer runs).
    static func removeAbandonedCreations(of path: String) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + ".creating-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "/" : directory)) ?? []
        for name in names {
            guard name.hasPrefix(prefix), let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == -1, errno == ESRCH { unlink(directory + "/" + name) }
        }
    }
}
