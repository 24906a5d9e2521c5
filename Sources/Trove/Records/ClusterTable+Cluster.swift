import TroveStorage

extension ClusterTable {
    /// One cluster as a write changes it. A column becomes a
    /// ``ColumnBuffer`` when the write first changes it (or the cluster's
    /// keys); until then it stays a copy of its stored bytes, so changing one
    /// property of many objects copies one column per cluster.
    final class Cluster {
        // A write transaction is used by one thread at a time: the fields
        // skip Swift's dynamic exclusivity checks (a runtime call per access
        // cost a fifth of a bulk insert's instructions).
        @exclusivity(unchecked) var start: UInt64
        @exclusivity(unchecked) var keys: [UInt64]
        /// Per column of the layout: the column being changed (nil for collections and stored columns).
        let buffers: UnsafeMutableBufferPointer<ColumnBuffer?>
        /// Per column: its stored bytes (a copy the cluster owns) until it is changed.
        let stored: UnsafeMutableBufferPointer<ClusterColumn?>
        /// Per column: the memory of its stored bytes' copy, when it has one.
        private let copies: UnsafeMutableBufferPointer<UnsafeMutableRawBufferPointer?>
        /// The keys changed since the cluster was last written (its keys part
        /// or its tail is written again).
        @exclusivity(unchecked) var keysChanged = false
        /// How many keys the file's keys part holds (0: none yet); the keys
        /// after them are the stored tail's (``tailStored``) or appended since.
        @exclusivity(unchecked) var storedKeyCount = 0
        /// Whether the file holds a tail for the cluster (``ClusterTail``):
        /// the objects appended since its keys part was written and every
        /// column's patch (``patchStored`` then says which columns have one there).
        @exclusivity(unchecked) var tailStored = false
        /// The ``WriteTransaction/stamp`` of the write that last wrote the
        /// keys part: appends in that same write rewrite it (its pages are
        /// the write's own already) rather than start a tail.
        @exclusivity(unchecked) var keysWrittenBy: UInt64 = 0
        /// The tail this cluster last wrote and how many keys it had then,
        /// while only objects appended since changed it: the next tail
        /// extends each column's patch with theirs instead of encoding it again.
        /// (In ``tailMemory``'s first buffer.)
        @exclusivity(unchecked) private(set) var lastTail: UnsafeRawBufferPointer?
        @exclusivity(unchecked) private(set) var lastTailKeyCount = 0
        /// The memory of the tail last written and of the next one, which
        /// swap when a tail is written: a commit that appends allocates none.
        @exclusivity(unchecked) private var tailMemory = (
            UnsafeMutableRawBufferPointer(start: nil, count: 0), UnsafeMutableRawBufferPointer(start: nil, count: 0)
        )
        /// ...and not only by objects appended past the last key: slots
        /// moved, so every column is written whole (a stored patch no longer
        /// fits). Appended objects alone join each column's patch.
        @exclusivity(unchecked) var slotsMoved = false
        /// Whether the write's ``ClusterCache`` holds this cluster under its
        /// start (its `clusters`): checked on every lookup of the cluster
        /// changed last, where a dictionary lookup cost more than the lookup.
        @exclusivity(unchecked) var isKept = false
        /// Moves on whenever objects change slots (an insert before the last
        /// key, a split, deleted slots removed): objects that read and set
        /// their values here (``Object/keepCluster(_:slot:shape:serial:)``)
        /// look their slot up again.
        @exclusivity(unchecked) var shape = 0
        /// Per column: changed since the cluster was last written.
        let changedColumns: UnsafeMutableBufferPointer<Bool>
        @exclusivity(unchecked) private(set) var anyColumnChanged = false
        /// Slots deleted but still in ``keys`` and the columns (nil: none),
        /// in this write or stored so (``deletedPart``). A cluster that only
        /// lost objects is written as these bits alone; the slots leave the
        /// keys and every column in one pass (``applyDeletes(_:)``) when
        /// keys go in, or when most of the cluster is deleted.
        @exclusivity(unchecked) private(set) var deleted: [Bool]?
        @exclusivity(unchecked) private(set) var deletedCount = 0
        /// Whether ``deleted`` changed since the cluster was last written.
        @exclusivity(unchecked) private(set) var deletesChanged = false
        /// Whether the file holds deleted-slot bits for the cluster in their own part (``deletedPart``).
        @exclusivity(unchecked) var deletesStored = false
        /// Whether the file holds deleted-slot bits for the cluster after its stamp (``stampPart``).
        @exclusivity(unchecked) var deletesWithStamp = false
        /// Per column: the slots whose values may differ from the column's
        /// stored part (its stored patch's and those set since, in the order
        /// set); nil when a change must rewrite the column whole (it was not
        /// read from the file, or more of it changed than it has slots). A
        /// write stores a few changed values as a patch (``ColumnPatch``)
        /// instead of the column, or all of them in the cluster's tail.
        let patchSlots: UnsafeMutableBufferPointer<[Int]?>
        /// Per column: the size of its stored part (0 when unknown).
        let storedBytes: UnsafeMutableBufferPointer<Int>
        /// Per column: whether the file holds a patch of it.
        let patchStored: UnsafeMutableBufferPointer<Bool>
        /// Where the columns a write has not read yet are read from (nil
        /// once none is left): a change to one column of a cluster, or a
        /// delete, reads only what it needs.
        @exclusivity(unchecked) private(set) var source: LazySource?
        /// Per column not read yet: objects appended to it in this write,
        /// kept with the values of its stored patch, in slot order (nil:
        /// none). The next patch is made of them without reading the column;
        /// anything else that needs the column reads it and adds them
        /// (``read(_:from:editing:)``).
        @exclusivity(unchecked) private(set) var pending: [Pending?] = []  // (allocated by the first append)

