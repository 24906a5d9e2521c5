import TroveStorage

/// Full-text search on results: ranking by relevance and snippets.
extension Results {
    /// The matches of a full-text query on a property with a full-text
    /// index, best first (BM25 relevance; ties in insertion order). The same
    /// as `filter("memo TEXT %@", query)` sorted by relevance to `query`.
    ///
    /// ```swift
    /// let hits = try db.objects(Photo.self).search("산책 공원", in: "memo")
    /// ```
    ///
    /// Query syntax: words separated by spaces must all occur; `-word`
    /// excludes; `word*` matches words starting with `word`; `"two words"`
    /// matches them side by side. Case, diacritics and width are ignored; a
    /// Hangul, Han or Kana word is also found inside longer runs (`산책` finds
    /// `산책을` and `산책하고`). A query without any word finds nothing.
    ///
    /// Throws `TroveError.Kind.invalidQuery` when the property has no full-text index.
    public func search(_ query: String, in property: String) throws -> Results {
        try filter("\(property) TEXT %@", query).sorted(byRelevanceTo: query, in: property)
    }

    /// ``search(_:in:)-(_,String)`` with a key path: `search("walk", in: \.memo)`.
    public func search(_ query: String, in keyPath: KeyPath<Element, String>) throws -> Results {
        try search(query, in: table.schema.properties[source.column(for: keyPath)].name)
    }

    /// These results ordered by relevance to a full-text query (BM25 over
    /// the property's full-text index), best first; objects the query does
    /// not match come last, in object-key order. Combine with a `TEXT`
    /// filter (or use ``search(_:in:)-(_,String)``) to keep only matches.
    ///
    /// ```swift
    /// let ranked = try db.objects(Photo.self).filter("memo TEXT %@ AND date > %@", "walk", start)
    ///     .sorted(byRelevanceTo: "walk", in: "memo")
    /// ```
    ///
    /// The property must have a full-text index (`@Persisted(indexed: .fullText)`);
    /// naming another traps, as an unknown key path does in ``sorted(byKeyPath:ascending:)``.
    public func sorted(byRelevanceTo query: String, in property: String) -> Results {
        guard let column = table.columnIndex[property] else {
            preconditionFailure("Trove: cannot sort \(table.name) by relevance: \(table.unknownProperty(property).message)")
        }
        guard let index = table.fullTextIndexes[column] else {
            preconditionFailure(
                "Trove: cannot sort \(table.name) by relevance to \(property): it has no full-text index; declare it `@Persisted(indexed: .fullText) var \(property)`"
            )
        }
        let relevance = FullTextRelevance(column: column, index: index, objects: table.store.table, query: FullTextQuery(query))
        return with(predicate: predicate, sort: [relevance.sortKey(propertyName: property)])
    }

    /// ``sorted(byRelevanceTo:in:)-(_,String)`` with a key path.
    public func sorted(byRelevanceTo query: String, in keyPath: KeyPath<Element, String>) -> Results {
        sorted(byRelevanceTo: query, in: table.schema.properties[source.column(for: keyPath)].name)
    }

    /// The search these results rank by or filter with: its property and query.
    private var fullTextSearch: (column: Int, query: FullTextQuery)? {
        if let relevance = sort.first(where: { $0.relevance != nil })?.relevance { return (relevance.column, relevance.query) }
        func find(_ predicate: BoundPredicate?) -> (Int, FullTextQuery)? {
            switch predicate {
            case .fullText(let column, _, _, let query): return (column, query)
            case .and(let parts): return parts.lazy.compactMap(find).first
            default: return nil
            }
        }
        return find(predicate)
    }

    /// An excerpt of an object's searched text around the words these
    /// results' full-text search found (from ``search(_:in:)-(_,String)``,
    /// ``sorted(byRelevanceTo:in:)-(_,String)`` or a `TEXT` filter), with them highlighted.
    /// Nil when the results have no full-text search.
    ///
    /// ```swift
    /// let hits = try db.objects(Photo.self).search("공원", in: "memo")
    /// hits.first.flatMap { hits.snippet(for: $0) }?.marked()   // "…오늘은 [공원]에서…"
    /// ```
    public func snippet(for object: Element, length: Int = 24) -> TextSnippet? where Element: Object {
        guard let (column, query) = fullTextSearch, object._database != nil, !object.isInvalidated else { return nil }
        guard case .string(let text) = object._readColumn(column) else { return nil }
        return TextSnippet(of: text, query: query, length: length)
    }
}
