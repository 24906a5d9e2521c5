import Testing

@testable import Trove

/// The chunked key list behind every ``Results``.
@Suite("Result keys")
struct ResultKeysTests {
    @Test("a slice of the keys is the same keys, within one chunk or across several, after edits split and empty chunks")
    func slices() {
        var keys = ResultKeys((1...10_000).map { UInt64($0) * 3 })
        var expected = (1...10_000).map { UInt64($0) * 3 }
        // Edits that split a chunk (past its capacity) and remove keys around chunk starts.
        for step in 0..<2_500 {
            let position = (step * 7_919) % (expected.count + 1)
            keys.insert(UInt64(1_000_000 + step), at: position)
            expected.insert(UInt64(1_000_000 + step), at: position)
        }
        for position in [0, 2_047, 2_048, 2_049, 5_000, -1] {
            let position = position < 0 ? expected.count - 1 : position
            keys.remove(at: position)
            expected.remove(at: position)
        }
        #expect(keys.count == expected.count)
        #expect(Array(keys) == expected)
        #expect(keys.chunkCount > 3)
        var ranges: [Range<Int>] = [0..<0, 0..<1, 0..<64, 0..<expected.count, (expected.count - 64)..<expected.count]
        for start in keys.chunkStarts.dropFirst() {
            ranges += [(start - 1)..<(start + 1), (start - 64)..<start, start..<(start + 64), (start - 10)..<(start + 4_500)]
        }
        for range in ranges where range.lowerBound >= 0 && range.upperBound <= expected.count {
            #expect(Array(keys.slice(range)) == Array(expected[range]), "slice \(range)")
        }
    }

    @Test("a key is found from the chunk fences alone: at a chunk's start, inside one, at either end; a key not there is not")
    func positionFromFences() {
        // Keys ordered by a value (here the key's remainder by 1,000, ties by key), as sorted results are.
        func value(_ key: UInt64) -> UInt64 { key % 1_000 }
        func precedes(_ a: UInt64, _ b: UInt64) -> Bool { (value(a), a) < (value(b), b) }
        var ordered = (0..<12_000).map { UInt64($0 * 7 + 1) }.sorted(by: precedes)
        var keys = ResultKeys(ordered)
        // Edits, so chunks are split and of uneven sizes.
        for step in 0..<3_000 {
            let key = UInt64(200_000 + step * 13)
            let position = ordered.partitioningIndex { precedes($0, key) }
            ordered.insert(key, at: position)
            keys.insert(key, at: position)
        }
        #expect(keys.chunkCount > 4)
        var fenceReads = 0
        var probes = keys.chunkStarts.flatMap { [$0, $0 + 1, Swift.max($0 - 1, 0)] } + [0, ordered.count - 1, ordered.count / 2]
        probes = probes.filter { $0 < ordered.count }
        for position in probes {
            let key = ordered[position]
            let found = keys.position(of: key) { other in
                fenceReads += 1
                return precedes(other, key)
            }
            #expect(found == position, "key \(key) at \(position)")
        }
        // A binary search over the chunks' first keys: about log2(chunks) reads a key, no other element read.
        let depth = Int.bitWidth - keys.chunkCount.leadingZeroBitCount
        #expect(fenceReads <= probes.count * (depth + 1))
        for absent in [UInt64(2), 3_000_000, 200_001] {
            #expect(keys.position(of: absent) { precedes($0, absent) } == nil)
        }
        #expect(ResultKeys().position(of: 5) { _ in true } == nil)
    }

    @Test("iterating and copying results of many objects hands out each in order, across key chunks")
    func iteratesAcrossChunks() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 0..<9_000 {
                let person = Person()
                person.id = id
                person.score = Double(id)
                try db.add(person)
            }
        }
        let sorted = db.objects(Person.self).sorted(by: \.score, ascending: false)
        var scores: [Double] = []
        for person in sorted { scores.append(person.score) }
        #expect(scores == (0..<9_000).reversed().map(Double.init))
        #expect(sorted.array().map(\.score) == scores)
    }
}
