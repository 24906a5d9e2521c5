import Foundation
import TroveStorage

// Aggregates: min, max, sum and average of a property over the matches,
// read from the columns where they can be.
extension Results {
    /// ``QueryPlanner/forEachClusterColumn(table:predicate:column:in:_:)``
    /// for this query; false when the records must be read instead.
    func forEachMatchingColumn(_ column: Int, _ visit: (ClusterColumn?, UnsafeBufferPointer<Bool>) -> Void) -> Bool {
        guard table.store.clusters != nil, !table.isRetired else { return false }
        do {
            guard let matches = try clusterMatches() else { return false }
            let agrees = try matches.forEachCluster(of: table, in: database.readTransaction()) { view, flags in
                visit(try view.column(column), flags)
            }
            precondition(agrees, "Trove: the clusters of \(table.name) changed within one snapshot; this is a bug in Trove")
            return true
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    /// The cluster layout's match flags for this query in the handle's
    /// current state, found once per generation; nil when the records must be read instead.
    func clusterMatches() throws -> ClusterMatches? {
        guard table.store.clusters != nil, !table.isRetired else { return nil }
        if cache.matchesGeneration == database.generation { return cache.matches }
        let matches = try ClusterMatches.find(table: table, predicate: predicate, in: database.readTransaction())
        cache.matches = matches
        cache.matchesGeneration = database.generation
        return matches
    }

    /// Calls `visit` with the record of every match, for an aggregate of
    /// `column`. Order does not matter to an aggregate: when a count or an
    /// iteration already found the matches and they are a small part of the
    /// table, their records are read by key; otherwise in one pass.
    func forEachMatchingRecord(aggregating column: Int, _ visit: (AggregatedValue) -> Void) {
        precondition(
            table.layout.inRecord[column],
            "Trove: \(table.name).\(table.schema.properties[column].name) is a collection; aggregate its elements through the collection"
        )
        if table.isRetired { return }
        let transaction = database.readTransaction()
        do {
            if case .objectKeys(let members) = predicate {
                // A list's objects (or an earlier step's): read by key, as listed, each
                // value in place in its cluster's column when it can be.
                var keys = try members(transaction)
                guard !keys.isEmpty else { return }
                if source.reachesSubclasses {
                    keys = try visitSubclassObjects(keys, column: column, transaction, visit)
                }
                let fallback = table.layout.fallbacks[column]
                try table.store.withLookupCursor(in: transaction, stepping: false, reading: [column]) { lookups in
                    guard lookups.readsColumnsInPlace else {
                        for key in keys {
                            if let bytes = try lookups.record(key) { visit(.record(RecordReader(bytes, layout: table.layout))) }
                        }
                        return
                    }
                    for key in keys {
                        guard let (stored, slot) = try lookups.slot(of: key, column: column) else { continue }
                        visit(.slot(stored, slot, fallback: fallback))
                    }
                }
                return
            }
            // (A scan of the cluster layout reads the one column; lookups would read them all.)
            if predicate != nil, table.store.clusters == nil, cache.generation == database.generation, let keys = cache.keys,
                try keys.count * 4 <= table.store.count(in: transaction)
            {
                try QueryPlanner.forEachRecord(of: keys.array, table: table, in: transaction) { _, reader in
                    visit(.record(reader))
                    return true
                }
                return
            }
            try QueryPlanner.forEachMatch(table: table, predicate: predicate, reading: [column], in: transaction) {
                _, reader in visit(.record(reader))
            }
        } catch {
            fatalError("Trove: cannot read \(table.name) from \(database.path): \(error)")
        }
    }

    /// Visits the value of `column`'s property of each key held by a
    /// subclass's table; returns the keys of this table's own objects.
    private func visitSubclassObjects(
        _ keys: [UInt64], column: Int, _ transaction: Transaction, _ visit: (AggregatedValue) -> Void
    ) throws -> [UInt64] {
        let below = try database.subclasses(of: table.name).map { try database.tableInfo(named: $0) }
        guard !below.isEmpty else { return keys }
        let name = table.schema.properties[column].name
        var own: [UInt64] = []
        for key in keys {
            if try table.store.contains(key, in: transaction) {
                own.append(key)
                continue
            }
            for subclass in below {
                guard
                    let value = try subclass.store.withRecord(
                        key, in: transaction,
                        { reader in
                            reader.map { $0.value(at: subclass.columnIndex[name]!) }
                        })
                else { continue }
                visit(.value(value))
                break
            }
        }
        return own
    }

    /// The smallest value of a property among the matches; nil when there are none.
    public func min<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Value? {
        extreme(source.column(for: keyPath), wantLargest: false).map { Value._troveFromStored($0) }
    }

    /// The largest value of a property among the matches; nil when there are none.
    ///
    /// ```swift
    /// let nextID = (db.objects(Person.self).max(of: \.id) ?? 0) + 1
    /// ```
    public func max<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Value? {
        extreme(source.column(for: keyPath), wantLargest: true).map { Value._troveFromStored($0) }
    }

    /// The largest value of a property named as a string (Realm's `max(ofProperty:)`).
    public func max<Value: _TroveStorable>(ofProperty name: String) -> Value? {
        guard let column = table.columnIndex[name] else { return nil }
        return extreme(column, wantLargest: true).map { Value._troveFromStored($0) }
    }

    /// The smallest value of a property named as a string.
    public func min<Value: _TroveStorable>(ofProperty name: String) -> Value? {
        guard let column = table.columnIndex[name] else { return nil }
        return extreme(column, wantLargest: false).map { Value._troveFromStored($0) }
    }

    /// The sum of a numeric property over the matches (0 when there are none).
    ///
    /// ```swift
    /// let spent = try db.objects(Expense.self).filter("month == %@", 5).sum(of: \.amount)
    /// ```
    public func sum<Value: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, Value>) -> Value {
        sum(column: source.column(for: keyPath))
    }

    /// The sum of an optional numeric property over the matches, nil skipped.
    ///
    /// ```swift
    /// let rated = db.objects(Movie.self).sum(of: \.rating)   // rating: Int?
    /// ```
    public func sum<Value: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, Value?>) -> Value {
        sum(column: source.column(for: keyPath))
    }

