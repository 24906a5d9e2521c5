import TroveStorage

/// What one commit, or a run of commits, changed: per type, the objects
/// whose record was written (inserted, changed or deleted) and the owners
/// whose lists, sets or maps changed, by property.
///
/// Every write transaction of a handle records one (from the storage layer's
/// change hook, so every path that writes is covered) and stores it in the
/// file's change log under its transaction id (see ``ChangeLog``), where the
/// handles of every process read it when they move to a newer snapshot.
/// Observers derive their change sets from it: they look at the changed
/// objects only, instead of running their query again and comparing.
///
/// A record is conservative: it may name an object that did not change in
/// the end (written back unchanged, inserted and deleted), never miss one.
/// A type with more changed objects than ``ChangeRecord/limit`` keeps no
/// keys (`isOverflowed`), and a change the record cannot describe (a schema
/// change, a table it does not know) sets ``everything``: observers then
/// compare in full.
struct ChangeRecord: Equatable {
    /// The changes of one type.
    struct TypeChanges: Equatable {
        /// Objects whose record was written or deleted.
        var objects: Set<UInt64> = []
        /// Per list, set or map property: the owners whose elements changed.
        var collections: [String: Set<UInt64>] = [:]
        /// Too many objects changed to list them: treat every object as changed.
        var isOverflowed = false
        /// The starts of the clusters whose stored parts were written or
        /// deleted (a cluster-stored type); nil when not known (too many, or a
        /// record of a Trove that did not note them). Readers keep the
        /// clusters they read across snapshots unless named here.
        var clusters: Set<UInt64>? = []

        /// Every object named, whatever changed about it.
        var touched: Set<UInt64> {
            collections.values.reduce(into: objects) { $0.formUnion($1) }
        }

        mutating func merge(_ other: TypeChanges) {
            if let theirs = other.clusters { clusters?.formUnion(theirs) } else { clusters = nil }
            isOverflowed = isOverflowed || other.isOverflowed
            guard !isOverflowed else {
                objects = []
                collections = [:]
                return
            }
            objects.formUnion(other.objects)
            for (property, owners) in other.collections { collections[property, default: []].formUnion(owners) }
        }
    }

    /// Changes beyond objects and their collections (the schema): nothing
    /// can be derived, every observer compares in full.
    var everything = false
    /// By type name.
    var types: [String: TypeChanges] = [:]
    /// Whether the record names every cluster written (``TypeChanges/clusters``):
    /// false for a record of a Trove that did not note them.
    var knowsClusters = true

    /// The most keys recorded per type and commit; beyond, the type is overflowed.
    static let limit = 16_384

    var isEmpty: Bool { !everything && types.isEmpty }

    /// By type name, the objects written, inserted or deleted, or whose
    /// collections changed; nil for a type whose objects are not known (too
    /// many, or a change the record cannot describe: look at every object).
    var changedObjects: Database.ChangedObjects {
        guard !everything else { return Database.ChangedObjects(types: [:], everything: true) }
        return Database.ChangedObjects(
            types: types.mapValues { $0.isOverflowed ? nil : $0.touched }, everything: false)
    }

    /// Whether the commits may have changed the object `key` of `type` (its
    /// record or a collection), or anything of the `others` types.
    func mayHaveChanged(_ key: UInt64, of type: String, orAnyOf others: Set<String>) -> Bool {
        if everything { return true }
        for name in others where types[name] != nil { return true }
        guard let changes = types[type] else { return false }
        return changes.isOverflowed || changes.objects.contains(key)
            || changes.collections.values.contains { $0.contains(key) }
    }

    /// This record followed by `other`.
    mutating func merge(_ other: ChangeRecord) {
        everything = everything || other.everything
        knowsClusters = knowsClusters && other.knowsClusters
        for (name, changes) in other.types { types[name, default: TypeChanges()].merge(changes) }
    }

    // MARK: Encoding

