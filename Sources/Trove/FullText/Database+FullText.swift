import TroveStorage

/// Keeping full-text indexes in step with the records: every path that
/// stores, changes or deletes a record of a type with a full-text index
/// tells its pending postings (``FullTextPending``), in the same write.
extension Database {
    /// The postings waiting for one full-text index in the open write.
    private func pending(_ index: Table, _ state: WriteState) -> FullTextPending {
        state.fullTextPending(index)
    }

    /// Indexes the texts of a record just stored.
    func indexTexts(_ values: [StoredValue], objectKey: UInt64, table: TableInfo, _ state: WriteState) throws {
        for (column, index) in table.fullTextIndexes {
            guard case .string(let text) = values[column] else { continue }
            try add(text, objectKey: objectKey, to: pending(index, state), state)
        }
    }

    /// Takes the texts of a record out of the indexes.
    func unindexTexts(_ values: [StoredValue], objectKey: UInt64, table: TableInfo, _ state: WriteState) {
        for (column, index) in table.fullTextIndexes {
            guard case .string(let text) = values[column] else { continue }
            pending(index, state).remove(text, objectKey: objectKey)
        }
    }

    /// Follows a change of one column's value in its full-text index, if it has one.
    func reindexText(
        column: Int, from old: StoredValue, to new: StoredValue, objectKey: UInt64, table: TableInfo, _ state: WriteState
    ) throws {
        guard let index = table.fullTextIndexes[column], old != new else { return }
        let pending = pending(index, state)
        if case .string(let text) = old { pending.remove(text, objectKey: objectKey) }
        if case .string(let text) = new { try add(text, objectKey: objectKey, to: pending, state) }
    }

    private func add(_ text: String, objectKey: UInt64, to pending: FullTextPending, _ state: WriteState) throws {
        pending.add(text, objectKey: objectKey)
        if pending.waiting > FullTextPending.writeEarlyLimit { try pending.write(state.transaction) }
    }

    /// Empties a type's full-text indexes with its objects.
    func clearFullTextIndexes(of table: TableInfo, _ state: WriteState) throws {
        for index in table.fullTextIndexes.values {
            state.fullText[index.name]?.reset()
            try state.transaction.clear(index)
        }
    }

    /// Fills new full-text indexes from the records already stored (a
    /// full-text index added to a model with objects).
    static func buildFullTextIndexes(_ columns: [Int], of table: TableInfo, in transaction: WriteTransaction) throws {
        guard !columns.isEmpty else { return }
        var pending: [Int: FullTextPending] = [:]
        for column in columns { pending[column] = FullTextPending(table: table.fullTextIndexes[column]!) }
        var batch: [(key: UInt64, column: Int, text: String)] = []
        // Read a batch, then index it: the cursor's pages must not change under it.
        var resume: UInt64? = 0
        while let start = resume {
            resume = nil
            batch.removeAll(keepingCapacity: true)
            try table.store.scan(in: transaction, from: start) { reader in
                if batch.count >= 10_000 {
                    resume = reader.objectKey
                    return false
                }
                for column in columns {
                    if case .string(let text) = reader.value(at: column) { batch.append((reader.objectKey, column, text)) }
                }
                return true
            }
            for item in batch {
                let target = pending[item.column]!
                target.add(item.text, objectKey: item.key)
                if target.waiting > FullTextPending.writeEarlyLimit { try target.write(transaction) }
            }
        }
        for target in pending.values { try target.write(transaction) }
    }
}
