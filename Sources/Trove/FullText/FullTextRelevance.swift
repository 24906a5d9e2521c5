import TroveStorage

/// A sort by relevance to a full-text query (``Results/sorted(byRelevanceTo:in:)``):
/// best BM25 score first, ties in object-key order.
struct FullTextRelevance: Sendable {
    let column: Int
    let index: Table
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

extension QueryPlanner {
    /// `sort` with each relevance key replaced by the scores of this snapshot.
    static func ranked(_ sort: [SortKey], in transaction: Transaction) throws -> [SortKey] {
        try sort.map { key in
            guard let relevance = key.relevance else { return key }
            let scores = try FullTextIndex.scores(
                relevance.query, in: relevance.index, objects: relevance.objects, transaction)
            var ranked = key
            ranked.relevance = nil
            ranked.derived = { reader, _ in .double(scores[reader.objectKey] ?? 0) }
            return ranked
        }
    }
}
