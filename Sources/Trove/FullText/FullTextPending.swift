import TroveStorage

/// The full-text postings a write transaction adds and removes for one
/// index, gathered and written in one pass sorted by term: a bulk insert of
/// many texts then writes each term's block once (appending, as object keys
/// grow), not once per text. Written before anything in the transaction
/// reads the index (``WriteTransaction/writePending()``) and before commit.
final class FullTextPending {
    let table: Table
    private var termIDs: [String: Int32] = [:]
    private var terms: [[UInt8]] = []
    /// Per term (by id): the postings added, each with the version of its
    /// object's text (an object rewritten in the transaction has only its
    /// last version kept).
    private var added: [AddedPostings] = []
    private var removed: [Int32: [UInt64]] = [:]
    /// Objects whose current text is pending: its version and length.
    private var addedTexts: [UInt64: (version: UInt32, length: UInt32)] = [:]
    /// Objects whose stored postings (if any) go.
    private var removedTexts: Set<UInt64> = []
    private var nextVersion: UInt32 = 0
    /// How many postings wait; past a limit they are written early, so a
    /// huge transaction does not hold them all in memory.
    private(set) var waiting = 0
    static let writeEarlyLimit = 4_000_000
    private var pairs: [(term: Int32, position: UInt32)] = []

    struct AddedPostings {
        var keys: [UInt64] = []
        var versions: [UInt32] = []
        /// Per posting: its count and positions, encoded; `ends[i]` closes posting i.
        var bytes: [UInt8] = []
        var ends: [Int] = []
    }

    init(table: Table) {
        self.table = table
    }

    var isEmpty: Bool { addedTexts.isEmpty && removedTexts.isEmpty }

    private func id(of bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        let term = String(decoding: bytes, as: UTF8.self)
        if let id = termIDs[term] { return id }
        let id = Int32(terms.count)
        termIDs[term] = id
        terms.append(Array(bytes))
        added.append(AddedPostings())
        return id
    }

    /// Indexes `text` as the text of `objectKey` (which has none in the index).
    func add(_ text: String, objectKey: UInt64) {
        pairs.removeAll(keepingCapacity: true)
        FullTextTokenizer.forEachTerm(in: text) { bytes, position, _, _ in
            pairs.append((id(of: bytes), UInt32(truncatingIfNeeded: position)))
        }
        guard let last = pairs.last else { return }
        var length = last.position + 1
        for pair in pairs where pair.position + 1 > length { length = pair.position + 1 }
        let version = nextVersion
        nextVersion &+= 1
        addedTexts[objectKey] = (version, length)
        pairs.sort { $0.term != $1.term ? $0.term < $1.term : $0.position < $1.position }
        var index = 0
        while index < pairs.count {
            let term = Int(pairs[index].term)
            var end = index
            while end < pairs.count, pairs[end].term == pairs[index].term { end += 1 }
            added[term].keys.append(objectKey)
            added[term].versions.append(version)
            FullTextIndex.appendVarint(UInt64(end - index), to: &added[term].bytes)
            var previous: UInt32 = 0
            for pair in pairs[index..<end] {
                FullTextIndex.appendVarint(UInt64(pair.position - previous), to: &added[term].bytes)
                previous = pair.position
            }
            added[term].ends.append(added[term].bytes.count)
            waiting += 1
            index = end
        }
    }

    /// Takes `text`, the indexed text of `objectKey`, out of the index.
    func remove(_ text: String, objectKey: UInt64) {
        addedTexts[objectKey] = nil
        removedTexts.insert(objectKey)
        var seen = Set<Int32>()
        FullTextTokenizer.forEachTerm(in: text) { bytes, _, _, _ in
            let term = id(of: bytes)
            if seen.insert(term).inserted {
                removed[term, default: []].append(objectKey)
                waiting += 1
            }
        }
    }

    /// Forgets everything pending (the index was emptied).
    func reset() {
        termIDs = [:]
        terms = []
        added = []
        removed = [:]
        addedTexts = [:]
        removedTexts = []
        waiting = 0
    }