        /// Values of a column not read yet: its stored patch's (one per slot
        /// of the patch), then those of the objects appended since it was
        /// stored; `appended` counts the appended ones not in the stored patch.
        struct Pending {
            let values: ColumnBuffer
            var appended = 0
        }

        /// The table and write a cluster's unread columns come from. (The
        /// stored columns do not change under it: the write changes this
        /// cluster only through it, and reads a column before changing it.)
        final class LazySource {
            let table: ClusterTable
            /// (Moved to the next write when the cluster is carried into it: ``adopt(_:)``.)
            unowned(unsafe) var transaction: Transaction
            /// Per column: not read yet. (Memory of its own: a copy of an array
            /// on its first change would look up generic metadata.)
            let unread: UnsafeMutableBufferPointer<Bool>

            init(_ table: ClusterTable, _ transaction: Transaction, unread: [Bool]) {
                self.table = table
                self.transaction = transaction
                self.unread = .allocate(capacity: unread.count)
                _ = self.unread.initialize(from: unread)
            }

            deinit { unread.deallocate() }
        }

        /// A cluster of `keys` whose columns are empty buffers (the caller fills them) or, after ``keep(_:at:)``, stored bytes;
        /// `withBuffers` false: no column yet (``reading(_:start:keys:patched:in:)`` reads them when used).
        init(start: UInt64, keys: [UInt64], layout: RecordLayout, withBuffers: Bool = true) {
            self.start = start
            self.keys = keys
            let count = layout.columnCount
            // One allocation for every per-column field (each its own was a malloc and a free per cluster a write loads).
            var size = 0
            func reserve<T>(_: T.Type) { size += MemoryLayout<T>.stride * count + 15 }
            reserve(ColumnBuffer?.self)
            reserve([Int]?.self)
            reserve(ClusterColumn?.self)
            reserve(UnsafeMutableRawBufferPointer?.self)
            reserve(Bool.self)
            reserve(Int.self)
            reserve(Bool.self)
            memory = .allocate(byteCount: max(size, 1), alignment: 16)
            var offset = 0
            buffers = Cluster.perColumn(nil, count, in: memory, at: &offset)
            patchSlots = Cluster.perColumn(nil, count, in: memory, at: &offset)
            stored = Cluster.perColumn(nil, count, in: memory, at: &offset)
            copies = Cluster.perColumn(nil, count, in: memory, at: &offset)
            changedColumns = Cluster.perColumn(false, count, in: memory, at: &offset)
            storedBytes = Cluster.perColumn(0, count, in: memory, at: &offset)
            patchStored = Cluster.perColumn(false, count, in: memory, at: &offset)
            if withBuffers {
                for column in 0..<count where layout.inRecord[column] {
                    buffers[column] = ColumnBuffer(type: layout.types[column])
                }
            }
        }

