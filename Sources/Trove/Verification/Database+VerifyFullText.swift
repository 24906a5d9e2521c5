import TroveStorage

extension Database {
    /// Checks each full-text index of a type against the texts stored: every
    /// object's terms, positions and length, and the index's totals. Objects
    /// are compared by a fingerprint of their postings, so memory grows with
    /// the number of objects, not of postings. Returns how many index entries it read.
    func verifyFullText(
        _ table: TableInfo, _ damaged: DamagedObjects, _ transaction: Transaction,
        _ problem: (VerificationReport.Problem.Kind, String) -> Void
    ) throws -> Int {
        var entriesChecked = 0
        for (column, index) in table.fullTextIndexes.sorted(by: { $0.key < $1.key }) {
            let property = table.schema.properties[column].name
            // Per object: how many postings and a sum of their hashes; its length.
            var expected: [UInt64: (postings: Int, hash: Int, length: UInt64)] = [:]
            var documents: UInt64 = 0
            var total: UInt64 = 0
            try table.store.forEachStoredEntry(in: transaction) { current in
                guard current.key.count == 8, RecordReader.problem(in: current.value, layout: table.layout) == nil,
                    case .string(let text) = RecordReader(current.value, layout: table.layout).value(at: column)
                else { return }
                var positions: [[UInt8]: [UInt32]] = [:]
                var length: UInt64 = 0
                FullTextTokenizer.forEachTerm(in: text) { bytes, position, _, _ in
                    positions[Array(bytes), default: []].append(UInt32(position))
                    length = Swift.max(length, UInt64(position) + 1)
                }
                guard !positions.isEmpty else { return }
                let key = OrderedKey.objectKey(from: current.key)
                var hash = 0
                for (term, at) in positions {
                    hash &+= Self.postingHash(FullTextIndex.storedTerm(term, in: index, transaction)[...], key, at.sorted()[...])
                }
                expected[key] = (positions.count, hash, length)
                documents += 1
                total += length
            }
            var found: [UInt64: (postings: Int, hash: Int, length: UInt64?)] = [:]
            var stats: (UInt64, UInt64)?
            try transaction.withCursor(on: index) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entry = try cursor.next()
                    entriesChecked += 1
                    if current.key.elementsEqual(FullTextIndex.statsKey) {
                        var at = 0
                        stats = (FullTextIndex.readVarint(current.value, &at), FullTextIndex.readVarint(current.value, &at))
                    } else if current.key.count == 9, current.key[0] == FullTextIndex.lengthTag {
                        var at = 0
                        let key = OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: current.key[1...]))
                        found[key, default: (0, 0, nil)].length = FullTextIndex.readVarint(current.value, &at)
                    } else if let (termCount, firstKey) = FullTextIndex.splitBlockKey(current.key) {
                        let term = Array(current.key[0..<termCount])
                        var list = FullTextIndex.PostingList()
                        FullTextIndex.decode(current.value, firstKey: firstKey, into: &list, .positions)
                        if list.keys.first != firstKey || !zip(list.keys, list.keys.dropFirst()).allSatisfy({ $0 < $1 }) {
                            problem(
                                .danglingIndexEntry,
                                "the full-text index of \(property) has a damaged block for \(transaction.environment.keyTokens == nil ? "'\(String(decoding: term, as: UTF8.self))'" : "a term")"
                            )
                            continue
                        }
                        for (at, key) in list.keys.enumerated() {
                            let hash = Self.postingHash(term[...], key, list.positions(at: at))
                            found[key, default: (0, 0, nil)].postings += 1
                            found[key, default: (0, 0, nil)].hash &+= hash
                        }
                    } else {
                        problem(.danglingIndexEntry, "the full-text index of \(property) has an entry it does not use")
                    }
                }
            }
            var reported = 0
            // A damaged object was reported already; its postings cannot be compared with a text that does not read.
            for key in Set(expected.keys).union(found.keys).sorted() where !damaged.covers(key) {
                let want = expected[key]
                let have = found[key]
                guard want?.postings != have?.postings || want?.hash != have?.hash || want?.length != have?.length ?? nil
                else { continue }
                reported += 1
                if reported > 10 { break }
                if want == nil {
                    problem(
                        .danglingIndexEntry, "the full-text index of \(property) has terms of object \(key), whose text has none")
                } else {
                    problem(
                        .missingIndexEntry,
                        "the full-text index of \(property) does not hold the terms of object \(key) as stored")
                }
            }
            if damaged.isEmpty, (stats?.0 ?? 0, stats?.1 ?? 0) != (documents, total) {
                problem(
                    .missingIndexEntry,
                    "the full-text index of \(property) counts \(stats?.0 ?? 0) texts of total length \(stats?.1 ?? 0); the objects have \(documents) of \(total)"
                )
            }
        }
        return entriesChecked
    }

    private static func postingHash(_ term: ArraySlice<UInt8>, _ key: UInt64, _ positions: ArraySlice<UInt32>) -> Int {
        var hasher = Hasher()
        hasher.combine(term.count)
        for byte in term { hasher.combine(byte) }
        hasher.combine(key)
        hasher.combine(positions.count)
        for position in positions { hasher.combine(position) }
        return hasher.finalize()
    }
}
