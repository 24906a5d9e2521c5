import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A structural check of every B-tree page a snapshot can reach, read from
/// the file with `pread` rather than through LMDB.
///
/// LMDB 0.9 keeps no page checksums and trusts the page headers and node
/// offsets it reads from the map: a damaged page can send a read outside the
/// page and crash the process. This walk checks every header, node offset,
/// key and value size, child and overflow page number before anything
/// follows it, so a damaged file is reported (page number and table) instead
/// of crashing the check. It relies on LMDB 0.9's on-disk layout (format
/// version 1, 64-bit page numbers), which the meta page's magic and version
/// confirm.
package struct PageCheck {
    /// One damaged page: where it is and what is wrong with it.
    package struct Problem: Sendable, Equatable {
        package var table: String
        package var page: Int
        package var detail: String
    }

    /// The snapshot's meta page was overwritten by later commits before the
    /// check read it; check a fresh snapshot (``run(in:tables:)`` does).
    package struct SnapshotMoved: Error {}

    /// Runs the check on a fresh snapshot, again when commits overwrite its
    /// meta page before the check reads it, and hands the checked snapshot to
    /// `body` (which may read on from it).
    package static func run<R>(
        in environment: Environment, tables: Set<String>? = nil, _ body: (PageCheck, ReadTransaction) throws -> R
    ) throws -> R {
        for _ in 0..<1_000 {
            let transaction = try ReadTransaction(environment: environment)
            defer { transaction.end() }
            do {
                let check = try run(on: transaction, tables: tables)
                return try body(check, transaction)
            } catch is SnapshotMoved {
                usleep(100)
            }
        }
        throw TroveError(
            .storage,
            "\(environment.path) kept changing while its pages were checked (1,000 snapshots outrun by commits); try again",
            path: environment.path)
    }

    package private(set) var problems: [Problem] = []
    package private(set) var pagesChecked = 0

    private let file: Int32
    private let pageSize: Int
    private let lastPage: Int
    private var seen: Set<Int> = []
    private var table = ""
    private let tables: Set<String>?
    private var buffer: [UInt8]

    // LMDB 0.9 layout (mdb.c): page header, node header, flags.
    private static let headerSize = 16
    private static let nodeSize = 8
    private static let databaseRecordSize = 48
    private static let invalidPage = Int(bitPattern: UInt(UInt64.max))
    private static let branch: UInt16 = 0x01
    private static let leaf: UInt16 = 0x02
    private static let overflow: UInt16 = 0x04
    private static let subPage: UInt16 = 0x40
    private static let bigData: UInt16 = 0x01
    private static let subDatabase: UInt16 = 0x02
    private static let duplicates: UInt16 = 0x04
    private static let dupSortFlag: UInt16 = 0x04

    /// Checks the pages `transaction`'s snapshot reaches: the free-page tree,
    /// the table of tables and the tables in it, all of them or only those
    /// named in `tables` (the ones a launch reads before anything else).
    package static func run(on transaction: Transaction, tables: Set<String>? = nil) throws -> PageCheck {
        let path = transaction.path
        var file: Int32 = -1
        try LMDBCall.check(mdb_env_get_fd(transaction.environment.handle, &file), "mdb_env_get_fd", path: path)
        let id = transaction.id
        // The snapshot's roots are in the meta page LMDB reads for its
        // transaction id, `id & 1` (two meta pages claiming one id must not
        // send this check to the other one); the other belongs to another commit.
        var meta: [UInt8]?
        let page = id & 1
        let size = transaction.environment.pageSize
        var bytes = [UInt8](repeating: 0, count: size)
        if pread(file, &bytes, size, off_t(page * size)) == size,
            bytes.loadLE(UInt64.self, at: 144) == UInt64(bitPattern: Int64(id))
        {
            meta = bytes
        }
        // Meta pages are not kept for snapshots: two commits since this one
        // began overwrote its page. The caller takes a fresh snapshot.
        guard let meta else { throw SnapshotMoved() }
        guard meta.loadLE(UInt32.self, at: 16) == 0xBEEF_C0DE, meta.loadLE(UInt32.self, at: 20) == 1 else {
            throw TroveError(.corruptFile, "\(path) has no LMDB version 1 meta page", path: path)
        }
        let pageSize = Int(meta.loadLE(UInt32.self, at: 40))
        guard pageSize == transaction.environment.pageSize else {
            throw TroveError(
                .corruptFile, "\(path) is damaged: its meta page gives a page size of \(pageSize) bytes", path: path)
        }
        // Pages past the end of the file cannot be read: they bound the walk too.
        var info = stat()
        let filePages = fstat(file, &info) == 0 ? Int(info.st_size) / pageSize : Int.max
        let lastPage = Int(truncatingIfNeeded: min(meta.loadLE(UInt64.self, at: 136), UInt64(Int.max)))
        var check = PageCheck(
            file: file,
            pageSize: pageSize,
            lastPage: min(lastPage, filePages - 1),
            tables: tables
        )
        check.table = "free pages"
        check.walkTree(record: Array(meta[40..<88]), keysOnly: false, isMain: false)
        check.table = "table of tables"
        check.walkTree(record: Array(meta[88..<136]), keysOnly: false, isMain: true)
        return check
    }

    private init(file: Int32, pageSize: Int, lastPage: Int, tables: Set<String>?) {
        self.file = file
        self.tables = tables
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.buffer = [UInt8](repeating: 0, count: pageSize)
    }

    private mutating func report(_ page: Int, _ detail: String) {
        problems.append(Problem(table: table, page: page, detail: detail))
    }

    /// Walks the tree an `MDB_db` record describes; `keysOnly` for the trees
    /// holding a key's many values in a multi-value table.
    private mutating func walkTree(record: [UInt8], keysOnly: Bool, isMain: Bool) {
        let root = Int(bitPattern: UInt(record.loadLE(UInt64.self, at: 40)))
        guard root != Self.invalidPage else { return }
        let depth = Int(record.loadLE(UInt16.self, at: 6))
        let isMultiValue = record.loadLE(UInt16.self, at: 4) & Self.dupSortFlag != 0
        guard depth >= 1, depth <= 64 else {
            report(root, "the tree claims a depth of \(depth)")
            return
        }
        walkPage(root, level: depth, isMultiValue: isMultiValue, keysOnly: keysOnly, isMain: isMain)
    }

    private mutating func readPage(_ page: Int, expecting what: String) -> [UInt8]? {
        guard page >= 2, page <= lastPage else {
            report(page, "a link to \(what) page \(page), outside the file's pages 2...\(lastPage)")
            return nil
        }
        guard seen.insert(page).inserted else {
            report(page, "page \(page) is reached twice")
            return nil
        }
        let read = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, pageSize, off_t(page * pageSize)) }
        guard read == pageSize else {
            report(page, "page \(page) is past the end of the file")
            return nil
        }
        pagesChecked += 1
        guard buffer.loadLE(UInt64.self, at: 0) == UInt64(page) else {
            report(page, "the header of page \(page) names page \(buffer.loadLE(UInt64.self, at: 0))")
            return nil
        }
        return buffer
    }

    private mutating func walkPage(_ number: Int, level: Int, isMultiValue: Bool, keysOnly: Bool, isMain: Bool) {
        let expected = level == 1 ? Self.leaf : Self.branch
        guard let page = readPage(number, expecting: level == 1 ? "a leaf" : "a branch") else { return }
        let flags = page.loadLE(UInt16.self, at: 10) & 0x6F
        guard flags == expected else {
            report(number, "page \(number) has flags 0x\(String(flags, radix: 16)), expected a \(level == 1 ? "leaf" : "branch")")
            return
        }
        guard let nodes = nodeOffsets(page, start: 0, size: pageSize, page: number) else { return }
        var children: [Int] = []
        var subTrees: [[UInt8]] = []
        var subTreeNames: [String] = []
        for (position, offset) in nodes.enumerated() {
            let low = Int(page.loadLE(UInt16.self, at: offset)) | Int(page.loadLE(UInt16.self, at: offset + 2)) << 16
            let nodeFlags = page.loadLE(UInt16.self, at: offset + 4)
            let keySize = Int(page.loadLE(UInt16.self, at: offset + 6))
            let keyEnd = offset + Self.nodeSize + keySize
            guard keyEnd <= pageSize else {
                report(number, "node \(position) of page \(number) has a \(keySize)-byte key that runs past the page")
                return
            }
            if level > 1 {
                children.append(low | Int(nodeFlags) << 32)
                continue
            }
            // The flag combinations LMDB writes: anything else sends its cursor
            // down a path the table was not opened for (a null sub-cursor).
            let allowed: [UInt16] =
                keysOnly
                ? [0]
                : isMain
                    ? [0, Self.subDatabase]
                    : isMultiValue ? [0, Self.duplicates, Self.duplicates | Self.subDatabase] : [0, Self.bigData]
            guard allowed.contains(nodeFlags) else {
                report(
                    number,
                    "node \(position) of page \(number) has flags 0x\(String(nodeFlags, radix: 16)), which \(isMultiValue ? "a multi-value" : isMain ? "the table of tables" : "a single-value") table cannot hold"
                )
                return
            }
            if keysOnly { continue }
            let dataSize = low
            if nodeFlags & Self.bigData != 0 {
                guard keyEnd + 8 <= pageSize else {
                    report(number, "node \(position) of page \(number) runs past the page")
                    return
                }
                checkOverflow(
                    Int(truncatingIfNeeded: min(page.loadLE(UInt64.self, at: keyEnd), UInt64(Int.max))), dataSize: dataSize,
                    from: number)
                continue
            }
            guard keyEnd + dataSize <= pageSize else {
                report(number, "node \(position) of page \(number) has a \(dataSize)-byte value that runs past the page")
                return
            }
            if nodeFlags & Self.subDatabase != 0 {
                guard dataSize == Self.databaseRecordSize else {
                    report(number, "node \(position) of page \(number) holds a \(dataSize)-byte tree record, not 48")
                    return
                }
                subTrees.append(Array(page[keyEnd..<keyEnd + dataSize]))
                subTreeNames.append(
                    isMain ? String(decoding: page[offset + Self.nodeSize..<keyEnd], as: UTF8.self) : table
                )
            } else if nodeFlags & Self.duplicates != 0 {
                checkSubPage(page, start: keyEnd, size: dataSize, page: number)
            }
        }
        for child in children {
            walkPage(child, level: level - 1, isMultiValue: isMultiValue, keysOnly: keysOnly, isMain: isMain)
        }
        let outer = table
        for (record, name) in zip(subTrees, subTreeNames) where !isMain || tables?.contains(name) != false {
            table = name
            walkTree(record: record, keysOnly: !isMain, isMain: false)
        }
        table = outer
    }

    /// The node offsets of a page or sub-page, after checking each lies inside it.
    private mutating func nodeOffsets(_ page: [UInt8], start: Int, size: Int, page number: Int) -> [Int]? {
        let lower = Int(page.loadLE(UInt16.self, at: start + 12))
        let upper = Int(page.loadLE(UInt16.self, at: start + 14))
        guard lower >= Self.headerSize, lower <= upper, upper <= size, (lower - Self.headerSize) % 2 == 0 else {
            report(number, "page \(number) has free-space bounds \(lower)...\(upper) outside its \(size) bytes")
            return nil
        }
        let count = (lower - Self.headerSize) / 2
        guard count > 0 else {
            report(number, "page \(number) is in a tree but holds no entries")
            return nil
        }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for index in 0..<count {
            let offset = Int(page.loadLE(UInt16.self, at: start + Self.headerSize + 2 * index))
            guard offset >= upper, offset + Self.nodeSize <= size else {
                report(number, "entry \(index) of page \(number) points to byte \(offset), outside its nodes")
                return nil
            }
            offsets.append(start + offset)
        }
        return offsets
    }

    /// A key's values stored inline in its leaf node (a sub-page).
    private mutating func checkSubPage(_ page: [UInt8], start: Int, size: Int, page number: Int) {
        guard size >= Self.headerSize, page.loadLE(UInt16.self, at: start + 10) & 0x6F == Self.subPage | Self.leaf else {
            report(number, "a key's values on page \(number) are not a sub-page")
            return
        }
        guard let nodes = nodeOffsets(page, start: start, size: size, page: number) else { return }
        for offset in nodes {
            // A value of a key is a bare node: no flags, no data of its own.
            guard page.loadLE(UInt16.self, at: offset + 4) == 0, page.loadLE(UInt32.self, at: offset) == 0 else {
                report(number, "a value in a sub-page of page \(number) has flags or data of its own")
                return
            }
            let keySize = Int(page.loadLE(UInt16.self, at: offset + 6))
            guard offset + Self.nodeSize + keySize <= start + size else {
                report(number, "a value in a sub-page of page \(number) runs past it")
                return
            }
        }
    }

    private mutating func checkOverflow(_ first: Int, dataSize: Int, from number: Int) {
        guard let page = readPage(first, expecting: "an overflow") else { return }
        let count = Int(page.loadLE(UInt32.self, at: 12))
        guard page.loadLE(UInt16.self, at: 10) & 0x6F == Self.overflow else {
            report(first, "overflow page \(first) (from page \(number)) is not marked as one")
            return
        }
        guard count >= 1, first + count - 1 <= lastPage, count * pageSize >= Self.headerSize + dataSize else {
            report(first, "overflow page \(first) claims \(count) pages for a \(dataSize)-byte value")
            return
        }
        for page in first + 1..<first + count where !seen.insert(page).inserted {
            report(page, "page \(page) is reached twice")
        }
        pagesChecked += count - 1
    }
}

extension [UInt8] {
    fileprivate func loadLE<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
