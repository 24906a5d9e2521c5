/// Results frozen at one moment: an immutable, `Sendable` collection of
/// ``Frozen`` objects, in the order the results had.
///
/// ```swift
/// let snapshot = db.objects(PhotoData.self).sorted(by: \.dateAdded).freeze()
/// Task.detached { for photo in snapshot { print(photo.memo) } }
/// ```
public struct FrozenResults<Element: Object>: RandomAccessCollection, Sendable {
    let store: FrozenStore
    let keys: [UInt64]

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: the number of objects frozen.
    public var endIndex: Int { keys.count }

    /// The object at `position`, frozen in the results' snapshot. Traps when
    /// `position` is out of range.
    public subscript(position: Int) -> Frozen<Element> {
        let key = keys[position]
        return store.read { database in
            guard let object = database.object(Element.self, objectKey: key) else {
                preconditionFailure("Trove: a frozen snapshot lost an object; this is a bug in Trove")
            }
            return Frozen(store: store, object: object)
        }
    }
}

extension Results where Element: Object {
    /// These results at the file's latest committed state, immutable and
    /// `Sendable` (see ``Frozen``): the same query and order, run once in a
    /// snapshot that later writes do not change.
    @_disfavoredOverload
    public func freeze() -> FrozenResults<Element> {
        precondition(
            !database.isInWriteTransaction,
            "Trove: freeze() inside a write sees uncommitted changes; freeze after the write commits")
        do {
            let store = try FrozenStore(configuration: database.configuration)
            let (table, predicate, sort) = (self.table, self.predicate, self.sort)
            let keys = try store.read { frozen in
                try QueryPlanner.keys(table: table, predicate: predicate, sort: sort, in: frozen.readTransaction())
            }
            return FrozenResults(store: store, keys: keys)
        } catch {
            fatalError("Trove: cannot open a snapshot of \(database.path) to freeze results: \(error)")
        }
    }
}
