import CLMDB

/// The tables a write transaction put to, how often, and the cursor each
/// one's puts go through from its third put on (``WriteTransaction``): held
/// inline, so that a commit of a few puts allocates nothing for them.
struct PutCursors {
    /// A table slot that was put to, how many times, and its put cursor once it has one.
    private struct Entry {
        var dbi: MDB_dbi = 0
        var puts = 0
        var cursor: OpaquePointer?
    }

    /// How many tables a write tracks (puts to more go without a cursor).
    static let limit = 8
    private var entries = (Entry(), Entry(), Entry(), Entry(), Entry(), Entry(), Entry(), Entry())
    private var count = 0

    /// The cursor for a put to `dbi`: counts the put, and opens the cursor
    /// (`open`) at the table's third; nil while it has none.
    @inline(__always)
    mutating func cursor(for dbi: MDB_dbi, open: (MDB_dbi) -> OpaquePointer?) -> OpaquePointer? {
        let count = self.count
        var added = false
        let cursor = withUnsafeMutableBytes(of: &entries) { raw -> OpaquePointer? in
            let entries = raw.bindMemory(to: Entry.self)
            var index = 0
            while index < count, entries[index].dbi != dbi { index += 1 }
            if index == count {
                guard count < Self.limit else { return nil }
                entries[index] = Entry(dbi: dbi, puts: 1, cursor: nil)
                added = true
                return nil
            }
            if let cursor = entries[index].cursor { return cursor }
            entries[index].puts += 1
            guard entries[index].puts >= 3 else { return nil }
            entries[index].cursor = open(dbi)
            return entries[index].cursor
        }
        if added { self.count += 1 }
        return cursor
    }

    /// Forgets every cursor (LMDB closed them with the transaction).
    mutating func forget() { count = 0 }
}
