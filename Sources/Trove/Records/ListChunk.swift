import Foundation
import TroveStorage

/// A run of one list's elements, stored as one entry of the list's table
/// under `owner key ‖ position of its first element`: the element count
/// (u32 LE), each element's end offset in the records area (u32 LE), then
/// the elements' one-column records end to end.
///
/// A chunk stops growing at ``softLimit`` bytes (it passes it only to hold
/// a single large element), so an append rewrites one small chunk however
/// long the list is, and a list of a few dozen links is one entry.
struct ListChunk {
    /// Small enough that a full chunk, sealed (28 bytes more) under its
    /// 12-byte key, stays in its LMDB leaf page (nodes up to 2,040 bytes
    /// with 4 KiB pages) instead of taking an overflow page of its own.
    static let softLimit = 1_960

    let bytes: UnsafeRawBufferPointer
    let count: Int
    private let recordsStart: Int

    /// Reads a chunk; nil when its bytes do not hold one (see ``problem(in:)``).
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard Self.problem(in: bytes) == nil else { return nil }
        self.init(unchecked: bytes)
    }

    private init(unchecked bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        count = Int(UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self)))
        recordsStart = 4 + 4 * count
    }

    /// The record of element `index` (0 ..< ``count``).
    func record(at index: Int) -> UnsafeRawBufferPointer {
        let start = index == 0 ? 0 : end(of: index - 1)
        return UnsafeRawBufferPointer(rebasing: bytes[(recordsStart + start)..<(recordsStart + end(of: index))])
    }

    /// The records of every element, end to end.
    var records: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[recordsStart...]) }

    /// Where element `index` ends in ``records``.
    func end(of index: Int) -> Int {
        Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 + 4 * index, as: UInt32.self)))
    }

    /// This chunk's bytes with `record` after its last element.
    func appending(_ record: [UInt8]) -> [UInt8] {
        let area = bytes.count - recordsStart
        var result = [UInt8](filledWith: 0, count: bytes.count + 4 + record.count)
        result.withUnsafeMutableBytes { out in
            out.storeBytes(of: UInt32(count + 1).littleEndian, as: UInt32.self)
            out.baseAddress!.advanced(by: 4).copyMemory(from: bytes.baseAddress! + 4, byteCount: 4 * count)
            out.storeBytes(of: UInt32(area + record.count).littleEndian, toByteOffset: 4 + 4 * count, as: UInt32.self)
            out.baseAddress!.advanced(by: recordsStart + 4).copyMemory(from: bytes.baseAddress! + recordsStart, byteCount: area)
            record.withUnsafeBytes {
                out.baseAddress!.advanced(by: recordsStart + 4 + area).copyMemory(from: $0.baseAddress!, byteCount: record.count)
            }
        }
        return result
    }

    /// Appends to `out` this chunk's bytes without the elements whose record
    /// is `record` (the others in order) and returns how many went; with
    /// none found, appends nothing and returns 0. With every element gone
    /// the bytes are a header of no elements, which is no chunk: the caller
    /// deletes the entry instead.
    func removing(_ record: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) -> Int {
        let records = bytes.baseAddress.unsafelyUnwrapped + recordsStart
        let needle = record.baseAddress
        let length = record.count
        // (Most records are a link's 9 bytes: compared inline, a memcmp call each cost more than the rest.)
        func matches(_ start: Int, _ end: Int) -> Bool {
            guard end &- start == length else { return false }
            guard length > 0 else { return true }
            let element = records + start
            if length > 32 { return memcmp(element, needle.unsafelyUnwrapped, length) == 0 }
            var offset = 0
            while offset &+ 8 <= length {
                if element.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    != needle.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                {
                    return false
                }
                offset &+= 8
            }
            while offset < length {
                if element.load(fromByteOffset: offset, as: UInt8.self)
                    != needle.unsafelyUnwrapped.load(fromByteOffset: offset, as: UInt8.self)
                {
                    return false
                }
                offset &+= 1
            }
            return true
        }
        var removed = 0
        var first = -1
        var start = 0
        for index in 0..<count {
            let end = end(of: index)
            if matches(start, end) {
                if removed == 0 { first = index }
                removed &+= 1
            }
            start = end
        }
        guard removed > 0 else { return 0 }
        let kept = count - removed
        let base = out.count
        out.append(filledWith: 0, count: bytes.count - removed * (4 + length))
        out.withUnsafeMutableBytes { whole in
            let target = whole.baseAddress.unsafelyUnwrapped + base
            let source = bytes.baseAddress.unsafelyUnwrapped
            target.storeBytes(of: UInt32(kept).littleEndian, as: UInt32.self)
            // The elements before the first match keep their end offsets; the records go in runs between matches.
            target.advanced(by: 4).copyMemory(from: source + 4, byteCount: 4 * first)
            let keptRecords = target + 4 + 4 * kept
            var slot = first
            var written = 0
            var runStart = 0
            start = first == 0 ? 0 : end(of: first - 1)
            for index in first..<count {
                let end = end(of: index)
                if matches(start, end) {
                    (keptRecords + written).copyMemory(from: records + runStart, byteCount: start &- runStart)
                    written &+= start &- runStart
                    runStart = end
                } else {
                    (target + 4 + 4 * slot).storeBytes(
                        of: UInt32(written &+ end &- runStart).littleEndian, as: UInt32.self)
                    slot &+= 1
                }
                start = end
            }
            (keptRecords + written).copyMemory(from: records + runStart, byteCount: start &- runStart)
        }
        return removed
    }

    /// A chunk of one element.
    static func single(_ record: [UInt8]) -> [UInt8] {
        var elements = ListElements()
        record.withUnsafeBytes { elements.append($0) }
        return elements.chunks()[0].bytes
    }

    /// What is wrong with the bytes of a chunk, or nil: a header longer than
    /// the entry, no elements, or end offsets that go back or past the entry.
    static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 4 else { return "is \(bytes.count) bytes, too short for a chunk header" }
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self)))
        guard count > 0 else { return "is a chunk of no elements" }
        guard count <= (bytes.count - 4) / 4 else { return "says it holds \(count) elements in \(bytes.count) bytes" }
        let area = bytes.count - 4 - 4 * count
        var previous = 0
        for index in 0..<count {
            let end = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4 + 4 * index, as: UInt32.self)))
            guard end >= previous, end <= area else { return "has element \(index) outside the chunk" }
            previous = end
        }
        return previous == area ? nil : "has \(area - previous) bytes after its last element"
    }
}