        /// The memory of the per-column fields.
        private let memory: UnsafeMutableRawPointer

        /// `count` copies of `value` at the next `offset` of `memory` aligned
        /// for them, rather than an array: allocating an array looks up its
        /// storage class's generic metadata, ~370 instructions each.
        @inline(__always)
        private static func perColumn<T>(
            _ value: T, _ count: Int, in memory: UnsafeMutableRawPointer, at offset: inout Int
        ) -> UnsafeMutableBufferPointer<T> {
            offset = (offset + 15) & ~15
            let start = (memory + offset).bindMemory(to: T.self, capacity: count)
            start.initialize(repeating: value, count: count)
            offset += MemoryLayout<T>.stride * count
            return UnsafeMutableBufferPointer(start: start, count: count)
        }

        /// Notes that the value in `slot` of `column` changed (for its patch).
        @inline(__always)
        func noteChanged(_ slot: Int, in column: Int) {
            if slot < lastTailKeyCount { lastTail = nil }
            guard patchSlots[column] != nil else { return }
            if patchSlots[column].unsafelyUnwrapped.last == slot { return }
            // (Bounded: past as many changes as slots the column is rewritten anyway.)
            if patchSlots[column].unsafelyUnwrapped.count >= keys.count {
                patchSlots[column] = nil
            } else {
                patchSlots[column]!.append(slot)
            }
        }

        /// Sets the value in `slot` of `column`; false when it was already stored so.
        @inline(__always)
        func set(_ value: StoredValue, at slot: Int, column: Int) throws -> Bool {
            guard try buffer(column).set(value, at: slot) else { return false }
            noteChanged(slot, in: column)
            markChanged(column)
            return true
        }

        /// Notes that `column` was written whole (`bytes` long; patched from
        /// now on when at least `minimum`): its stored patch, if any, is gone.
        func wroteWhole(_ column: Int, bytes: Int, minimum: Int) {
            storedBytes[column] = bytes
            // (A small one is written whole again by this write: the next one notes its changes, ``adopt(_:)``.)
            if bytes >= minimum { emptyPatchSlots(column) } else { patchSlots[column] = nil }
            patchStored[column] = false
        }

        /// Notes that `column`'s patch was written (in its part or the tail).
        func wrotePatch(_ column: Int) {
            patchStored[column] = true
            if !pending.isEmpty { pending[column]?.appended = 0 }  // (the stored patch holds them now)
        }

        /// Forgets the tail last written (it is gone from the file).
        func forgetTail() {
            lastTail = nil
            lastTailKeyCount = 0
        }

        /// Notes that the tail was written: the columns with a patch there,
        /// and none in a part of its own.
        func wroteTail(_ tail: UnsafeRawBufferPointer, _ layout: RecordLayout) {
            precondition(
                tail.baseAddress == UnsafeRawPointer(tailMemory.1.baseAddress),
                "Trove: a cluster's tail is written from the memory nextTailMemory gave")
            tailStored = true
            tailMemory = (tailMemory.1, tailMemory.0)
            lastTail = tail
            lastTailKeyCount = keys.count
            let hasPending = !pending.isEmpty
            pending.withUnsafeMutableBufferPointer { pending in
                for column in 0..<layout.columnCount where layout.inRecord[column] {
                    let patched = patchSlots[column]?.isEmpty == false
                    patchStored[column] = patched
                    // (The stored patch holds the pending appended values now.)
                    if patched && hasPending { pending[column]?.appended = 0 }
                }
            }
        }

        @inline(__always)
        func markChanged(_ column: Int) {
            changedColumns[column] = true
            anyColumnChanged = true
        }

        func markWritten() {
            keysChanged = false
            slotsMoved = false
            deletesChanged = false
            guard anyColumnChanged else { return }
            for column in changedColumns.indices { changedColumns[column] = false }
            anyColumnChanged = false
        }

