import CLMDB

/// A position in a table. Lives only inside ``Transaction/withCursor(on:_:)``;
/// the entries it returns are valid until the next move.
package struct Cursor {
    let cursor: OpaquePointer?
    let path: String

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
        return Entry(key: k.buffer, value: v.buffer)
    }

    package func first() throws -> Entry? { try move(MDB_FIRST) }
    package func last() throws -> Entry? { try move(MDB_LAST) }
    package func next() throws -> Entry? { try move(MDB_NEXT) }
    package func previous() throws -> Entry? { try move(MDB_PREV) }
    /// The next value under the same key of a multi-value table.
    package func nextValueForKey() throws -> Entry? { try move(MDB_NEXT_DUP) }
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