    /// The stored form: a version byte, the `everything` flag, then per type
    /// its name, flags, and sorted keys (u64 little-endian) of its objects and
    /// of each collection property's owners, then (version 2) the starts of
    /// its clusters written (a count of `u32.max` when not known).
    func encoded() -> [UInt8] {
        // Sized first: a commit encodes one record, and growing the array step by step reallocated it several times.
        var size = 6
        for (name, changes) in types {
            size += 4 + name.utf8.count + 1 + 4 + 8 * changes.objects.count + 4 + 4 + 8 * (changes.clusters?.count ?? 0)
            for (property, owners) in changes.collections { size += 8 + property.utf8.count + 8 * owners.count }
        }
        return RecordBytes.encode(capacity: size) { bytes in
            bytes.append(2 as UInt8)
            bytes.append(everything ? 1 : 0 as UInt8)
            bytes.append(UInt32(types.count))
            for (name, changes) in types.sorted(by: { $0.key < $1.key }) {
                bytes.append(name)
                bytes.append(changes.isOverflowed ? 1 : 0 as UInt8)
                bytes.append(keys: Array(changes.objects))
                bytes.append(UInt32(changes.collections.count))
                for (property, owners) in changes.collections.sorted(by: { $0.key < $1.key }) {
                    bytes.append(property)
                    bytes.append(keys: Array(owners))
                }
                if let clusters = changes.clusters {
                    bytes.append(keys: Array(clusters))
                } else {
                    bytes.append(UInt32.max)
                }
            }
        }
    }

    /// Reads ``encoded()``'s bytes; nil when they are not a record this
    /// version writes (observers then compare in full).
    init?(decoding bytes: UnsafeRawBufferPointer) {
        var offset = 0
        func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            defer { offset += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        func string() -> String? {
            guard let count = integer(UInt32.self).map(Int.init), offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]), as: UTF8.self)
        }
        func keys() -> Set<UInt64>? {
            guard let count = integer(UInt32.self).map(Int.init), offset + count * 8 <= bytes.count else { return nil }
            var keys = Set<UInt64>(minimumCapacity: count)
            for _ in 0..<count { keys.insert(integer(UInt64.self)!) }
            return keys
        }
        guard let version = integer(UInt8.self), version == 1 || version == 2, let flag = integer(UInt8.self),
            let typeCount = integer(UInt32.self)
        else { return nil }
        everything = flag != 0
        knowsClusters = version >= 2
        for _ in 0..<typeCount {
            guard let name = string(), let overflow = integer(UInt8.self), let objects = keys(),
                let collectionCount = integer(UInt32.self)
            else { return nil }
            var changes = TypeChanges(objects: objects, isOverflowed: overflow != 0)
            for _ in 0..<collectionCount {
                guard let property = string(), let owners = keys() else { return nil }
                changes.collections[property] = owners
            }
            if version == 1 {
                changes.clusters = nil
            } else {
                guard offset + 4 <= bytes.count else { return nil }
                if bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self) == UInt32.max {
                    offset += 4
                    changes.clusters = nil
                } else {
                    guard let clusters = keys() else { return nil }
                    changes.clusters = clusters
                }
            }
            types[name] = changes
        }
        guard offset == bytes.count else { return nil }
    }

    init() {}
}

/// Builds a write transaction's ``ChangeRecord`` from the storage layer's
/// change hook: each table is classified once (by its slot), then a change
/// appends its key to an array (every put of every write passes here, so no
/// hashing: keys become sets once, when the record is taken).
///
/// A handle keeps one recorder for all its writes (``reset()`` at each
/// start): the tables' kinds, the per-type boxes and their arrays' memory
/// stay, so that a small commit does not build and free them each time.
///
/// Its state skips Swift's dynamic exclusivity checks: a write transaction
/// is used by one thread at a time, and every put paid several checks here.
final class ChangeRecorder {
    /// The keys of one list, set or map property's owners.
    private final class KeyList {
        @exclusivity(unchecked) var keys: [UInt64] = []
    }

    /// One type's changes, shared by the targets of its tables.
    private final class TypeBox {
        @exclusivity(unchecked) var objects: [UInt64] = []
        /// By property (lists stay when emptied: targets hold them).
        @exclusivity(unchecked) var collections: [String: KeyList] = [:]
        @exclusivity(unchecked) var isOverflowed = false
        /// The starts of the clusters written, repeats included (not limited by the object keys' overflow).
        @exclusivity(unchecked) var clusterStarts: [UInt64] = []
        @exclusivity(unchecked) var clustersUnknown = false
        /// Keys appended, repeats included.
        @exclusivity(unchecked) var count = 0
        @exclusivity(unchecked) private var compactionAt = ChangeRecord.limit