        /// The buffer of `column`, if read, without retaining it (the cluster holds it).
        @inline(__always)
        func unretainedBuffer(_ column: Int) -> Unmanaged<ColumnBuffer>? {
            UnsafeRawPointer(buffers.baseAddress.unsafelyUnwrapped + column).load(as: Unmanaged<ColumnBuffer>?.self)
        }

        /// The pending values of `column`, if it has them, without retaining them (the cluster holds them).
        @inline(__always)
        func pendingValues(_ column: Int) -> Unmanaged<ColumnBuffer>? {
            guard !pending.isEmpty else { return nil }
            // (A `Pending?` is its buffer's reference, nil when none, and the count after it.)
            assert(MemoryLayout<Pending>.offset(of: \.values) == 0 && MemoryLayout<Pending?>.size == MemoryLayout<Pending>.size)
            return pending.withUnsafeBufferPointer {
                UnsafeRawPointer($0.baseAddress.unsafelyUnwrapped + column).load(as: Unmanaged<ColumnBuffer>?.self)
            }
        }

        /// Memory for the next tail, `size` bytes (the tail last written stays as it is).
        func nextTailMemory(_ size: Int) -> UnsafeMutableRawBufferPointer {
            if tailMemory.1.count < size {
                tailMemory.1.deallocate()
                tailMemory.1 = .allocate(byteCount: max(size, 4_096), alignment: 8)
            }
            return UnsafeMutableRawBufferPointer(rebasing: tailMemory.1[0..<size])
        }

        deinit {
            for copy in copies { copy?.deallocate() }
            tailMemory.0.deallocate()
            tailMemory.1.deallocate()
            // (Each moved out: a deinitialize of the whole buffer destroys through the type's metadata.)
            for column in buffers.indices {
                _ = (buffers.baseAddress.unsafelyUnwrapped + column).move()
                _ = (patchSlots.baseAddress.unsafelyUnwrapped + column).move()
            }
            memory.deallocate()
        }

        /// Reads the columns not read yet from `transaction` from now on: the
        /// write after the one that wrote the cluster, which sees the file as
        /// that one left it (``ClusterCache/carry(into:)``).
        func adopt(_ transaction: Transaction) {
            source?.transaction = transaction
            // Columns written whole, unchanged since: the new write notes its changes, for a patch or a tail.
            for column in patchSlots.indices
            where patchSlots[column] == nil && storedBytes[column] > 0 && !changedColumns[column]
                && (buffers[column] != nil || stored[column] != nil)
            {
                emptyPatchSlots(column)
            }
        }

        /// Starts `column`'s patch empty, keeping the memory of its last one:
        /// between two whole writes, each commit that appends an object adds a slot.
        private func emptyPatchSlots(_ column: Int) {
            if patchSlots[column] != nil {
                patchSlots[column]!.removeAll(keepingCapacity: true)
            } else {
                var slots: [Int] = []
                slots.reserveCapacity(32)
                patchSlots[column] = slots
            }
        }

        /// A cluster whose columns are read from `transaction` when first used.
        /// `patched` lists the columns the file holds a patch of.
        static func reading(
            _ table: ClusterTable, start: UInt64, keys: [UInt64], patched: [Int], in transaction: Transaction
        ) -> Cluster {
            let cluster = Cluster(start: start, keys: keys, layout: table.layout, withBuffers: false)
            cluster.source = LazySource(table, transaction, unread: table.layout.inRecord)
            cluster.takeStoredPatches(patched)
            return cluster
        }

        /// Takes the columns the file holds a patch of (the cluster just read,
        /// or, `replacing`, just erased from the file).
        func takeStoredPatches(_ columns: [Int], replacing: Bool = false) {
            if replacing {
                for column in patchStored.indices { patchStored[column] = false }
                tailStored = false
                forgetTail()
                storedKeyCount = 0
            }
            for column in columns { patchStored[column] = true }
        }

        /// Reads `column` from the file if the write has not yet.
        @inline(__always)
        func read(_ column: Int) throws {
            guard let source, source.unread[column] else { return }
            try read(column, from: source)
        }

        /// Reads every column the write has not read yet.
        func readAll() throws {
            guard let source else { return }
            for column in source.unread.indices where source.unread[column] { try read(column, from: source) }
            self.source = nil
        }

