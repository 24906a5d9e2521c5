import TroveStorage

extension BoundPredicate {
    /// Whether a `TEXT` condition is anywhere in the predicate.
    var containsFullText: Bool {
        switch self {
        case .fullText: return true
        case .and(let parts), .or(let parts): return parts.contains { $0.containsFullText }
        case .not(let inner), .linked(_, _, let inner), .collection(_, _, let inner): return inner.containsFullText
        case .collectionCount(_, let inner, _, _): return inner?.containsFullText ?? false
        default: return false
        }
    }

    /// The predicate with each `TEXT` condition answered from its index in
    /// `transaction`: the keys it finds, which the planner reads as
    /// candidates and a scan tests by binary search. Errors reading an index
    /// are thrown here, before any record is visited.
    func resolvingFullText(_ transaction: Transaction) throws -> BoundPredicate {
        guard containsFullText else { return self }
        switch self {
        case .fullText(let column, let index, let objects, let query):
            let matches = try FullTextIndex.search(query, in: index, objects: objects, transaction)
            return .fullTextKeys(column: column, keys: matches.keys, recheck: matches.needsRecheck ? query : nil)
        case .and(let parts): return .and(try parts.map { try $0.resolvingFullText(transaction) })
        case .or(let parts): return .or(try parts.map { try $0.resolvingFullText(transaction) })
        case .not(let inner): return .not(try inner.resolvingFullText(transaction))
        case .linked(let column, let target, let inner):
            return .linked(column: column, target: target, inner: try inner.resolvingFullText(transaction))
        case .collection(let path, let quantifier, let inner):
            return .collection(path, quantifier, inner: try inner.resolvingFullText(transaction))
        case .collectionCount(let path, let inner, let op, let value):
            return .collectionCount(path, where: try inner?.resolvingFullText(transaction), op, value)
        default: return self
        }
    }

    /// Whether the text at `column` of `record` matches `query`, its words
    /// compared whole (a candidate the index found for a long word).
    static func text(at column: Int, of record: RecordReader, matches query: FullTextQuery) -> Bool {
        guard case .string(let text) = record.value(at: column) else { return false }
        return query.matchesWhole(text)
    }

    /// Whether ascending `keys` holds `key`.
    static func contains(_ keys: [UInt64], _ key: UInt64) -> Bool {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key
    }
}
