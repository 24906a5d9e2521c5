import TroveStorage

/// A property an observer watches, possibly reached through links, lists of
/// links or inverse links (`dog.name`, `employees.hired`, `owners.name`):
/// one step per property name, each in the type the step before reaches.
///
/// A plain path (one property stored in the record) is compared by value; any
/// other by a fingerprint of everything it reaches, read at each commit.
struct ObservedPath {
    struct Step {
        let table: TableInfo
        let column: Int
    }

    let steps: [Step]
    /// The subclasses of the types the steps link to, whose objects the links may hold.
    var subclassTypes: Set<String> = []

    /// The types any of `paths` reads beyond its first step's record: every
    /// type a step is in or links to, except `excluded`. (A change of the
    /// first type's own objects is looked up by key.)
    static func reachedTypes(_ paths: [ObservedPath], excluding excluded: String?) -> Set<String> {
        var types = Set<String>()
        for path in paths where !path.isPlain {
            for (index, step) in path.steps.enumerated() {
                if index > 0 { types.insert(step.table.name) }
                if let target = step.table.schema.properties[step.column].objectType { types.insert(target) }
            }
            types.formUnion(path.subclassTypes)
        }
        if let excluded { types.remove(excluded) }
        return types
    }

    /// The observed type's property the path starts with.
    var column: Int { steps[0].column }

    /// One property whose value sits in the object's record.
    var isPlain: Bool { steps.count == 1 && steps[0].table.layout.inRecord[steps[0].column] }

    init(column: Int, of table: TableInfo) {
        steps = [Step(table: table, column: column)]
    }

    /// Resolves a dotted path from `table`; every name but the last must be a
    /// link, a list, set or map of links, or an inverse link.
    init(_ path: String, in table: TableInfo, database: Database) throws {
        var steps: [Step] = []
        var subclasses = Set<String>()
        var current = table
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, name) in names.enumerated() {
            guard let column = current.columnIndex[name] else { throw current.unknownProperty(name) }
            steps.append(Step(table: current, column: column))
            guard index < names.count - 1 else { break }
            let property = current.schema.properties[column]
            guard property.type == .link, let target = property.objectType else {
                throw TroveError(
                    .invalidProperty,
                    "cannot observe '\(path)': \(current.name).\(name) is \(property.typeDescription), not a link, so no property follows it"
                )
            }
            current = try database.tableInfo(named: target)
            subclasses.formUnion(try database.subclasses(of: target))
        }
        self.steps = steps
        subclassTypes = subclasses
    }
}

extension Database {
    /// Feeds what `steps` reach from the object `key` (whose record is
    /// `record`, when the caller has it) into `hasher`: a value, a
    /// collection's entries, the objects linking here, and through links, what
    /// the rest of the steps reach from each target.
    func hashPath(
        _ steps: ArraySlice<ObservedPath.Step>, key: UInt64, record: RecordReader?, into hasher: inout Hasher,
        _ transaction: Transaction
    ) throws {
        guard let step = steps.first else { return }
        let table = step.table
        let property = table.schema.properties[step.column]
        let rest = steps.dropFirst()
        var targets: [UInt64] = []
        if property.collection == .linkingObjects {
            let origin = try rest.first?.table ?? tableInfo(named: property.objectType ?? "")
            guard let originColumn = origin.columnIndex[property.originProperty ?? ""], let refs = origin.refs[originColumn]
            else { return }
            targets = try Database.sources(of: key, in: refs, transaction)
            hasher.combine(targets)
        } else if table.collections[step.column] != nil {
            let entries = try collectionEntries(owner: key, column: step.column, table: table, transaction)
            for entry in entries {
                hasher.combine(entry.key)
                hasher.combine(entry.value)
                if !rest.isEmpty, case .int(let target) = entry.value { targets.append(UInt64(bitPattern: target)) }
            }
        } else {
            let value: StoredValue
            if let record {
                value = record.value(at: step.column)
            } else {
                value = try table.store.withRecord(key, in: transaction) { $0?.value(at: step.column) } ?? .null
            }
            hasher.combine(value)
            if !rest.isEmpty, case .int(let target) = value { targets.append(UInt64(bitPattern: target)) }
        }
        guard let next = rest.first, next.table.store.isVisible(in: transaction) else { return }
        for target in targets {
            let found = try next.table.store.withRecord(target, in: transaction) { reader in
                guard let reader else { return false }
                try hashPath(rest, key: target, record: reader, into: &hasher, transaction)
                return true
            }
            // A subclass's object (a class hierarchy shares its keys): the same property in its table.
            guard !found, let holder = try linkTargetTable(target, declared: next.table, transaction), holder !== next.table,
                let column = holder.columnIndex[next.table.schema.properties[next.column].name]
            else { continue }
            var rebased = Array(rest)
            rebased[0] = ObservedPath.Step(table: holder, column: column)
            try holder.store.withRecord(target, in: transaction) { reader in
                guard let reader else { return }
                try hashPath(rebased[...], key: target, record: reader, into: &hasher, transaction)
            }
        }
    }
}
