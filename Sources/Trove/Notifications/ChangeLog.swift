import TroveStorage

/// The file's log of recent commits' ``ChangeRecord``s, keyed by
/// transaction id (u64 big-endian) and part number.
///
/// A handle's write appends its record in the same transaction, so the log
/// and the data never disagree. A handle that moves from snapshot A to
/// snapshot B (its own commit, a refresh, autorefresh after another
/// process's commit) reads the entries A+1 through B and merges them; when
/// one is missing (a commit that wrote no record, or a handle that fell more
/// than ``retained`` commits behind) there is no record and observers
/// compare in full.
///
/// The records are kept in two tables, by block of ``retained`` ids: the
/// blocks of even number in `changes`, the odd ones in `changes.1`. The
/// commit that starts a block empties its table (which held the block
/// before last) in one `mdb_drop`, so the log holds between ``retained``
/// and twice as many commits and a commit pays nothing to drop old records:
/// deleting them one by one from the front of one table cost ~1.8k
/// instructions a commit (LMDB moves the rest of a leaf on each delete and
/// refills the emptying leaf from its neighbour).
enum ChangeLog {
    /// The tables of the blocks of even and of odd number.
    static let tableNames = ["changes", "changes.1"]
    /// The table of the first block (and of every record, in files before
    /// ``Database/changeLogBlocksFormatVersion``).
    static var tableName: String { tableNames[0] }
    /// How many recent commits' records the file keeps (at least); also the
    /// number of ids in a block.
    static let retained = 256

    /// Whether `name` is one of the log's tables.
    static func isLogTable(_ name: String) -> Bool { name == tableNames[0] || name == tableNames[1] }

    /// The log's tables a handle has opened, kept from one write to the next.
    struct Tables {
        var even: Table?
        var odd: Table?
        /// The file's format is known to allow records in the second table.
        var formatRaised = false

        subscript(block: UInt64) -> Table? {
            get { block % 2 == 0 ? even : odd }
            set { if block % 2 == 0 { even = newValue } else { odd = newValue } }
        }
    }

    /// The block of ids `id` belongs to; its table is `tableNames[block % 2]`.
    @inline(__always)
    static func block(of id: UInt64) -> UInt64 { id / UInt64(retained) }

    /// A record is stored in parts of at most this many bytes, keyed by
    /// transaction id and part number, so that every part sits in a B-tree
    /// leaf (whose page header the page check verifies) rather than in
    /// overflow pages.
    static let partSize = 1024

    /// Stores `record` as the record of `transaction`'s commit, and drops
    /// old entries. Every commit that changes the file must store one (an
    /// empty one when nothing observable changed): compaction starts
    /// transaction ids again from 1, so an id may still have the entry of an
    /// earlier commit, which this one replaces.
    static func append(_ record: ChangeRecord, in transaction: WriteTransaction) throws {
        guard transaction.loggedBytes > 0 else { return }
        var tables = Tables()
        try prepare(transaction, &tables)
        try record.encoded().withUnsafeBytes { try append($0, in: transaction, tables: &tables) }
    }

    /// ``append(_:in:)`` of what `recorder` recorded (encoded without building
    /// its record); `tables` are the log's tables as far as the caller knows
    /// them, and as known after the append (to be forgotten if the
    /// transaction does not commit: a table it created is gone then).
    static func append(_ recorder: ChangeRecorder, in transaction: WriteTransaction, tables: inout Tables) throws {
        guard transaction.loggedBytes > 0 else { return }
        try prepare(transaction, &tables)
        try recorder.withEncoded { try append($0, in: transaction, tables: &tables) }
    }