        /// Reads `column` from the file as a copy of its stored bytes, or,
        /// `editing`, straight into a buffer (one copy: the stored patch's
        /// values set and appended in it, not merged into a copy first).
        private func read(_ column: Int, from source: LazySource, editing: Bool = false) throws {
            if !pending.isEmpty, let appended = pending[column] {
                pending[column] = nil
                try read(column, from: source, editing: true, count: keys.count - appended.appended)
                let buffer = buffers[column]!
                let first = appended.values.count - appended.appended
                for index in first..<appended.values.count {
                    appended.values.withSlotBytes(index) { bytes in
                        buffer.put(bytes, isNull: appended.values.isNull(index), into: buffer.count)
                    }
                    noteChanged(buffer.count - 1, in: column)
                }
                return
            }
            try read(column, from: source, editing: editing, count: keys.count)
        }

        /// ``read(_:from:editing:)`` of a column of `count` objects (the keys
        /// but those appended to the column while it was pending).
        private func read(_ column: Int, from source: LazySource, editing: Bool, count: Int) throws {
            try source.table.value(start, part: column + 1, in: source.transaction) { bytes in
                try take(bytes, column, from: source, editing: editing, count: count)
            }
        }

        /// Takes `column`'s stored part, `bytes` (nil: the cluster predates
        /// the column), as ``read(_:from:editing:count:)`` reads it.
        private func take(
            _ bytes: UnsafeRawBufferPointer?, _ column: Int, from source: LazySource, editing: Bool, count: Int
        ) throws {
            source.unread[column] = false
            let layout = source.table.layout
            func damaged(_ what: String) -> TroveError { ClusterTable.damaged(what, column, of: layout, clusterAt: start) }
            guard let bytes else {
                if patchStored[column] { throw damaged("column patch has no column: it") }
                // A column the cluster predates reads as the column's default.
                buffers[column] = ColumnBuffer(
                    type: layout.types[column], repeating: layout.fallbacks[column], count: count)
                return
            }
            // (Shorter than the keys: the objects appended since it was written are in its patch.)
            guard let stored = ClusterColumn(bytes, type: layout.types[column]),
                stored.count == count || (patchStored[column] && stored.count < count)
            else { throw damaged("column") }
            storedBytes[column] = bytes.count
            guard patchStored[column] else {
                patchSlots[column] = []
                guard editing else { return keep(stored, at: column) }
                // (A damaged column is an error here, not a trap.)
                guard let buffer = ColumnBuffer.copying(stored) else { throw damaged("column") }
                buffers[column] = buffer
                return
            }
            // (Both parts are read in place: the write has not changed this cluster's parts since it read it.)
            try source.table.storedPatch(start, column, inTail: tailStored, in: source.transaction) { patch in
                guard let patch,
                    let decoded = ColumnPatch(patch, type: stored.type, count: count, stored: stored.count)
                else { throw damaged("column patch") }
                patchSlots[column] = decoded.slots
                guard editing else {
                    guard let merged = stored.patched(with: decoded, count: count) else { throw damaged("column") }
                    keep(copy: merged, type: stored.type, at: column)
                    return
                }
                if decoded.slots.count > 8 {
                    // (Many values: merged in one pass of bulk copies, cheaper than putting each.)
                    guard let merged = stored.patched(with: decoded, count: count) else { throw damaged("column") }
                    defer { merged.deallocate() }
                    buffers[column] = ColumnBuffer(ClusterColumn(UnsafeRawBufferPointer(merged), type: stored.type)!)
                    return
                }
                guard let buffer = ColumnBuffer.copying(stored) else { throw damaged("column") }
                // (The slots past the stored part come last, in order: each is the buffer's next.)
                for (index, slot) in decoded.slots.enumerated() { buffer.put(from: decoded.values, at: index, into: slot) }
                buffers[column] = buffer
            }
        }

