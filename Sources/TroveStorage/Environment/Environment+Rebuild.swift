import CLMDB

extension Environment {
    /// Copies one table's entries its own way: reads them from the cursor
    /// and puts what the copy holds, in ascending key order.
    package typealias Rewriter = (
        Cursor, _ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws -> Void

    /// Copies every table of the latest commit into `target`, key by key in
    /// order, appending: each B-tree of the copy is built left to right, so
    /// its pages are full. (LMDB's own compacting copy writes the pages as
    /// they are, and after scattered deletes they are half empty: a file with
    /// half its objects deleted stayed at the size of all of them.)
    ///
    /// Values are read with this file's key and written with the target's.
    /// Tables named in `skipping` are left out. `prepare` runs in the first
    /// write transaction of the target, before any table is copied. Each
    /// transaction copies at most `batch` entries, so its replay log stays small.
    /// `rewriting` may give a table a ``Rewriter`` that copies it its own way.
    /// `names` are the tables to copy (by default every table the file has;
    /// in a file with ``keyTokens``, whose stored names hide the names, the
    /// caller must list them).
    package func copyTables(
        into target: Environment, names: [String]? = nil, skipping: Set<String>, batch: Int = 50_000,
        prepare: (WriteTransaction) throws -> Void = { _ in },
        rewriting rewriter: (String, Transaction) throws -> Rewriter? = { _, _ in nil }
    ) throws {
        let source = try ReadTransaction(environment: self)
        defer { source.end() }
        var write = try WriteTransaction(environment: target)
        var pending = 0
        do {
            try prepare(write)
            for name in try names ?? tableNames() where !skipping.contains(name) {
                let isMultiValue = name.hasPrefix(Environment.multiValuePrefix)
                guard let from = try source.existingTable(name, isMultiValue: isMultiValue), source.canSee(from) else {
                    continue
                }
                var to = try write.openTable(name, isMultiValue: isMultiValue)!
                var previousKey: [UInt8] = []
                func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
                    // A further value of the same key in a multi-value table appends to its values.
                    let sameKey = isMultiValue && key.elementsEqual(previousKey)
                    try write.put(to, key: key, value: value, mode: sameKey ? .appendDuplicate : .append)
                    if isMultiValue, !sameKey { previousKey = Array(key) }
                    pending += 1
                    if pending == batch {
                        try write.commit()
                        write = try WriteTransaction(environment: target)
                        to = try write.openTable(name, isMultiValue: isMultiValue)!
                        pending = 0
                    }
                }
                let rewrite = try rewriter(name, source)
                try source.withCursor(on: from) { cursor in
                    if let rewrite { return try rewrite(cursor, put) }
                    var entry = try cursor.first()
                    while let current = entry {
                        try put(current.key, current.value)
                        entry = try cursor.next()
                    }
                }
            }
            try write.commit()
        } catch {
            write.abort()
            throw error
        }
    }
}
