import TroveStorage

/// How a managed object gets what its property reads read: a record copy,
/// its slot in a cluster view of the snapshot (outside writes), or its slot
/// in a cluster of the write's cache (inside one).
extension Database {
    /// Refreshes an object's private record copy from the current snapshot.
    func loadRecord(into object: Object, table: TableInfo) {
        if object._cluster != nil, clusterPlaceIsCurrent(of: object) {
            object._recordGeneration = generation
            return
        }
        if object._view == nil, object._cluster == nil,
            recordStillCurrent(kept: object._recordGeneration, table: table, objectKey: object._objectKey)
        {
            object._recordGeneration = generation
            return
        }
        let found: Bool
        do {
            found = try !table.isRetired && keepRecord(of: object, table: table)
        } catch {
            fatalError("Trove: cannot read a \(table.name) object from \(path): \(error)")
        }
        guard found else {
            fatalError(
                "Trove: this \(table.name) object was deleted (or its add was rolled back); check `isInvalidated` before reading it"
            )
        }
    }

    /// Whether a record copy kept at generation `kept` is still the stored
    /// record: every generation since was a column write to another object
    /// (a loop that changes each object of a `Results` in turn then reads
    /// each record once, not again after every write).
    func recordStillCurrent(kept: UInt64, table: TableInfo, objectKey: UInt64) -> Bool {
        let missed = generation &- kept
        guard missed > 0, missed <= UInt64(columnWrites.count) else { return false }
        let first = columnWrites.count - Int(missed)
        // Generations only grow, so these bounds mean no other change came between.
        guard columnWrites[first].generation == kept &+ 1, columnWrites[columnWrites.count - 1].generation == generation
        else { return false }
        let id = ObjectIdentifier(table)
        if first >= columnWritesAscendFrom {
            // One table, keys ascending: look the key up by halves.
            if columnWrites[first].table != id { return true }
            var (low, high) = (first, columnWrites.count)
            while low < high {
                let middle = (low + high) / 2
                if columnWrites[middle].objectKey < objectKey { low = middle + 1 } else { high = middle }
            }
            return low == columnWrites.count || columnWrites[low].objectKey != objectKey
        }
        for index in first..<columnWrites.count where columnWrites[index].objectKey == objectKey {
            if columnWrites[index].table == id { return false }
        }
        return true
    }

    /// Gives the object what it reads from now on: its slot in the write's
    /// cache inside a write, its slot in a cluster view where the table reads
    /// in place, or a copy of its record; false when the object is not stored.
    func keepRecord(of object: Object, table: TableInfo) throws -> Bool {
        let state = writeState  // (read once: each read of it is an exclusivity check)
        if let state, table.store.clusters != nil {
            guard let (cluster, slot) = try table.store.editablePlace(of: object._objectKey, in: state.transaction)
            else { return false }
            object.keepCluster(cluster, slot: slot, serial: writeSerial, generation: generation)
            return true
        }
        if state == nil, readsInPlace(table) {
            if let known = table.store.knownPlace(of: object._objectKey, in: readTransaction()) {
                guard let (view, slot) = known else { return false }
                if view.layout === table.layout, try view.prepareForObjects() {
                    object.keepView(view, slot: slot, generation: generation)
                    return true
                }
            }
            return try table.store.withLookupCursor(in: readTransaction(), many: false) { lookups in
                try keep(object, from: &lookups, table: table)
            }
        }
        return try table.store.withRecordBytes(object._objectKey, in: readTransaction()) { bytes in
            guard let bytes else { return false }
            object.keepRecord(bytes, layout: table.layout, generation: generation)
            return true
        }
    }

    /// Whether `object`'s cluster in the write's cache still holds its slot:
    /// the write it was found in is open, the cluster is still the cache's,
    /// its slots have not moved, and the object was not deleted since.
    @inline(__always)
    func clusterPlaceIsCurrent(of object: Object) -> Bool {
        guard object._clusterSerial == writeSerial else { return false }
        unowned(unsafe) let cluster = object._cluster.unsafelyUnwrapped
        return cluster.isKept && cluster.shape == object._clusterShape && !cluster.isDeleted(object._clusterSlot)
    }

    /// Whether objects of `table` read their columns in place, from the
    /// cluster views of the handle's snapshot (``Object/keepView(_:slot:generation:)``),
    /// instead of record copies, when no write is open (a write's clusters
    /// are edited in place; the caller checks): in a map that never moves (``Environment/mapIsFixed``), in
    /// the cluster layout, and for a table that is not encrypted (its views
    /// hold opened copies, bounded by the snapshot's cache; records are smaller).
    @inline(__always)
    func readsInPlace(_ table: TableInfo) -> Bool {
        environment.mapIsFixed && table.store.clusters != nil && !table.store.table.isSealed
    }

    /// Points `object` at its slot in its cluster's view, or gives it a
    /// record when the view cannot serve it (a cluster older than a
    /// property); false when the object is not stored.
    private func keep(_ object: Object, from lookups: inout LookupCursor, table: TableInfo) throws -> Bool {
        try keepPlace(object, from: &lookups, table: table) != nil
    }