        /// Appends an object past the last key (the caller checked it is
        /// past it and the cluster has room). A large column not read yet
        /// is not read: the value joins its pending patch (``pending``).
        func append(_ key: UInt64, _ values: [StoredValue], _ layout: RecordLayout) throws {
            let slot = keys.count
            if pending.isEmpty { pending = Array(repeating: nil, count: layout.columnCount) }
            // (Columns are read, or made pending, for the objects they hold before this one.)
            if let source, source.unread.contains(true) {
                // One cursor for the cluster's parts, which lie side by side: a search
                // that lands on the page the last one read searches that page alone.
                try source.transaction.withCursor(on: source.table.table) { cursor in
                    for column in 0..<layout.columnCount
                    where layout.inRecord[column] && buffers[column] == nil && pending[column] == nil {
                        if source.unread[column] {
                            try startPending(
                                column, from: source, minimum: source.table.patchMinimumColumnBytes, cursor: cursor)
                        }
                        if pending[column] == nil { try buffer(column) }
                    }
                }
            } else {
                for column in 0..<layout.columnCount
                where layout.inRecord[column] && unretainedBuffer(column) == nil && pendingValues(column) == nil {
                    try buffer(column)
                }
            }
            keys.append(key)
            keysChanged = true
            // (Buffers and values borrowed, not retained and copied: a commit that appends one object did so per column.)
            values.withUnsafeBufferPointer { values in
                for column in 0..<layout.columnCount where layout.inRecord[column] {
                    markChanged(column)
                    if let buffer = unretainedBuffer(column) {
                        buffer._withUnsafeGuaranteedRef { $0.append(values[column]) }
                    } else {
                        pendingValues(column).unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.append(values[column]) }
                        pending.withUnsafeMutableBufferPointer { $0[column]!.appended += 1 }
                    }
                    noteChanged(slot, in: column)
                }
            }
        }

        /// Makes `column` pending (``pending``) when it is large enough to
        /// patch: its stored patch's values, without reading the column.
        private func startPending(_ column: Int, from source: LazySource, minimum: Int, cursor: Cursor) throws {
            let type = source.table.layout.types[column]
            let existing = keys.count
            func value<R>(_ part: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
                try ClusterTable.withKey(start, part: part) { try body(try cursor.seek(exactly: $0)?.value) }
            }
            // (One lookup: a column too small to patch, or without a part, is read into its buffer there.)
            let part = try value(column + 1) {
                bytes -> (size: Int, count: Int)? in
                guard let bytes, bytes.count >= minimum, let stored = ClusterColumn(bytes, type: type),
                    stored.count == existing || patchStored[column]
                else {
                    try take(bytes, column, from: source, editing: true, count: existing)
                    return nil
                }
                return (bytes.count, stored.count)
            }
            guard let part else { return }
            var values = ColumnBuffer(type: type)
            var slots: [Int] = []
            if patchStored[column] {
                let read = try value(tailStored ? ClusterTable.tailPart : ClusterTable.patchPart(column)) {
                    stored -> Bool in
                    let patch =
                        tailStored
                        ? stored.flatMap { ClusterTail($0, columnCount: source.table.layout.columnCount)?.patch(column) }
                        : stored
                    guard let patch, let decoded = ColumnPatch(patch, type: type, count: existing, stored: part.count) else {
                        return false
                    }
                    values = ColumnBuffer(decoded.values)
                    slots = decoded.slots
                    return true
                }
                // (A damaged patch is reported when the column is read.)
                guard read else { return }
            }
            storedBytes[column] = part.size
            patchSlots[column] = slots
            pending[column] = Pending(values: values)
        }

