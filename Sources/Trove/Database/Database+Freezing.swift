import TroveStorage

extension Database {
    /// A new handle on the same file, pinned to the latest commit: it never
    /// refreshes, cannot write, and its objects and results keep showing that
    /// state however the file changes (Realm's `realm.freeze()`). Open it
    /// where it is used, like any handle; it holds its snapshot (and so the
    /// pages of that state) until it is released.
    ///
    /// ```swift
    /// let before = try db.freeze()
    /// try db.write { try db.add(Photo()) }
    /// before.objects(Photo.self).count   // still the count before the add
    /// ```
    public func freeze(isolation: isolated (any Actor)? = #isolation) throws -> Database {
        if isFrozen { return self }
        let frozen = try Database(configuration: configuration, isolation: isolation)
        frozen.autorefresh = false
        frozen.isFrozen = true
        _ = frozen.readTransaction()  // takes the snapshot now
        return frozen
    }
}
