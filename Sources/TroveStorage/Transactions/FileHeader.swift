#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The two meta pages at the start of an LMDB file, checked before LMDB
/// opens it. LMDB trusts them: a page size of 0 divides by zero inside
/// `mdb_env_open`, and a last page number near 2^64 overflows the map size.
/// Everything read here is checked with overflow-checked arithmetic.
enum FileHeader {
    // LMDB 0.9 (mdb.c): a 16-byte page header, then MDB_meta.
    private static let metaFlag: UInt16 = 0x08
    private static let magic: UInt32 = 0xBEEF_C0DE
    private static let headerBytes = 152

    /// Throws `corruptFile` when a meta page LMDB would read has values no
    /// LMDB file can have. Files LMDB itself refuses (another magic or
    /// version, too short to hold a meta page) are left to LMDB's own error.
    /// Returns how many tables the newest meta page's main tree lists (0
    /// when there is none to read): the environment sizes its table slots by it.
    static func check(path: String, fileSize: Int) throws -> Int {
        guard fileSize >= headerBytes else { return 0 }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }  // LMDB reports why it cannot open it
        defer { close(descriptor) }
        func damaged(_ detail: String) -> TroveError {
            TroveError(.corruptFile, "\(path) is damaged: \(detail); restore it from a copy", path: path)
        }
        var newest: (transaction: UInt64, lastPage: UInt64, tables: UInt64)?
        var offset = 0
        var pageSize = 0
        for page in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: headerBytes)
            let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, headerBytes, off_t(offset)) }
            guard read == headerBytes else {
                if page == 1 { throw damaged("its second meta page, at byte \(offset), is past the end of the file") }
                return 0
            }
            func load<T: FixedWidthInteger>(_: T.Type, _ at: Int) -> T {
                bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: T.self)) }
            }
            guard load(UInt16.self, 10) & metaFlag != 0, load(UInt32.self, 16) == magic, load(UInt32.self, 20) == 1 else {
                return 0  // not an LMDB 0.9 file: LMDB says so
            }
            let size = Int(load(UInt32.self, 40))
            guard size >= 512, size <= 65_536, size & (size - 1) == 0 else {
                throw damaged("meta page \(page) gives a page size of \(size) bytes")
            }
            if page == 0 {
                pageSize = size
            } else if size != pageSize {
                throw damaged("its meta pages give page sizes of \(pageSize) and \(size) bytes")
            }
            let lastPage = load(UInt64.self, 136)
            let (pages, overflow) = lastPage.addingReportingOverflow(1)
            let (bytesNeeded, sizeOverflow) = pages.multipliedReportingOverflow(by: UInt64(size))
            guard !overflow, !sizeOverflow, bytesNeeded <= UInt64(Int.max) else {
                throw damaged("meta page \(page) names page \(lastPage) as the last, past any possible file")
            }
            for (name, at) in [("free-page", 80), ("main", 128)] {
                let root = load(UInt64.self, at)
                if root != UInt64.max, root > lastPage {
                    throw damaged(
                        "meta page \(page) puts the \(name) tree's root at page \(root), past its last page \(lastPage)")
                }
            }
            let transaction = load(UInt64.self, 144)
            guard transaction < UInt64(Int64.max) else {
                throw damaged("meta page \(page) names transaction \(transaction), a number no file reaches")
            }
            // LMDB writes transaction T to meta page T & 1 (page 1 starts at 0),
            // and reads a snapshot's trees from that page.
            guard transaction & 1 == UInt64(page) || (page == 1 && transaction == 0) else {
                throw damaged("meta page \(page) holds transaction \(transaction), which belongs on meta page \(transaction & 1)")
            }
            // The main tree's entry count: its table names.
            let tables = load(UInt64.self, 120)
            if newest == nil || transaction > newest!.transaction { newest = (transaction, lastPage, tables) }
            offset = size
        }
        // The size was read before the meta pages: another process may have
        // grown the file and committed since. Truncation shows in a fresh size too.
        if let newest, (newest.lastPage + 1) * UInt64(pageSize) > UInt64(currentSize(descriptor, fallback: fileSize)) {
            throw TroveError(
                .corruptFile,
                "\(path) is truncated: it is \(currentSize(descriptor, fallback: fileSize)) bytes but its data reaches \((newest.lastPage + 1) * UInt64(pageSize)); restore it from a copy",
                path: path)
        }
        // A damaged count is only a size hint: LMDB checks the tree itself.
        return Int(min(newest?.tables ?? 0, 1 << 16))
    }

    private static func currentSize(_ descriptor: Int32, fallback: Int) -> Int {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int(info.st_size) : fallback
    }
}
