import TroveStorage

/// One cluster's stored columns as they lie in the file, each read on first
/// use: what readers of a cluster-stored type see. Records are built from
/// it by copying slots ("fetch all" reads no column twice, a lookup reads
/// only its cluster), and scans read the columns they need.
///
/// The buffers point into the memory map: a view is valid inside the map
/// access that loaded it, and in a write transaction only until the next
/// write to the table (``ClusterTable/ClusterCache/writes`` counts them).
/// Values of an encrypted table are opened into copies the view owns.
final class ClusterView {
    let start: UInt64
    let keys: ClusterColumn
    /// The ``ClusterTable/ClusterCache/writes`` it was loaded at (0 outside a write).
    let writes: Int
    private let table: ClusterTable
    private let transaction: Transaction
    private var columns: [ClusterColumn?]
    private var loaded: [Bool]
    private var owned: [UnsafeMutableRawBufferPointer] = []

    /// Reads the cluster starting at `start`; nil when there is none.
    init?(_ table: ClusterTable, start: UInt64, in transaction: Transaction, writes: Int) throws {
        self.table = table
        self.transaction = transaction
        self.start = start
        self.writes = writes
        let count = table.layout.columnCount
        columns = Array(repeating: nil, count: count)
        loaded = Array(repeating: false, count: count)
        guard let bytes = try Self.part(table, start, 0, transaction, &owned) else { return nil }
        guard let keys = ClusterColumn(bytes, type: .int) else {
            throw TroveError(.corruptFile, "the object keys of a \(table.layout.typeName) cluster (at \(start)) are damaged")
        }
        self.keys = keys
    }

    deinit { for buffer in owned { buffer.deallocate() } }

    var count: Int { keys.count }

    @inline(__always)
    func key(_ slot: Int) -> UInt64 { UInt64(bitPattern: keys.int(slot) ?? 0) }

    var lastKey: UInt64? { count == 0 ? nil : key(count - 1) }

    /// The slot of `key`, or nil when the cluster does not hold it.
    func slot(of key: UInt64) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self.key(middle) < key { low = middle + 1 } else { high = middle }
        }
        return low < count && self.key(low) == key ? low : nil
    }

    /// The first slot whose key is at least `key` (``count`` when none is).
    func firstSlot(atLeast key: UInt64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self.key(middle) < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A property's column; nil when the cluster predates the property (its
    /// objects read the property's default) or it is a collection.
    func column(_ column: Int) throws -> ClusterColumn? {
        if loaded[column] { return columns[column] }
        loaded[column] = true
        let layout = table.layout
        guard layout.inRecord[column], let bytes = try Self.part(table, start, column + 1, transaction, &owned) else {
            return nil
        }
        guard let stored = ClusterColumn(bytes, type: layout.types[column]), stored.count == count else {
            throw TroveError(
                .corruptFile,
                "a \(layout.typeName) cluster's \(layout.properties[column].name) column (cluster at \(start)) is damaged")
        }
        columns[column] = stored
        return stored
    }

    /// The value of `column` for the object in `slot`.
    func value(_ slot: Int, _ column: Int) throws -> StoredValue {
        guard let stored = try self.column(column) else { return table.layout.fallbacks[column] }
        guard let value = stored.value(slot) else {
            throw TroveError(
                .corruptFile,
                "a \(table.layout.typeName) cluster's \(table.layout.properties[column].name) column holds a damaged mixed value")
        }
        return value
    }

    /// Every column of the object in `slot`.
    func values(_ slot: Int) throws -> [StoredValue] {
        try (0..<table.layout.columnCount).map { try value(slot, $0) }
    }

    /// The object in `slot` as a record (the encoding ``RecordReader``
    /// reads), built in `scratch` by copying each column's slot: valid until
    /// the scratch builds the next one.
    func record(_ slot: Int, into scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
        let layout = table.layout
        let columnCount = layout.columnCount
        let header = 2 + RecordLayout.bitmapSize(columnCount)
        let fixedEnd = header + layout.fixedSize
        var size = fixedEnd
        for column in 0..<columnCount where layout.inRecord[column] {
            guard let stored = try self.column(column) else {
                // A property the cluster predates: its default, through the general encoder.
                return try scratch.record(values(slot), layout: layout)
            }
            if layout.types[column].isVariableSize, !stored.isNull(slot) { size += stored.variableBytes(slot).count }
        }
        let record = scratch.buffer(size)
        let base = record.baseAddress!
        base.initializeMemory(as: UInt8.self, repeating: 0, count: fixedEnd)
        record.storeBytes(of: UInt16(columnCount).littleEndian, as: UInt16.self)
        var heap = fixedEnd
        for column in 0..<columnCount where layout.inRecord[column] {
            let stored = columns[column]!
            if stored.isNull(slot) {
                record[2 + column / 8] |= 1 << UInt8(column % 8)
                continue
            }
            let target = header + layout.slotOffsets[column]
            let type = layout.types[column]
            if type.isVariableSize {
                let bytes = stored.variableBytes(slot)
                record.storeBytes(of: UInt32(heap).littleEndian, toByteOffset: target, as: UInt32.self)
                record.storeBytes(of: UInt32(bytes.count).littleEndian, toByteOffset: target + 4, as: UInt32.self)
                if let source = bytes.baseAddress, !bytes.isEmpty {
                    (base + heap).copyMemory(from: source, byteCount: bytes.count)
                }
                heap += bytes.count
            } else {
                (base + target).copyMemory(from: stored.bytes.baseAddress! + stored.slotOffset(slot), byteCount: type.slotWidth)
            }
        }
        return UnsafeRawBufferPointer(record)
    }

    /// One stored part of a cluster (0 = keys, 1 + column), in place or, for
    /// an encrypted table, opened into a copy kept in `owned`.
    static func part(
        _ table: ClusterTable, _ start: UInt64, _ part: Int, _ transaction: Transaction,
        _ owned: inout [UnsafeMutableRawBufferPointer]
    ) throws -> UnsafeRawBufferPointer? {
        try ClusterTable.withKey(start, part: part) { key in
            try transaction.withValue(in: table.table, key: key) { bytes -> UnsafeRawBufferPointer? in
                guard let bytes else { return nil }
                guard table.table.isSealed else { return bytes }
                let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
                copy.copyMemory(from: bytes)
                owned.append(copy)
                return UnsafeRawBufferPointer(rebasing: copy[0..<bytes.count])
            }
        }
    }
}