    /// Writes what is pending into the index.
    func write(_ transaction: WriteTransaction) throws {
        guard !isEmpty else { return }
        let order = terms.indices.filter { !added[$0].keys.isEmpty || removed[Int32($0)] != nil }
            .sorted { terms[$0].lexicographicallyPrecedes(terms[$1]) }
        for term in order { try writeTerm(term, transaction) }
        var (documents, total) = try FullTextIndex.stats(in: table, transaction)
        for key in removedTexts.sorted() {
            guard let length = try FullTextIndex.length(of: key, in: table, transaction) else { continue }
            documents &-= 1
            total &-= length
            try FullTextIndex.lengthKey(key).withUnsafeBytes { _ = try transaction.delete(table, key: $0) }
        }
        var value: [UInt8] = []
        for (key, text) in addedTexts.sorted(by: { $0.key < $1.key }) {
            value.removeAll(keepingCapacity: true)
            FullTextIndex.appendVarint(UInt64(text.length), to: &value)
            try FullTextIndex.lengthKey(key).withUnsafeBytes { k in
                try value.withUnsafeBytes { _ = try transaction.put(table, key: k, value: $0) }
            }
            documents &+= 1
            total &+= UInt64(text.length)
        }
        value.removeAll()
        FullTextIndex.appendVarint(documents, to: &value)
        FullTextIndex.appendVarint(total, to: &value)
        try FullTextIndex.statsKey.withUnsafeBytes { k in
            try value.withUnsafeBytes { _ = try transaction.put(table, key: k, value: $0) }
        }
        reset()
    }

    /// One term's blocks with its postings removed and added.
    private func writeTerm(_ id: Int, _ transaction: WriteTransaction) throws {
        let term = terms[id]
        let postings = added[id]
        // The postings whose text is still current, by key.
        var live: [(key: UInt64, range: Range<Int>)] = []
        for index in postings.keys.indices {
            let key = postings.keys[index]
            guard addedTexts[key]?.version == postings.versions[index] else { continue }
            live.append((key, (index == 0 ? 0 : postings.ends[index - 1])..<postings.ends[index]))
        }
        if !zip(live, live.dropFirst()).allSatisfy({ $0.key < $1.key }) { live.sort { $0.key < $1.key } }
        let removals = Set(removed[Int32(id)] ?? [])
        guard !live.isEmpty || !removals.isEmpty else { return }
        var prefix = term
        prefix.append(0)

        // Most often: only additions, all after the term's last key. Append to its last block.
        if removals.isEmpty {
            var after = term
            after.append(1)
            let last: (key: [UInt8], value: [UInt8], lastKey: UInt64)? = try after.withUnsafeBytes { afterBytes in
                try transaction.withCursor(on: table) { cursor in
                    let entry = try cursor.seek(atLeast: afterBytes) != nil ? try cursor.previous() : try cursor.last()
                    guard let entry, entry.key.starts(with: prefix), let (_, firstKey) = FullTextIndex.splitBlockKey(entry.key)
                    else { return nil }
                    var list = FullTextIndex.PostingList()
                    FullTextIndex.decode(entry.value, firstKey: firstKey, into: &list, withPositions: false)
                    return (Array(entry.key), Array(entry.value), list.keys.last ?? firstKey)
                }
            }
            if last == nil || last!.lastKey < live[0].key {
                var blocks = BlockWriter(term: term)
                if let last { blocks.resume(key: last.key, value: last.value, lastKey: last.lastKey) }
                for posting in live {
                    postings.bytes.withUnsafeBufferPointer { blocks.append(posting.key, $0[posting.range]) }
                }
                try blocks.finish(into: table, transaction)
                return
            }
        }

        // Otherwise: decode the blocks the changed keys fall in, merge, write them again.
        let low = Swift.min(live.first?.key ?? .max, removals.min() ?? .max)
        let high = Swift.max(live.last?.key ?? 0, removals.max() ?? 0)
        var oldKeys: [[UInt8]] = []
        var stored: [(key: UInt64, bytes: [UInt8])] = []
        try FullTextIndex.blockKey(term, low).withUnsafeBytes { lowBytes in
            try transaction.withCursor(on: table) { cursor in
                var entry = try cursor.seek(atLeast: lowBytes)
                // The block holding `low` starts at or before it.
                if entry == nil || !entry!.key.elementsEqual(lowBytes) {
                    let previous = entry == nil ? try cursor.last() : try cursor.previous()
                    if let previous, previous.key.starts(with: prefix) {
                        entry = previous
                    } else {
                        entry = try cursor.seek(atLeast: lowBytes)
                    }
                }
                while let current = entry, current.key.starts(with: prefix),
                    let (_, firstKey) = FullTextIndex.splitBlockKey(current.key), firstKey <= high
                {
                    oldKeys.append(Array(current.key))
                    FullTextIndex.splitPostings(current.value, firstKey: firstKey) { stored.append(($0, Array($1))) }
                    entry = try cursor.next()
                }
            }
        }
        for key in oldKeys { try key.withUnsafeBytes { _ = try transaction.delete(table, key: $0) } }
        var blocks = BlockWriter(term: term)
        var next = 0
        for posting in stored where !removals.contains(posting.key) {
            while next < live.count, live[next].key < posting.key {
                postings.bytes.withUnsafeBufferPointer { blocks.append(live[next].key, $0[live[next].range]) }
                next += 1
            }
            if next < live.count, live[next].key == posting.key { continue }  // replaced below
            posting.bytes.withUnsafeBufferPointer { blocks.append(posting.key, $0[...]) }
        }
        while next < live.count {
            postings.bytes.withUnsafeBufferPointer { blocks.append(live[next].key, $0[live[next].range]) }
            next += 1
        }
        try blocks.finish(into: table, transaction)
    }
}

