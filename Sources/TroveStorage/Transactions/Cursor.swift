import CLMDB

/// A position in a table. Lives only inside ``Transaction/withCursor(on:_:)``;
/// the entries it returns are valid until the next move.
package struct Cursor {
    let cursor: OpaquePointer?
    let path: String
    /// Decrypts the values of a sealed table.
    var sealed: SealedValues? = nil
    /// The transaction it reads in (to check that entries lie inside the file) and the table's name.
    var transaction: Transaction? = nil
    var table = ""

    /// A cursor over a table the snapshot cannot see: it finds nothing.
    static var empty: Cursor { Cursor(cursor: nil, path: "") }

    @inline(__always)
    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        guard let cursor else { return nil }
        var k = key.map { MDB_val($0) } ?? MDB_val()
        var v = MDB_val()
        let rc = LMDBCall.run { mdb_cursor_get(cursor, &k, &v, op) }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBCall.check(rc, "reading through a cursor", path: path)
        let key = try transaction?.checked(k, table) ?? k.buffer
        let value = try transaction?.checked(v, table) ?? v.buffer
        if let sealed { return Entry(key: key, value: try sealed.open(value, key: key, path: path)) }
        return Entry(key: key, value: value)
    }

    /// ``nextKey()``'s key alone: the value is neither checked nor opened
    /// (a count of a multi-value table's keys and values reads none).
    package func nextKeyOnly() throws -> UnsafeRawBufferPointer? {
        guard let cursor else { return nil }
        var k = MDB_val()
        var v = MDB_val()
        let rc = LMDBCall.run { mdb_cursor_get(cursor, &k, &v, MDB_NEXT_NODUP) }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBCall.check(rc, "reading through a cursor", path: path)
        return try transaction?.checked(k, table) ?? k.buffer
    }

    package func first() throws -> Entry? { try move(MDB_FIRST) }
    package func last() throws -> Entry? { try move(MDB_LAST) }
    package func next() throws -> Entry? { try move(MDB_NEXT) }
    package func previous() throws -> Entry? { try move(MDB_PREV) }
    /// The next value under the same key of a multi-value table.
    package func nextValueForKey() throws -> Entry? { try move(MDB_NEXT_DUP) }
    /// The first value of the next key of a multi-value table (past the current key's other values).
    package func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }
    /// The first key that is not below `key`.
    package func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? {
        try move(MDB_SET_RANGE, key: key)
    }
    /// Exactly `key`, at its first value.
    package func seek(exactly key: UnsafeRawBufferPointer) throws -> Entry? {
        try move(MDB_SET_KEY, key: key)
    }
    /// The number of values under the current key of a multi-value table.
    package func valueCount() throws -> Int {
        guard let cursor else { return 0 }
        var count: Int = 0
        try LMDBCall.check(mdb_cursor_count(cursor, &count), "counting values of a key", path: path)
        return count
    }
}

/// The decrypted values a cursor over a sealed table hands out. Callers may
/// still read the previous entry after moving on (as with mapped pages), so
/// a few buffers take turns.
final class SealedValues {
    private let cipher: Cipher
    private let table: Table
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var next = 0
    private static let turns = 4

    init(cipher: Cipher, table: Table) {
        self.cipher = cipher
        self.table = table
    }

    deinit {
        for buffer in buffers {
            SecretBytes.wipe(buffer)  // decrypted values
            buffer.deallocate()
        }
    }

    func open(_ sealed: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, path: String) throws -> UnsafeRawBufferPointer {
        let length = max(sealed.count - Cipher.overhead, 0)
        if buffers.count < SealedValues.turns {
            buffers.append(.allocate(byteCount: max(length, 64), alignment: 8))
        } else if buffers[next].count < length {
            SecretBytes.wipe(buffers[next])
            buffers[next].deallocate()
            buffers[next] = .allocate(byteCount: max(length, buffers[next].count * 2), alignment: 8)
        }
        let buffer = buffers[next]
        next = (next + 1) % SealedValues.turns
        guard cipher.open(sealed, table: table.name, key: key, into: buffer) else {
            throw Transaction.unreadable(table, path: path)
        }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<length])
    }
}
