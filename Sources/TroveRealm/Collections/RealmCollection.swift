import Foundation
import Trove
import TroveStorage

/// What Realm's `Results`, `List`, `MutableSet` and `LinkingObjects` share (Realm's
/// `RealmCollection`): counting, indexing, querying, sorting, aggregating
/// by property name and observing, over any of them; ``AnyRealmCollection``
/// erases which one.
///
/// ```swift
/// func show<C: RealmCollection>(_ photos: C) where C.Element == PhotoData {
///     print(photos.count, photos.max(ofProperty: "dateAdded") as Date?)
/// }
/// ```
public protocol RealmCollection<Element>: RandomAccessCollection where Element: Object, Index == Int {
    /// The collection's objects as live Trove ``Results``, in its order.
    var realmResults: Results<Element> { get }
}

extension RealmCollection {
    /// The Realm the collection reads from.
    public var realm: Realm? { Realm(realmResults.database) }

    /// Whether the collection can no longer be read (its owner was deleted).
    public var isInvalidated: Bool { false }

    /// The position of `object` in the collection, or nil.
    public func index(of object: Element) -> Int? {
        firstIndex { $0 === object || ($0.isManaged && $0 == object) }
    }

    /// The position of the first object a query string matches, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        let matching = realmQuery(predicateFormat, args)
        guard let first = matching.first else { return nil }
        return index(of: first)
    }

    /// The objects at `indexes`.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }

    /// The objects sorted by a property named in a string.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        realmResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The objects sorted by several properties.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == Trove.SortDescriptor {
        realmResults.sorted(by: Array(sortDescriptors))
    }

    /// The first object of each distinct combination of the named properties.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        realmResults.distinct(by: Array(keyPaths))
    }

    /// The smallest value of a property, or nil when there are none.
    public func min<T: _TroveStorable>(ofProperty property: String) -> T? { realmResults.min(ofProperty: property) }

    /// The largest value of a property, or nil when there are none.
    public func max<T: _TroveStorable>(ofProperty property: String) -> T? { realmResults.max(ofProperty: property) }

    /// The sum of a numeric property (0 when there are none).
    public func sum<T: _TroveStorable & AdditiveArithmetic>(ofProperty property: String) -> T {
        numbers(property).reduce(T.zero) { $0 + T(_troveStored: $1) }
    }

    /// The mean of a numeric property, or nil when there are none.
    public func average<T: _TroveStorable>(ofProperty property: String) -> T? {
        let values = numbers(property).compactMap(\.numeric)
        guard !values.isEmpty else { return nil }
        return T(_troveStored: .double(values.reduce(0, +) / Double(values.count)))
    }

    /// The values of one property of every object, in order.
    public func value(forKey key: String) -> [Any?] { map { $0.value(forKey: key) } }

    /// Sets one property of every object (inside a write).
    public func setValue(_ value: Any?, forKey key: String) { forEach { $0.setValue(value, forKey: key) } }

    /// Observes the collection: the initial state, then the positions that
    /// changed after each commit (Realm's `RealmCollectionChange`).
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<AnyRealmCollection<Element>>) -> Void
    ) -> NotificationToken {
        let handler: (ResultsChange<Element>) -> Void = { change in
            switch change {
            case .initial(let results): block(.initial(AnyRealmCollection(results)))
            case .update(let results, let deletions, let insertions, let modifications):
                block(
                    .update(
                        AnyRealmCollection(results), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
        if let keyPaths {
            do {
                return try realmResults.observe(properties: keyPaths, handler)
            } catch {
                realmMisuse("Cannot observe \(keyPaths)", error)
            }
        }
        return realmResults.observe(handler)
    }

    func realmQuery(_ predicateFormat: String, _ args: [Any?]) -> Results<Element> {
        do {
            return try realmResults.filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }

    private func numbers(_ property: String) -> [StoredValue] {
        compactMap { StoredValue(any: $0.value(forKey: property)) }.filter { $0 != .null }
    }
}

/// What an observer of a ``RealmCollection`` receives (Realm's `RealmCollectionChange`).
public enum RealmCollectionChange<CollectionType> {
    /// The collection when observation starts.
    case initial(CollectionType)
    /// The collection after a commit, with the positions deleted (in the
    /// previous state), inserted and modified (in the new state).
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// The collection can no longer be read.
    case error(any Swift.Error)
}

/// Any ``RealmCollection`` of `Element`, its type erased (Realm's `AnyRealmCollection`).
///
/// ```swift
/// let items = AnyRealmCollection(room.messages)   // or of realm.objects(ChatMessage.self)
/// ```
public struct AnyRealmCollection<Element: Object>: RealmCollection {
    /// The objects, as live results.
    public let realmResults: Results<Element>

    /// Wraps any Realm collection.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        realmResults = base.realmResults
    }

    /// The first position (0).
    public var startIndex: Int { 0 }
    /// One past the last position.
    public var endIndex: Int { realmResults.count }
    /// The object at `position`.
    public subscript(position: Int) -> Element { realmResults[position] }

    /// The objects a query string matches (no `try`: a bad query traps, as in Realm).
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// The objects a query string with arguments matches (no `try`).
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }
}

extension Results: RealmCollection where Element: Object {
    /// The results themselves.
    public var realmResults: Results<Element> { self }
}

extension List: RealmCollection where Element: Object {
    /// The list's objects, in list order.
    public var realmResults: Results<Element> { results() }
}

extension MutableSet: RealmCollection where Element: Object {
    /// The set's objects, in the set's order.
    public var realmResults: Results<Element> { results() }
}

extension LinkingObjects: RealmCollection {
    /// The objects linking here.
    public var realmResults: Results<Element> {
        guard let results = asResults() else {
            preconditionFailure("TroveRealm: the inverse links of an unmanaged object cannot be queried; add it first")
        }
        return results
    }
}
