import Foundation
import TroveStorage

/// The stored form of one property's full-text index: one LMDB table,
/// `fts:<Type>.<property>`, holding
/// - `term ‖ 0x00 ‖ first object key` → a block of postings: for each object
///   holding the term, in key order, the key's distance from the previous
///   one, how often the term occurs, and where (positions as distances),
///   all as LEB128 varints; a block ends near ``blockLimit`` bytes;
/// - `0x00 ‖ object key` → how many positions the object's text has (its
///   length, for ranking), for each object with at least one term;
/// - `0x01` → the number of such objects and their total length.
///
/// Terms begin with a letter, digit or CJK character, never a byte below
/// 0x30, so the two bookkeeping kinds sort before every term.
enum FullTextIndex {
    /// The size a block of postings stops growing at (a single object's
    /// postings may exceed it). Small enough that a block stays on its page.
    static let blockLimit = 1900
    static let lengthTag: UInt8 = 0
    static let statsKey: [UInt8] = [1]

    static func tableName(_ type: String, _ property: String) -> String { "fts:\(type).\(property)" }

    // MARK: Encoding

    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// Reads one varint at `index`; stops at the end of `bytes` (a damaged
    /// block reads as garbage, never beyond its bytes; ``verify`` notices it).
    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return result
    }

    /// The tag of a term's token in a file with key tokens: a byte no
    /// bookkeeping key starts with.
    static let tokenTag: UInt8 = 0x7F

    /// How `term` is stored in `table`: as it is, or in a file with key
    /// tokens, the tag and the term's token (``KeyTokens``).
    static func storedTerm(_ term: [UInt8], in table: Table, _ transaction: Transaction) -> [UInt8] {
        guard let tokens = transaction.environment.keyTokens else { return term }
        var stored = [tokenTag]
        term.withUnsafeBytes { tokens.append($0, in: table.name, to: &stored) }
        return stored
    }

    static func blockKey(_ term: [UInt8], _ firstKey: UInt64) -> [UInt8] {
        var key = term
        key.append(0)
        withUnsafeBytes(of: firstKey.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func lengthKey(_ objectKey: UInt64) -> [UInt8] {
        var key: [UInt8] = [lengthTag]
        withUnsafeBytes(of: objectKey.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The term and first object key of a block's key; nil for a bookkeeping key.
    static func splitBlockKey(_ key: UnsafeRawBufferPointer) -> (termCount: Int, firstKey: UInt64)? {
        guard key.count >= 10, key[0] >= 0x30, key[key.count - 9] == 0 else { return nil }
        return (key.count - 9, OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...])))
    }

    // MARK: Reading

    /// The objects holding a term (or, for a prefix, any word starting with
    /// it), ascending: how often, and, when asked, where.
    struct PostingList {
        var keys: [UInt64] = []
        var counts: [UInt32] = []
        /// With positions: where each object's positions start in ``positions``, plus the end.
        var starts: [Int] = []
        var positions: [UInt32] = []

        func positions(at index: Int) -> ArraySlice<UInt32> { positions[starts[index]..<starts[index + 1]] }
    }

    /// How much of each posting a reader needs.
    enum Detail {
        case keys, counts, positions
    }

    /// Decodes one block's postings onto `list`: a posting is the distance
    /// of its key from the previous one (the first's from the block's first
    /// key, so 0), the length of its positions in bytes, and the positions
    /// as distances, all varints.
    static func decode(_ block: UnsafeRawBufferPointer, firstKey: UInt64, into list: inout PostingList, _ detail: Detail) {
        var index = 0
        var key = firstKey
        while index < block.count {
            key &+= readVarint(block, &index)
            let length = Int(truncatingIfNeeded: readVarint(block, &index))
            let end = length >= 0 && length <= block.count - index ? index + length : block.count
            list.keys.append(key)
            switch detail {
            case .keys: break
            case .counts:
                var count: UInt32 = 0
                for at in index..<end where block[at] < 0x80 { count += 1 }
                list.counts.append(count)
            case .positions:
                if list.starts.isEmpty { list.starts.append(list.positions.count) }
                var position: UInt32 = 0
                var at = index
                while at < end {
                    position &+= UInt32(truncatingIfNeeded: readVarint(block, &at))
                    list.positions.append(position)
                }
                list.counts.append(UInt32(list.positions.count - list.starts[list.starts.count - 1]))
                list.starts.append(list.positions.count)
            }
            index = end
        }
    }

    /// The postings of `term` (every word starting with it, for a prefix,
    /// which a file with key tokens cannot look up: see ``search``).
    static func postings(
        of term: [UInt8], isPrefix: Bool, _ detail: Detail, in table: Table, _ transaction: Transaction
    ) throws -> PostingList {
        try (transaction as? WriteTransaction)?.writePending()
        var list = PostingList()
        precondition(!isPrefix || transaction.environment.keyTokens == nil, "a prefix has no token")
        var start = storedTerm(term, in: table, transaction)
        if !isPrefix { start.append(0) }
        var termsSeen = 0
        var lastTerm: [UInt8] = []
        try start.withUnsafeBytes { startBytes in
            try transaction.withCursor(on: table) { cursor in
                var entry = try cursor.seek(atLeast: startBytes)
                while let current = entry, current.key.starts(with: startBytes) {
                    if let (termCount, firstKey) = splitBlockKey(current.key) {
                        if isPrefix, !current.key[0..<termCount].elementsEqual(lastTerm) {
                            termsSeen += 1
                            lastTerm = Array(current.key[0..<termCount])
                        }
                        decode(current.value, firstKey: firstKey, into: &list, detail)
                    }
                    entry = try cursor.next()
                }
            }
        }
        // Several words' lists, each ascending: merged into one.
        if termsSeen > 1 { list = merged(list, detail) }
        return list
    }

    /// A list sorted by key, one entry per key (counts added, positions joined).
    private static func merged(_ list: PostingList, _ detail: Detail) -> PostingList {
        if detail == .keys {
            // Keys alone (a count, a filter): sort them as numbers and drop repeats.
            var keys = list.keys
            keys.sort()
            var kept = 0
            for index in keys.indices where kept == 0 || keys[index] != keys[kept - 1] {
                keys[kept] = keys[index]
                kept += 1
            }
            keys.removeSubrange(kept...)
            return PostingList(keys: keys)
        }
        let order = list.keys.indices.sorted { list.keys[$0] != list.keys[$1] ? list.keys[$0] < list.keys[$1] : $0 < $1 }
        var result = PostingList()
        for index in order {
            let key = list.keys[index]
            let repeated = result.keys.last == key
            if !repeated { result.keys.append(key) }
            switch detail {
            case .keys: break
            case .counts:
                if repeated {
                    result.counts[result.counts.count - 1] += list.counts[index]
                } else {
                    result.counts.append(list.counts[index])
                }
            case .positions:
                if result.starts.isEmpty { result.starts.append(0) }
                if repeated {
                    let from = result.starts[result.starts.count - 2]
                    let joined = (result.positions[from...] + list.positions(at: index)).sorted()
                    result.positions.replaceSubrange(from..., with: joined)
                    result.starts[result.starts.count - 1] = result.positions.count
                    result.counts[result.counts.count - 1] = UInt32(joined.count)
                } else {
                    result.positions.append(contentsOf: list.positions(at: index))
                    result.starts.append(result.positions.count)
                    result.counts.append(list.counts[index])
                }
            }
        }
        return result
    }

    /// The number of objects with text and their total length.
    static func stats(in table: Table, _ transaction: Transaction) throws -> (documents: UInt64, length: UInt64) {
        try statsKey.withUnsafeBytes { key in
            try transaction.withValue(in: table, key: key) { value in
                guard let value else { return (0, 0) }
                var index = 0
                let documents = readVarint(value, &index)
                return (documents, readVarint(value, &index))
            }
        }
    }

    /// The stored length of one object's text; nil when it has no terms.
    static func length(of objectKey: UInt64, in table: Table, _ transaction: Transaction) throws -> UInt64? {
        try lengthKey(objectKey).withUnsafeBytes { key in
            try transaction.withValue(in: table, key: key) { value in
                guard let value else { return nil }
                var index = 0
                return readVarint(value, &index)
            }
        }
    }

    // MARK: Searching

    /// What a search found: the matching keys, ascending, and for ranking,
    /// per included word or phrase, how often it occurs in each match and in
    /// how many objects overall.
    struct Matches {
        var keys: [UInt64] = []
        /// Whether each match must be checked against its text
        /// (``FullTextQuery/matchesWhole(_:)``): a searched word longer than
        /// the index keeps, or in a file with key tokens, a prefix, which
        /// the index cannot look up: ``keys`` are then only candidates.
        var needsRecheck = false
        /// `occurrences[e][i]`: how often element `e` occurs in `keys[i]`.
        var occurrences: [[UInt32]] = []
        var documentFrequencies: [Int] = []
    }

    /// The objects a query matches. `objects` lists every object, for a
    /// query of exclusions alone.
    static func search(
        _ query: FullTextQuery, in table: Table, objects: Table, ranking: Bool = false, _ transaction: Transaction
    ) throws -> Matches {
        guard !query.elements.isEmpty, transaction.canSee(table) else { return Matches() }
        // With key tokens, a word searched as a prefix has no term to look up: the texts decide.
        let tokenized = transaction.environment.keyTokens != nil
        func lookedUp(_ element: FullTextQuery.Element) -> Bool { !tokenized || !element.parts.contains(where: \.isPrefix) }
        let skipsElements = query.elements.contains { !lookedUp($0) }
        var lists: [(keys: [UInt64], counts: [UInt32])] = []
        for element in query.included where lookedUp(element) {
            lists.append(try occurrences(of: element, counting: ranking, in: table, transaction))
            if lists.last!.keys.isEmpty, !ranking { return Matches() }
        }
        var matches = Matches()
        matches.needsRecheck = query.needsRecheck || skipsElements
        if lists.isEmpty {
            // Exclusions alone: every object, less the excluded.
            matches.keys = try ObjectStore.allKeys(inObjectTable: objects, transaction)
        } else if lists.count == 1 {
            matches.keys = lists[0].keys
            if ranking {
                matches.documentFrequencies = [lists[0].keys.count]
                matches.occurrences = [lists[0].counts]
            }
        } else {
            // Intersect, smallest list first, galloping through the others.
            let order = lists.indices.sorted { lists[$0].keys.count < lists[$1].keys.count }
            let others = Array(order.dropFirst())
            var cursors = [Int](repeating: 0, count: lists.count)
            if ranking { matches.occurrences = Array(repeating: [], count: lists.count) }
            let smallest = lists[order[0]].keys
            outer: for (index, key) in smallest.enumerated() {
                for other in others {
                    var low = cursors[other]
                    let found: Bool = lists[other].keys.withUnsafeBufferPointer { keys in
                        var step = 1
                        while low + step < keys.count, keys[low + step] < key { step *= 2 }
                        var high = Swift.min(low + step, keys.count)
                        while low < high {
                            let middle = (low + high) / 2
                            if keys[middle] < key { low = middle + 1 } else { high = middle }
                        }
                        return low < keys.count && keys[low] == key
                    }
                    cursors[other] = low
                    guard found else { continue outer }
                }
                matches.keys.append(key)
                if ranking {
                    cursors[order[0]] = index
                    for list in lists.indices { matches.occurrences[list].append(lists[list].counts[cursors[list]]) }
                }
            }
            if ranking { matches.documentFrequencies = lists.map(\.keys.count) }
        }
        // An excluded word longer than the index stores is left to the check of each text.
        for element in query.exactlyIndexed where element.isExcluded && lookedUp(element) && !matches.keys.isEmpty {
            let excluded = try occurrences(of: element, in: table, transaction).keys
            guard !excluded.isEmpty else { continue }
            let drop = Set(excluded)
            let keep = matches.keys.indices.filter { !drop.contains(matches.keys[$0]) }
            matches.keys = keep.map { matches.keys[$0] }
            matches.occurrences = matches.occurrences.map { counts in keep.map { counts[$0] } }
        }
        return matches
    }

    /// The objects where one word or phrase occurs, and how often.
    static func occurrences(
        of element: FullTextQuery.Element, counting: Bool = false, in table: Table, _ transaction: Transaction
    ) throws
        -> (keys: [UInt64], counts: [UInt32])
    {
        if element.parts.count == 1 {
            let part = element.parts[0]
            let list = try postings(of: part.term, isPrefix: part.isPrefix, counting ? .counts : .keys, in: table, transaction)
            return (list.keys, list.counts)
        }
        var lists: [PostingList] = []
        for part in element.parts {
            let list = try postings(of: part.term, isPrefix: part.isPrefix, .positions, in: table, transaction)
            if list.keys.isEmpty { return ([], []) }
            lists.append(list)
        }
        let smallest = lists.indices.min { lists[$0].keys.count < lists[$1].keys.count }!
        var cursors = [Int](repeating: 0, count: lists.count)
        var keys: [UInt64] = []
        var counts: [UInt32] = []
        outer: for key in lists[smallest].keys {
            for index in lists.indices {
                let list = lists[index].keys
                var low = cursors[index]
                while low < list.count, list[low] < key { low += 1 }
                cursors[index] = low
                guard low < list.count, list[low] == key else { continue outer }
            }
            // Where the first part stands with every other part at its offset.
            var occurrences: UInt32 = 0
            let first = lists[0].positions(at: cursors[0])
            for start in first {
                var all = true
                for index in lists.indices.dropFirst() {
                    let wanted = Int(start) + element.parts[index].offset - element.parts[0].offset
                    guard wanted >= 0, wanted <= Int(UInt32.max),
                        binarySearch(lists[index].positions(at: cursors[index]), UInt32(wanted))
                    else {
                        all = false
                        break
                    }
                }
                if all { occurrences += 1 }
            }
            if occurrences > 0 {
                keys.append(key)
                counts.append(occurrences)
            }
        }
        return (keys, counts)
    }

    private static func binarySearch(_ positions: ArraySlice<UInt32>, _ wanted: UInt32) -> Bool {
        var low = positions.startIndex
        var high = positions.endIndex
        while low < high {
            let middle = (low + high) / 2
            if positions[middle] < wanted { low = middle + 1 } else { high = middle }
        }
        return low < positions.endIndex && positions[low] == wanted
    }

    // MARK: Ranking

    /// BM25 scores (k1 = 1.2, b = 0.75) of the matches of a query, by object
    /// key: the sum over its included words and phrases of their rarity
    /// (idf) times how often each occurs, damped by the text's length against
    /// the average. Returns the matches, ascending, with their scores.
    static func scores(_ query: FullTextQuery, in table: Table, objects: Table, _ transaction: Transaction) throws
        -> (keys: [UInt64], scores: [Double])
    {
        let matches = try search(query, in: table, objects: objects, ranking: true, transaction)
        guard !matches.keys.isEmpty else { return ([], []) }
        let (documents, total) = try stats(in: table, transaction)
        let count = Double(Swift.max(documents, 1))
        let average = Swift.max(Double(total) / count, 1)
        let (k1, b) = (1.2, 0.75)
        let idf = matches.documentFrequencies.map { frequency in
            log(1 + (count - Double(frequency) + 0.5) / (Double(frequency) + 0.5))
        }
        var scores: [Double] = []
        scores.reserveCapacity(matches.keys.count)
        try transaction.withCursor(on: table) { cursor in
            // Lengths are keyed in object order: step forward to the next one when near, seek when not.
            var current: Entry?
            var lengthKey = [UInt8](repeating: lengthTag, count: 9)
            for (index, key) in matches.keys.enumerated() {
                var steps = 0
                while let entry = current, entry.key.count == 9, entry.key[0] == lengthTag,
                    OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: entry.key[1...])) < key, steps < 8
                {
                    current = try cursor.next()
                    steps += 1
                }
                if let entry = current, entry.key.count == 9, entry.key[0] == lengthTag,
                    OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: entry.key[1...])) == key
                {
                    // Found by stepping.
                } else {
                    withUnsafeBytes(of: key.bigEndian) { lengthKey.replaceSubrange(1..., with: $0) }
                    current = try lengthKey.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                }
                var length = 0.0
                if let entry = current, entry.key.count == 9, entry.key[0] == lengthTag,
                    OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: entry.key[1...])) == key
                {
                    var at = 0
                    length = Double(readVarint(entry.value, &at))
                }
                var score = 0.0
                for element in matches.occurrences.indices {
                    let frequency = Double(matches.occurrences[element][index])
                    score += idf[element] * frequency * (k1 + 1) / (frequency + k1 * (1 - b + b * length / average))
                }
                scores.append(score)
            }
        }
        return (matches.keys, scores)
    }
}
