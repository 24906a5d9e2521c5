import TroveStorage

/// A sort by relevance to a full-text query (``Results/sorted(byRelevanceTo:in:)-(_,String)``):
/// best BM25 score first, ties in object-key order.
struct FullTextRelevance: Sendable {
    let column: Int
    let index: Table
    /// The type's objects table (``ObjectStore/table``), for a query of exclusions alone.
    let objects: Table
    let query: FullTextQuery

    /// The sort key: scores depend on every object's text (how rare each
    /// term is), so each snapshot scores anew; the `derived` stand-in also
    /// keeps live results from placing changes by binary search.
    func sortKey(propertyName: String) -> SortKey {
        SortKey(
            column: column, ascending: false, derived: { _, _ in .double(0) },
            label: "relevance of \(propertyName) to \(StoredValue.string(query.text))", relevance: self)
    }
}

extension FullTextRelevance {
    /// `keys` best first (ties in key order); the first `limit` when given.
    func order(_ keys: [UInt64], limit: Int?, in transaction: Transaction) throws -> [UInt64] {
        let scored = try FullTextIndex.scores(query, in: index, objects: objects, transaction)
        var rows: [(key: UInt64, score: Double)]
        if scored.keys == keys {
            rows = zip(keys, scored.scores).map { ($0, $1) }
        } else {
            let scores = Dictionary(uniqueKeysWithValues: zip(scored.keys, scored.scores))
            rows = keys.map { ($0, scores[$0] ?? 0) }
        }
        let before = { (a: (key: UInt64, score: Double), b: (key: UInt64, score: Double)) in
            a.score != b.score ? a.score > b.score : a.key < b.key
        }
        if let limit, limit < rows.count {
            var heap = BoundedHeap<(key: UInt64, score: Double)>(capacity: limit, precedes: before)
            for row in rows { heap.insert(row) }
            return heap.sorted().map(\.key)
        }
        rows.sort(by: before)
        return rows.map(\.key)
    }
}

extension QueryPlanner {
    /// `sort` with each relevance key replaced by the scores of this snapshot.
    static func ranked(_ sort: [SortKey], in transaction: Transaction) throws -> [SortKey] {
        try sort.map { key in
            guard let relevance = key.relevance else { return key }
            let scored = try FullTextIndex.scores(
                relevance.query, in: relevance.index, objects: relevance.objects, transaction)
            let scores = Dictionary(uniqueKeysWithValues: zip(scored.keys, scored.scores))
            var ranked = key
            ranked.relevance = nil
            ranked.derived = { reader, _ in .double(scores[reader.objectKey] ?? 0) }
            return ranked
        }
    }
}