/// A list's elements as encoded one-column records laid end to end: what
/// a write reads from the chunks it changes, edits, and writes back as
/// chunks (``chunks()``).
struct ListElements {
    private(set) var bytes: [UInt8] = []
    private var ends: [Int] = []

    var count: Int { ends.count }

    private func range(_ index: Int) -> Range<Int> {
        (index == 0 ? 0 : ends[index - 1])..<ends[index]
    }

    /// Calls `body` with the record of element `index`.
    func withRecord<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range(index)])) }
    }

    mutating func append(_ record: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: record)
        ends.append(bytes.count)
    }

    mutating func append(chunk: ListChunk) {
        let base = bytes.count
        bytes.append(contentsOf: chunk.records)
        ends.reserveCapacity(ends.count + chunk.count)
        for index in 0..<chunk.count { ends.append(base + chunk.end(of: index)) }
    }

    mutating func reserveCapacity(bytes count: Int, elements: Int) {
        bytes.reserveCapacity(count)
        ends.reserveCapacity(elements)
    }

    mutating func insert(_ record: [UInt8], at index: Int) {
        let start = index == 0 ? 0 : ends[index - 1]
        bytes.insert(contentsOf: record, at: start)
        ends.insert(start, at: index)
        for later in index..<ends.count { ends[later] += record.count }
    }

    mutating func replace(at index: Int, with record: [UInt8]) {
        let old = range(index)
        bytes.replaceSubrange(old, with: record)
        let delta = record.count - old.count
        for later in index..<ends.count { ends[later] += delta }
    }

    /// Removes element `index` and returns its record.
    @discardableResult
    mutating func remove(at index: Int) -> [UInt8] {
        let old = range(index)
        let record = Array(bytes[old])
        bytes.removeSubrange(old)
        ends.remove(at: index)
        for later in index..<ends.count { ends[later] -= old.count }
        return record
    }

    /// The elements cut into chunk entries, each up to ``ListChunk/softLimit``
    /// bytes (or one element): the position each starts at (relative to the
    /// first) and its bytes.
    func chunks() -> [(start: Int, bytes: [UInt8])] {
        var result: [(start: Int, bytes: [UInt8])] = []
        var first = 0
        while first < count {
            var last = first + 1
            while last < count, 4 + 4 * (last + 1 - first) + ends[last] - range(first).lowerBound <= ListChunk.softLimit {
                last += 1
            }
            result.append((first, chunk(first..<last)))
            first = last
        }
        return result
    }

    private func chunk(_ elements: Range<Int>) -> [UInt8] {
        let base = range(elements.lowerBound).lowerBound
        let area = ends[elements.upperBound - 1] - base
        var chunk = [UInt8](filledWith: 0, count: 4 + 4 * elements.count + area)
        chunk.withUnsafeMutableBytes { out in
            out.storeBytes(of: UInt32(elements.count).littleEndian, as: UInt32.self)
            for (slot, index) in elements.enumerated() {
                out.storeBytes(of: UInt32(ends[index] - base).littleEndian, toByteOffset: 4 + 4 * slot, as: UInt32.self)
            }
            bytes.withUnsafeBytes { source in
                out.baseAddress!.advanced(by: 4 + 4 * elements.count).copyMemory(
                    from: source.baseAddress! + base, byteCount: area)
            }
        }
        return chunk
    }
}
