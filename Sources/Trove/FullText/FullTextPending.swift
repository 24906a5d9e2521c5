import Foundation
import TroveStorage

/// The full-text postings a write transaction adds and removes for one
/// index, gathered and written in one pass sorted by term: a bulk insert of
/// many texts then writes each term's block once (appending, as object keys
/// grow), not once per text. Written before anything in the transaction
/// reads the index (``WriteTransaction/writePending()``) and before commit.
final class FullTextPending {
    /// Moved out while it changes (so its lists stay uniquely referenced).
    private var postings: PendingPostings
    /// Past this many postings waiting (about 150 MB of them), they are written
    /// early, so a huge transaction does not hold them all in memory. Each
    /// early write merges into the blocks written before, which costs more
    /// and fills pages less than one sorted pass: the limit is high.
    static let writeEarlyLimit = 6_000_000

    init(table: Table) {
        postings = PendingPostings(table: table)
    }

    var table: Table { postings.table }
    var isEmpty: Bool { postings.isEmpty }
    var waiting: Int { postings.waiting }

    private func change<R>(_ body: (inout PendingPostings) throws -> R) rethrows -> R {
        var moved = postings
        postings = PendingPostings(table: moved.table)
        defer { postings = moved }
        return try body(&moved)
    }

    /// Indexes `text` as the text of `objectKey` (which has none in the index).
    func add(_ text: String, objectKey: UInt64) { change { $0.add(text, objectKey: objectKey) } }
    /// Takes `text`, the indexed text of `objectKey`, out of the index.
    func remove(_ text: String, objectKey: UInt64) { change { $0.remove(text, objectKey: objectKey) } }
    /// Forgets everything pending (the index was emptied).
    func reset() { change { $0.reset() } }
    /// Writes what is pending into the index.
    func write(_ transaction: WriteTransaction) throws { try change { try $0.write(transaction) } }
}

/// The state of a ``FullTextPending``: a value, so that its lists are
/// reached without reference counting in the loops over every term.
struct PendingPostings {
    let table: Table
    /// The terms met, interned: their bytes one after another in `arena`,
    /// found through an open-addressing table of ids by FNV-1a hash.
    var arena: [UInt8] = []
    var termRanges: [Range<Int>] = []
    var termHashes: [UInt64] = []
    var slots: [Int32] = []
    var longCount = 0
    /// Terms of at most 8 bytes (most words, every Hangul pair) by their bytes
    /// packed into an integer: terms hold no zero byte, so packing is unambiguous.
    var smallKeys: [UInt64] = []
    var smallIDs: [Int32] = []
    var smallCount = 0
    /// Grouping one text's terms (see ``add(_:objectKey:)``): per term, the
    /// text it was last seen in and its place among that text's terms.
    var seenIn: [UInt32] = []
    var slotOf: [Int32] = []
    var textStamp: UInt32 = 0
    var tokenTerms: [Int32] = []
    var tokenPositions: [UInt32] = []
    var touched: [Int32] = []
    var groupEnds: [Int] = []
    var grouped: [UInt32] = []
    /// The postings added, in the order added: the term; the object key and
    /// where its encoded positions lie in `postingBytes` (their length, then
    /// the positions, as in a block), side by side because the write reads
    /// them term by term, jumping through the list; the version of the
    /// object's text (an object rewritten in the transaction keeps only its last).
    var postingTerms: [Int32] = []
    var postingPlaces: [(key: UInt64, start: UInt32, end: UInt32)] = []
    var postingVersions: [UInt32] = []
    var postingBytes: [UInt8] = []
    /// Per term, how many postings it has in the lists above.
    var postingCounts: [Int32] = []
    /// Whether a pending text was replaced or removed (its postings are then skipped).
    var hasStalePostings = false
    var removed: [Int32: [UInt64]] = [:]
    /// Objects whose current text is pending: its version and length.
    var addedTexts: [UInt64: (version: UInt32, length: UInt32)] = [:]
    /// Objects whose stored postings (if any) go.
    var removedTexts: Set<UInt64> = []
    var nextVersion: UInt32 = 0
    /// How many postings wait (see ``FullTextPending/writeEarlyLimit``).
    var waiting = 0

    init(table: Table) {
        self.table = table
    }

    var isEmpty: Bool { addedTexts.isEmpty && removedTexts.isEmpty }

