import CLMDB
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One LMDB environment: one database file plus its lock file.
///
/// LMDB must not open the same file twice in one process, so environments are
/// shared: ``open(path:options:)`` returns the live environment for a file if
/// one exists (keyed by the file's real path) and every handle uses it.
package final class Environment: @unchecked Sendable {
    package struct Options: Sendable, Equatable {
        /// The map size to start with, in bytes; it grows on demand.
        package var initialMapSize: Int = 256 << 20
        /// The largest the map (and so the file) may grow; nil means no limit.
        package var maximumMapSize: Int?
        /// Whether the map is reserved at its largest when the file opens, so
        /// that it never moves (``mapIsFixed``); off only for tests of remapping.
        package var reservesMap = true
        /// Skip the meta-page fsync on commit (LMDB's `MDB_NOMETASYNC`).
        package var noMetaSync = false
        /// Skip fsync on commit entirely (`MDB_NOSYNC`): fast, not durable.
        package var noSync = false
        package var readOnly = false
        /// The least number of LMDB table slots (`mdb_env_set_maxdbs`); a
        /// file that already has tables gets room for twice as many and 64
        /// more (``tableSlots(forExisting:least:)``), and the environment's
        /// ``Environment/options`` holds the number it opened with. Every
        /// write transaction copies 4 bytes per slot (LMDB's table sequence
        /// numbers), so slots no file uses cost each commit: 8192 of them
        /// made a 32 KB copy per small commit.
        package var maxTables: UInt32 = 1024
        package var maxReaders: UInt32 = 1022
        /// Remove the file and its lock file when the environment closes (in-memory databases).
        package var deleteOnClose = false
        /// The 64-byte key that encrypts the values of the tables named by
        /// ``sealedTablePrefixes`` (nil: nothing is encrypted).
        package var encryptionKey: [UInt8]?
        /// Tables whose names start with one of these hold encrypted values
        /// (in a file whose keys are tokenized, every table but the
        /// multi-value ones and the key check: see ``keyTokens``).
        package var sealedTablePrefixes: [String] = []
        /// Whether a new encrypted file stores its keys' user data as
        /// tokens (``KeyTokens``); off only to make files of the earlier
        /// scheme, for tests of upgrading them.
        package var tokenizesKeys = true
        /// Whether a compaction of an encrypted file of the earlier scheme
        /// makes its copy hold tokens (``tokenizesKeys``); otherwise it keeps
        /// the file's scheme.
        package var upgradesKeys = false
        /// The salt a new encrypted file takes instead of a fresh one: a
        /// copy under the same key keeps its source's, so its tokens stay valid.
        package var newFileSalt: [UInt8]?
        /// Tables whose pages are checked on open, beside LMDB's own two
        /// (the free pages and the table of tables); nil checks every table.
        package var tablesCheckedOnOpen: Set<String>? = []
        /// The permission bits of the file and its lock file when they are
        /// created (the process's umask applies).
        package var fileMode: mode_t = 0o644
        /// Whether an existing file opened for writing is narrowed to ``fileMode``.
        package var enforcesFileMode = false
        /// Bytes of a write's replay log kept in memory before it moves to a file (see ``ReplayLog``).
        package var replayMemoryLimit = 32 << 20
        /// Whether the environment holds a shared `flock` on the data file
        /// while it is open (see ``dataFileLock``). Only compaction, which
        /// holds the exclusive lock itself, opens without it.
        var sharesDataFileLock = true

        package init() {}
    }

    package let path: String
    /// The directory `path` is in (where a write's replay log spills).
    package let directory: String
    package let options: Options
    /// Encrypts and decrypts the values of sealed tables; nil without a key.
    /// Set once, while the environment opens (the key is derived with the file's salt).
    package private(set) var cipher: Cipher?
    /// In an encrypted file of the current scheme: the tokens its keys hold
    /// in place of user data, and which name each table has in LMDB (nil in
    /// a plain file and in an encrypted file of the earlier scheme, whose
    /// keys and table names are plain). Set once, while the environment opens.
    package private(set) var keyTokens: KeyTokens?
    /// The salt the file's keys are derived with (nil without encryption).
    package private(set) var salt: [UInt8]?
    let handle: OpaquePointer
    package let gate = MapGate()
    /// Serializes this process's write transactions (LMDB's own writer lock
    /// serializes processes). Held from before a write begins until it ends,
    /// so map growth and table opens never race another writer of this process.
    let writerLock = WriterLock()
    /// State that layers above keep per environment (Trove's schema catalog).
    private let attachments = Locked<[String: any AnyObject & Sendable]>([:])
    package let pageSize: Int
    let state: Locked<State>
    /// A descriptor of the data file holding a shared `flock` on it while
    /// the environment is open (-1 when it holds none). Compaction takes the
    /// exclusive lock, so it sees every process that has the file open even
    /// when the lock file was deleted and recreated, and LMDB's own lock is
    /// on a file other processes no longer share. (`flock`, not `fcntl`:
    /// closing another descriptor of the file must not drop it.)
    private let dataFileLock: Int32
    /// Where the memory map starts. Changed only under the map gate held
    /// exclusively (the map moves when it grows); read under it held shared.
    /// (A getter, not the stored field: another module's read of a stored
    /// class property pays a dynamic exclusivity check, ~70 instructions a
    /// lookup, whatever the field's attribute says.)
    package var mapStart: UInt { storedMapStart }
    /// Whether the map was reserved at its largest when the file opened
    /// (``reservation(fileSize:cap:)``): it never moves, so a pointer into it
    /// stays valid as long as the snapshot it was read in, without the map
    /// gate. A write that needs more than the reservation fails instead of
    /// remapping.
    package let mapIsFixed: Bool
    @exclusivity(unchecked) private var storedMapStart: UInt = 0

    private func noteMapAddress() {
        storedMapStart = Environment.mapAddress(of: handle)
    }

    /// ``mapAddress(of:)``, read again when the file was not found: the
    /// kernel writes `/proc/self/maps` a page at a time, and a line can be
    /// missed when another thread maps or unmaps memory meanwhile.
    private static func mapAddress(of env: OpaquePointer) -> UInt {
        for _ in 0..<8 {
            let address = scanMaps(for: env)
            if address != 0 { return address }
        }
        return 0
    }

    /// The address LMDB mapped the file at: LMDB does not say (its
    /// `me_mapaddr` is the fixed-map hint), so on Linux it is looked up in
    /// `/proc/self/maps` by the file's device and inode; 0 where unknown.
    /// The bytes are scanned for the inode rather than parsed line by line:
    /// a process maps hundreds of files, and this runs at every open.
    private static func scanMaps(for env: OpaquePointer) -> UInt {
        #if os(Linux)
            var descriptor: Int32 = -1
            var info = stat()
            guard mdb_env_get_fd(env, &descriptor) == 0, fstat(descriptor, &info) == 0, let maps = readProcessMaps()
            else { return 0 }
            // glibc's encoding of a device number (its major() and minor() are macros).
            let dev = UInt64(info.st_dev)
            let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
            let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
            // start-end perms offset major:minor inode path
            let wanted = Array(
                " 00000000 \(String(major, radix: 16, uppercase: false).leftPadded(2)):\(String(minor, radix: 16).leftPadded(2)) \(info.st_ino) "
                    .utf8)
            return maps.withUnsafeBytes { bytes -> UInt in
                let count = bytes.count
                var index = 0
                while index + wanted.count <= count {
                    if bytes[index] == wanted[0], bytes[index + 1] == wanted[1] {
                        var matches = true
                        for offset in 2..<wanted.count where bytes[index + offset] != wanted[offset] {
                            matches = false
                            break
                        }
                        if matches {
                            var lineStart = index
                            while lineStart > 0, bytes[lineStart - 1] != UInt8(ascii: "\n") { lineStart -= 1 }
                            var address: UInt = 0
                            var position = lineStart
                            while position < count, let digit = hexValue(bytes[position]) {
                                address = address << 4 | UInt(digit)
                                position += 1
                            }
                            if position < count, bytes[position] == UInt8(ascii: "-") { return address }
                        }
                    }
                    index += 1
                }
                return 0
            }
        #else
            return 0
        #endif
    }

    #if os(Linux)
        /// All of `/proc/self/maps`, read to its end (it reports a size of 0,
        /// and Foundation's readers stop short of a long one).
        private static func readProcessMaps() -> [UInt8]? {
            let descriptor = Glibc.open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += chunk[0..<count]
            }
            return bytes
        }
    #endif

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Write transactions since stale readers were last cleared (guarded by the writer lock).
    private var writesSinceReaderCheck = 0
    /// Set once the registry holds this environment; one whose opening failed
    /// half-way must not touch the registry (its lock is held by `open`).
    private var isRegistered = false

    struct State {
        var tables: [String: Table] = [:]
        /// In a file with ``keyTokens``: the handles opened with the
        /// environment, by stored name, and the stored names worked out.
        var tablesByStoredName: [String: MDB_dbi] = [:]
        var storedNames: [String: String] = [:]
        var mapSize: Int
        var slotLimit: MDB_dbi = 2  // LMDB reserves slots 0 (free list) and 1 (main table)
        var knownFormat: UInt32 = 0
    }

    /// A file format number the committed file is known to have reached (0:
    /// none known): formats only rise, so a write that needs at least this
    /// one need not read the stored number again.
    package var knownFormat: UInt32 { state.withLock { $0.knownFormat } }

    /// Notes that the committed file's format is at least `format`.
    package func noteFormat(_ format: UInt32) {
        state.withLock { $0.knownFormat = max($0.knownFormat, format) }
    }

    /// Forgets ``knownFormat`` (the number is being set directly).
    package func forgetFormat() {
        state.withLock { $0.knownFormat = 0 }
    }

    struct Registry {
        var live: [String: WeakEnvironment] = [:]
        /// Files whose environment is being closed, or that are being
        /// compacted; opening them waits.
        var closing: Set<String> = []
    }

    static let registry = Locked(Registry())

    struct WeakEnvironment {
        weak var environment: Environment?
    }

    /// The table slots an environment opens with for a file that has
    /// `existing` tables: at least `least`, and room for the file's tables to
    /// double and 64 more (other processes, migrations and copies add
    /// tables while it is open), as a power of two up to 16,384: twice the
    /// 8,192 a file could hold before slots were sized, and a bound on what
    /// a crafted table count in a meta page costs each transaction (LMDB
    /// allocates 49 bytes a slot for a read, copies 4 for a write).
    package static func tableSlots(forExisting existing: Int, least: UInt32) -> UInt32 {
        let wanted = UInt32(min(2 * max(existing, 0) + 64, 1 << 14))
        let rounded = wanted <= 1 ? 1 : UInt32(1) << (32 - (wanted - 1).leadingZeroBitCount)
        return max(least, rounded)
    }

    /// Opens (or joins) the environment for the file at `path`.
    package static func open(path: String, options: Options = Options()) throws -> Environment {
        let key = try canonicalPath(path)
        while true {
            let result = try registry.withLock { (registry) throws -> Environment? in
                if let entry = registry.live[key] {
                    // A dead entry means the environment is on its way out; wait for it to close.
                    return entry.environment
                }
                if registry.closing.contains(key) { return nil }
                let environment = try Environment.openUnregistered(path: key, options: options)
                environment.isRegistered = true
                registry.live[key] = WeakEnvironment(environment: environment)
                return environment
            }
            if let result { return result }
            usleep(200)  // the previous environment on this file is still closing
        }
    }

    /// Bytes of the pages holding data: the pages up to the last one written,
    /// minus those on LMDB's free list (deleted data leaves free pages behind;
    /// a compacting copy drops them).
    package func liveSize() throws -> Int {
        let txn = try ReadTransaction(environment: self)
        defer { txn.end() }
        let free = Table(name: "", isMultiValue: false, dbi: 0)
        txn.visibleTableLimit = max(txn.visibleTableLimit, 1)
        let freePages = try txn.withCursor(on: free) { cursor in
            var pages = 0
            var entry = try cursor.first()
            while let current = entry {
                // Each value is a page-number list whose first word is its length.
                if current.value.count >= MemoryLayout<Int>.size { pages += current.value.loadUnaligned(as: Int.self) }
                entry = try cursor.next()
            }
            return pages
        }
        return max(0, usedSize - freePages * pageSize)
    }

    /// Whether another handle of this process is writing now (a hint for
    /// waiting without blocking a thread).
    package var isWriterBusy: Bool { writerLock.isHeld }

    /// Whether a handle of this process has the file at `path` open.
    package static func isOpen(path: String) -> Bool {
        guard let key = try? canonicalPath(path) else { return false }
        return registry.withLock { $0.live[key]?.environment != nil || $0.closing.contains(key) }
    }

    /// The number of live environments, for tests of the registry.
    package static var openCount: Int {
        registry.withLock { registry in registry.live.values.filter { $0.environment != nil }.count }
    }

    /// What a file that is not a regular file is, for an error message.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFIFO: return "a pipe"
        case S_IFSOCK: return "a socket"
        default: return "not a plain file"
        }
    }

    init(path: String, options: Options) throws {
        self.path = path
        directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        var options = options
        var env: OpaquePointer?
        try LMDBCall.check(mdb_env_create(&env), "mdb_env_create", path: path)
        guard let env else { throw TroveError(.storage, "mdb_env_create returned no environment for \(path)", path: path) }
        var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS | MDB_NORDAHEAD)
        if options.noMetaSync { flags |= UInt32(MDB_NOMETASYNC) }
        if options.noSync { flags |= UInt32(MDB_NOSYNC) }
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        var fileSize = 0
        var info = stat()
        if !options.readOnly, stat(path, &info) != 0, errno == ENOENT {
            do {
                try Environment.createFile(at: path, mode: options.fileMode)
            } catch {
                mdb_env_close(env)
                throw error
            }
        }
        if stat(path, &info) == 0 {
            fileSize = Int(info.st_size)
            // A device, a directory or a pipe is no database (LMDB would fail to map it, saying less).
            guard info.st_mode & S_IFMT == S_IFREG else {
                mdb_env_close(env)
                throw TroveError(
                    .fileAccess,
                    "\(path) is not a regular file (it is \(Environment.kind(of: info.st_mode))); a database is stored in a file",
                    path: path)
            }
        }
        var lockDescriptor: Int32 = -1
        var mapSize = max(options.initialMapSize, fileSize * 2, 1 << 20)
        if let cap = options.maximumMapSize { mapSize = max(min(mapSize, cap), fileSize) }
        let reserved = options.reservesMap ? Environment.reservation(fileSize: fileSize, cap: options.maximumMapSize) : nil
        if let reserved { mapSize = reserved }
        do {
            let existingTables = try FileHeader.check(path: path, fileSize: fileSize)
            options.maxTables = Environment.tableSlots(forExisting: existingTables, least: options.maxTables)
            try LMDBCall.check(mdb_env_set_maxdbs(env, options.maxTables), "mdb_env_set_maxdbs", path: path)
            try LMDBCall.check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders", path: path)
            try LMDBCall.check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize", path: path)
            try LMDBCall.check(mdb_env_open(env, path, flags, options.fileMode), "opening the database", path: path)
            if options.sharesDataFileLock {
                lockDescriptor = try Environment.lockDataFileShared(env, path: path)
            }
            try Environment.checkSameFile(env, path: path)
            try Environment.checkLockFileDescribesFile(env, path: path)
            if !options.readOnly, options.sharesDataFileLock { Environment.removeAbandonedCopies(of: path) }
            if !options.readOnly, options.enforcesFileMode {
                try Environment.narrowPermissions(of: path, to: options.fileMode)
            }
        } catch {
            mdb_env_close(env)
            if lockDescriptor >= 0 { close(lockDescriptor) }
            throw error
        }
        var envInfo = MDB_envinfo()
        mdb_env_info(env, &envInfo)
        var stat = MDB_stat()
        mdb_env_stat(env, &stat)
        // Pages past the end of a truncated file would fault when read: refuse it
        // now. The page number comes from the file: a crafted one must not overflow.
        let (pages, pagesOverflow) = envInfo.me_last_pgno.addingReportingOverflow(1)
        let (needed, neededOverflow) = pages.multipliedReportingOverflow(by: Int(stat.ms_psize))
        if pagesOverflow || neededOverflow || needed < 0 {
            mdb_env_close(env)
            if lockDescriptor >= 0 { close(lockDescriptor) }
            throw TroveError(
                .corruptFile,
                "\(path) is damaged: its meta page names page \(envInfo.me_last_pgno) as the last, past any possible file; restore it from a copy",
                path: path)
        }
        if fileSize > 0, fileSize < needed, Environment.currentSize(of: path) < needed {  // (it may have grown since)
            mdb_env_close(env)
            if lockDescriptor >= 0 { close(lockDescriptor) }
            throw TroveError(
                .corruptFile,
                "\(path) is truncated: it is \(fileSize) bytes but its data reaches \(needed); restore it from a copy",
                path: path)
        }
        handle = env
        self.options = options
        dataFileLock = lockDescriptor
        cipher = nil
        keyTokens = nil
        salt = nil
        pageSize = Int(stat.ms_psize)
        state = Locked(State(mapSize: envInfo.me_mapsize))
        mapIsFixed = reserved != nil && envInfo.me_mapsize == reserved
        storedMapStart = Environment.mapAddress(of: env)
        // Clear reader slots left by processes that died holding them.
        var dead: Int32 = 0
        mdb_reader_check(env, &dead)
        try checkPagesReadOnOpen()
        if let key = options.encryptionKey {
            let (salt, tokenized) = try encryptionSalt()
            cipher = try Cipher(key: key, salt: salt)
            self.salt = salt
            if tokenized, let salt { keyTokens = KeyTokens(key: key, salt: salt) }
        }
        try openExistingTables()
    }

    deinit {
        guard isRegistered else {
            mdb_env_close(handle)
            if dataFileLock >= 0 { close(dataFileLock) }
            return
        }
        let key = path
        Environment.registry.withLock { registry in
            registry.live[key] = nil
            registry.closing.insert(key)
        }
        mdb_env_close(handle)
        if dataFileLock >= 0 { close(dataFileLock) }  // before the file counts as closed: a compaction may follow
        if options.deleteOnClose {
            unlink(path)
            unlink(path + "-lock")
        }
        Environment.registry.withLock { registry in _ = registry.closing.remove(key) }
    }

    /// Tables whose names start with this are multi-value (`MDB_DUPSORT`).
    package static let multiValuePrefix = "idx:"

    /// The current size of the memory map in bytes.
    package var mapSize: Int { state.withLock { $0.mapSize } }

    /// Bytes of the file in use (pages up to the last one written).
    package var usedSize: Int {
        var info = MDB_envinfo()
        gate.enterShared()
        mdb_env_info(handle, &info)
        gate.leaveShared()
        return (info.me_last_pgno + 1) * pageSize
    }

    /// The id of the last committed transaction, by any process: read from
    /// the meta pages in the map, so checking it costs no I/O. Under the map
    /// gate: a map resize (a write growing the map) unmaps those pages, and
    /// the commit watcher reads this from its own thread.
    package var lastCommittedTransaction: Int {
        var info = MDB_envinfo()
        gate.enterShared()
        mdb_env_info(handle, &info)
        gate.leaveShared()
        return Int(info.me_last_txnid)
    }

    /// Flushes buffers to disk (needed only with `noSync` / `noMetaSync`).
    package func sync() throws {
        try LMDBCall.check(mdb_env_sync(handle, 1), "mdb_env_sync", path: path)
    }

    /// The attachment stored under `key`, made by `make` on first use.
    package func attachment<T: AnyObject & Sendable>(_ key: String, make: () -> T) -> T {
        attachments.withLock { entries in
            if let existing = entries[key] as? T { return existing }
            let made = make()
            entries[key] = made
            return made
        }
    }

    /// The data file's length now: every page of every committed snapshot lies
    /// within it (LMDB never shortens an open file). Read from the descriptor
    /// rather than the meta page, which a committing writer may be rewriting.
    var fileLength: Int {
        var descriptor: Int32 = -1
        var info = stat()
        guard mdb_env_get_fd(handle, &descriptor) == 0, fstat(descriptor, &info) == 0 else { return usedSize }
        return Int(info.st_size)
    }

    /// The file's size now (0 when it cannot be read).
    static func currentSize(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The unsealed table beside the sealed ones in an encrypted file: the
    /// file's key-derivation salt (`salt`), whether its keys are tokenized
    /// (`tokens`), and a value sealed with the key, to tell a wrong key on open.
    package static let encryptionTable = "keycheck"
    static let saltKey = Array("salt".utf8)
    static let tokensKey = Array("tokens".utf8)
    /// The version of ``KeyTokens`` a file's keys hold.
    static let tokensVersion: [UInt8] = [1]

    /// The salt an encrypted file's key is derived with, and whether its
    /// keys are tokenized: read from the file, or made in the same
    /// transaction that starts a new file. No salt for a file encrypted
    /// before salts, or a plain file (refused above this layer).
    private func encryptionSalt() throws -> (salt: [UInt8]?, tokenized: Bool) {
        if try tableNames().contains(Environment.encryptionTable) { return try storedSalt() }
        guard !options.readOnly else { return (nil, false) }
        let write = try WriteTransaction(environment: self)
        do {
            // Checked again under the writer lock: another process may have started the file.
            guard try tableNames().isEmpty else {
                write.abort()
                return try tableNames().contains(Environment.encryptionTable) ? storedSalt() : (nil, false)
            }
            let table = try write.openTable(Environment.encryptionTable)!
            let salt = try options.newFileSalt ?? Cipher.newSalt()
            try Environment.saltKey.withUnsafeBytes { key in
                try salt.withUnsafeBytes { _ = try write.put(table, key: key, value: $0) }
            }
            if options.tokenizesKeys {
                try Environment.tokensKey.withUnsafeBytes { key in
                    try Environment.tokensVersion.withUnsafeBytes { _ = try write.put(table, key: key, value: $0) }
                }
            }
            try write.commit()
            return (salt, options.tokenizesKeys)
        } catch {
            write.abort()
            throw error
        }
    }

    private func storedSalt() throws -> (salt: [UInt8]?, tokenized: Bool) {
        guard let table = try openInReadTransaction(Environment.encryptionTable, isMultiValue: false) else {
            return (nil, false)
        }
        let read = try ReadTransaction(environment: self)
        defer { read.end() }
        guard let salt = try read.value(in: table, key: Environment.saltKey) else { return (nil, false) }
        guard salt.count == Cipher.saltSize else {
            throw TroveError(
                .corruptFile, "\(path) is damaged: its key-derivation salt is \(salt.count) bytes, not \(Cipher.saltSize)",
                path: path)
        }
        switch try read.value(in: table, key: Environment.tokensKey) {
        case nil: return (salt, false)
        case Environment.tokensVersion?: return (salt, true)
        case let version?:
            throw TroveError(
                .fileFormatTooNew,
                "\(path) holds its keys as tokens of version \(version.first.map(String.init) ?? "?"), this Trove reads version \(Environment.tokensVersion[0]); update Trove to open it",
                path: path)
        }
    }

    /// LMDB trusts page headers: a damaged page among those every launch
    /// reads would crash the open, so their structure is checked first.
    private func checkPagesReadOnOpen() throws {
        let check = try PageCheck.run(in: self, tables: options.tablesCheckedOnOpen) { check, _ in check }
        if let problem = check.problems.first {
            throw TroveError(
                .corruptFile,
                "\(path) is damaged: page \(problem.page) (\(problem.table)): \(problem.detail); restore it from a copy",
                path: path
            )
        }
    }

    /// Reader slots in use by every process (LMDB's reader table).
    package var readersInUse: Int {
        var info = MDB_envinfo()
        gate.enterShared()
        mdb_env_info(handle, &info)
        gate.leaveShared()
        return Int(info.me_numreaders)
    }

    // MARK: Map size

    /// Grows the map so that at least `needed` bytes fit, doubling as it goes.
    /// Called only by the writer of this process (holding ``writerLock``) with
    /// no LMDB write transaction open.
    func grow(toFit needed: Int) throws {
        try gate.withExclusive { () throws in
            let current = state.withLock { $0.mapSize }
            if current >= needed { return }
            var target = current
            while target < needed { target *= 2 }
            if let cap = options.maximumMapSize {
                if current >= cap {
                    throw TroveError(
                        .fileSizeLimitReached,
                        "the write needs more than the maximum file size of \(cap) bytes set for \(path); nothing was written",
                        path: path)
                }
                target = min(target, cap)
            }
            if mapIsFixed {
                throw TroveError(
                    .fileSizeLimitReached,
                    "the write needs more than the \(current) bytes of address space reserved for \(path) when it was opened (a reserved map never moves); nothing was written. Close every handle of the file and open it again: the reservation grows with the file",
                    path: path)
            }
            try LMDBCall.check(mdb_env_set_mapsize(handle, target), "growing the map to \(target) bytes", path: path)
            noteMapAddress()
            state.withLock { $0.mapSize = target }
        }
    }

    /// Adopts a map size another process set (after `MDB_MAP_RESIZED`). LMDB
    /// refuses while a write of this process is open, so that write finishes first.
    func adoptMapSize() throws {
        let ownsWriter = writerLock.isHeldByCurrentThread
        if !ownsWriter { writerLock.lock() }
        defer { if !ownsWriter { writerLock.unlock() } }
        try gate.withExclusive { () throws in
            if mapIsFixed {
                // Pointers into the map may be in use outside the gate: it must not move.
                throw TroveError(
                    .fileSizeLimitReached,
                    "another process made \(path) larger than the \(mapSize) bytes of address space this process reserved for it; close every handle of the file in this process and open it again",
                    path: path)
            }
            try LMDBCall.check(mdb_env_set_mapsize(handle, 0), "adopting the new map size", path: path)
            noteMapAddress()
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            state.withLock { $0.mapSize = info.me_mapsize }
        }
    }

    /// Grows ahead of a write when more than half the map is used, so that
    /// most transactions never meet `MDB_MAP_FULL`. Called with the writer lock held.
    func prepareForWrite() throws {
        let used = usedSize
        let current = mapSize
        writesSinceReaderCheck += 1
        if writesSinceReaderCheck >= Environment.writesBetweenReaderChecks || used * 2 > current {
            // A reader slot left by a dead process pins every page freed after
            // its snapshot: the file would grow without end. LMDB clears them
            // only when asked.
            writesSinceReaderCheck = 0
            clearStaleReaders()
        }
        if used * 2 > current, !mapIsFixed {
            if let cap = options.maximumMapSize, current >= cap { return }
            try grow(toFit: used * 2)
        }
    }

    /// The map size to reserve when a file of `fileSize` bytes opens, so
    /// that the map never has to move: `cap` when one is set, otherwise
    /// 1 TiB (or four times the file), halved while the address space has
    /// no room for it down to 8 GiB (or twice the file). Nil where it does
    /// not fit, and on platforms whose address space is small (iOS and the
    /// other devices, 32-bit): the map then starts small and moves as it grows.
    /// Without `MDB_WRITEMAP` LMDB never extends the file to the map size:
    /// the reservation costs address space, not disk or memory.
    static func reservation(fileSize: Int, cap: Int?) -> Int? {
        #if (os(Linux) || os(macOS)) && (arch(x86_64) || arch(arm64))
            if let cap { return cap >= fileSize && addressSpaceIsFree(cap) ? cap : nil }
            let floor = max(8 << 30, fileSize * 2)
            var size = max(1 << 40, fileSize * 4)
            while size >= floor {
                if addressSpaceIsFree(size) { return size }
                size /= 2
            }
            return nil
        #else
            return nil
        #endif
    }

    /// Whether `size` bytes of address space can be mapped now (a probe
    /// that reserves nothing: mapped without access and unmapped at once).
    private static func addressSpaceIsFree(_ size: Int) -> Bool {
        #if os(Linux) || os(macOS)
            #if os(Linux)
                let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
            #else
                let flags = MAP_PRIVATE | MAP_ANON | MAP_NORESERVE
            #endif
            guard let probe = mmap(nil, size, PROT_NONE, flags, -1, 0), probe != MAP_FAILED else { return false }
            munmap(probe, size)
            return true
        #else
            return false
        #endif
    }

    /// Write transactions between two checks for readers of dead processes.
    static let writesBetweenReaderChecks = 64

    /// Frees the reader slots of processes that died holding them; returns how many.
    @discardableResult
    package func clearStaleReaders() -> Int {
        var dead: Int32 = 0
        mdb_reader_check(handle, &dead)
        return Int(dead)
    }

    /// One slot of LMDB's reader table: the process, and the transaction
    /// whose snapshot it holds (nil while the slot is idle).
    package struct ReaderSlot: Sendable, Equatable {
        package var processID: Int32
        package var transaction: Int?
    }

    /// The reader table's slots in use, by every process.
    package func readerSlots() -> [ReaderSlot] {
        final class Lines { var text = "" }
        let lines = Lines()
        withExtendedLifetime(lines) {
            _ = mdb_reader_list(
                handle,
                { message, context in
                    guard let message, let context else { return 0 }
                    Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                    return 0
                }, Unmanaged.passUnretained(lines).toOpaque())
        }
        // "       pid     thread     txnid" then one line a slot; "-" for an idle slot.
        return lines.text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let pid = Int32(fields[0]) else { return nil }
            return ReaderSlot(processID: pid, transaction: Int(fields[2]))
        }
    }

    // MARK: Paths

    /// The real path of `path`, resolving links in the directory part (the file
    /// itself may not exist yet).
    static func canonicalPath(_ path: String) throws -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(directory.isEmpty ? "/" : directory, nil) else {
            throw TroveError(
                .fileAccess, "cannot open \(path): the directory \(directory) does not exist or cannot be read", path: path,
                code: errno)
        }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return base == "/" ? "/" + name : base + "/" + name
    }
}

extension String {
    /// The string with zeros in front up to `width` characters (hex device numbers in /proc/self/maps).
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