    /// ``keep(_:from:table:)``, giving the view and slot the object reads
    /// (nil when it was given a record, or is not stored).
    private func keepPlace(_ object: Object, from lookups: inout LookupCursor, table: TableInfo) throws -> (
        view: ClusterView, slot: Int
    )?? {
        guard let (view, slot) = try lookups.place(of: object._objectKey) else { return nil }
        if view.layout === table.layout, try view.prepareForObjects() {
            object.keepView(view, slot: slot, generation: generation)
            return .some((view, slot))
        }
        guard let bytes = try lookups.record(object._objectKey) else { return nil }
        object.keepRecord(bytes, layout: table.layout, generation: generation)
        return .some(nil)
    }

    /// The places of a batch of keys of `binding`'s table for objects that
    /// read their columns in place (``readsInPlace(_:)``, no write open),
    /// found in one pass, for an iteration that makes each object as the
    /// loop reaches it; nil when the objects need records (the caller makes
    /// them all now: ``loadRecords(into:table:)``). The keys that follow
    /// the `previous` batch's last one in its view take their slots without
    /// a lookup.
    func placedBatch(of keys: ArraySlice<UInt64>, binding: ObjectBinding, after previous: PlacedBatch?) -> PlacedBatch? {
        let table = binding.table
        guard !keys.isEmpty, !table.isRetired, writeState == nil, readsInPlace(table) else { return nil }
        return findPlaces(PlacedObjects(self, binding, keys: keys, generation: generation), table: table, after: previous)
    }

    /// ``placedBatch(of:binding:after:)`` for values of a `Persistable`
    /// struct whose fields are plain, each read from its place when the
    /// iteration reaches it.
    func placedBatch(of keys: ArraySlice<UInt64>, values binding: ValueBinding, after previous: PlacedBatch?)
        -> PlacedBatch?
    {
        let table = binding.table
        guard binding.fields != nil, !keys.isEmpty, !table.isRetired, writeState == nil, readsInPlace(table) else {
            return nil
        }
        return findPlaces(PlacedValues(self, binding, keys: keys, generation: generation), table: table, after: previous)
    }

    private func findPlaces(_ batch: PlacedBatch, table: TableInfo, after previous: PlacedBatch?) -> PlacedBatch? {
        let keys = batch.keys
        if let previous, previous.generation == generation { batch.last = previous.last }
        var position = batch.placeFollowing(from: 0)
        guard position < keys.count else { return batch }
        do {
            return try table.store.withLookupCursor(in: readTransaction()) { lookups in
                while position < keys.count {
                    if let (view, slot) = try lookups.place(of: keys[keys.startIndex &+ position]) {
                        // A cluster older than a property: its objects take records.
                        guard view.layout === table.layout, try view.prepareForObjects() else { return nil }
                        batch.place(position, in: view, slot: slot)
                        batch.last = (view, slot)
                    } else {
                        batch.last = nil  // not stored: the object finds that out on first read
                    }
                    position = batch.placeFollowing(from: position &+ 1)
                }
                return batch
            }
        } catch {
            fatalError("Trove: cannot read \(table.name) objects from \(path): \(error)")
        }
    }

    /// Fills the record copies of freshly materialized objects of one table
    /// in one pass (keys that follow each other are read without a new search),
    /// into one allocation they share (``RecordBatch``).
    /// Generic so that an array of a subclass is not copied into an `[Object]`.
    func loadRecords<T: Object>(into objects: [T], table: TableInfo) {
        guard !objects.isEmpty, !table.isRetired else { return }
        do {
            let state = writeState  // (read once: each read of it is an exclusivity check)
            if let state, let clusters = table.store.clusters,
                let cache = try table.store.clusterCache(state.transaction)
            {
                // A write reads its objects where its setters change them: in the clusters of its cache.
                for object in objects {
                    if let (cluster, slot) = try clusters.editablePlace(of: object._objectKey, in: state.transaction, cache) {
                        object.keepCluster(cluster, slot: slot, serial: writeSerial, generation: generation)
                    }
                }
                return
            }
            if state == nil, readsInPlace(table) {
                try table.store.withLookupCursor(in: readTransaction()) { lookups in
                    // The next object of a batch is mostly in the next slot of the view the
                    // last one read: it takes that slot without a lookup (which cost
                    // ~290 instructions an object, a retain and release of the view among them).
                    var last: (view: ClusterView, slot: Int)?
                    for object in objects {
                        if let (view, slot) = last, slot &+ 1 < view.count, view.key(slot &+ 1) == object._objectKey,
                            view.isLive(slot &+ 1)
                        {
                            object.keepView(view, slot: slot &+ 1, generation: generation)
                            last = (view, slot &+ 1)
                            continue
                        }
                        last = try keepPlace(object, from: &lookups, table: table) ?? nil
                    }
                }
                return
            }
            try table.store.withLookupCursor(in: readTransaction()) { lookups in
                var builder = RecordBatch.Builder()
                // Where each object's record lies in the batch; empty when it is not stored.
                var ranges = [Range<Int>](repeating: 0..<0, count: objects.count)
                var index = 0
                for object in objects {
                    if let bytes = try lookups.record(object._objectKey) {
                        let start = builder.append(bytes, expected: objects.count - index)
                        ranges[index] = start..<builder.count
                    }
                    index += 1
                }
                guard let batch = builder.finish() else { return }
                index = 0
                for object in objects {
                    if !ranges[index].isEmpty {
                        object.keepRecord(in: batch, at: ranges[index], layout: table.layout, generation: generation)
                    }
                    index += 1
                }
            }
        } catch {
            fatalError("Trove: cannot read \(table.name) objects from \(path): \(error)")
        }
    }
}
