/// An excerpt of a text around the words a full-text query found, with
/// where they are, for a search screen.
///
/// ```swift
/// let hits = try db.objects(Photo.self).search("산책 공원", in: "memo")
/// for photo in hits {
///     print(hits.snippet(for: photo)?.marked(open: "**", close: "**") ?? photo.memo)
///     // …오늘은 **공원**에서 **산책**을 했다…
/// }
/// ```
///
/// A word is highlighted where the index matched it: a whole folded word,
/// or, in Hangul, Han and Kana, the characters of the searched word inside a
/// longer run (`산책` in `산책을`).
public struct TextSnippet: Sendable, Equatable, CustomStringConvertible {
    /// The excerpt, with `…` where the text goes on before or after it.
    public let text: String
    /// Where the matched words stand in ``text``.
    public let highlights: [Range<String.Index>]

    /// An excerpt of `text` of about `length` words (a Hangul, Han or Kana
    /// character counts as one) around where `query`, written as for the
    /// `TEXT` operator, matches it most densely; the start of the text when
    /// it does not match.
    ///
    /// ```swift
    /// TextSnippet(of: "A long walk in the park today", matching: "park", length: 4).marked()
    /// // "…walk in the [park]…"
    /// ```
    public init(of text: String, matching query: String, length: Int = 24) {
        self.init(of: text, query: FullTextQuery(query), length: length)
    }

    init(of text: String, query: FullTextQuery, length: Int) {
        // Every position of the text with the bytes it came from.
        var tokens: [FullTextTokenizer.Token] = []
        var ranges: [Int: Range<Int>] = [:]
        var bigrams: [Int: [UInt8]] = [:]
        FullTextTokenizer.forEachTerm(in: text) { bytes, position, kind, range in
            tokens.append(.init(term: String(decoding: bytes, as: UTF8.self), position: position, kind: kind))
            if kind == .bigram { bigrams[position] = Array(bytes) }
            ranges[position] = range
        }
        let positions = FullTextQuery.positions(of: tokens)
        var matched = Set<Int>()
        for element in query.included {
            for start in FullTextQuery.starts(of: element, in: positions) {
                for part in element.parts {
                    let at = start + part.offset
                    matched.insert(at)
                    // A pair covers its second character too.
                    if bigrams[at] == part.term { matched.insert(at + 1) }
                }
            }
        }
        let all = ranges.keys.sorted()
        guard let lastPosition = all.last else {
            self.text = ""
            highlights = []
            return
        }
        let width = Swift.max(length, 1)
        // The window of `width` positions holding the most matches (the first such).
        var first = all[0]
        let hits = matched.sorted()
        if !hits.isEmpty, all.count > width {
            var best = -1
            for hit in hits {
                let start = Swift.max(all[0], hit - Swift.min(3, width / 4))
                let count = hits.filter { $0 >= start && $0 < start + width }.count
                if count > best {
                    best = count
                    first = start
                }
            }
        }
        // A window near the end still shows `width` positions.
        if all.count > width { first = Swift.min(first, all[all.count - width]) }
        // Start at the beginning of the word a Hangul, Han or Kana run makes, while the hits stay in view.
        let lastHit = hits.last(where: { $0 < first + width }) ?? first
        while first > all[0], let here = ranges[first], let before = ranges[first - 1], before.upperBound == here.lowerBound,
            lastHit - (first - 1) < width
        {
            first -= 1
        }
        let shown = all.filter { $0 >= first && $0 < first + width }
        let utf8 = Array(text.utf8)
        let low = ranges[shown.first!]!.lowerBound
        let high = ranges[shown.last!]!.upperBound
        var excerpt = low > 0 ? "…" : ""
        let offset = excerpt.utf8.count
        excerpt += String(decoding: utf8[low..<high], as: UTF8.self)
        if shown.last! < lastPosition || high < utf8.count { excerpt += "…" }
        // Highlights: matched positions' bytes, neighbours merged.
        var byteRanges: [Range<Int>] = []
        for position in shown where matched.contains(position) {
            let range = ranges[position]!
            if let last = byteRanges.last, last.upperBound >= range.lowerBound {
                byteRanges[byteRanges.count - 1] = last.lowerBound..<Swift.max(last.upperBound, range.upperBound)
            } else {
                byteRanges.append(range)
            }
        }
        let view = excerpt.utf8
        highlights = byteRanges.map { range in
            let start = view.index(view.startIndex, offsetBy: range.lowerBound - low + offset)
            let end = view.index(view.startIndex, offsetBy: range.upperBound - low + offset)
            return start..<end
        }
        self.text = excerpt
    }

    /// The excerpt with each highlight between `open` and `close`.
    public func marked(open: String = "[", close: String = "]") -> String {
        var result = ""
        var index = text.startIndex
        for range in highlights {
            result += text[index..<range.lowerBound]
            result += open + text[range] + close
            index = range.upperBound
        }
        result += text[index...]
        return result
    }

    /// The excerpt with its highlights in brackets.
    public var description: String { marked() }
}
