import TroveStorage

/// The objects of one type whose stored bytes would not read: what
/// ``Database/damagedObjects(ofType:)`` finds without decoding anything it
/// has not checked, so that tools can report them and read the rest.
///
/// Reading a damaged value traps in the library (a damaged file is not a
/// state an app can go on from); the `trove` tool and the studio check
/// first and leave these objects out.
package struct DamagedObjects: Sendable {
    /// A run of damaged objects: the keys of a cluster (or one object) when
    /// they still read, else the cluster's key range.
    package struct Part: Sendable {
        /// The first object key the part can hold.
        package let start: UInt64
        /// One past the last key it can hold; nil: the end of the type.
        package let limit: UInt64?
        /// The keys of its objects, when they read.
        package let keys: [UInt64]?
        /// What is wrong, in words.
        package let detail: String
    }

    package private(set) var parts: [Part] = []
    private var keys: Set<UInt64> = []
    private var ranges: [(start: UInt64, limit: UInt64?)] = []

    package init() {}

    package var isEmpty: Bool { parts.isEmpty }

    mutating func add(_ part: Part) {
        parts.append(part)
        if let keys = part.keys { self.keys.formUnion(keys) } else { ranges.append((part.start, part.limit)) }
    }

    /// Whether the object with `key` is damaged, or may be (in a cluster whose keys do not read).
    package func covers(_ key: UInt64) -> Bool {
        keys.contains(key) || ranges.contains { key >= $0.start && $0.limit.map { key < $0 } != false }
    }

    /// Each part in words: `object 12: …`, `objects 1 to 300: …`.
    package var descriptions: [String] {
        parts.map { part in
            if let keys = part.keys, keys.count == 1 { return "object \(keys[0]): \(part.detail)" }
            if let keys = part.keys, let first = keys.first, let last = keys.last {
                return "objects \(first) to \(last) (\(keys.count)): \(part.detail)"
            }
            return "objects from key \(part.start)\(part.limit.map { " below \($0)" } ?? ""): \(part.detail)"
        }
    }
}

extension Database {
    /// The objects of `typeName` whose records, clusters or collection
    /// elements are damaged, found by the checks ``verify()`` makes, without
    /// trapping and without decoding anything unchecked. Throws
    /// `TroveError.Kind.invalidModel` when the file has no such type.
    package func damagedObjects(ofType typeName: String) throws -> DamagedObjects {
        let transaction = readTransaction()
        guard let schema = try Catalog.storedSchema(typeName, in: transaction) else {
            _ = try dynamicBinding(named: typeName)  // throws, naming the type and the one meant
            return DamagedObjects()
        }
        var damage = DamagedObjects()
        guard let table = try Database.openTables(for: schema, in: transaction) else { return damage }
        try collectDamage(of: table, transaction, into: &damage)
        return damage
    }

    /// Adds the damaged objects of `table` to `damage`: records that do not
    /// pass ``RecordReader/problem(in:layout:)``, damaged clusters, and
    /// owners of collection elements that do not.
    func collectDamage(of table: TableInfo, _ transaction: Transaction, into damage: inout DamagedObjects) throws {
        let layout = table.layout
        do {
            try table.store.forEachStoredEntry(in: transaction, damaged: { damage.add($0) }) { current in
                guard current.key.count == 8 else {
                    // A key of another length: no object's, but a scan would read its record.
                    let detail = "an object key is \(current.key.count) bytes, not 8"
                    if current.key.count > 8 {
                        let key = OrderedKey.objectKey(from: UnsafeRawBufferPointer(rebasing: current.key[0..<8]))
                        damage.add(.init(start: key, limit: key &+ 1, keys: [key], detail: detail))
                    } else {
                        damage.add(.init(start: 0, limit: nil, keys: nil, detail: detail))
                    }
                    return
                }
                let key = OrderedKey.objectKey(from: current.key)
                if let problem = RecordReader.problem(in: current.value, layout: layout) {
                    damage.add(.init(start: key, limit: key &+ 1, keys: [key], detail: "the object \(problem)"))
                }
            }
        } catch let error as TroveError where error.kind == .corruptFile {
            damage.add(.init(start: 0, limit: nil, keys: nil, detail: error.message))
        }
        for (column, collection) in table.collections.sorted(by: { $0.key < $1.key }) {
            guard let elementLayout = table.elementLayouts[column] else { continue }
            let name = table.schema.properties[column].name
            var reported: UInt64?
            try transaction.withCursor(on: collection) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entry = try cursor.next()
                    guard current.key.count >= 8 else { continue }
                    let owner = UInt64(bigEndian: current.key.loadUnaligned(as: UInt64.self))
                    guard owner != reported else { continue }
                    let isList = table.schema.properties[column].collection == .list
                    let problem: String?
                    if isList && current.key.count != 12 {
                        problem = "has a key of \(current.key.count) bytes"
                    } else if isList && table.listsArePacked {
                        if let chunk = ListChunk(current.value) {
                            problem =
                                (0..<chunk.count).lazy.compactMap {
                                    RecordReader.problem(in: chunk.record(at: $0), layout: elementLayout)
                                }.first
                        } else {
                            problem = "is in a damaged chunk: it \(ListChunk.problem(in: current.value) ?? "")"
                        }
                    } else {
                        problem = RecordReader.problem(
                            in: table.elementRecord(current.value, column: column), layout: elementLayout)
                    }
                    if let problem {
                        damage.add(
                            .init(start: owner, limit: owner &+ 1, keys: [owner], detail: "an element of \(name) \(problem)"))
                        reported = owner
                    }
                }
            }
        }
    }
}

extension Results {
    /// These results without the objects `damaged` lists, so that a filter
    /// or sort after it reads only records that were checked. Throws
    /// `TroveError.Kind.corruptFile` when a damaged cluster's keys do not
    /// read (which objects to leave out is then unknown).
    package func excluding(_ damaged: DamagedObjects) throws -> Results {
        guard !damaged.isEmpty else { return self }
        if let unknown = damaged.parts.first(where: { $0.keys == nil }) {
            throw TroveError(
                .corruptFile,
                "\(table.name) \(damaged.descriptions[damaged.parts.firstIndex { $0.keys == nil }!]); which objects it held is unknown (\(unknown.detail))",
                path: database.path)
        }
        let table = self.table
        let sound: BoundPredicate = .objectKeys { transaction in
            try table.store.keys(in: transaction, from: 0, through: nil).filter { !damaged.covers($0) }
        }
        return with(predicate: predicate.map { .conjunction(sound, $0) } ?? sound, sort: sort)
    }
}

extension Results {
    /// The keys of the objects these results select, in their order, read
    /// from the file now: where it does not read, this throws
    /// `TroveError.Kind.corruptFile` (iterating the results would trap).
    package func checkedKeys() throws -> [UInt64] {
        try QueryPlanner.keys(table: table, predicate: predicate, sort: sort, limit: nil, in: database.readTransaction())
    }
}

extension Database {
    /// The stored values of one object of `typeName`, by column, or nil
    /// when it is not stored; throws `TroveError.Kind.corruptFile` where the
    /// file does not read (``DynamicObject/storedValues`` traps there). An
    /// object ``damagedObjects(ofType:)`` lists may still trap: leave those out.
    package func checkedStoredValues(ofType typeName: String, objectKey: UInt64) throws -> [StoredValue]? {
        try recordValues(objectKey, in: try tableInfo(named: typeName), readTransaction())
    }
}
