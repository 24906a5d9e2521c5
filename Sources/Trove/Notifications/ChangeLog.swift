import TroveStorage

/// The file's log of recent commits' ``ChangeRecord``s, keyed by
/// transaction id (u64 big-endian), in the table `changes`.
///
/// A handle's write appends its record in the same transaction, so the log
/// and the data never disagree, and drops entries older than
/// ``retained`` commits. A handle that moves from snapshot A to snapshot B
/// (its own commit, a refresh, autorefresh after another process's commit)
/// reads the entries A+1 through B and merges them; when one is missing (a
/// commit that wrote no record, or a handle that fell more than ``retained``
/// commits behind) there is no record and observers compare in full.
enum ChangeLog {
    static let tableName = "changes"
    /// How many recent commits' records the file keeps (at least).
    static let retained = 256
    /// Old records are dropped every this many commits, a leaf at a time,
    /// rather than one per commit: each commit then changes only the last leaf.
    static let pruneInterval: UInt64 = 64
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
        try record.encoded().withUnsafeBytes { _ = try append($0, in: transaction, table: nil) }
    }

    /// ``append(_:in:)`` of what `recorder` recorded (encoded without building
    /// its record); `table` is the log's table when the caller knows it.
    /// Returns the log's table (nil when the write wrote nothing).
    @discardableResult
    static func append(_ recorder: ChangeRecorder, in transaction: WriteTransaction, table: Table?) throws -> Table? {
        guard transaction.loggedBytes > 0 else { return table }
        return try recorder.withEncoded { try append($0, in: transaction, table: table) }
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, in transaction: WriteTransaction, table known: Table?) throws
        -> Table?
    {
        guard let table = try known ?? transaction.openTable(tableName) else { return known }
        let id = UInt64(transaction.id)
        let oldest = id > UInt64(retained) && id % pruneInterval == 0 ? id - UInt64(retained) : nil
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
            // file unwritable: the log starts again, and handles behind it
            // compare in full. (An error LMDB reports, with its code, fails the write.)
            try transaction.clear(table)
            (earlier, fresh) = ([], false)
        }
        for key in earlier { try key.withUnsafeBytes { _ = try transaction.delete(table, key: $0) } }
        for (part, start) in stride(from: 0, to: bytes.count, by: partSize).enumerated() where part > 0 || !fresh {
            let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + partSize, bytes.count)])
            try withEntryKey(id, part) { _ = try transaction.put(table, key: $0, value: slice) }
        }
        if let oldest {
            _ = try withEntryKey(0, 0) { first in
                try transaction.deleteRun(table, from: first) { $0.count == 12 && OrderedKey.objectKey(from: $0) <= oldest }
            }
        }
        return table
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
        guard new - old <= retained, let table = try? transaction.existingTable(tableName), transaction.canSee(table)
        else { return nil }
        return try? transaction.withCursor(on: table) { cursor -> ChangeRecord? in
            var merged = ChangeRecord()
            var entry = try withEntryKey(UInt64(old + 1), 0) { try cursor.seek(atLeast: $0) }
            for id in UInt64(old + 1)...UInt64(new) {
                guard let record = try record(id, at: &entry, cursor) else { return nil }
                merged.merge(record)
            }
            return merged
        }
    }

    /// Every record in the log, by transaction id, for ``Database/verify()``;
    /// nil in place of a record that does not decode.
    static func entries(in transaction: Transaction) throws -> [(id: UInt64, record: ChangeRecord?)] {
        guard let table = try transaction.existingTable(tableName), transaction.canSee(table) else { return [] }
        return try transaction.withCursor(on: table) { cursor in
            var entries: [(id: UInt64, record: ChangeRecord?)] = []
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
            return entries
        }
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