        var changes: ChangeRecord.TypeChanges {
            let starts = Set(clusterStarts)
            let clusters = clustersUnknown || starts.count > ChangeRecord.limit ? nil : starts
            guard !isOverflowed else { return ChangeRecord.TypeChanges(isOverflowed: true, clusters: clusters) }
            return ChangeRecord.TypeChanges(
                objects: Set(objects), collections: collections.mapValues { Set($0.keys) }.filter { !$0.value.isEmpty },
                clusters: clusters)
        }

        var hasChanges: Bool { count > 0 || isOverflowed || !clusterStarts.isEmpty || clustersUnknown }

        /// Forgets every change, keeping the memory.
        func reset() {
            guard hasChanges else { return }
            objects.removeAll(keepingCapacity: true)
            for list in collections.values { list.keys.removeAll(keepingCapacity: true) }
            clusterStarts.removeAll(keepingCapacity: true)
            isOverflowed = false
            clustersUnknown = false
            count = 0
            compactionAt = ChangeRecord.limit
        }

        /// A part of the cluster at `start` was written or deleted.
        @inline(__always)
        func noteCluster(_ start: UInt64) {
            // A cluster's parts are written one after another: one entry for them all.
            if clusterStarts.last != start { clusterStarts.append(start) }
        }

        func list(_ property: String) -> KeyList {
            if let list = collections[property] { return list }
            let list = KeyList()
            collections[property] = list
            return list
        }

        @inline(__always)
        func append(_ key: UInt64, to list: KeyList?) {
            guard !isOverflowed else { return }
            if let list { list.keys.append(key) } else { objects.append(key) }
            count += 1
            if count > compactionAt { compact() }
        }

        /// Drops repeats (a loop writing one object again and again is one
        /// change); past the limit of distinct keys, the type is overflowed.
        private func compact() {
            objects = Array(Set(objects))
            for list in collections.values { list.keys = Array(Set(list.keys)) }
            count = objects.count + collections.values.reduce(0) { $0 + $1.keys.count }
            if count > ChangeRecord.limit { return overflow() }
            compactionAt = count + ChangeRecord.limit
        }

        func overflow() {
            isOverflowed = true
            objects = []
            for list in collections.values { list.keys = [] }
        }

        /// ``ChangeRecord/encoded()``'s bytes of ``changes``, made from the arrays.
        func encode(into bytes: inout RecordBytes) {
            bytes.append(isOverflowed ? 1 : 0 as UInt8)
            if isOverflowed {
                bytes.append(UInt32(0))
                bytes.append(UInt32(0))
            } else {
                bytes.append(keys: objects)
                if collections.isEmpty {
                    bytes.append(UInt32(0))
                } else {
                    var lists: [(property: String, list: KeyList)] = []
                    for (property, list) in collections where !list.keys.isEmpty { lists.append((property, list)) }
                    if lists.count > 1 { lists.sort { $0.property < $1.property } }
                    bytes.append(UInt32(lists.count))
                    for (property, list) in lists {
                        bytes.append(property)
                        bytes.append(keys: list.keys)
                    }
                }
            }
            if clustersUnknown || (clusterStarts.count > ChangeRecord.limit && Set(clusterStarts).count > ChangeRecord.limit) {
                bytes.append(UInt32.max)
            } else {
                bytes.append(keys: clusterStarts)
            }
        }
    }

    private enum Target {
        case objects(TypeBox)
        case clusters(TypeBox)
        case collection(TypeBox, KeyList)
        case meta
        case ignored
        case unknown
    }

    /// What a table holds, told by its name.
    enum TableKind {
        case objects(type: String)
        case clusters(type: String)
        case collection(type: String, property: String)
        case meta
        case ignored
        case unknown
    }

    init() {
        changeHook = { [unowned(unsafe) self] table, key in noteChange(in: table, key: key) }
        changeHookForKeys = { [unowned(unsafe) self] table, keys in noteChanges(in: table, objectKeys: keys) }
    }

    /// The storage layer's change hooks feeding this recorder (made once: each write sets them).
    /// (Set once, in `init`; a lazy property paid an exclusivity check at every read.)
    @exclusivity(unchecked) private(set) var changeHook: ((Table, UnsafeRawBufferPointer?) -> Void)!
    @exclusivity(unchecked) private(set) var changeHookForKeys: ((Table, [UInt64]) -> Void)!