/// Cuts a term's postings into blocks of about ``FullTextIndex/blockLimit`` bytes.
private struct BlockWriter {
    let term: [UInt8]
    private var blocks: [(firstKey: UInt64, value: [UInt8])] = []
    private var lastKey: UInt64 = 0
    /// The stored block being extended, which keeps its key.
    private var resumedKey: [UInt8]?

    init(term: [UInt8]) {
        self.term = term
    }

    mutating func resume(key: [UInt8], value: [UInt8], lastKey: UInt64) {
        let firstKey = OrderedKey.objectKey(
            from: key.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[(key.count - 8)...]) })
        blocks.append((firstKey, value))
        self.lastKey = lastKey
        resumedKey = key
    }

    /// Adds one posting: `encoded` is its count and positions.
    mutating func append(_ key: UInt64, _ encoded: Slice<UnsafeBufferPointer<UInt8>>) {
        if blocks.isEmpty || blocks[blocks.count - 1].value.count + encoded.count > FullTextIndex.blockLimit {
            blocks.append((key, []))
            FullTextIndex.appendVarint(0, to: &blocks[blocks.count - 1].value)
        } else {
            FullTextIndex.appendVarint(key - lastKey, to: &blocks[blocks.count - 1].value)
        }
        blocks[blocks.count - 1].value.append(contentsOf: encoded)
        lastKey = key
    }

    func finish(into table: Table, _ transaction: WriteTransaction) throws {
        for block in blocks {
            let key = FullTextIndex.blockKey(term, block.firstKey)
            try key.withUnsafeBytes { k in try block.value.withUnsafeBytes { _ = try transaction.put(table, key: k, value: $0) } }
        }
    }
}

extension FullTextIndex {
    /// Calls `body` with each posting of a block: its key and its encoded count and positions.
    static func splitPostings(
        _ block: UnsafeRawBufferPointer, firstKey: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) -> Void
    ) {
        var index = 0
        var key = firstKey
        var isFirst = true
        while index < block.count {
            let delta = readVarint(block, &index)
            key = isFirst ? firstKey &+ delta : key &+ delta
            isFirst = false
            let start = index
            var remaining = readVarint(block, &index)
            while remaining > 0, index < block.count {
                if block[index] < 0x80 { remaining -= 1 }
                index += 1
            }
            body(key, UnsafeRawBufferPointer(rebasing: block[start..<index]))
        }
    }
}
