/// Which stored object a ``List``, ``MutableSet`` or ``Map`` belongs to,
/// and its column: none while the collection is unmanaged. A collection
/// read through `@Persisted` holds its object strongly; one attached to a
/// legacy field of its object (`let tags = List<String>()`) holds it weakly,
/// since the object holds the collection, and keeps its place for when the
/// object is gone.
struct CollectionOwnership {
    private var held: Object?
    private weak var legacy: Object?
    private var legacyPlace: CollectionPlace?
    /// The row of the object whose legacy field holds the collection.
    private var legacyRow: ObjectRow?
    private(set) var column: Int

    /// An unmanaged collection's.
    init() {
        column = -1
    }

    /// The collection of `owner`'s `column`, read through `@Persisted`.
    init(owner: Object, column: Int) {
        held = owner
        self.column = column
    }

    /// The object the collection belongs to, while managed. Once the
    /// instance whose legacy field held the collection is gone, another
    /// handle on its row (the collection outlives it, as Realm's does).
    var owner: Object? {
        mutating get {
            if let owner = held ?? legacy { return owner }
            guard let row = legacyRow?.object() else { return nil }
            // Held strongly: the new instance's own fields hold other collections, so no cycle.
            held = row
            return row
        }
    }

    /// Whether the collection belongs to a stored object.
    var isManaged: Bool { held != nil || legacyPlace != nil }

    /// Where the collection lives, while managed.
    var place: CollectionPlace? { legacyPlace ?? CollectionPlace(owner: held, column: column) }

    /// Makes a collection held in a legacy field of `object` the managed one of its `column`.
    mutating func attach(to object: Object, column: Int) {
        held = nil
        legacy = object
        self.column = column
        legacyPlace = CollectionPlace(owner: object, column: column)
        legacyRow = ObjectRow(object)
    }
}