    @exclusivity(unchecked) private var everything = false
    /// By type name; kept across writes (``reset()``).
    @exclusivity(unchecked) private var boxes: [String: TypeBox] = [:]
    /// By table slot, with the table's name (a slot is reused after its table is dropped).
    /// (An array: slots are LMDB's small table numbers, and a dictionary's hashing cost more than the rest of a change.)
    @exclusivity(unchecked) private var targets: [(name: String, target: Target)?] = []
    /// The table changed last: a loop of adds writes one table after another, again and again.
    @exclusivity(unchecked) private var last: (slot: UInt32, target: Target)?

    /// Forgets the last write's changes: the start of a write.
    func reset() {
        everything = false
        last = nil
        for box in boxes.values { box.reset() }
    }

    /// What the transaction changed so far.
    var record: ChangeRecord {
        var record = ChangeRecord()
        record.everything = everything
        for (name, box) in boxes where box.hasChanges { record.types[name] = box.changes }
        return record
    }

    /// Whether the transaction changed something no type tells: the catalog
    /// (a schema, say) or a table of no known kind.
    var changedCatalog: Bool { everything }

    /// Whether the transaction changed objects of `type` (or something no type tells).
    func mayHaveChanged(_ type: String) -> Bool {
        everything || boxes[type]?.hasChanges == true
    }

    /// Calls `body` with ``record``'s ``ChangeRecord/encoded()`` bytes,
    /// without building the record (or an array: a commit encodes one).
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var size = 6
        var changedCount = 0
        var only: (name: String, box: TypeBox)?
        for (name, box) in boxes where box.hasChanges {
            changedCount += 1
            if changedCount == 1 { only = (name, box) }
            size += 4 + name.utf8.count + 1 + 4 + 8 * box.objects.count + 4 + 4 + 8 * box.clusterStarts.count
            for (property, list) in box.collections { size += 8 + property.utf8.count + 8 * list.keys.count }
        }
        return try RecordBytes.withEncoded(capacity: size, body) { bytes in
            bytes.append(2 as UInt8)
            bytes.append(everything ? 1 : 0 as UInt8)
            bytes.append(UInt32(changedCount))
            if changedCount == 1, let only {
                // (A commit mostly changes one type: no list of them to build and sort.)
                bytes.append(only.name)
                only.box.encode(into: &bytes)
                return
            }
            var changed: [(name: String, box: TypeBox)] = []
            changed.reserveCapacity(changedCount)
            for (name, box) in boxes where box.hasChanges { changed.append((name, box)) }
            changed.sort { $0.name < $1.name }
            for (name, box) in changed {
                bytes.append(name)
                box.encode(into: &bytes)
            }
        }
    }

    /// ``noteChange(in:key:)`` of many objects of one type's table at once
    /// (a bulk update): the table is looked up once, not once per object.
    func noteChanges(in table: Table, objectKeys: [UInt64]) {
        switch target(of: table) {
        case .objects(let box), .clusters(let box):
            for key in objectKeys {
                guard !box.isOverflowed else { return }
                box.append(key, to: nil)
            }
        default:
            for key in objectKeys {
                var bigEndian = key.bigEndian
                withUnsafeBytes(of: &bigEndian) { noteChange(in: table, key: $0) }
            }
        }
    }

    @inline(__always)
    private func target(of table: Table) -> Target {
        let target: Target
        if let last, last.slot == table.slot {
            target = last.target
        } else if Int(table.slot) < targets.count, let known = targets[Int(table.slot)], known.name == table.name {
            target = known.target
        } else {
            target = self.target(of: ChangeRecorder.kind(of: table.name))
            let slot = Int(table.slot)
            if slot >= targets.count { targets.append(contentsOf: repeatElement(nil, count: slot + 1 - targets.count)) }
            targets[slot] = (table.name, target)
        }
        last = (table.slot, target)
        return target
    }

    func noteChange(in table: Table, key: UnsafeRawBufferPointer?) {
        switch target(of: table) {
        case .ignored: return
        case .objects(let box):
            guard let key, key.count == 8 else { return box.overflow() }
            box.append(OrderedKey.objectKey(from: key), to: nil)
        case .clusters(let box):
            // The store reports each object (8-byte keys); the cluster parts it writes say nothing of which.
            guard let key else {
                box.overflow()
                box.clustersUnknown = true  // the table was cleared
                return
            }
            if key.count == 8 { box.append(OrderedKey.objectKey(from: key), to: nil) }
            // A stored part (start ‖ part number): readers must not keep that cluster.
            if key.count == 10 { box.noteCluster(ClusterTable.start(of: key)) }
        case .collection(let box, let list):
            guard let key, key.count >= 8 else { return box.overflow() }
            box.append(OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: key[0..<8])), to: list)
        case .meta:
            // Counters change with inserts and deletes, and the format number when
            // a write first stores something a newer format holds; the objects
            // those writes change are recorded with their tables. Anything else
            // in the catalog is the schema.
            if let key, key.starts(with: "seq:".utf8) || key.starts(with: "auto:".utf8) || key.elementsEqual("format".utf8) {
                return
            }
            everything = true
        case .unknown:
            everything = true
        }
    }

    private func box(_ type: String) -> TypeBox {
        if let box = boxes[type] { return box }
        let box = TypeBox()
        boxes[type] = box
        return box
    }

    private func target(of kind: TableKind) -> Target {
        switch kind {
        case .objects(let type): return .objects(box(type))
        case .clusters(let type): return .clusters(box(type))
        case .collection(let type, let property):
            let box = box(type)
            return .collection(box, box.list(property))
        case .meta: return .meta
        case .ignored: return .ignored
        case .unknown: return .unknown
        }
    }

    static func kind(of name: String) -> TableKind {
        if name == Catalog.metaTable { return .meta }
        if ChangeLog.isLogTable(name) || name == Catalog.keyCheckTable { return .ignored }
        if name.hasPrefix(Catalog.syncTablePrefix) { return .ignored }
        for prefix in ["idx:", "pk:", "ref:", "fts:"] where name.hasPrefix(prefix) { return .ignored }
        if name.hasPrefix("obj:") { return .objects(type: String(name.dropFirst(4))) }
        if name.hasPrefix(ObjectStore.clusterPrefix) { return .clusters(type: String(name.dropFirst(4))) }
        for prefix in ["list:", "set:", "map:"] where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dot = rest.lastIndex(of: ".") else { return .unknown }
            return .collection(type: String(rest[..<dot]), property: String(rest[rest.index(after: dot)...]))
        }
        return .unknown
    }
}

