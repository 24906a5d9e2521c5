import TroveStorage

extension ClusterTable {
    /// Copies a cluster table's entries (read from `cursor` in key order)
    /// as full clusters of ``capacity`` objects, for a compacted copy: the
    /// half-empty clusters scattered deletes leave are merged, deleted slots
    /// left out, and columns a cluster predates filled with the property's
    /// default. A damaged cluster throws (a copy must not drop objects).
    static func repack(
        _ cursor: Cursor, layout: RecordLayout,
        _ put: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let columns = (0..<layout.columnCount).filter { layout.inRecord[$0] }
        var keys: [UInt64] = []
        var stamp = UInt64.random(in: 1...UInt64.max).littleEndian
        var buffers = [ColumnBuffer?](repeating: nil, count: layout.columnCount)
        func reset() {
            keys.removeAll(keepingCapacity: true)
            for column in columns { buffers[column] = ColumnBuffer(type: layout.types[column]) }
        }
        func emit() throws {
            guard let start = keys.first else { return }
            let keyColumn = ClusterColumn.encodeKeys(keys)
            try withKey(start, part: 0) { key in try keyColumn.withUnsafeBytes { try put(key, $0) } }
            for column in columns {
                let encoded = buffers[column]!.encoded()
                try withKey(start, part: column + 1) { key in try encoded.withUnsafeBytes { try put(key, $0) } }
            }
            try withKey(start, part: stampPart) { key in try withUnsafeBytes(of: &stamp) { try put(key, $0) } }
            reset()
        }
        func damaged(_ start: UInt64, _ what: String) -> TroveError {
            TroveError(.corruptFile, "the \(layout.typeName) cluster at object key \(start) \(what): run `trove verify`")
        }
        reset()
        var entry = try cursor.first()
        while let first = entry {
            guard first.key.count == 10 else { throw TroveError(.corruptFile, "a \(layout.typeName) cluster key is damaged") }
            // One cluster's parts lie side by side: copy them before the cursor moves on.
            let start = Self.start(of: first.key)
            var parts: [Int: [UInt8]] = [:]
            while let current = entry, current.key.count == 10, Self.start(of: current.key) == start {
                parts[Int(UInt16(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))] = Array(
                    current.value)
                entry = try cursor.next()
            }
            guard var keyBytes = parts[0] else { throw damaged(start, "has no object keys") }
            if let tailBytes = parts[tailPart] {
                // The objects appended since the keys part was written, and every column's patch.
                guard !parts.keys.contains(where: { patchedColumn($0) != nil }) else {
                    throw damaged(start, "has column patches beside its appended objects")
                }
                try tailBytes.withUnsafeBytes { raw in
                    guard let tail = ClusterTail(raw, columnCount: layout.columnCount),
                        let merged = keyBytes.withUnsafeBytes({ stored in
                            ClusterColumn(stored, type: .int).flatMap { tail.keys(after: $0) }
                        })
                    else { throw damaged(start, "has damaged appended objects") }
                    keyBytes = Array(UnsafeRawBufferPointer(merged))
                    merged.deallocate()
                    for column in columns { parts[patchPart(column)] = tail.patch(column).map { Array($0) } }
                }
            }
            try keyBytes.withUnsafeBytes { raw in
                guard let stored = ClusterColumn(raw, type: .int), ClusterColumn.problem(in: raw, type: .int, count: nil) == nil
                else { throw damaged(start, "has damaged object keys") }
                var deleted = Set<Int>()
                if let bits = parts[deletedPart] ?? parts[stampPart].flatMap({ $0.count > 8 ? Array($0[8...]) : nil }) {
                    guard let slots = bits.withUnsafeBytes({ deletedSlots($0, count: stored.count) }) else {
                        throw damaged(start, "has damaged deleted-slot bits")
                    }
                    deleted = Set(slots)
                }
                var values: [[StoredValue]] = []
                for column in columns {
                    guard let bytes = parts[column + 1] else {
                        values.append(Array(repeating: layout.fallbacks[column], count: stored.count))
                        continue
                    }
                    // (Fewer values than keys: the objects appended since the column was written are in its patch.)
                    let read = try bytes.withUnsafeBytes { raw in
                        let type = layout.types[column]
                        guard let column = ClusterColumn(raw, type: type), column.count <= stored.count,
                            ClusterColumn.problem(in: raw, type: type, count: column.count) == nil
                        else { throw damaged(start, "has a damaged \(layout.properties[column].name) column") }
                        let values = try (0..<stored.count).map { slot in
                            // (Deleted ones are left out below; appended ones come from the patch.)
                            if deleted.contains(slot) || slot >= column.count { return StoredValue.null }
                            guard let value = column.value(slot) else { throw damaged(start, "holds a damaged mixed value") }
                            return value
                        }
                        return (values: values, count: column.count)
                    }
                    var columnValues = read.values
                    let storedCount = read.count
                    if storedCount < stored.count, parts[patchPart(column)] == nil {
                        throw damaged(start, "has a \(layout.properties[column].name) column shorter than its keys")
                    }
                    if let patch = parts[patchPart(column)] {
                        try patch.withUnsafeBytes { raw in
                            guard
                                let patch = ColumnPatch(
                                    raw, type: layout.types[column], count: stored.count, stored: storedCount)
                            else {
                                throw damaged(start, "has a damaged \(layout.properties[column].name) column patch")
                            }
                            for (index, slot) in patch.slots.enumerated() where !deleted.contains(slot) {
                                guard let value = patch.values.value(index) else {
                                    throw damaged(start, "holds a damaged mixed value")
                                }
                                columnValues[slot] = value
                            }
                        }
                    }
                    values.append(columnValues)
                }
                for slot in 0..<stored.count where !deleted.contains(slot) {
                    keys.append(UInt64(bitPattern: stored.int(slot) ?? 0))
                    for (index, column) in columns.enumerated() { buffers[column]!.append(values[index][slot]) }
                    if keys.count == Self.capacity { try emit() }
                }
            }
        }
        try emit()
    }
}