        /// Keeps a copy of a column's stored bytes, made a buffer when first changed.
        func keep(_ column: ClusterColumn, at index: Int) {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(column.bytes.count, 1), alignment: 8)
            copy.copyMemory(from: column.bytes)
            keep(copy: UnsafeMutableRawBufferPointer(rebasing: copy[0..<column.bytes.count]), type: column.type, at: index)
        }

        /// Makes `copy` (owned from now on) the column's stored bytes.
        private func keep(copy: UnsafeMutableRawBufferPointer, type: PropertyType, at index: Int) {
            copies[index]?.deallocate()
            copies[index] = copy
            stored[index] = ClusterColumn(UnsafeRawBufferPointer(copy), type: type)
            buffers[index] = nil
        }

        /// The object in `slot` as a record, each column's slot copied from
        /// its stored bytes or its buffer.
        func record(_ slot: Int, _ layout: RecordLayout, into scratch: RecordScratch) throws -> UnsafeRawBufferPointer {
            try readAll()
            let fixedEnd = 2 + RecordLayout.bitmapSize(layout.columnCount) + layout.fixedSize
            var size = fixedEnd
            for column in layout.recordSlots where column.width == 0 {
                if let stored = stored[column.column] {
                    if !stored.isNull(slot) { size += stored.variableLength(slot) }
                } else if let buffer = buffers[column.column], !buffer.isNull(slot) {
                    size += buffer.withSlotBytes(slot) { $0.count }
                }
            }
            let record = scratch.buffer(size)
            let base = record.baseAddress.unsafelyUnwrapped
            base.initializeMemory(as: UInt8.self, repeating: 0, count: fixedEnd)
            record.storeBytes(of: UInt16(layout.columnCount).littleEndian, as: UInt16.self)
            var heap = fixedEnd
            func put(_ bytes: UnsafeRawBufferPointer, _ column: (column: Int, offset: Int, width: Int)) {
                if column.width > 0 {
                    (base + column.offset).copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: column.width)
                    return
                }
                record.storeBytes(of: UInt32(heap).littleEndian, toByteOffset: column.offset, as: UInt32.self)
                record.storeBytes(of: UInt32(bytes.count).littleEndian, toByteOffset: column.offset + 4, as: UInt32.self)
                if !bytes.isEmpty { (base + heap).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                heap += bytes.count
            }
            for column in layout.recordSlots {
                if let stored = stored[column.column] {
                    if stored.isNull(slot) {
                        record[2 + column.column / 8] |= 1 << UInt8(column.column % 8)
                    } else if column.width > 0 {
                        put(
                            UnsafeRawBufferPointer(
                                start: stored.bytes.baseAddress! + stored.slotOffset(slot, width: column.width),
                                count: column.width), column)
                    } else {
                        put(stored.variableBytes(slot), column)
                    }
                } else if let buffer = buffers[column.column] {
                    if buffer.isNull(slot) {
                        record[2 + column.column / 8] |= 1 << UInt8(column.column % 8)
                    } else {
                        buffer.withSlotBytes(slot) { put($0, column) }
                    }
                }
            }
            return UnsafeRawBufferPointer(record)
        }

        var isChanged: Bool { keysChanged || anyColumnChanged || deletesChanged }

        /// Whether the object in `slot` was deleted in this write (its slot not yet removed).
        @inline(__always)
        func isDeleted(_ slot: Int) -> Bool { deletedCount > 0 && deleted![slot] }

        /// The objects not deleted.
        var liveCount: Int { keys.count - deletedCount }

        /// Marks the object in `slot` deleted; its slot goes at the next ``applyDeletes(_:)``.
        func markDeleted(_ slot: Int) {
            if deleted == nil { deleted = Array(repeating: false, count: keys.count) }
            deleted![slot] = true
            deletedCount += 1
            deletesChanged = true
        }

        /// Takes the slots the file holds as deleted (the cluster just read),
        /// `withStamp`: in the stamp part rather than a part of their own.
        func restoreStoredDeletes(_ slots: [Int], withStamp: Bool) {
            guard !slots.isEmpty else { return }
            deleted = Array(repeating: false, count: keys.count)
            for slot in slots { deleted![slot] = true }
            deletedCount = slots.count
            deletesStored = !withStamp
            deletesWithStamp = withStamp
        }

        /// The largest key not deleted.
        var lastLiveKey: UInt64? {
            guard deletedCount > 0 else { return keys.last }
            return keys.indices.last { !deleted![$0] }.map { keys[$0] }
        }

        /// Whether the slots of deleted objects are to leave the columns when
        /// the cluster is written: most of it is deleted. (Otherwise only the
        /// bits are written: deleting a few objects of many clusters then
        /// costs a few bytes per cluster, not a copy of each.)
        var isMostlyDeleted: Bool { deletedCount * 4 >= keys.count * 3 }

        /// The deleted-slot bits as stored (``deletedPart``).
        func encodedDeletes() -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: (keys.count + 7) / 8) { bits, count in
                encodeDeletes(into: UnsafeMutableRawBufferPointer(bits))
                count = bits.count
            }
        }

        /// Writes ``encodedDeletes()`` into `bits`, `(keys.count + 7) / 8` bytes (every one written).
        func encodeDeletes(into bits: UnsafeMutableRawBufferPointer) {
            precondition(bits.count == (keys.count + 7) / 8, "Trove: deleted-slot bits of the wrong size; this is a bug in Trove")
            bits.initializeMemory(as: UInt8.self, repeating: 0)
            guard let deleted else { return }
            // Eight flags (bytes of 0 or 1) at a time: the multiplication moves flag i to bit 56 + i, with no carries.
            deleted.withUnsafeBytes { flags in
                let whole = flags.count / 8
                for group in 0..<whole {
                    let eight = UInt64(littleEndian: flags.loadUnaligned(fromByteOffset: group &* 8, as: UInt64.self))
                    bits[group] = UInt8(truncatingIfNeeded: (eight &* 0x0102_0408_1020_4080) &>> 56)
                }
                for slot in (whole &* 8)..<flags.count where flags[slot] != 0 {
                    bits[slot &>> 3] |= 1 &<< UInt8(slot & 7)
                }
            }
        }

        /// Removes the slots of the objects deleted, from the keys and every column.
        func applyDeletes(_ layout: RecordLayout) throws {
            guard deletedCount > 0, let marks = deleted else { return }
            try readAll()
            let runs = Self.runs(keeping: marks)
            var kept = 0
            for slot in keys.indices where !marks[slot] {
                keys[kept] = keys[slot]
                kept += 1
            }
            keys.removeLast(keys.count - kept)
            shape &+= 1
            for column in 0..<layout.columnCount where layout.inRecord[column] {
                if let bytes = stored[column] {
                    // Not opened for edits: its stored bytes without the slots, in one pass.
                    keep(copy: bytes.encoded(keeping: runs, kept: kept), type: bytes.type, at: column)
                } else {
                    try buffer(column).removeAll(marked: marks)
                }
                markChanged(column)
            }
            keysChanged = true
            slotsMoved = true
            deleted = nil
            deletedCount = 0
            deletesChanged = true
        }

        /// The runs of slots not `marked`, in order.
        static func runs(keeping marked: [Bool]) -> [Range<Int>] {
            var runs: [Range<Int>] = []
            var slot = 0
            while slot < marked.count {
                while slot < marked.count, marked[slot] { slot += 1 }
                let start = slot
                while slot < marked.count, !marked[slot] { slot += 1 }
                if slot > start { runs.append(start..<slot) }
            }
            return runs
        }

        /// The buffer of a column, made from its stored bytes the first time.
        @discardableResult
        func buffer(_ column: Int) throws -> ColumnBuffer {
            if let source, source.unread[column] { try read(column, from: source, editing: true) }
            if let buffer = buffers[column] { return buffer }
            let buffer = ColumnBuffer(stored[column]!)
            buffers[column] = buffer
            stored[column] = nil
            return buffer
        }

        /// Makes every stored column a buffer (before the keys change).
        func decodeAll(_ layout: RecordLayout) throws {
            for column in 0..<layout.columnCount where layout.inRecord[column] && buffers[column] == nil {
                try buffer(column)
            }
            source = nil  // (every column read)
        }

        /// The value of `column` for the object in `slot`.
        func value(_ slot: Int, _ column: Int, _ layout: RecordLayout) throws -> StoredValue {
            guard layout.inRecord[column] else { return layout.fallbacks[column] }
            try read(column)
            if let stored = stored[column] { return stored.value(slot) ?? .null }
            return buffers[column]!.value(slot)
        }

        /// Every column of the object in `slot`.
        func values(_ slot: Int, _ layout: RecordLayout) throws -> [StoredValue] {
            try (0..<layout.columnCount).map { try value(slot, $0, layout) }
        }

        /// What a column written whole is made from, read first if need be.
        enum WholeColumn {
            /// Its buffer, to encode.
            case buffer(ColumnBuffer)
            /// Its stored encoding, when it stays as read.
            case stored(UnsafeRawBufferPointer)
        }

        func wholeColumn(_ column: Int) throws -> WholeColumn {
            try read(column)
            if let buffer = buffers[column] { return .buffer(buffer) }
            return .stored(stored[column]!.bytes)
        }
    }
}