/// The pieces of a stored change record (``ChangeRecord/encoded()``), for
/// both writers of it: a record, and a recorder's arrays. Written in place
/// into one array sized first (a commit encodes one record: appending to an
/// array piece by piece cost a check and a copy call per integer).
private struct RecordBytes {
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    private(set) var count = 0

    /// The bytes `body` appends, at most `capacity` of them.
    static func encode(capacity: Int, _ body: (inout RecordBytes) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { buffer, initialized in
            var bytes = RecordBytes(base: UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped), capacity: capacity)
            body(&bytes)
            initialized = bytes.count
        }
    }

    /// Calls `use` with the bytes `body` writes, at most `capacity` of them,
    /// in memory of its own (on the stack when small).
    static func withEncoded<R>(
        capacity: Int, _ use: (UnsafeRawBufferPointer) throws -> R, _ body: (inout RecordBytes) -> Void
    ) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: max(capacity, 1), alignment: 8) { buffer in
            var bytes = RecordBytes(base: buffer.baseAddress.unsafelyUnwrapped, capacity: capacity)
            body(&bytes)
            return try use(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes.count]))
        }
    }

    private init(base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    @inline(__always)
    private mutating func store<T: FixedWidthInteger>(_ value: T) {
        precondition(count + MemoryLayout<T>.size <= capacity, "Trove: a change record outgrew the size computed for it")
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    @inline(__always) mutating func append(_ value: UInt8) { store(value) }
    @inline(__always) mutating func append(_ value: UInt32) { store(value) }
    @inline(__always) mutating func append(_ value: UInt64) { store(value) }

    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            store(UInt32(utf8.count))
            precondition(count + utf8.count <= capacity, "Trove: a change record outgrew the size computed for it")
            if !utf8.isEmpty { (base + count).copyMemory(from: utf8.baseAddress.unsafelyUnwrapped, byteCount: utf8.count) }
            count += utf8.count
        }
    }

    /// `keys` sorted, each once, after their count.
    mutating func append(keys: [UInt64]) {
        guard keys.count > 1 else {
            store(UInt32(keys.count))
            if let key = keys.first { store(key) }
            return
        }
        let sorted = keys.sorted()
        var unique = 1
        for index in 1..<sorted.count where sorted[index - 1] != sorted[index] { unique += 1 }
        store(UInt32(unique))
        for index in sorted.indices where index == 0 || sorted[index - 1] != sorted[index] { store(sorted[index]) }
    }
}