    /// A record in the second table makes the file one that a Trove before
    /// the two tables would misread (it would not look there, and its
    /// compaction would copy the table, whose ids a later commit may reuse).
    /// Raised before the record is encoded, so that the record names it.
    private static func prepare(_ transaction: WriteTransaction, _ tables: inout Tables) throws {
        guard !tables.formatRaised, block(of: UInt64(transaction.id)) % 2 == 1 else { return }
        try Catalog.raiseFormat(to: Database.changeLogBlocksFormatVersion, in: transaction)
        tables.formatRaised = true
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, in transaction: WriteTransaction, tables: inout Tables)
        throws
    {
        let id = UInt64(transaction.id)
        let block = block(of: id)
        let table: Table
        if let known = tables[block] {
            table = known
        } else {
            guard let opened = try transaction.openTable(tableNames[Int(block % 2)]) else { return }
            table = opened
            tables[block] = opened
        }
        // The block before last goes as this one starts.
        if id % UInt64(retained) == 0 { try transaction.clear(table) }
        // The first part goes in only where no earlier commit's record has this
        // id (the usual case: no search for one first); otherwise that record goes.
        var fresh = false
        if !bytes.isEmpty {
            fresh = try withEntryKey(id, 0) {
                try transaction.put(
                    table, key: $0, value: UnsafeRawBufferPointer(rebasing: bytes[0..<Swift.min(partSize, bytes.count)]),
                    mode: .insertOnly)
            }
        }
        var earlier: [[UInt8]] = []
        do {
            if !fresh { earlier = try keys(of: table, in: transaction, from: id, through: id) }
        } catch let error as TroveError where error.kind == .corruptFile && error.code == nil && table.isSealed {
            // A sealed record that does not open (changed behind the file's
            // back, or written unsealed by an older Trove) must not make the
            // file unwritable: the table starts again, and handles behind it
            // compare in full. (An error LMDB reports, with its code, fails the write.)
            try transaction.clear(table)
            (earlier, fresh) = ([], false)
        }
        for key in earlier { try key.withUnsafeBytes { _ = try transaction.delete(table, key: $0) } }
        for (part, start) in stride(from: 0, to: bytes.count, by: partSize).enumerated() where part > 0 || !fresh {
            let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + partSize, bytes.count)])
            try withEntryKey(id, part) { _ = try transaction.put(table, key: $0, value: slice) }
        }
    }

    /// The keys of the parts of the records of commits `first` through `last`.
    private static func keys(of table: Table, in transaction: WriteTransaction, from first: UInt64, through last: UInt64)
        throws -> [[UInt8]]
    {
        try transaction.withCursor(on: table) { cursor in
            var keys: [[UInt8]] = []
            var entry = try withEntryKey(first, 0) { try cursor.seek(atLeast: $0) }
            while let current = entry, current.key.count == 12, OrderedKey.objectKey(from: current.key) <= last {
                keys.append(Array(current.key))
                entry = try cursor.next()
            }
            return keys
        }
    }

    /// What the commits after snapshot `old` up to and including `new`
    /// changed, read through `transaction` (a snapshot at `new` or later);
    /// nil when the log does not cover every one of them.
    static func changes(after old: Int, through new: Int, in transaction: Transaction) -> ChangeRecord? {
        guard new >= old else { return nil }
        guard new > old else { return ChangeRecord() }
        guard new - old <= retained else { return nil }
        var merged = ChangeRecord()
        var first = UInt64(old + 1)
        // A block at a time (at most two: the range is no longer than a block).
        while first <= UInt64(new) {
            let block = block(of: first)
            let last = Swift.min(UInt64(new), (block + 1) * UInt64(retained) - 1)
            guard let table = try? transaction.existingTable(tableNames[Int(block % 2)]), transaction.canSee(table),
                let covered = try? transaction.withCursor(
                    on: table,
                    { cursor -> Bool in
                        var entry = try withEntryKey(first, 0) { try cursor.seek(atLeast: $0) }
                        for id in first...last {
                            guard let record = try record(id, at: &entry, cursor) else { return false }
                            merged.merge(record)
                        }
                        return true
                    }), covered
            else { return nil }
            first = last + 1
        }
        return merged
    }

    /// Every record in the log, by transaction id, for ``Database/verify()``;
    /// nil in place of a record that does not decode (with `UInt64.max` as
    /// its id where the key is not one of the log's).
    static func entries(in transaction: Transaction) throws -> [(id: UInt64, record: ChangeRecord?)] {
        var entries: [(id: UInt64, record: ChangeRecord?)] = []
        for name in tableNames {
            guard let table = try transaction.existingTable(name), transaction.canSee(table) else { continue }
            try transaction.withCursor(on: table) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    guard current.key.count == 12 else {
                        entries.append((UInt64.max, nil))
                        entry = try cursor.next()
                        continue
                    }
                    let id = OrderedKey.objectKey(from: current.key)
                    entries.append((id, try record(id, at: &entry, cursor)))
                }
            }
        }
        return entries.sorted { $0.id < $1.id }
    }

    /// The record of commit `id`, whose parts start at `entry`; moves
    /// `entry` past them. Nil when there is no part 0, a part is missing or
    /// the bytes do not decode.
    private static func record(_ id: UInt64, at entry: inout Entry?, _ cursor: Cursor) throws -> ChangeRecord? {
        var bytes: [UInt8] = []
        var part: UInt32 = 0
        var inOrder = true
        while let current = entry, current.key.count == 12, OrderedKey.objectKey(from: current.key) == id {
            if current.key.loadUnaligned(fromByteOffset: 8, as: UInt32.self).bigEndian != part { inOrder = false }
            bytes.append(contentsOf: current.value)
            part += 1
            entry = try cursor.next()
        }
        guard inOrder, part > 0 else { return nil }
        return bytes.withUnsafeBytes { ChangeRecord(decoding: $0) }
    }

    /// Calls `body` with the key of one part of a transaction's record: id ‖ part, big-endian.
    @inline(__always)
    private static func withEntryKey<R>(_ id: UInt64, _ part: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var key = (id.bigEndian, UInt32(part).bigEndian)
        return try withUnsafeBytes(of: &key) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<12])) }
    }
}
