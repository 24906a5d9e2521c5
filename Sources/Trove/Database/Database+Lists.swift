import TroveStorage

/// List storage. A list property `ChatRoom.messages` keeps a table
/// `list:ChatRoom.messages` whose keys are `owner key ‖ position` (8 + 4
/// bytes, big-endian) and whose values are one-column records. Reading an
/// element or the count is one B-tree search; appending writes one entry,
/// however long the list; inserting or removing in the middle moves the
/// elements after it.
extension Database {
    private static func listKey(owner: UInt64, position: UInt32) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: 12)
        key.withUnsafeMutableBytes {
            $0.storeBytes(of: owner.bigEndian, toByteOffset: 0, as: UInt64.self)
            $0.storeBytes(of: position.bigEndian, toByteOffset: 8, as: UInt32.self)
        }
        return key
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
        let end = Database.listKey(owner: owner, position: .max)
        return try transaction.withCursor(on: list) { cursor in
            if let exact = try end.withUnsafeBytes({ try cursor.seek(atLeast: $0) }), exact.key.count == 12,
                Database.owner(of: exact.key) == owner
            {
                return Database.position(of: exact.key) + 1
            }
            let before =
                try end.withUnsafeBytes({ try cursor.seek(atLeast: $0) }) == nil ? try cursor.last() : try cursor.previous()
            guard let before, Database.owner(of: before.key) == owner else { return 0 }
            return Database.position(of: before.key) + 1
        }
    }

    func listElement(owner: UInt64, column: Int, position: Int, table: TableInfo, _ transaction: Transaction) throws
        -> StoredValue?
    {
        guard let list = table.collections[column], let layout = table.elementLayouts[column], transaction.canSee(list) else {
            return nil
        }
        let key = Database.listKey(owner: owner, position: UInt32(position))
        return try key.withUnsafeBytes { k in
            try transaction.withValue(in: list, key: k) { $0.map { RecordReader($0, layout: layout).value(at: 0) } }
        }
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
        try transaction.withCursor(on: collection) { cursor in
            var entry = try start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, Database.owner(of: current.key) == owner {
                visit(UnsafeRawBufferPointer(rebasing: current.key.dropFirst(8)), RecordReader(current.value, layout: layout))
                entry = try cursor.next()
            }
        }
    }

    /// Empties one collection of one owner, releasing the inverse links of its objects.
    func collectionRemoveAll(owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws {
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
    func collectionRemoveOccurrences(of target: UInt64, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        let property = table.schema.properties[column]
        if property.collection == .list {
            return try listRemoveOccurrences(of: target, owner: owner, column: column, table: table, state)
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
        if removed > 0, table.refs[column] != nil {
            try adjustRef(table, column: column, target: target, source: owner, by: -removed, state.transaction)
        }
        generation &+= 1
    }

    /// Writes one element; keeps the inverse links of a list of objects in step.
    func putElement(
        _ value: StoredValue, replacing old: StoredValue?, owner: UInt64, column: Int, position: Int, table: TableInfo,
        _ state: WriteState
    ) throws {
        try putEntry(
            value, replacing: old, key: Database.listKey(owner: owner, position: UInt32(position)), owner: owner, column: column,
            table: table, state)
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

    private func deleteElement(owner: UInt64, column: Int, position: Int, table: TableInfo, _ state: WriteState) throws {
        let key = Database.listKey(owner: owner, position: UInt32(position))
        try key.withUnsafeBytes { _ = try state.transaction.delete(table.collections[column]!, key: $0) }
    }

    func listInsert(_ value: StoredValue, at position: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState)
        throws
    {
        let transaction = state.transaction
        let count = try listCount(owner: owner, column: column, table: table, transaction)
        guard count < Int(UInt32.max) else {
            throw TroveError(
                .invalidValue, "\(table.name).\(table.schema.properties[column].name) is full (\(count) elements)", path: path)
        }
        try checkElement(value, column: column, table: table)
        let layout = table.elementLayouts[column]!
        // Move the tail up by one, last first; the moved elements keep their inverse links.
        var index = count
        while index > position {
            let moved = try listElement(owner: owner, column: column, position: index - 1, table: table, transaction)!
            try state.recordWriter.encode([moved], layout: layout)
            let key = Database.listKey(owner: owner, position: UInt32(index))
            try key.withUnsafeBytes { k in
                try state.recordWriter.bytes.withUnsafeBytes {
                    _ = try transaction.put(table.collections[column]!, key: k, value: $0)
                }
            }
            index -= 1
        }
        try putElement(value, replacing: nil, owner: owner, column: column, position: position, table: table, state)
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
        var values = try listValues(owner: owner, column: column, table: table, state.transaction)
        let removed = values.remove(at: position)
        try rewriteList(values, from: position, removed: [removed], owner: owner, column: column, table: table, state)
    }

    func listMove(from source: Int, to destination: Int, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws
    {
        guard source != destination else { return }
        var values = try listValues(owner: owner, column: column, table: table, state.transaction)
        let moved = values.remove(at: source)
        values.insert(moved, at: destination)
        // Moving keeps the set of elements: inverse links do not change.
        let layout = table.elementLayouts[column]!
        for position in min(source, destination)...max(source, destination) {
            try state.recordWriter.encode([values[position]], layout: layout)
            let key = Database.listKey(owner: owner, position: UInt32(position))
            try key.withUnsafeBytes { k in
                try state.recordWriter.bytes.withUnsafeBytes {
                    _ = try state.transaction.put(table.collections[column]!, key: k, value: $0)
                }
            }
        }
        generation &+= 1
    }

    /// Removes every occurrence of an object from a list of objects (its target was deleted).
    func listRemoveOccurrences(of target: UInt64, owner: UInt64, column: Int, table: TableInfo, _ state: WriteState) throws {
        let values = try listValues(owner: owner, column: column, table: table, state.transaction)
        let needle = StoredValue.int(Int64(bitPattern: target))
        guard let first = values.firstIndex(of: needle) else { return }
        let kept = values.filter { $0 != needle }
        try rewriteList(
            kept, from: first, removed: values.filter { $0 == needle }, owner: owner, column: column, table: table, state,
            oldCount: values.count)
    }

    /// Rewrites positions `from...` of a list to hold `values[from...]` and drops the positions past its end.
    private func rewriteList(
        _ values: [StoredValue], from start: Int, removed: [StoredValue], owner: UInt64, column: Int, table: TableInfo,
        _ state: WriteState, oldCount: Int? = nil
    ) throws {
        let layout = table.elementLayouts[column]!
        let previousCount = oldCount ?? values.count + removed.count
        for position in start..<values.count {
            try state.recordWriter.encode([values[position]], layout: layout)
            let key = Database.listKey(owner: owner, position: UInt32(position))
            try key.withUnsafeBytes { k in
                try state.recordWriter.bytes.withUnsafeBytes {
                    _ = try state.transaction.put(table.collections[column]!, key: k, value: $0)
                }
            }
        }
        for position in values.count..<max(values.count, previousCount) {
            try deleteElement(owner: owner, column: column, position: position, table: table, state)
        }
        if table.refs[column] != nil {
            for case .int(let target) in removed {
                try adjustRef(table, column: column, target: UInt64(bitPattern: target), source: owner, by: -1, state.transaction)
            }
        }
        generation &+= 1
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
