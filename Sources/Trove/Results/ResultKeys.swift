/// The object keys a ``Results`` selects, in order, kept in chunks so that a
/// commit's few insertions and deletions edit them in place: an edit moves
/// the keys of one chunk, not of the whole list (ten million keys are 80 MB
/// to move).
struct ResultKeys: RandomAccessCollection, Sendable {
    /// The most keys a chunk holds before it splits in two.
    static let chunkCapacity = 4096

    private var chunks: [[UInt64]]
    /// The position of each chunk's first key.
    private var starts: [Int]
    private(set) var count: Int

    init(_ keys: [UInt64]) {
        count = keys.count
        if keys.count <= Self.chunkCapacity {
            chunks = keys.isEmpty ? [] : [keys]
            starts = keys.isEmpty ? [] : [0]
            return
        }
        let half = Self.chunkCapacity / 2
        chunks = stride(from: 0, to: keys.count, by: half).map { Array(keys[$0..<Swift.min($0 + half, keys.count)]) }
        starts = chunks.indices.map { $0 * half }
    }

    init() { self.init([]) }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> UInt64 {
        precondition(position >= 0 && position < count, "Trove: key position \(position) out of range")
        let chunk = chunk(containing: position)
        return chunks[chunk][position - starts[chunk]]
    }

    /// The keys at `range`: a slice of one chunk when they lie in one (no
    /// copy), else copied chunk by chunk (the collection's generic slice copy
    /// cost ~140 instructions a key).
    func slice(_ range: Range<Int>) -> ArraySlice<UInt64> {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "Trove: key range \(range) out of range")
        if range.isEmpty { return [] }
        var chunk = chunk(containing: range.lowerBound)
        let start = range.lowerBound - starts[chunk]
        if range.upperBound - starts[chunk] <= chunks[chunk].count {
            return chunks[chunk][start..<(range.upperBound - starts[chunk])]
        }
        var keys: [UInt64] = []
        keys.reserveCapacity(range.count)
        keys.append(contentsOf: chunks[chunk][start...])
        while keys.count < range.count {
            chunk += 1
            keys.append(contentsOf: chunks[chunk].prefix(range.count - keys.count))
        }
        return keys[...]
    }

    /// The keys as one array.
    var array: [UInt64] {
        chunks.count == 1 ? chunks[0] : chunks.flatMap { $0 }
    }

    /// The chunk holding `position` (the last chunk for `count`).
    private func chunk(containing position: Int) -> Int {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Removes the key at `position`.
    mutating func remove(at position: Int) {
        let chunk = chunk(containing: position)
        chunks[chunk].remove(at: position - starts[chunk])
        count -= 1
        var following = chunk + 1
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            starts.remove(at: chunk)
            following = chunk
        }
        for index in following..<starts.count { starts[index] -= 1 }
    }

    /// Inserts `key` so that it lands at `position` (0...count).
    mutating func insert(_ key: UInt64, at position: Int) {
        precondition(position >= 0 && position <= count, "Trove: key position \(position) out of range")
        if chunks.isEmpty {
            chunks = [[key]]
            starts = [0]
            count = 1
            return
        }
        let chunk = chunk(containing: position)
        chunks[chunk].insert(key, at: position - starts[chunk])
        count += 1
        for index in (chunk + 1)..<starts.count { starts[index] += 1 }
        if chunks[chunk].count > Self.chunkCapacity {
            let half = chunks[chunk].count / 2
            let tail = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(tail, at: chunk + 1)
            starts.insert(starts[chunk] + half, at: chunk + 1)
        }
    }

    /// ``partitioningIndex(where:)`` that decides for each chunk's first key
    /// with `fence` first (a caller may answer it without reading, from
    /// values it keeps for those keys), then searches the one chunk that
    /// holds the boundary with `before`. Both must answer alike for a key.
    func partitioningIndex(fence: (UInt64) throws -> Bool, before: (UInt64) throws -> Bool) rethrows -> Int {
        guard chunks.count > 1 else { return try partitioningIndex(where: before) }
        let low = try firstChunk(notBefore: fence)
        if low == 0 { return 0 }
        return starts[low - 1] + (try chunks[low - 1].partitioningIndex(where: before))
    }

    /// The position of `key`, found by deciding among the chunks with
    /// `fence` (as ``partitioningIndex(fence:before:)`` does: whether a
    /// chunk's first key sorts before `key`), then looking for `key` in the
    /// one chunk that can hold it: no element other than the fences is read.
    /// Nil when `key` is not there.
    func position(of key: UInt64, fence: (UInt64) throws -> Bool) rethrows -> Int? {
        let low = try firstChunk(notBefore: fence)
        // `key` begins chunk `low`, or lies in the chunk before it.
        if low < chunks.count, chunks[low][0] == key { return starts[low] }
        guard low > 0, let offset = chunks[low - 1].firstIndex(of: key) else { return nil }
        return starts[low - 1] + offset
    }

    /// The first chunk whose first key `fence` does not place before the
    /// key sought (`chunks.count` when every one is before it).
    private func firstChunk(notBefore fence: (UInt64) throws -> Bool) rethrows -> Int {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if try fence(chunks[middle][0]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The number of chunks (each chunk's first key is a fence).
    var chunkCount: Int { chunks.count }

    /// The position of each chunk's first key.
    var chunkStarts: [Int] { starts }

    func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    /// Walks the chunks in order.
    struct Iterator: IteratorProtocol {
        let chunks: [[UInt64]]
        var chunk = 0
        var position = 0

        mutating func next() -> UInt64? {
            while chunk < chunks.count {
                if position < chunks[chunk].count {
                    defer { position += 1 }
                    return chunks[chunk][position]
                }
                chunk += 1
                position = 0
            }
            return nil
        }
    }
}

extension RandomAccessCollection where Index == Int {
    /// The first position whose element is not `before` the one sought (the
    /// elements are ordered so that `before` holds for a prefix); `endIndex` when none.
    func partitioningIndex(where before: (Element) throws -> Bool) rethrows -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if try before(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
