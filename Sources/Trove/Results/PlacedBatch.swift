/// A batch of keys that an iteration hands out one object at a time, with
/// the place where each object reads its columns (its cluster view and
/// slot). ``Database/placedBatch(of:table:)`` finds all the places in one
/// pass.
///
/// The objects are made as the loop reaches them, not 64 at once: an object
/// the loop does not keep is freed before the next one is made, so the
/// allocator hands the same memory back (its per-thread cache holds a few
/// blocks of a size, not 64).
final class PlacedBatch {
    let database: Database
    let binding: ObjectBinding
    let keys: ArraySlice<UInt64>
    /// The handle's generation when the places were found: an object bound
    /// later, after a refresh or a commit, finds its place again on first read.
    let generation: UInt64
    // (An iteration's batch is used by one thread: no dynamic exclusivity checks.)
    /// The views the batch's objects read, each once per run of keys in it.
    @exclusivity(unchecked) private var views: [ClusterView] = []
    /// Per key: its view's index in `views` (-1: not stored) and its slot.
    @exclusivity(unchecked) private var viewIndexes: [Int32]
    @exclusivity(unchecked) private var slots: [Int32]

    init(_ database: Database, _ binding: ObjectBinding, keys: ArraySlice<UInt64>, generation: UInt64) {
        self.database = database
        self.binding = binding
        self.keys = keys
        self.generation = generation
        viewIndexes = Array(repeating: -1, count: keys.count)
        slots = Array(repeating: 0, count: keys.count)
    }

    /// Places the key at `position` in `slot` of `view`.
    func place(_ position: Int, in view: ClusterView, slot: Int) {
        if views.last !== view { views.append(view) }
        viewIndexes[position] = Int32(views.count &- 1)
        slots[position] = Int32(slot)
    }

    /// The object of the key at `position`, bound to its place if it has one.
    func object(at position: Int) -> Object {
        let object = binding.info.type.init()
        object.bind(to: database, objectKey: keys[keys.startIndex &+ position], binding: binding)
        let index = Int(viewIndexes[position])
        if index >= 0 { object.keepView(views[index], slot: Int(slots[position]), generation: generation) }
        return object
    }
}
