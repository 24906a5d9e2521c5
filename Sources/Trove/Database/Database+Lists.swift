import Foundation
import TroveStorage

/// List storage. A list property `ChatRoom.messages` keeps a table
/// `list:ChatRoom.messages` of chunks (``ListChunk``): runs of elements,
/// each a one-column record, keyed `owner key ‖ position of the chunk's
/// first element` (8 + 4 bytes, big-endian). Reading an element or the count
/// is one B-tree search and one chunk; appending rewrites the last chunk (or
/// starts one), however long the list; inserting or removing in the middle
/// rewrites the chunks from there to the end. A short list is one entry, so
/// removing a deleted object from the lists that hold it is a read and a
/// write per list. A read-only handle on a file from before chunks
/// (``TableInfo/listsArePacked`` false) reads one element per entry.
extension Database {
    /// Calls `body` with the key of `owner`'s list entry at `position` (built on the stack).
    @inline(__always)
    private static func withListKey<R>(owner: UInt64, position: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R)
        rethrows -> R
    {
        var key = (owner.bigEndian, position.bigEndian)
        return try withUnsafeBytes(of: &key) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<12])) }
    }

    static func owner(of key: UnsafeRawBufferPointer) -> UInt64? {
        key.count >= 8 ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : nil
    }

    static func ownerPrefix(_ owner: UInt64) -> [UInt8] {
        withUnsafeBytes(of: owner.bigEndian) { Array($0) }
    }

    private static func position(of key: UnsafeRawBufferPointer) -> Int {
        Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
    }

    func listCount(owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws -> Int {
        guard let list = table.collections[column], transaction.canSee(list) else { return 0 }
        return try transaction.withCursor(on: list) { cursor in
            guard let last = try Database.chunkEntry(holding: Int(UInt32.max), owner: owner, in: cursor) else { return 0 }
            guard table.listsArePacked else { return Database.position(of: last.key) + 1 }
            return Database.position(of: last.key)
                + (try listChunk(last, owner: owner, column: column, table: table).count)
        }
    }

    func listElement(owner: UInt64, column: Int, position: Int, table: TableInfo, _ transaction: Transaction) throws
        -> StoredValue?
    {
        guard let list = table.collections[column], let layout = table.elementLayouts[column], transaction.canSee(list) else {
            return nil
        }
        return try transaction.withCursor(on: list) { cursor in
            guard let entry = try Database.chunkEntry(holding: position, owner: owner, in: cursor) else { return nil }
            let start = Database.position(of: entry.key)
            guard table.listsArePacked else {
                return start == position ? RecordReader(entry.value, layout: layout).value(at: 0) : nil
            }
            let chunk = try listChunk(entry, owner: owner, column: column, table: table)
            guard position - start < chunk.count else { return nil }
            return RecordReader(chunk.record(at: position - start), layout: layout).value(at: 0)
        }
    }

    /// The entry of `owner`'s list whose chunk holds `position` (past the
    /// end: the last chunk); nil for an empty list. With one element per
    /// entry (an older file), the entry at `position` or the one before it.
    private static func chunkEntry(holding position: Int, owner: UInt64, in cursor: Cursor) throws -> Entry? {
        let atLeast = try withListKey(owner: owner, position: UInt32(clamping: position)) { try cursor.seek(atLeast: $0) }
        if let atLeast, atLeast.key.count == 12, Database.owner(of: atLeast.key) == owner,
            Database.position(of: atLeast.key) == position
        {
            return atLeast
        }
        guard let before = atLeast == nil ? try cursor.last() : try cursor.previous(), before.key.count == 12,
            Database.owner(of: before.key) == owner
        else { return nil }
        return before
    }

    /// The chunk an entry of a list holds; a damaged one throws, saying which list and object.
    private func listChunk(_ entry: Entry, owner: UInt64, column: Int, table: TableInfo) throws -> ListChunk {
        try Database.listChunk(entry, owner: owner, column: column, table: table, path: path)
    }

    static func listChunk(_ entry: Entry, owner: UInt64, column: Int, table: TableInfo, path: String) throws -> ListChunk {
        guard entry.key.count == 12 else {
            throw TroveError(
                .corruptFile,
                "\(table.name).\(table.schema.properties[column].name) of object \(owner) has a key of \(entry.key.count) bytes",
                path: path)
        }
        guard let chunk = ListChunk(entry.value) else {
            throw TroveError(
                .corruptFile,
                "\(table.name).\(table.schema.properties[column].name) of object \(owner) has a damaged chunk at element \(position(of: entry.key)): \(ListChunk.problem(in: entry.value) ?? "")",
                path: path)
        }
        return chunk
    }

    /// Every element of one list, set or map, in key order.
    func listValues(owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws -> [StoredValue] {
        var values: [StoredValue] = []
        try Database.forEachCollectionEntry(owner: owner, column: column, table: table, transaction) { _, element in
            values.append(element.value(at: 0))
        }
        return values
    }

    /// Every entry of one collection: the key after the owner prefix, and the element.
    func collectionEntries(owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction) throws
        -> [(key: [UInt8], value: StoredValue)]
    {
        var entries: [(key: [UInt8], value: StoredValue)] = []
        try Database.forEachCollectionEntry(owner: owner, column: column, table: table, transaction) { key, element in
            entries.append((Array(key), element.value(at: 0)))
        }
        return entries
    }

    /// Calls `visit` with each entry of one collection in key order: the key
    /// after the owner prefix and a reader over the element (both valid only
    /// during the call). Static: it reads only `transaction`, so a query may
    /// call it from any handle.
    static func forEachCollectionEntry(
        owner: UInt64, column: Int, table: TableInfo, _ transaction: Transaction,
        _ visit: (UnsafeRawBufferPointer, RecordReader) -> Void
    ) throws {
        guard let collection = table.collections[column], let layout = table.elementLayouts[column],
            transaction.canSee(collection)
        else {
            return
        }
        let start = Database.ownerPrefix(owner)
        if table.tokenizesEntries(column) {
            // Keyed by tokens: read, then visited in the order of their keys (a set's
            // value order, a map's key order), each key as ``storedEntryKey`` takes it.
            var entries: [(key: [UInt8], record: [UInt8])] = []
            let isMap = table.schema.properties[column].collection == .map
            try transaction.withCursor(on: collection) { cursor in
                var entry = try start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                while let current = entry, Database.owner(of: current.key) == owner {
                    if isMap {
                        let (key, record) =
                            TableInfo.mapEntry(current.value) ?? (UnsafeRawBufferPointer(start: nil, count: 0), current.value)
                        entries.append((Array(key), Array(record)))
                    } else {
                        let value = RecordReader(current.value, layout: layout).value(at: 0)
                        entries.append((IndexKey.make(value, type: layout.types[0], cut: false).bytes, Array(current.value)))
                    }
                    entry = try cursor.next()
                }
            }
            entries.sort { $0.key.lexicographicallyPrecedes($1.key) }
            for entry in entries {
                entry.key.withUnsafeBytes { key in
                    entry.record.withUnsafeBytes { visit(key, RecordReader($0, layout: layout)) }
                }
            }
            return
        }
        let isChunked = table.listsArePacked && table.schema.properties[column].collection == .list
        try transaction.withCursor(on: collection) { cursor in
            var entry = try start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            var positionKey: UInt32 = 0
            while let current = entry, Database.owner(of: current.key) == owner {
                if isChunked {
                    let chunk = try listChunk(
                        current, owner: owner, column: column, table: table, path: transaction.environment.path)
                    let first = UInt32(Database.position(of: current.key))
                    for index in 0..<chunk.count {
                        positionKey = (first + UInt32(index)).bigEndian
                        withUnsafeBytes(of: positionKey) {
                            visit($0, RecordReader(chunk.record(at: index), layout: layout))
                        }
                    }
                } else {
                    visit(UnsafeRawBufferPointer(rebasing: current.key.dropFirst(8)), RecordReader(current.value, layout: layout))
                }
                entry = try cursor.next()
            }
        }
    }

    /// Empties one collection of one owner, releasing the inverse links of its objects.
    func collectionRemoveAll(owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws {
        if table.schema.properties[column].collection == .list {
            let tail = try listTail(from: 0, owner: owner, column: column, table: table, state)
            try writeListTail(ListElements(), from: 0, replacing: tail.chunks, owner: owner, column: column, table: table, state)
            try releaseLinks(of: tail.elements, owner: owner, column: column, table: table, state)
            if tail.elements.count > 0 { generation &+= 1 }
            return
        }
        let entries = try collectionEntries(owner: owner, column: column, table: table, state.transaction)
        for entry in entries {
            try Database.storedEntryKey(entry.key, owner: owner, column: column, table: table).withUnsafeBytes {
                _ = try state.transaction.delete(table.collections[column]!, key: $0)
            }
        }
        if table.refs[column] != nil {
            for case .int(let target) in entries.map(\.value) {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
            }
        }
        if !entries.isEmpty { generation &+= 1 }
    }

    /// Removes a deleted object from one collection of objects (a list loses
    /// every occurrence, a set its member; a map's entries holding it keep
    /// their keys with nil, as Realm's do, or go when values cannot be nil).
    /// `droppingRef` false: the caller deletes the inverse-link entries of
    /// `target` itself, all at once (a list or set that loses it leaves its
    /// entry to the caller).
    func collectionRemoveOccurrences(
        of target: UInt64, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState, droppingRef: Bool = true
    ) throws {
        let property = table.schema.properties[column]
        if property.collection == .list {
            return try listRemoveOccurrences(
                of: target, owner: owner, column: column, table: table, state, droppingRef: droppingRef)
        }
        let needle = StoredValue.int(Int64(bitPattern: target))
        let entries = try collectionEntries(owner: owner, column: column, table: table, state.transaction)
        if property.collection == .map, property.isOptional {
            for entry in entries where entry.value == needle {
                try putEntry(
                    .null, replacing: needle, key: Database.storedEntryKey(entry.key, owner: owner, column: column, table: table),
                    owner: owner, column: column, table: table, state, mapKey: entry.key)
            }
            generation &+= 1
            return
        }
        var removed = 0
        for entry in entries where entry.value == needle {
            try Database.storedEntryKey(entry.key, owner: owner, column: column, table: table).withUnsafeBytes {
                _ = try state.transaction.delete(table.collections[column]!, key: $0)
            }
            removed += 1
        }
        if removed > 0, droppingRef, table.refs[column] != nil {
            try adjustRef(
                table, column: column, target: target, source: owner, by: -removed, state.transaction, removingAll: true)
        }
        generation &+= 1
    }

    /// Writes the element at `position` of a list (at its end: appends it);
    /// keeps the inverse links of a list of objects in step.
    func putElement(
        _ value: StoredValue, replacing old: StoredValue?, owner: UInt64, column: Int, position: Int, table: TableInfo,
        _ state: WriteState
    ) throws {
        try state.recordWriter.encode([value], layout: table.elementLayouts[column]!)
        let record = state.recordWriter.bytes
        if position >= (try listCount(owner: owner, column: column, table: table, state.transaction)) {
            try appendToList(record, owner: owner, column: column, table: table, state)
        } else {
            var tail = try listTail(from: position, owner: owner, column: column, table: table, state, to: position)
            tail.elements.replace(at: position - tail.start, with: record)
            try writeListTail(
                tail.elements, from: tail.start, replacing: tail.chunks, owner: owner, column: column, table: table, state)
        }
        try adjustLinks(removing: old, adding: value, owner: owner, column: column, table: table, state)
    }

    private func adjustLinks(
        removing old: StoredValue?, adding new: StoredValue?, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState
    ) throws {
        guard table.refs[column] != nil else { return }
        if case .int(let target) = old {
            try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
        }
        if case .int(let target) = new {
            try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: 1, state.transaction)
        }
    }

    /// Drops the inverse links of the objects among removed elements.
    private func releaseLinks(of removed: ListElements, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        guard table.refs[column] != nil, let layout = table.elementLayouts[column] else { return }
        for index in 0..<removed.count {
            let value = removed.withRecord(at: index) { RecordReader($0, layout: layout).value(at: 0) }
            try adjustLinks(removing: value, adding: nil, owner: owner, column: column, table: table, state)
        }
    }

    /// Writes one collection entry under its full key; keeps inverse links in step.
    /// A map's entry in a file with key tokens holds its key (`mapKey`, UTF-8) first.
    func putEntry(
        _ value: StoredValue, replacing old: StoredValue?, key: [UInt8], owner: UInt64, column: Int, table: TableInfo,
        _ state: WriteState, mapKey: [UInt8]? = nil
    ) throws {
        let list = table.collections[column]!
        try state.recordWriter.encode([value], layout: table.elementLayouts[column]!)
        if table.keyTokens != nil, table.schema.properties[column].collection == .map {
            guard let mapKey else { preconditionFailure("a map entry is written with its key") }
            let entry = withUnsafeBytes(of: UInt16(mapKey.count).littleEndian) { Array($0) } + mapKey + state.recordWriter.bytes
            try key.withUnsafeBytes { k in
                try entry.withUnsafeBytes { _ = try state.transaction.put(list, key: k, value: $0) }
            }
        } else {
            try key.withUnsafeBytes { k in
                try state.recordWriter.bytes.withUnsafeBytes { _ = try state.transaction.put(list, key: k, value: $0) }
            }
        }
        if table.refs[column] != nil {
            if case .int(let target) = old {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
            }
            if case .int(let target) = value {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: 1, state.transaction)
            }
        }
    }

    func listInsert(_ value: StoredValue, at position: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        let count = try listCount(owner: owner, column: column, table: table, state.transaction)
        guard count < Int(UInt32.max) else {
            throw TroveError(
                .invalidValue, "\(table.name).\(table.schema.properties[column].name) is full (\(count) elements)", path: path)
        }
        try checkElement(value, column: column, table: table)
        try state.recordWriter.encode([value], layout: table.elementLayouts[column]!)
        let record = state.recordWriter.bytes
        if position >= count {
            try appendToList(record, owner: owner, column: column, table: table, state)
        } else {
            var tail = try listTail(from: position, owner: owner, column: column, table: table, state)
            tail.elements.insert(record, at: position - tail.start)
            try writeListTail(
                tail.elements, from: tail.start, replacing: tail.chunks, owner: owner, column: column, table: table, state)
        }
        try adjustLinks(removing: nil, adding: value, owner: owner, column: column, table: table, state)
        generation &+= 1
    }

    func listSet(_ value: StoredValue, at position: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws
    {
        try checkElement(value, column: column, table: table)
        let old = try listElement(owner: owner, column: column, position: position, table: table, state.transaction)
        try putElement(value, replacing: old, owner: owner, column: column, position: position, table: table, state)
        generation &+= 1
    }

    func listRemove(at position: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws {
        var tail = try listTail(from: position, owner: owner, column: column, table: table, state)
        var removed = ListElements()
        tail.elements.remove(at: position - tail.start).withUnsafeBytes { removed.append($0) }
        try writeListTail(
            tail.elements, from: tail.start, replacing: tail.chunks, owner: owner, column: column, table: table, state)
        try releaseLinks(of: removed, owner: owner, column: column, table: table, state)
        generation &+= 1
    }

    func listMove(from source: Int, to destination: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws
    {
        guard source != destination else { return }
        // Moving keeps the set of elements: inverse links do not change.
        var tail = try listTail(from: min(source, destination), owner: owner, column: column, table: table, state)
        let moved = tail.elements.remove(at: source - tail.start)
        tail.elements.insert(moved, at: destination - tail.start)
        try writeListTail(
            tail.elements, from: tail.start, replacing: tail.chunks, owner: owner, column: column, table: table, state)
        generation &+= 1
    }

    /// Removes every occurrence of an object from a list of objects (its
    /// target was deleted); `droppingRef` as for ``collectionRemoveOccurrences(of:owner:column:table:_:droppingRef:)``.
    func listRemoveOccurrences(
        of target: UInt64, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState, droppingRef: Bool = true
    ) throws {
        // An element holds the object when its record is the object's: records of one layout encode a value one way.
        try state.recordWriter.encode([.int(Int64(bitPattern: target))], layout: table.elementLayouts[column]!)
        let needle = state.recordWriter.bytes
        if let removed = try removeFromSoleChunk(needle, owner: owner, column: column, table: table, state) {
            guard removed > 0 else { return }
            if droppingRef, table.refs[column] != nil {
                try adjustRef(
                    table, column: column, target: target, source: owner, by: -removed, state.transaction, removingAll: true)
            }
            generation &+= 1
            return
        }
        let removed = try removeFromChunks(needle, owner: owner, column: column, table: table, state)
        guard removed > 0 else { return }
        if droppingRef, table.refs[column] != nil {
            try adjustRef(
                table, column: column, target: target, source: owner, by: -removed, state.transaction, removingAll: true)
        }
        generation &+= 1
    }

    /// Removes the elements whose record is `needle` from `owner`'s list of
    /// several chunks, reading it whole and writing it again; how many went.
    private func removeFromChunks(_ needle: [UInt8], owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws -> Int
    {
        let tail = try listTail(from: 0, owner: owner, column: column, table: table, state)
        var kept = ListElements()
        kept.reserveCapacity(bytes: tail.elements.bytes.count, elements: tail.elements.count)
        var removed = 0
        needle.withUnsafeBytes { needle in
            for index in 0..<tail.elements.count {
                tail.elements.withRecord(at: index) { record in
                    if record.count == needle.count, memcmp(record.baseAddress!, needle.baseAddress!, needle.count) == 0 {
                        removed += 1
                    } else {
                        kept.append(record)
                    }
                }
            }
        }
        if removed > 0 {
            try writeListTail(kept, from: tail.start, replacing: tail.chunks, owner: owner, column: column, table: table, state)
        }
        return removed
    }

    /// Removes the elements whose record is `needle` from `owner`'s list
    /// when the list is one chunk (most lists: up to
    /// ``ListChunk/softLimit`` bytes), editing that chunk in place of reading
    /// the list into ``ListElements`` and cutting it into chunks again; how
    /// many went (0 for an empty list), or nil when the list has more chunks.
    private func removeFromSoleChunk(
        _ needle: [UInt8], owner: UInt64, column: Int, table: TableInfo, _ state: WriteState
    ) throws -> Int? {
        precondition(table.listsArePacked, "Trove: a handle that writes has converted its file's lists to chunks")
        let list = table.collections[column]!
        var edited: [UInt8] = []
        let removed = try state.transaction.withCursor(on: list) { cursor in
            try soleChunkEdit(needle, owner: owner, column: column, table: table, cursor, appendingTo: &edited)
        }
        guard let removed else { return nil }
        if removed > 0 { try edited.withUnsafeBytes { try writeSoleChunk($0, owner: owner, list: list, state) } }
        return removed
    }

    /// ``removeFromSoleChunk(_:owner:column:table:_:)``'s read, through
    /// `cursor`: appends to `out` the chunk's bytes without `needle` and
    /// returns how many went (0, appending nothing, when none went or the
    /// list is empty), or nil when the list has more chunks.
    private func soleChunkEdit(
        _ needle: [UInt8], owner: UInt64, column: Int, table: TableInfo, _ cursor: Cursor,
        appendingTo out: inout [UInt8]
    ) throws -> Int? {
        guard let entry = try Database.chunkEntry(holding: 0, owner: owner, in: cursor) else { return 0 }
        guard Database.position(of: entry.key) == 0 else { return nil }
        // (Edited before the cursor moves on: an encrypted table's value lives in the cursor's buffer.)
        let chunk = try listChunk(entry, owner: owner, column: column, table: table)
        let base = out.count
        let removed = needle.withUnsafeBytes { chunk.removing($0, appendingTo: &out) }
        if let next = try cursor.next(), next.key.count == 12, Database.owner(of: next.key) == owner {
            out.removeSubrange(base...)
            return nil
        }
        return removed
    }

    /// Stores an edited sole chunk of `owner`'s list, or deletes it when it holds no element.
    private func writeSoleChunk(_ bytes: UnsafeRawBufferPointer, owner: UInt64, list: Table, _ state: WriteState) throws {
        try Database.withListKey(owner: owner, position: 0) { key in
            if bytes.count > 4 {
                _ = try state.transaction.put(list, key: key, value: bytes)
            } else {
                _ = try state.transaction.delete(list, key: key)
            }
        }
    }

    /// Removes every occurrence of `target` from the lists of `owners`
    /// (ascending), leaving its inverse-link entries to the caller (a deleted
    /// object's go in one walk): the lists of one chunk are read through one
    /// cursor walking forward, then written; longer ones read whole and written one at a time.
    func listRemoveOccurrences(of target: UInt64, owners: [UInt64], column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        precondition(table.listsArePacked, "Trove: a handle that writes has converted its file's lists to chunks")
        try state.recordWriter.encode([.int(Int64(bitPattern: target))], layout: table.elementLayouts[column]!)
        let needle = state.recordWriter.bytes
        let list = table.collections[column]!
        // The edited chunks end to end, each under its owner.
        var edited: [UInt8] = []
        var edits: [(owner: UInt64, end: Int)] = []
        edits.reserveCapacity(owners.count)
        var longer: [UInt64] = []
        // (Read first, written after: a write inside the cursor's read could grow the map under it.)
        try state.transaction.withCursor(on: list) { cursor in
            for owner in owners {
                guard
                    let removed = try soleChunkEdit(
                        needle, owner: owner, column: column, table: table, cursor, appendingTo: &edited)
                else {
                    longer.append(owner)
                    continue
                }
                if removed > 0 { edits.append((owner, edited.count)) }
            }
        }
        try edited.withUnsafeBytes { edited in
            var start = 0
            for edit in edits {
                try writeSoleChunk(
                    UnsafeRawBufferPointer(rebasing: edited[start..<edit.end]), owner: edit.owner, list: list, state)
                start = edit.end
            }
        }
        var removed = edits.count
        for owner in longer { removed += try removeFromChunks(needle, owner: owner, column: column, table: table, state) }
        if removed > 0 { generation &+= 1 }
    }

    /// The elements of `owner`'s list from the chunk holding `position` on
    /// (up to the chunk holding `last`, or to the end): the position that
    /// chunk starts at, the elements, and the starts of the chunks read.
    private func listTail(
        from position: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState, to last: Int = .max
    ) throws -> (start: Int, elements: ListElements, chunks: [Int]) {
        precondition(table.listsArePacked, "Trove: a handle that writes has converted its file's lists to chunks")
        var elements = ListElements()
        var chunks: [Int] = []
        let start = try state.transaction.withCursor(on: table.collections[column]!) { cursor -> Int in
            guard var entry = try Database.chunkEntry(holding: position, owner: owner, in: cursor) else { return 0 }
            let start = Database.position(of: entry.key)
            while true {
                chunks.append(Database.position(of: entry.key))
                elements.append(chunk: try listChunk(entry, owner: owner, column: column, table: table))
                guard start + elements.count <= last, let next = try cursor.next(), next.key.count == 12,
                    Database.owner(of: next.key) == owner
                else { break }
                entry = next
            }
            return start
        }
        return (start, elements, chunks)
    }

    /// Writes `elements` as the chunks of `owner`'s list from `start` on, in
    /// place of the chunks that started at `replaced`.
    private func writeListTail(
        _ elements: ListElements, from start: Int, replacing replaced: [Int], owner: UInt64, column: Int, table: TableInfo,
        _ state: WriteState
    ) throws {
        let list = table.collections[column]!
        let chunks = elements.chunks()
        let written = Set(chunks.map { start + $0.start })
        for old in replaced where !written.contains(old) {
            try Database.withListKey(owner: owner, position: UInt32(old)) {
                _ = try state.transaction.delete(list, key: $0)
            }
        }
        try Database.putChunks(chunks, from: start, owner: owner, in: list, state.transaction)
    }

    /// Writes chunks of `owner`'s list, each under `start` plus its own start.
    static func putChunks(
        _ chunks: [(start: Int, bytes: [UInt8])], from start: Int, owner: UInt64, in list: Table,
        _ transaction: WriteTransaction
    ) throws {
        for chunk in chunks {
            try withListKey(owner: owner, position: UInt32(start + chunk.start)) { key in
                try chunk.bytes.withUnsafeBytes { _ = try transaction.put(list, key: key, value: $0) }
            }
        }
    }

    /// Appends one encoded element: the last chunk takes it while it stays
    /// under ``ListChunk/softLimit``, else it starts a chunk of its own.
    private func appendToList(_ record: [UInt8], owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws {
        precondition(table.listsArePacked, "Trove: a handle that writes has converted its file's lists to chunks")
        let list = table.collections[column]!
        let (start, bytes) = try state.transaction.withCursor(on: list) { cursor -> (Int, [UInt8]) in
            guard let last = try Database.chunkEntry(holding: Int(UInt32.max), owner: owner, in: cursor) else {
                return (0, ListChunk.single(record))
            }
            let chunk = try listChunk(last, owner: owner, column: column, table: table)
            let start = Database.position(of: last.key)
            return last.value.count + 4 + record.count <= ListChunk.softLimit
                ? (start, chunk.appending(record)) : (start + chunk.count, ListChunk.single(record))
        }
        try Database.putChunks([(0, bytes)], from: start, owner: owner, in: list, state.transaction)
    }

    /// Refuses an element the collection cannot hold (nil in a non-optional one, a dangling object key).
    func checkElement(_ value: StoredValue, column: Int, table: TableInfo) throws {
        let property = table.schema.properties[column]
        if value.isNull, !property.isOptional {
            throw TroveError(.invalidValue, "\(table.name).\(property.name) cannot hold nil", path: path)
        }
        if property.isLink { try checkLinkTarget(value, property: property, of: table) }
    }
}
