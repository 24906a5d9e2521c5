import Foundation
import Trove

/// Any ``RealmCollection`` of `Element`, its type erased (Realm's `AnyRealmCollection`).
///
/// ```swift
/// let items = AnyRealmCollection(room.messages)   // or of realm.objects(ChatMessage.self)
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    /// The collection wrapped.
    private let base: any RealmCollection<Element>

    /// Wraps any Realm collection (an unmanaged list or set too).
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        self.base = base
    }

    /// The objects, as live results; nil for values.
    public var _objectResults: Results<Element>? { base._objectResults }

    /// The Realm of the wrapped collection.
    public var realm: Realm? { base.realm }

    /// Whether the wrapped collection belongs to a frozen Realm.
    public var isFrozen: Bool { base.isFrozen }

    public func _observeValues(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        base._observeValues(block)
    }

    /// Whether the wrapped collection can no longer be read.
    public var isInvalidated: Bool { base.isInvalidated }

    public var _unmanagedObjects: [Element]? { base._unmanagedObjects }

    public func _valueResults(ascending: Bool?) -> Results<Element>? { base._valueResults(ascending: ascending) }

    /// Iterates a snapshot of the objects taken when the loop starts, so
    /// deleting them inside the loop neither skips nor repeats any.
    ///
    /// ```swift
    /// try realm.write { for dog in AnyRealmCollection(kennel.dogs) { realm.delete(dog) } }
    /// ```
    public func makeIterator() -> IndexingIterator<[Element]> { Array(base).makeIterator() }

    /// Equal when they wrap the same collection (see each type's `==`).
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool {
        lhs.base.isEqual(rhs.base)
    }

    /// The wrapped collection frozen, wrapped again.
    public func freeze() -> AnyRealmCollection { AnyRealmCollection.frozen(base) }

    /// The wrapped collection thawed, wrapped again.
    public func thaw() -> AnyRealmCollection? { AnyRealmCollection.thawed(base) }

    /// What a ``Trove/ThreadSafeReference`` keeps: the wrapped collection's.
    public var _threadSafeHandover: _ThreadSafeHandover { base._threadSafeHandover }

    /// The wrapped collection read by `database`, wrapped again (linking
    /// objects made from results come back as those results); nil once the
    /// object owning it is deleted.
    public static func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> AnyRealmCollection? {
        if let objectType = Element.self as? Object.Type {
            return objectType.anyRealmCollection(handover, in: database) as? AnyRealmCollection
        }
        if let list = List<Element>._resolve(handover, in: database) { return AnyRealmCollection(list) }
        return MutableSet<Element>._resolve(handover, in: database).map { AnyRealmCollection($0) }
    }

    private static func frozen(_ base: some RealmCollection<Element>) -> AnyRealmCollection {
        AnyRealmCollection(base.freeze())
    }

    private static func thawed(_ base: some RealmCollection<Element>) -> AnyRealmCollection? {
        base.thaw().map { AnyRealmCollection($0) }
    }

    /// The first position (0).
    public var startIndex: Int { 0 }
    /// One past the last position.
    public var endIndex: Int { base.count }
    /// The object at `position`.
    public subscript(position: Int) -> Element { base[position] }

}

extension AnyRealmCollection where Element: Object {
    /// The objects a query string matches (no `try`: a bad query traps, as in Realm).
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// The objects a query string with arguments matches (no `try`).
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }

    /// The results, list, set or inverse links a handover describes, wrapped.
    static func resolveObjects(_ handover: _ThreadSafeHandover, in database: Database) -> AnyRealmCollection? {
        if let results = Results<Element>._resolve(handover, in: database) { return AnyRealmCollection(results) }
        if let list = List<Element>._resolve(handover, in: database) { return AnyRealmCollection(list) }
        if let set = MutableSet<Element>._resolve(handover, in: database) { return AnyRealmCollection(set) }
        return LinkingObjects<Element>._resolve(handover, in: database).map { AnyRealmCollection($0) }
    }
}

extension Object {
    /// The collection of objects of this class (`Self`, the class it is called on) a handover describes, wrapped.
    fileprivate static func anyRealmCollection(_ handover: _ThreadSafeHandover, in database: Database) -> Any? {
        AnyRealmCollection<Self>.resolveObjects(handover, in: database)
    }
}