    /// The sum of a cluster's Int column over the matches, eight slots at a
    /// time with wrapping adds, when every value is below 2^53 in size (a
    /// cluster's at most 32,767 of them cannot overflow then); nil otherwise
    /// (the caller adds them one by one, trapping on overflow).
    private static func smallSum(_ stored: ClusterColumn, _ matches: UnsafeBufferPointer<Bool>) -> Int64? {
        let base = stored.bytes.baseAddress.unsafelyUnwrapped + stored.slotOffset(0)
        let flags = UnsafeRawPointer(matches.baseAddress.unsafelyUnwrapped)
        var sums = SIMD8<Int64>(repeating: 0)
        var magnitudes = SIMD8<Int64>(repeating: 0)
        var slot = 0
        while slot + 8 <= matches.count {
            let values = (base + 8 * slot).loadUnaligned(as: SIMD8<Int64>.self)
            let selected = SIMD8<Int64>(truncatingIfNeeded: (flags + slot).loadUnaligned(as: SIMD8<UInt8>.self))
            // (0 - flag is all ones for a match, zero otherwise.)
            sums &+= values & (SIMD8<Int64>(repeating: 0) &- selected)
            magnitudes |= values ^ (values &>> 63)
            slot += 8
        }
        var sum = sums.wrappedSum()
        var magnitude = magnitudes.max()
        while slot < matches.count {
            let value = Int64(littleEndian: (base + 8 * slot).loadUnaligned(as: Int64.self))
            if matches[slot] { sum &+= value }
            magnitude |= value ^ (value >> 63)
            slot += 1
        }
        return magnitude >> 53 == 0 ? sum : nil
    }

    private func sum<Value: _TroveStorable & AdditiveArithmetic>(column: Int) -> Value {
        switch table.layout.types[column] {
        case .int:
            // Added as stored, without a value per record; overflow traps as Int's + does.
            var total: Int64 = 0
            let fallback: Int64 = if case .int(let value) = table.layout.fallbacks[column] { value } else { 0 }
            let byColumn = forEachMatchingColumn(column) { stored, matches in
                guard let stored else {
                    total += fallback * Int64(matches.count { $0 })
                    return
                }
                if stored.type == .int, !stored.hasNulls, let partial = Self.smallSum(stored, matches) {
                    total += partial
                    return
                }
                for slot in matches.indices where matches[slot] { total += stored.int(slot) ?? 0 }
            }
            if !byColumn { forEachMatchingRecord(aggregating: column) { reader in total += reader.int(at: column) ?? 0 } }
            return Value._troveFromStored(.int(total))
        case .double:
            var total = 0.0
            let fallback: Double = if case .double(let value) = table.layout.fallbacks[column] { value } else { 0 }
            let byColumn = forEachMatchingColumn(column) { stored, matches in
                // (Added one by one, in the order a record scan adds them.)
                for slot in matches.indices where matches[slot] { total += stored.map { $0.double(slot) ?? 0 } ?? fallback }
            }
            if byColumn { return Value._troveFromStored(.double(total)) }
            forEachMatchingRecord(aggregating: column) { reader in
                if case .double(let value) = reader.value(at: column) { total += value }
            }
            return Value._troveFromStored(.double(total))
        default:
            var total = Value.zero
            forEachMatchingRecord(aggregating: column) { reader in
                let value = reader.value(at: column)
                if !value.isNull { total += Value._troveFromStored(value) }
            }
            return total
        }
    }

    /// The mean of a numeric property over the matches; nil when there are none.
    public func average<Value: _TroveStorable>(of keyPath: KeyPath<Element, Value>) -> Double? {
        let column = source.column(for: keyPath)
        var total = 0.0
        var count = 0
        forEachMatchingRecord(aggregating: column) { reader in
            guard let number = reader.value(at: column).numeric else { return }
            total += number
            count += 1
        }
        return count == 0 ? nil : total / Double(count)
    }

    private func extreme(_ column: Int, wantLargest: Bool) -> StoredValue? {
        var best: StoredValue?
        forEachMatchingRecord(aggregating: column) { reader in
            let value = reader.value(at: column)
            if value.isNull { return }
            guard let current = best else {
                best = value
                return
            }
            let order = ValueComparison.order(value, current)
            if order == (wantLargest ? .orderedDescending : .orderedAscending) { best = value }
        }
        return best
    }
}