    @inline(__always)
    mutating func id(of bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard bytes.count <= 8 else { return longID(of: bytes) }
        if smallKeys.isEmpty {
            smallKeys = [UInt64](repeating: 0, count: 1024)
            smallIDs = [Int32](repeating: -1, count: 1024)
        }
        var packed: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            packed |= UInt64(byte) &<< shift
            shift &+= 8
        }
        let mask = smallKeys.count - 1
        var slot = Self.smallSlot(packed, count: smallKeys.count)
        while true {
            let key = smallKeys[slot]
            if key == packed { return smallIDs[slot] }
            if key == 0 { break }
            slot = (slot + 1) & mask
        }
        let id = newTerm(bytes, hash: 0)
        smallKeys[slot] = packed
        smallIDs[slot] = id
        smallCount += 1
        if smallCount * 2 > smallKeys.count { growSmall() }
        return id
    }

    /// Where a packed term starts probing: the top bits of a multiplicative hash
    /// (`count` is a power of two).
    @inline(__always)
    static func smallSlot(_ packed: UInt64, count: Int) -> Int {
        Int(truncatingIfNeeded: (packed &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - count.trailingZeroBitCount))
    }

    mutating func growSmall() {
        let (keys, ids) = (smallKeys, smallIDs)
        smallKeys = [UInt64](repeating: 0, count: keys.count * 2)
        smallIDs = [Int32](repeating: -1, count: keys.count * 2)
        let mask = smallKeys.count - 1
        for (key, id) in zip(keys, ids) where key != 0 {
            var slot = Self.smallSlot(key, count: smallKeys.count)
            while smallKeys[slot] != 0 { slot = (slot + 1) & mask }
            smallKeys[slot] = key
            smallIDs[slot] = id
        }
    }

    mutating func newTerm(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int32 {
        let id = Int32(termRanges.count)
        termRanges.append(arena.count..<(arena.count + bytes.count))
        arena.append(contentsOf: bytes)
        termHashes.append(hash)
        postingCounts.append(0)
        seenIn.append(0)
        slotOf.append(0)
        return id
    }

    mutating func longID(of bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        if slots.isEmpty { slots = [Int32](repeating: -1, count: 1024) }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let id = slots[slot]
            if id < 0 { break }
            if termHashes[Int(id)] == hash, termRanges[Int(id)].count == bytes.count,
                arena.withUnsafeBufferPointer({
                    memcmp($0.baseAddress! + termRanges[Int(id)].lowerBound, bytes.baseAddress!, bytes.count) == 0
                })
            {
                return id
            }
            slot = (slot + 1) & mask
        }
        let id = newTerm(bytes, hash: hash)
        slots[slot] = id
        longCount += 1
        if longCount * 2 > slots.count { growSlots() }
        return id
    }

    mutating func growSlots() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (id, hash) in termHashes.enumerated() where termRanges[id].count > 8 {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(id)
        }
    }

    private func term(_ id: Int) -> [UInt8] { Array(arena[termRanges[id]]) }

    /// Indexes `text` as the text of `objectKey` (which has none in the index).
    mutating func add(_ text: String, objectKey: UInt64) {
        tokenTerms.removeAll(keepingCapacity: true)
        tokenPositions.removeAll(keepingCapacity: true)
        FullTextTokenizer.forEachTerm(in: text) { bytes, position, _, _ in
            tokenTerms.append(id(of: bytes))
            tokenPositions.append(UInt32(truncatingIfNeeded: position))
        }
        guard let last = tokenPositions.last else { return }
        let version = nextVersion
        nextVersion &+= 1
        addedTexts[objectKey] = (version, last + 1)
        // Group positions by term without sorting: count each term's, then place them (in position order).
        textStamp &+= 1
        if textStamp == 0 {
            for index in seenIn.indices { seenIn[index] = 0 }
            textStamp = 1
        }
        touched.removeAll(keepingCapacity: true)
        groupEnds.removeAll(keepingCapacity: true)
        for term in tokenTerms {
            let index = Int(term)
            if seenIn[index] != textStamp {
                seenIn[index] = textStamp
                slotOf[index] = Int32(touched.count)
                touched.append(term)
                groupEnds.append(0)
            }
            groupEnds[Int(slotOf[index])] += 1
        }
        var total = 0
        for group in groupEnds.indices {
            total += groupEnds[group]
            groupEnds[group] = total - groupEnds[group]  // for now: where the group starts
        }
        grouped.removeAll(keepingCapacity: true)
        grouped.append(contentsOf: repeatElement(0, count: total))
        for (term, position) in zip(tokenTerms, tokenPositions) {
            let group = Int(slotOf[Int(term)])
            grouped[groupEnds[group]] = position
            groupEnds[group] += 1  // now: where the group ends
        }
        grouped.withUnsafeBufferPointer { grouped in
            var start = 0
            for (group, term) in touched.enumerated() {
                let end = groupEnds[group]
                // The positions' length first, then the positions as distances.
                var length = 0
                var previous: UInt32 = 0
                for at in start..<end {
                    length += FullTextIndex.varintSize(UInt64(grouped[at] &- previous))
                    previous = grouped[at]
                }
                let postingStart = UInt32(postingBytes.count)
                FullTextIndex.appendVarint(UInt64(length), to: &postingBytes)
                previous = 0
                for at in start..<end {
                    FullTextIndex.appendVarint(UInt64(grouped[at] &- previous), to: &postingBytes)
                    previous = grouped[at]
                }
                postingTerms.append(term)
                postingPlaces.append((objectKey, postingStart, UInt32(postingBytes.count)))
                postingVersions.append(version)
                postingCounts[Int(term)] += 1
                start = end
            }
        }
        waiting += touched.count
    }

    /// Takes `text`, the indexed text of `objectKey`, out of the index.
    mutating func remove(_ text: String, objectKey: UInt64) {
        if addedTexts.removeValue(forKey: objectKey) != nil { hasStalePostings = true }
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
    mutating func reset() {
        arena = []
        termRanges = []
        termHashes = []
        slots = []
        longCount = 0
        smallKeys = []
        smallIDs = []
        smallCount = 0
        seenIn = []
        slotOf = []
        postingTerms = []
        postingPlaces = []
        postingVersions = []
        postingBytes = []
        postingCounts = []
        hasStalePostings = false
        removed = [:]
        addedTexts = [:]
        removedTexts = []
        waiting = 0
    }

    /// Writes what is pending into the index.
    mutating func write(_ transaction: WriteTransaction) throws {
        guard !isEmpty else { return }
        // The postings grouped by term (a counting sort, keeping the order added).
        var groupStarts = [Int](repeating: 0, count: postingCounts.count + 1)
        for term in postingCounts.indices { groupStarts[term + 1] = groupStarts[term] + Int(postingCounts[term]) }
        var next = groupStarts
        var byTerm = [Int32](repeating: 0, count: postingTerms.count)
        for (posting, term) in postingTerms.enumerated() {
            byTerm[next[Int(term)]] = Int32(posting)
            next[Int(term)] += 1
        }
        var order = arena.withUnsafeBufferPointer { arena in
            termRanges.indices.filter { postingCounts[$0] > 0 || removed[Int32($0)] != nil }
                .sorted { a, b in
                    let (x, y) = (termRanges[a], termRanges[b])
                    let order = memcmp(
                        arena.baseAddress! + x.lowerBound, arena.baseAddress! + y.lowerBound, min(x.count, y.count))
                    return order != 0 ? order < 0 : x.count < y.count
                }
        }
        // With key tokens, terms are stored as tokens: in their order, so blocks are appended.
        var storedTerms: [Int: [UInt8]] = [:]
        if transaction.environment.keyTokens != nil {
            for term in order { storedTerms[term] = FullTextIndex.storedTerm(self.term(term), in: table, transaction) }
            order.sort { storedTerms[$0]!.lexicographicallyPrecedes(storedTerms[$1]!) }
        }
        // An index with nothing in it yet has no blocks to look for.
        let isFresh = try transaction.withCursor(on: table) { try $0.first() == nil }
        // Lengths and totals first, then the terms: each kind in key order, and
        // lengths sort before the totals, which sort before every term, so a
        // new index is appended to, page after full page.
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
                try value.withUnsafeBytes {
                    if try !transaction.put(table, key: k, value: $0, mode: .append) {
                        _ = try transaction.put(table, key: k, value: $0)
                    }
                }
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
        var blocks = BlockWriter(into: table, transaction)
        for term in order {
            try writeTerm(
                storedTerms[term] ?? self.term(term), postings: byTerm[groupStarts[term]..<groupStarts[term + 1]], id: term,
                isFresh: isFresh, &blocks)
        }
        reset()
    }

    /// One term's blocks with its postings removed and added.
    private func writeTerm(
        _ term: [UInt8], postings: ArraySlice<Int32>, id: Int, isFresh: Bool, _ blocks: inout BlockWriter
    ) throws {
        let transaction = blocks.transaction
        // The postings whose text is still current, by key.
        var live: [(key: UInt64, range: Range<Int>)] = []
        live.reserveCapacity(postings.count)
        for posting in postings.lazy.map(Int.init) {
            let place = postingPlaces[posting]
            if hasStalePostings, addedTexts[place.key]?.version != postingVersions[posting] { continue }
            live.append((place.key, Int(place.start)..<Int(place.end)))
        }
        if !zip(live, live.dropFirst()).allSatisfy({ $0.key < $1.key }) { live.sort { $0.key < $1.key } }
        let removals = Set(removed[Int32(id)] ?? [])
        guard !live.isEmpty || !removals.isEmpty else { return }
        var prefix = term
        prefix.append(0)

        // Most often: only additions, all after the term's last key (in a new
        // index, there is none). Append to its last block.
        if removals.isEmpty {
            var after = term
            after.append(1)
            let last: (key: [UInt8], value: [UInt8], lastKey: UInt64)? =
                isFresh
                ? nil
                : try after.withUnsafeBytes { afterBytes in
                    try transaction.withCursor(on: table) { cursor in
                        let entry = try cursor.seek(atLeast: afterBytes) != nil ? try cursor.previous() : try cursor.last()
                        guard let entry, entry.key.starts(with: prefix),
                            let (_, firstKey) = FullTextIndex.splitBlockKey(entry.key)
                        else { return nil }
                        var list = FullTextIndex.PostingList()
                        FullTextIndex.decode(entry.value, firstKey: firstKey, into: &list, .keys)
                        return (Array(entry.key), Array(entry.value), list.keys.last ?? firstKey)
                    }
                }
            if last == nil || last!.lastKey < live[0].key {
                blocks.start(term: term)
                if let last { blocks.resume(key: last.key, value: last.value, lastKey: last.lastKey) }
                try postingBytes.withUnsafeBufferPointer { bytes in
                    for posting in live { try blocks.append(posting.key, bytes[posting.range]) }
                }
                try blocks.flush()
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
        blocks.start(term: term)
        var next = 0
        for posting in stored where !removals.contains(posting.key) {
            while next < live.count, live[next].key < posting.key {
                try postingBytes.withUnsafeBufferPointer { try blocks.append(live[next].key, $0[live[next].range]) }
                next += 1
            }
            if next < live.count, live[next].key == posting.key { continue }  // replaced below
            try posting.bytes.withUnsafeBufferPointer { try blocks.append(posting.key, $0[...]) }
        }
        while next < live.count {
            try postingBytes.withUnsafeBufferPointer { try blocks.append(live[next].key, $0[live[next].range]) }
            next += 1
        }
        try blocks.flush()
    }
}

/// Cuts a term's postings into blocks of about ``FullTextIndex/blockLimit``
/// bytes and writes each as it fills. One writer serves every term of a
/// write (``start(term:)``), reusing its buffer.
private struct BlockWriter {
    let table: Table
    let transaction: WriteTransaction
    private var term: [UInt8] = []
    private var value: [UInt8] = []
    private var firstKey: UInt64 = 0
    private var lastKey: UInt64 = 0
    /// The current block is a stored one being extended (it keeps its key).
    private var isResumed = false

    init(into table: Table, _ transaction: WriteTransaction) {
        self.table = table
        self.transaction = transaction
        value.reserveCapacity(FullTextIndex.blockLimit + 64)
    }

    /// Begins the blocks of another term.
    mutating func start(term: [UInt8]) {
        self.term = term
        value.removeAll(keepingCapacity: true)
        isResumed = false
    }

    mutating func resume(key: [UInt8], value stored: [UInt8], lastKey: UInt64) {
        firstKey = OrderedKey.objectKey(from: key.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[(key.count - 8)...]) })
        value = stored
        self.lastKey = lastKey
        isResumed = true
    }

    /// Adds one posting: `encoded` is the length of its positions and the positions.
    mutating func append(_ key: UInt64, _ encoded: Slice<UnsafeBufferPointer<UInt8>>) throws {
        if value.isEmpty || value.count + encoded.count > FullTextIndex.blockLimit {
            try flush()
            firstKey = key
            value.append(0)  // the first key's distance from itself
        } else {
            FullTextIndex.appendVarint(key - lastKey, to: &value)
        }
        value.append(contentsOf: encoded)
        lastKey = key
    }

    /// Writes the current block, if any.
    mutating func flush() throws {
        guard !value.isEmpty else { return }
        try FullTextIndex.blockKey(term, firstKey).withUnsafeBytes { k in
            try value.withUnsafeBytes { bytes in
                // A new block is a new key: LMDB appends it when it sorts last (a
                // build, term after term), which leaves pages full.
                if try isResumed || !transaction.put(table, key: k, value: bytes, mode: .append) {
                    _ = try transaction.put(table, key: k, value: bytes)
                }
            }
        }
        value.removeAll(keepingCapacity: true)
        isResumed = false
    }
}

extension FullTextIndex {
    /// Calls `body` with each posting of a block: its key and its encoded
    /// positions, their length first.
    static func splitPostings(
        _ block: UnsafeRawBufferPointer, firstKey: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) -> Void
    ) {
        var index = 0
        var key = firstKey
        while index < block.count {
            key &+= readVarint(block, &index)
            let start = index
            let length = Int(truncatingIfNeeded: readVarint(block, &index))
            index = length >= 0 && length <= block.count - index ? index + length : block.count
            body(key, UnsafeRawBufferPointer(rebasing: block[start..<index]))
        }
    }
}
