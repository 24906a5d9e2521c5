/// A batch of keys that an iteration hands out one element at a time, with
/// the place where each element reads its columns (its cluster view and
/// slot). ``Database/placedBatch(of:binding:after:)`` finds all the places
/// in one pass.
///
/// The elements are made as the loop reaches them, not 64 at once: an object
/// (or a value's strings and data) the loop does not keep is freed before the
/// next one is made, so the allocator hands the same memory back (its
/// per-thread cache holds a few blocks of a size, not 64). Objects come from
/// ``PlacedObjects``, `Persistable` struct values from ``PlacedValues``.
class PlacedBatch {
    let database: Database
    /// Whether the batch is a ``PlacedObjects`` (checked per element, where a cast costs more).
    let makesObjects: Bool
    let keys: ArraySlice<UInt64>
    /// The handle's generation when the places were found: an object bound
    /// later, after a refresh or a commit, finds its place again on first read.
    let generation: UInt64
    // (An iteration's batch is used by one thread: no dynamic exclusivity checks.)
    /// The views the batch's elements read, each once per run of keys in it.
    @exclusivity(unchecked) final var views: [ClusterView] = []
    /// Per key: its view's index in `views` (-1: not stored), then its slot.
    final let places: UnsafeMutablePointer<Int32>
    /// The view and slot of the last key placed: the next batch's first
    /// key is often in the next slot.
    @exclusivity(unchecked) final var last: (view: ClusterView, slot: Int)?

    init(_ database: Database, makesObjects: Bool, keys: ArraySlice<UInt64>, generation: UInt64) {
        self.database = database
        self.makesObjects = makesObjects
        self.keys = keys
        self.generation = generation
        places = .allocate(capacity: 2 * keys.count)
        places.initialize(repeating: -1, count: 2 * keys.count)
    }

    deinit { places.deallocate() }

    /// Places the key at `position` in `slot` of `view`.
    @inline(__always)
    final func place(_ position: Int, in view: ClusterView, slot: Int) {
        if views.isEmpty || views[views.count &- 1] !== view { views.append(view) }
        places[2 &* position] = Int32(truncatingIfNeeded: views.count &- 1)
        places[2 &* position &+ 1] = Int32(truncatingIfNeeded: slot)
    }

    final func key(at position: Int) -> UInt64 { keys[keys.startIndex &+ position] }
}

/// A ``PlacedBatch`` of objects of a model class.
final class PlacedObjects: PlacedBatch {
    let binding: ObjectBinding
    /// Where ``placeObject(at:)`` leaves an object.
    private let scratch = UnsafeMutableRawPointer.allocate(
        byteCount: MemoryLayout<Object>.size, alignment: MemoryLayout<Object>.alignment)

    init(_ database: Database, _ binding: ObjectBinding, keys: ArraySlice<UInt64>, generation: UInt64) {
        self.binding = binding
        super.init(database, makesObjects: true, keys: keys, generation: generation)
    }

    deinit { scratch.deallocate() }

    /// Memory holding the object of the key at `position`, for the caller to
    /// move out (as the generic element it is): a generic cast of a returned
    /// object would copy it, a retain and a release of the original.
    @inline(__always)
    func placeObject(at position: Int) -> UnsafeMutableRawPointer {
        scratch.initializeMemory(as: Object.self, to: object(at: position))
        return scratch
    }

    /// The object of the key at `position`, bound to its place if it has one.
    @inline(__always)
    func object(at position: Int) -> Object {
        let object = binding.info.type.init()
        let index = Int(places[2 &* position])
        object.bindFresh(
            to: database, objectKey: keys[keys.startIndex &+ position], binding: binding,
            view: index >= 0 ? views[index] : nil, slot: Int(places[2 &* position &+ 1]), generation: generation)
        return object
    }
}

/// A ``PlacedBatch`` of values of a `Persistable` struct whose fields are plain (``StructFields``).
final class PlacedValues: PlacedBatch {
    let binding: ValueBinding

    init(_ database: Database, _ binding: ValueBinding, keys: ArraySlice<UInt64>, generation: UInt64) {
        self.binding = binding
        super.init(database, makesObjects: false, keys: keys, generation: generation)
    }

    /// Initializes the value of the key at `position` at `target` from its
    /// place; false (nothing initialized) when it has none, or the handle
    /// moved to another snapshot or opened a write since the places were
    /// found (the caller reads the value the usual way).
    func initializeValue(at position: Int, _ target: UnsafeMutableRawPointer) throws -> Bool {
        let index = Int(places[2 &* position])
        guard index >= 0, database.generation == generation, database.writeState == nil else { return false }
        try binding.fields.unsafelyUnwrapped.initialize(
            target, from: views[index], slot: Int(places[2 &* position &+ 1]), columns: binding.columns)
        return true
    }
}

extension PlacedBatch {
    /// Places the keys from `position` on that lie in the slots after
    /// ``last`` (the next object of a cluster is mostly in its next slot:
    /// no lookup, which costs a retain and release of the view and a
    /// search); the position of the first key that needs a lookup.
    final func placeFollowing(from position: Int) -> Int {
        guard let (view, start) = last else { return position }
        var position = position
        var slot = start
        while position < keys.count, slot &+ 1 < view.count, view.key(slot &+ 1) == keys[keys.startIndex &+ position],
            view.isLive(slot &+ 1)
        {
            slot &+= 1
            place(position, in: view, slot: slot)
            position &+= 1
        }
        last = (view, slot)
        return position
    }
}
