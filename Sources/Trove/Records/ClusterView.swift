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
    /// Every slot's key: the keys part's, then the tail's (``ClusterTail``).
    let keys: ClusterColumn
    /// How many of ``keys`` the keys part holds (the rest are the tail's).
    let storedKeyCount: Int
    /// Whether the cluster has a tail (its columns' patches are there).
    let hasTail: Bool
    /// The ``ClusterTable/ClusterCache/writes`` it was loaded at (0 outside a write).
    let writes: Int
    /// Where the map was when the view was read (a remap moves the pages).
    let mapStart: UInt
    /// Whether the map never moves (``Environment/mapIsFixed``).
    private let mapIsFixed: Bool
    private let table: ClusterTable
    /// `table`'s layout, kept here: reading it through the table retained it on every record built.
    let layout: RecordLayout
    /// Not retained: the transaction keeps its last view (``Transaction/readCache``).
    private unowned(unsafe) let transaction: Transaction
    /// Per property: whether it was looked for, and its column when the
    /// cluster has it; `part`: the column's stored bytes, found by the walk
    /// that read the view (``containing(_:_:in:writes:cursor:known:)``) and
    /// checked on first use (a lookup of one property touches its column's
    /// pages, not every column's).
    private let columns: UnsafeMutablePointer<(loaded: Bool, column: ClusterColumn?, part: UnsafeRawBufferPointer?)>
    /// Whether `columns` holds every part (nil there: the cluster predates the column).
    @exclusivity(unchecked) private var partsFound = false
    @exclusivity(unchecked) private var owned: [UnsafeMutableRawBufferPointer] = []
    /// What the views of an encrypted table hold opened, counted for the
    /// cache that keeps this view (``ClusterViewCache``): it bounds how many are kept.
    var openedBytes: ClusterViewCache.OpenedBytes? {
        didSet { openedBytes?.count += owned.reduce(0) { $0 + $1.count } }
    }
    /// The cluster's stamp when the view was read (``ClusterTable/stampPart``,
    /// or its tail's); nil when it has none.
    private(set) var stamp: UInt64?
    /// The snapshots of the cache that keeps the view (``ClusterViewCache/remember(_:)``); nil outside one.
    @exclusivity(unchecked) var carries: ClusterViewCache.Carries?
    /// The cache's ``ClusterViewCache/Carries/count`` when the view was last
    /// read or compared with its cluster's stamp.
    @exclusivity(unchecked) private var confirmedAt = 0
    /// Kept from an earlier snapshot (``ClusterViewCache/carry(_:mapStart:in:)``)
    /// and not yet compared with its cluster's stamp in this one. A carry
    /// counts one more snapshot instead of marking each view it keeps (a
    /// cache of thousands of views made every commit pay for each).
    var isUnconfirmed: Bool {
        get { carries.map { $0.count != confirmedAt } ?? false }
        set { confirmedAt = newValue ? -1 : carries?.count ?? 0 }
    }
    /// The stored patches of columns (``ColumnPatch``), by column, as read
    /// with the cluster's parts.
    @exclusivity(unchecked) private var patches: [Int: UnsafeRawBufferPointer] = [:]
    /// The patches of the columns loaded, by column: records take a patched
    /// slot's value from the patch, and a caller that wants the whole
    /// column (a scan, a filter) gets it merged, once.
    @exclusivity(unchecked) private var readPatches: [Int: ReadPatch] = [:]

    /// A loaded column's patch.
    private struct ReadPatch {
        let patch: ColumnPatch
        /// Per slot: 0, or 1 + the place of the slot's value in the patch.
        let places: UnsafePointer<UInt16>
        /// The column with the patch's values, once a caller wanted it whole.
        var merged: ClusterColumn?
    }
    /// Set once every stored column is loaded: true when the cluster has them all.
    @exclusivity(unchecked) private var isComplete: Bool?

    /// Reads the cluster starting at `start`; nil when there is none.
    convenience init?(_ table: ClusterTable, start: UInt64, in transaction: Transaction, writes: Int) throws {
        var owned: [UnsafeMutableRawBufferPointer] = []
        guard let bytes = try Self.part(table, start, 0, transaction, &owned) else { return nil }
        let trailing = try Self.trailingParts(table, start, in: transaction, &owned)
        try self.init(table, start: start, keys: bytes, tail: trailing.tail, owned: owned, in: transaction, writes: writes)
        if hasTail, !trailing.patches.isEmpty { throw tailDamaged("a column patch beside it") }
        for (column, patch) in trailing.patches where column < layout.columnCount { patches[column] = patch }
        stamp = try stamp(stampPart: trailing.stamp)
        try adoptDeleted(trailing.deleted, withStamp: trailing.deletedWithStamp)
    }

    /// The view's stamp: its tail's when it has one (a stamp part beside a
    /// tail is damage: the writer keeps one of them), else the stamp part's.
    private func stamp(stampPart: UInt64?) throws -> UInt64? {
        guard hasTail else { return stampPart }
        // An encrypted table's clusters carry no stamp (its log is authenticated);
        // a compaction's repack gives them a stamp part all the same, which a later tail leaves beside it.
        if table.table.isSealed { return nil }
        if stampPart != nil { throw tailDamaged("a stamp part beside it") }
        return storedTail.flatMap(ClusterTail.stamp)
    }

    /// Whether the cluster is as the view read it, in `transaction`'s
    /// snapshot: its stamp is the same (false without one).
    func isConfirmed(in transaction: Transaction) -> Bool {
        guard let stamp, let now = try? Self.stamp(table, start, in: transaction) else { return false }
        return now == stamp
    }

    private init(
        _ table: ClusterTable, start: UInt64, keys stored: UnsafeRawBufferPointer, tail tailBytes: UnsafeRawBufferPointer?,
        owned: [UnsafeMutableRawBufferPointer], in transaction: Transaction, writes: Int
    ) throws {
        var owned = owned
        pageSize = transaction.environment.pageSize
        var bytes = stored
        var storedCount: Int?
        if let tailBytes {
            // The keys part's and the tail's keys as one keys column the view owns.
            guard let part = ClusterColumn(stored, type: .int), !part.hasNulls,
                let tail = ClusterTail(tailBytes, columnCount: table.layout.columnCount),
                let merged = tail.keys(after: part)
            else {
                for buffer in owned { buffer.deallocate() }
                throw TroveError(
                    .corruptFile, "the appended objects of a \(table.layout.typeName) cluster (at \(start)) are damaged")
            }
            owned.append(merged)
            bytes = UnsafeRawBufferPointer(merged)
            storedCount = part.count
            // (Kept for its patches, where it stays put.)
            storedTail = Self.settled(tailBytes, pageSize: pageSize, isSealed: table.table.isSealed, into: &owned)
        } else {
            bytes = Self.settled(stored, pageSize: pageSize, isSealed: table.table.isSealed, into: &owned)
        }
        hasTail = tailBytes != nil
        self.table = table
        layout = table.layout
        self.transaction = transaction
        self.start = start
        self.writes = writes
        self.owned = owned
        mapStart = transaction.environment.mapStart
        mapIsFixed = transaction.environment.mapIsFixed
        columns = .allocate(capacity: max(layout.columnCount, 1))
        columns.initialize(repeating: (false, nil, nil), count: layout.columnCount)
        guard let keys = ClusterColumn(bytes, type: .int) else {
            throw TroveError(.corruptFile, "the object keys of a \(layout.typeName) cluster (at \(start)) are damaged")
        }
        self.keys = keys
        storedKeyCount = storedCount ?? keys.count
        let count = keys.count
        firstKey = count == 0 ? 0 : Self.key(0, in: keys)
        lastKey = count == 0 ? nil : Self.key(count - 1, in: keys)
        isDense = count > 0 && lastKey! &- firstKey == UInt64(count - 1)
        if let storedTail, let tail = ClusterTail(storedTail, columnCount: layout.columnCount) {
            for column in 0..<layout.columnCount where layout.inRecord[column] {
                if let patch = tail.patch(column) { patches[column] = patch }
            }
        }
    }

    /// The view's copy of the cluster's tail (``ClusterTail``), when it has one.
    private var storedTail: UnsafeRawBufferPointer?

    private func tailDamaged(_ what: String) -> TroveError {
        TroveError(.corruptFile, "the appended objects of a \(layout.typeName) cluster (at \(start)) have \(what)")
    }

    /// Reads the cluster that would hold `key`, every column with it, by
    /// stepping one cursor back over its parts (they lie side by side); nil
    /// when no cluster starts at or before `key`.
    /// `known` gives a view already read for a start (the search then stops there).
    static func containing(
        _ key: UInt64, _ table: ClusterTable, in transaction: Transaction, writes: Int, cursor given: Cursor? = nil,
        known: (UInt64) -> ClusterView? = { _ in nil }
    ) throws -> ClusterView? {
        guard transaction.canSee(table.table) else { return nil }
        guard !table.table.isSealed else {
            // Opened values live only while the cursor stands on them: read part by part.
            guard let start = try table.clusterStart(for: key, in: transaction), start <= key else { return nil }
            if let seen = known(start) { return seen }
            return try ClusterView(table, start: start, in: transaction, writes: writes)
        }
        let columnCount = table.layout.columnCount
        // Each column's part, then each column's patch.
        return try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer?.self, capacity: 2 * columnCount + 1) { parts in
            func search(_ cursor: Cursor) throws -> ClusterView? {
                var entry: Entry?
                if key == .max {
                    entry = try cursor.last()
                } else {
                    let next = try ClusterTable.withKey(key + 1, part: 0) { try cursor.seek(atLeast: $0) }
                    entry = next == nil ? try cursor.last() : try cursor.previous()
                }
                guard let last = entry, last.key.count == 10 else { return nil }
                let start = ClusterTable.start(of: last.key)
                if let seen = known(start) {
                    guard seen.isUnconfirmed else { return seen }
                    // The walk starts on the cluster's stamp (or its tail, which holds it):
                    // a kept view is confirmed for free.
                    let part = Int(UInt16(bigEndian: last.key.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
                    let now =
                        part == ClusterTable.stampPart
                        ? Self.stamp(last.value) : part == ClusterTable.tailPart ? ClusterTail.stamp(last.value) : nil
                    if let stamp = seen.stamp, now == stamp {
                        seen.isUnconfirmed = false
                        return seen
                    }
                }
                parts.initialize(repeating: nil)
                var stamp: UInt64?
                var deleted: UnsafeRawBufferPointer?
                var deletedWithStamp: UnsafeRawBufferPointer?
                var tail: UnsafeRawBufferPointer?
                var anyPatch = false
                while let current = entry, current.key.count == 10, ClusterTable.start(of: current.key) == start {
                    let part = Int(UInt16(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
                    if part <= columnCount {
                        parts[part] = current.value
                    } else if let column = ClusterTable.patchedColumn(part), column < columnCount {
                        parts[columnCount + 1 + column] = current.value
                        anyPatch = true
                    }
                    if part == ClusterTable.tailPart { tail = current.value }
                    if part == ClusterTable.stampPart {
                        stamp = Self.stamp(current.value)
                        deletedWithStamp = ClusterTable.deletesAfterStamp(current.value)
                    }
                    if part == ClusterTable.deletedPart { deleted = current.value }
                    if part == 0 { break }
                    entry = try cursor.previous()
                }
                guard let keys = parts[0] else {
                    throw TroveError(.corruptFile, "a \(table.layout.typeName) cluster (at \(start)) has no object keys")
                }
                let view = try ClusterView(
                    table, start: start, keys: keys, tail: tail, owned: [], in: transaction, writes: writes)
                if tail != nil, anyPatch { throw view.tailDamaged("a column patch beside it") }
                view.stamp = try view.stamp(stampPart: stamp)
                try view.adoptDeleted(deleted, withStamp: deletedWithStamp)
                for column in 0..<columnCount where table.layout.inRecord[column] {
                    // Kept where they stay put (copied out of a B-tree leaf, which moves), checked when first read.
                    if let patch = parts[columnCount + 1 + column] {
                        view.patches[column] = Self.settled(patch, pageSize: view.pageSize, isSealed: false, into: &view.owned)
                    }
                    view.columns[column].part = parts[column + 1].map {
                        Self.settled($0, pageSize: view.pageSize, isSealed: false, into: &view.owned)
                    }
                }
                view.partsFound = true
                return view
            }
            if let given { return try search(given) }
            return try transaction.withCursor(on: table.table, search)
        }
    }

    deinit {
        stepOfColumn?.deallocate()
        steps?.deallocate()
        partialSteps?.steps.deallocate()
        for step in patchSteps { step.deallocate() }
        columns.deinitialize(count: layout.columnCount)
        columns.deallocate()
        for buffer in owned { buffer.deallocate() }
    }

    /// The number of slots, the deleted ones included (``isLive(_:)``).
    var count: Int { keys.count }

    /// The slots whose objects were deleted without rewriting the cluster
    /// (``ClusterTable/deletedPart``), a bit each; nil when there are none.
    /// Their keys and values stay in the columns until the cluster is next rewritten.
    @exclusivity(unchecked) private(set) var deleted: UnsafePointer<UInt8>?
    @exclusivity(unchecked) private(set) var deletedCount = 0
    /// Whether the deleted-slot bits were read after the stamp (``ClusterTable/stampPart``).
    @exclusivity(unchecked) private(set) var deletedWithStamp = false

    /// The objects the cluster holds (its slots less the deleted ones).
    var liveCount: Int { count - deletedCount }

    /// Whether the object in `slot` is stored (not deleted).
    @inline(__always)
    func isLive(_ slot: Int) -> Bool {
        guard let deleted else { return true }
        return deleted[slot &>> 3] & (1 &<< UInt8(slot & 7)) == 0
    }

    /// Clears the flags of deleted slots (a filter's matches).
    func clearDeleted(in flags: UnsafeMutableBufferPointer<Bool>) {
        guard deleted != nil else { return }
        for slot in 0..<min(count, flags.count) where !isLive(slot) { flags[slot] = false }
    }

    /// Takes the cluster's deleted-slot bits (nil: none), checked: one bit
    /// per slot, none past the last.
    /// Takes the deleted-slot bits the cluster stores in their own part or
    /// after its stamp (both at once is damage: the writer keeps one).
    private func adoptDeleted(_ part: UnsafeRawBufferPointer?, withStamp: UnsafeRawBufferPointer?) throws {
        if part != nil, withStamp != nil {
            throw TroveError(
                .corruptFile,
                "a \(layout.typeName) cluster (at \(start)) holds deleted-slot bits both after its stamp and in a part of their own"
            )
        }
        guard let stored = part ?? withStamp else { return }
        deletedWithStamp = withStamp != nil
        guard let bits = ClusterTable.deletedSlots(stored, count: count) else {
            throw TroveError(
                .corruptFile, "the deleted-slot bits of a \(layout.typeName) cluster (at \(start)) are damaged")
        }
        guard !bits.isEmpty else { return }
        let bytes = Self.copy(stored, into: &owned)
        deleted = bytes.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
        deletedCount = bits.count
    }

    /// Whether the table is encrypted (the view then owns copies of what it read).
    var isSealed: Bool { table.table.isSealed }

    /// Whether the view still points at the cluster in the file: the map
    /// has not moved and the write (when `cache` is given) has not written
    /// to the table or changed this cluster since.
    @inline(__always)
    func isCurrent(_ cache: ClusterTable.ClusterCache?) -> Bool {
        // (A map reserved at its largest never moves: no call into the environment, which retained it.)
        guard mapIsFixed || transaction.environment.mapStart == mapStart else { return false }
        guard let cache else { return true }
        return cache.writes == writes && cache.clusters[start] == nil
    }

    @inline(__always)
    func key(_ slot: Int) -> UInt64 { Self.key(slot, in: keys) }

    /// Every slot's key, in order: the keys column copied at once (a write
    /// loading the cluster took them one by one, ~35 instructions each).
    func allKeys() -> [UInt64] {
        [UInt64](allocatingCapacity: count, filler: 0) { buffer, initialized in
            if count > 0 {
                UnsafeMutableRawBufferPointer(buffer).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: keys.bytes[keys.dataStart..<(keys.dataStart + count * 8)]))
            }
            #if _endian(big)
                for index in 0..<count { buffer[index] = UInt64(littleEndian: buffer[index]) }
            #endif
            initialized = count
        }
    }

    @inline(__always)
    private static func key(_ slot: Int, in keys: ClusterColumn) -> UInt64 {
        // The keys column is never null and holds 8-byte slots (checked when the view was made).
        UInt64(littleEndian: keys.bytes.loadUnaligned(fromByteOffset: keys.dataStart &+ slot &* 8, as: UInt64.self))
    }

    /// The cluster's first and last keys (kept: reading them again would
    /// touch the keys' pages on every lookup).
    let firstKey: UInt64
    let lastKey: UInt64?
    /// Whether the keys run without a gap (nothing deleted): a key's slot is
    /// then its distance from the first, found without reading the keys.
    let isDense: Bool

    /// The slot of `key`, or nil when the cluster does not hold it (or it was deleted).
    @inline(__always)
    func slot(of key: UInt64) -> Int? {
        guard let slot = storedSlot(of: key) else { return nil }
        return isLive(slot) ? slot : nil
    }

    /// The slot holding `key`, deleted or not.
    private func storedSlot(of key: UInt64) -> Int? {
        if isDense {
            guard key >= firstKey, key &- firstKey < UInt64(count) else { return nil }
            return Int(key &- firstKey)
        }
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
        let stored = try self.stored(column)
        guard !readPatches.isEmpty, var read = readPatches[column] else { return stored }
        if let merged = read.merged { return merged }
        guard let merged = stored.unsafelyUnwrapped.patched(with: read.patch, count: count) else {
            throw ClusterTable.damaged("column", column, of: layout, clusterAt: start)
        }
        owned.append(merged)
        openedBytes?.count += merged.count
        read.merged = ClusterColumn(UnsafeRawBufferPointer(merged), type: stored.unsafelyUnwrapped.type)
        readPatches[column] = read
        return read.merged
    }

    /// A property's stored column without its patch (nil as for ``column(_:)``).
    private func stored(_ column: Int) throws -> ClusterColumn? {
        if columns[column].loaded { return columns[column].column }
        guard layout.inRecord[column] else {
            columns[column].loaded = true
            return nil
        }
        if partsFound {
            try adopt(columns[column].part, patch: patches[column], column: column, settled: true)
            return columns[column].column
        }
        let opened = owned.count
        try adopt(try Self.part(table, start, column + 1, transaction, &owned), patch: patches[column], column: column)
        if let openedBytes, owned.count > opened { openedBytes.count += owned[opened...].reduce(0) { $0 + $1.count } }
        return columns[column].column
    }

    /// The file's page size: a part that starts 16 bytes into a page (past
    /// the page header) lies in overflow pages of its own.
    private let pageSize: Int

    /// Takes a column's stored bytes (nil: the cluster predates it) and its
    /// patch, checked; `settled`: the bytes are where they stay put already.
    private func adopt(
        _ stored: UnsafeRawBufferPointer?, patch: UnsafeRawBufferPointer?, column: Int, settled: Bool = false
    ) throws {
        columns[column].loaded = true
        func damaged(_ what: String) -> TroveError { ClusterTable.damaged(what, column, of: layout, clusterAt: start) }
        guard let stored else {
            if patch != nil { throw damaged("column patch has no column: it") }
            return
        }
        let bytes = settled ? stored : Self.settled(stored, pageSize: pageSize, isSealed: isSealed, into: &owned)
        // (Shorter than the keys: the objects appended since it was written are in its patch.)
        guard let values = ClusterColumn(bytes, type: layout.types[column]), values.count == count || patch != nil
        else { throw damaged("column") }
        columns[column].column = values
        guard let patch else { return }
        guard let read = ColumnPatch(patch, type: values.type, count: count, stored: values.count) else {
            throw damaged("column patch")
        }
        let places = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * count, alignment: 2)
        places.initializeMemory(as: UInt8.self, repeating: 0)
        owned.append(places)
        let typed = places.bindMemory(to: UInt16.self)
        for (place, slot) in read.slots.enumerated() { typed[slot] = UInt16(place + 1) }
        readPatches[column] = ReadPatch(patch: read, places: UnsafePointer(typed.baseAddress.unsafelyUnwrapped))
    }

    /// The slots whose values `column`'s stored patch holds (none without
    /// one) when its stored part holds `stored` values; nil when the patch
    /// is damaged, its values included, or missing values the part does not hold.
    func patchedSlots(_ column: Int, stored: Int) -> [Int]? {
        guard let patch = patches[column] else { return stored == count ? [] : nil }
        return ColumnPatch(patch, type: layout.types[column], count: count, stored: stored, checkingValues: true)?.slots
    }

    /// The columns with a stored patch.
    var patchedColumns: [Int] { Array(patches.keys) }

    /// The value of `column` for the object in `slot`.
    func value(_ slot: Int, _ column: Int) throws -> StoredValue {
        guard var stored = try self.stored(column) else { return layout.fallbacks[column] }
        var slot = slot
        if !readPatches.isEmpty, let read = readPatches[column], read.places[slot] != 0 {
            (stored, slot) = (read.patch.values, Int(read.places[slot]) - 1)
        }
        guard let value = stored.value(slot) else {
            throw TroveError(
                .corruptFile,
                "a \(layout.typeName) cluster's \(layout.properties[column].name) column holds a damaged mixed value")
        }
        return value
    }

    /// Every column of the object in `slot`.
    func values(_ slot: Int) throws -> [StoredValue] {
        try (0..<layout.columnCount).map { try value(slot, $0) }
    }

    /// The object in `slot` as a record (the encoding ``RecordReader``
    /// reads), built in `scratch` by copying each column's slot: valid until
    /// the scratch builds the next one.
    func record(_ slot: Int, into scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
        if isComplete == nil {
            isComplete = try layout.recordSlots.allSatisfy { try stored($0.column) != nil }
        }
        // A property the cluster predates reads as its default, through the general encoder.
        guard isComplete! else { return try scratch.record(values(slot), layout: layout) }
        if steps == nil { steps = makeSteps(layout) }
        return buildRecord(slot, steps: steps.unsafelyUnwrapped, layout: layout, into: scratch)
    }

    /// One stored column's part in building a record: where its values are
    /// and where its slot goes (worked out once per view, so building a
    /// record is one pass of plain loads and stores).
    private struct RecordStep {
        /// The slot's offset in the record.
        let target: Int
        /// The slot's width; 0 for a variable-size value (offset and length into the heap).
        let width: Int
        let column: Int
        /// The fixed-size values, or a variable-size column's `count + 1` offsets.
        let values: UnsafeRawPointer
        /// A variable-size column's bytes, and how many there are.
        let heap: UnsafeRawPointer
        let heapCount: Int
        /// The column's null bitmap, when it has one.
        let nulls: UnsafePointer<UInt8>?
        /// A patched column's places (``ReadPatch/places``) and the step of
        /// its patch's values, read for a patched slot.
        let places: UnsafePointer<UInt16>?
        let patch: UnsafePointer<RecordStep>?
    }

    /// The steps of every stored column, once the view is complete.
    @exclusivity(unchecked) private var steps: UnsafeMutableBufferPointer<RecordStep>?
    /// The steps of the columns the last caller of ``record(_:only:into:)`` wanted.
    @exclusivity(unchecked) private var partialSteps: (wanted: [Bool], steps: UnsafeMutableBufferPointer<RecordStep>)?

    /// The steps of the stored columns `including` accepts (each loaded); a
    /// column left out reads as zero (empty) in the record built.
    private func makeSteps(_ layout: RecordLayout, including: (Int) -> Bool = { _ in true })
        -> UnsafeMutableBufferPointer<RecordStep>
    {
        let slots = layout.recordSlots.filter { including($0.column) }
        let steps = UnsafeMutableBufferPointer<RecordStep>.allocate(capacity: slots.count)
        func step(_ column: ClusterColumn, _ stored: (column: Int, offset: Int, width: Int), patched: ReadPatch?)
            -> RecordStep
        {
            let base = column.bytes.baseAddress.unsafelyUnwrapped
            let heapStart = column.dataStart + 4 * (column.count + 1)
            var patch: UnsafePointer<RecordStep>?
            if let patched {
                let patchStep = UnsafeMutablePointer<RecordStep>.allocate(capacity: 1)
                patchStep.initialize(to: step(patched.patch.values, stored, patched: nil))
                patchSteps.append(patchStep)
                patch = UnsafePointer(patchStep)
            }
            return RecordStep(
                target: stored.offset, width: stored.width, column: stored.column, values: base + column.dataStart,
                heap: base + heapStart, heapCount: column.bytes.count - heapStart,
                nulls: column.hasNulls ? (base + 2).assumingMemoryBound(to: UInt8.self) : nil, places: patched?.places,
                patch: patch)
        }
        for (index, stored) in slots.enumerated() {
            let patched = readPatches.isEmpty ? nil : readPatches[stored.column]
            steps.initializeElement(
                at: index, to: step(columns[stored.column].column.unsafelyUnwrapped, stored, patched: patched))
        }
        return steps
    }

    /// The steps of patches' values the record steps point to (freed with the view).
    @exclusivity(unchecked) private var patchSteps: [UnsafeMutablePointer<RecordStep>] = []

    /// Builds the record of the object in `slot` from its columns through
    /// `steps` (each slot copied as it is: records and columns share the
    /// encoding), in one pass of loads and stores by width. A column with no
    /// step is left zero (empty), for a reader that never reads it.
    @inline(__always)
    private func buildRecord(
        _ slot: Int, steps: UnsafeMutableBufferPointer<RecordStep>, layout: RecordLayout, into scratch: RecordScratch
    ) -> UnsafeRawBufferPointer {
        // A patched slot's value is read from its patch, at its place there.
        @inline(__always) func resolved(_ step: RecordStep) -> (step: RecordStep, slot: Int) {
            guard let places = step.places, places[slot] != 0 else { return (step, slot) }
            return (step.patch.unsafelyUnwrapped.pointee, Int(places[slot]) &- 1)
        }
        @inline(__always) func isNull(_ step: RecordStep, _ slot: Int) -> Bool {
            guard let nulls = step.nulls else { return false }
            return nulls[slot &>> 3] & (1 &<< UInt8(slot & 7)) != 0
        }
        @inline(__always) func span(_ step: RecordStep, _ slot: Int) -> (start: Int, count: Int) {
            let start = Int(UInt32(littleEndian: step.values.loadUnaligned(fromByteOffset: 4 &* slot, as: UInt32.self)))
            let end = Int(UInt32(littleEndian: step.values.loadUnaligned(fromByteOffset: 4 &* slot &+ 4, as: UInt32.self)))
            guard start <= end, end <= step.heapCount else { ClusterColumn.damaged(layout.types[step.column], slot) }
            return (start, end &- start)
        }
        let fixedEnd = 2 + RecordLayout.bitmapSize(layout.columnCount) + layout.fixedSize
        var size = fixedEnd
        for step in steps where step.width == 0 {
            let (step, slot) = resolved(step)
            if !isNull(step, slot) { size &+= span(step, slot).count }
        }
        let record = scratch.buffer(size)
        let base = record.baseAddress.unsafelyUnwrapped
        base.initializeMemory(as: UInt8.self, repeating: 0, count: fixedEnd)
        base.storeBytes(of: UInt16(layout.columnCount).littleEndian, as: UInt16.self)
        var heap = fixedEnd
        for step in steps {
            let (step, slot) = resolved(step)
            if isNull(step, slot) {
                base.storeBytes(
                    of: base.load(fromByteOffset: 2 &+ step.column &>> 3, as: UInt8.self) | 1 &<< UInt8(step.column & 7),
                    toByteOffset: 2 &+ step.column &>> 3, as: UInt8.self)
                continue
            }
            let target = base + step.target
            switch step.width {
            case 0:
                let (start, count) = span(step, slot)
                target.storeBytes(of: UInt32(heap).littleEndian, as: UInt32.self)
                target.storeBytes(of: UInt32(count).littleEndian, toByteOffset: 4, as: UInt32.self)
                if count > 0 { (base + heap).copyMemory(from: step.heap + start, byteCount: count) }
                heap &+= count
            case 1: target.storeBytes(of: step.values.load(fromByteOffset: slot, as: UInt8.self), as: UInt8.self)
            case 2:
                target.storeBytes(of: step.values.loadUnaligned(fromByteOffset: slot &* 2, as: UInt16.self), as: UInt16.self)
            case 4:
                target.storeBytes(of: step.values.loadUnaligned(fromByteOffset: slot &* 4, as: UInt32.self), as: UInt32.self)
            case 8:
                target.storeBytes(of: step.values.loadUnaligned(fromByteOffset: slot &* 8, as: UInt64.self), as: UInt64.self)
            default: target.copyMemory(from: step.values + slot &* step.width, byteCount: step.width)
            }
        }
        return UnsafeRawBufferPointer(record)
    }

    /// Per column, its step in ``steps`` plus one (0: none, a collection),
    /// once objects read their properties from the view.
    @exclusivity(unchecked) private var stepOfColumn: UnsafeMutablePointer<Int32>?

    /// Readies the view for objects that read their properties from it in
    /// place (``Object/keepView(_:slot:generation:)``): every stored column
    /// loaded, and the step that reads each made. False when the cluster
    /// predates a property: its objects read records, which hold the default.
    func prepareForObjects() throws -> Bool {
        if stepOfColumn != nil { return true }
        if isComplete == nil {
            isComplete = try layout.recordSlots.allSatisfy { try stored($0.column) != nil }
        }
        guard isComplete! else { return false }
        if steps == nil { steps = makeSteps(layout) }
        let map = UnsafeMutablePointer<Int32>.allocate(capacity: max(layout.columnCount, 1))
        map.initialize(repeating: 0, count: max(layout.columnCount, 1))
        for (index, step) in steps.unsafelyUnwrapped.enumerated() { map[step.column] = Int32(index + 1) }
        stepOfColumn = map
        return true
    }

    /// The step reading `column` and the slot to read for `slot` (a patched
    /// slot's value is in its patch); nil when the column has none.
    @inline(__always)
    private func placedStep(_ slot: Int, _ column: Int) -> (step: UnsafePointer<RecordStep>, slot: Int)? {
        let index = Int(stepOfColumn.unsafelyUnwrapped[column])
        guard index != 0 else { return nil }
        let step = UnsafePointer(steps.unsafelyUnwrapped.baseAddress.unsafelyUnwrapped + (index &- 1))
        guard let places = step.pointee.places, places[slot] != 0 else { return (step, slot) }
        return (step.pointee.patch.unsafelyUnwrapped, Int(places[slot]) &- 1)
    }

    /// Where the fixed-size value of `column` for the object in `slot` lies
    /// in place; nil when it is nil (or the column is not fixed-size).
    /// Only once ``prepareForObjects()`` returned true.
    @inline(__always)
    func fixedPlace(_ slot: Int, _ column: Int) -> UnsafeRawPointer? {
        guard let (step, slot) = placedStep(slot, column), step.pointee.width != 0 else { return nil }
        if let nulls = step.pointee.nulls, nulls[slot &>> 3] & (1 &<< UInt8(slot & 7)) != 0 { return nil }
        return step.pointee.values + slot &* step.pointee.width
    }

    /// The bytes of a String or Data value of `column` for the object in
    /// `slot`, in place; nil when it is nil (or the column holds another
    /// type). A damaged column traps, as a damaged record does.
    /// Only once ``prepareForObjects()`` returned true.
    @inline(__always)
    func variablePlace(_ slot: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        guard let (step, slot) = placedStep(slot, column), step.pointee.width == 0 else { return nil }
        if let nulls = step.pointee.nulls, nulls[slot &>> 3] & (1 &<< UInt8(slot & 7)) != 0 { return nil }
        let values = step.pointee.values
        let start = Int(UInt32(littleEndian: values.loadUnaligned(fromByteOffset: 4 &* slot, as: UInt32.self)))
        let end = Int(UInt32(littleEndian: values.loadUnaligned(fromByteOffset: 4 &* slot &+ 4, as: UInt32.self)))
        guard start <= end, end <= step.pointee.heapCount else { ClusterColumn.damaged(layout.types[column], slot) }
        return UnsafeRawBufferPointer(start: step.pointee.heap + start, count: end &- start)
    }

    /// The object in `slot` as a record holding only the columns `wanted`
    /// marks (the others read as zero or empty: only for readers that read
    /// nothing else, such as a scan's aggregate of one property).
    func record(_ slot: Int, only wanted: [Bool], into scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
        // (Steps exist only for wanted columns the cluster has: then no column needs checking.)
        if let partial = partialSteps, partial.wanted == wanted {
            return buildRecord(slot, steps: partial.steps, layout: layout, into: scratch)
        }
        for column in wanted.indices where wanted[column] && layout.inRecord[column] {
            // A property the cluster predates needs its default: the whole record.
            if try stored(column) == nil { return try record(slot, into: scratch) }
        }
        partialSteps?.steps.deallocate()
        partialSteps = (wanted, makeSteps(layout) { wanted[$0] })
        return buildRecord(slot, steps: partialSteps.unsafelyUnwrapped.steps, layout: layout, into: scratch)
    }
}
