import Foundation
import Trove
import TroveStorage

/// What Realm's `Results`, `List`, `MutableSet` and `LinkingObjects` share (Realm's
/// `RealmCollection`): counting, indexing, querying, sorting, aggregating
/// by property name and observing, over any of them; ``AnyRealmCollection``
/// erases which one. Each is ``Trove/ThreadConfined``: a
/// ``Trove/ThreadSafeReference`` carries it to another thread or actor.
///
/// ```swift
/// func show<C: RealmCollection>(_ photos: C) where C.Element == PhotoData {
///     print(photos.count, photos.max(ofProperty: "dateAdded") as Date?)
/// }
/// ```
public protocol RealmCollection<Element>: RandomAccessCollection, Equatable, ThreadConfined
where Element: RealmCollectionValue, Index == Int {
    /// The collection as live Trove ``Results``, in its order: a collection's
    /// objects, or results themselves (of objects or of values); nil for a
    /// list or set of values, or of objects while it is unmanaged.
    var _objectResults: Results<Element>? { get }
    /// Whether the collection can no longer be read (the object owning it was deleted).
    var isInvalidated: Bool { get }
    /// The Realm the collection reads from; nil while it is unmanaged.
    var realm: Realm? { get }
    /// Whether the collection belongs to a frozen Realm.
    var isFrozen: Bool { get }
    /// The collection as a frozen Realm holds it: the same type, read-only,
    /// fixed at the latest commit (Realm's `freeze()`).
    func freeze() -> Self
    /// A live copy of a frozen collection, or nil when its owner was deleted
    /// since (Realm's `thaw()`); a live collection returns itself.
    func thaw() -> Self?
    /// The elements of an unmanaged list or set, which aggregates read in
    /// memory (as Realm's do); nil for a stored collection.
    var _unmanagedObjects: [Element]? { get }
    /// Observes a stored collection of values (a collection of objects is
    /// observed through its ``_objectResults``).
    func _observeValues(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken
    /// The collection's values as live ``Results``: sorted when `ascending`
    /// is given, else each distinct value once; nil while it is unmanaged.
    func _valueResults(ascending: Bool?) -> Results<Element>?
}

extension RealmCollection {
    /// The Realm the collection reads from; nil while it is unmanaged.
    public var realm: Realm? { _objectResults.map { Realm($0.database) } }

    /// Whether the collection belongs to a frozen Realm.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// Whether the collection can no longer be read: false unless the type says otherwise.
    public var isInvalidated: Bool { false }

    public var _unmanagedObjects: [Element]? { nil }

    public func _valueResults(ascending: Bool?) -> Results<Element>? {
        (self as? any ValueResultsCollection)?.valueResults(ascending.map { .sorted(ascending: $0) } ?? .distinct)
            as? Results<Element>
    }

    public func _observeValues(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken {
        preconditionFailure("TroveRealm: \(Self.self) holds objects; observe it through its results")
    }

    /// The position of the first element equal to `value`, or nil.
    ///
    /// ```swift
    /// let position = person.tags.index(of: "swift")
    /// ```
    public func index(of value: Element) -> Int? {
        // A mixed value holding an object is found by the stored object, as realm-core finds it.
        if case .object(let object)? = value as? Mixed {
            return firstIndex { element in
                guard case .object(let other)? = element as? Mixed else { return false }
                return other.isSameStoredObject(as: object)
            }
        }
        return firstIndex(of: value)
    }

    /// The elements at `indexes`.
    ///
    /// ```swift
    /// let firstTwo = person.tags.objects(at: [0, 1])
    /// ```
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }

    /// Observes the collection: the initial state, then the positions that
    /// changed after each commit (Realm's `RealmCollectionChange`).
    /// Notifications come where the Realm belongs (its actor, or the main
    /// queue). With another `queue`, each arrives there asynchronously, with
    /// the collection frozen at that change: read it on the queue, and thaw
    /// it on a Realm of that queue to write. `keyPaths` names the properties
    /// of a collection of objects whose changes count as modifications.
    ///
    /// ```swift
    /// let token = dogs.observe { change in if case .update(_, _, let inserted, _) = change { print(inserted) } }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        guard let results = _objectResults else {
            let hop = deliveryQueue(queue)
            return _observeValues { change in
                deliver(RealmCollectionChange(change, hop == nil ? self : self.freeze()), on: hop, to: block)
            }
        }
        let handler = realmChangeHandler(on: queue, block)
        if let keyPaths {
            do {
                return try results.observe(properties: keyPaths, handler)
            } catch {
                realmMisuse("Cannot observe \(keyPaths)", error)
            }
        }
        return results.observe(handler)
    }

    /// Turns Trove's results changes into Realm's. With a queue other than
    /// the one the Realm belongs to, each change is handed to the queue with
    /// the collection frozen at that change (readable on any thread).
    func realmChangeHandler(
        on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> (ResultsChange<Element>) -> Void {
        let hop = deliveryQueue(queue)
        return { change in
            // The collection itself (Realm hands over `Self`), frozen for another queue.
            func shown() -> Self { hop == nil ? self : self.freeze() }
            let realmChange: RealmCollectionChange<Self>
            switch change {
            case .initial: realmChange = .initial(shown())
            case .update(_, let deletions, let insertions, let modifications):
                realmChange = .update(shown(), deletions: deletions, insertions: insertions, modifications: modifications)
            case .error(let error): realmChange = .error(error)
            }
            deliver(realmChange, on: hop, to: block)
        }
    }
}

extension RealmCollection where Element.PersistedType: MinMaxType {
    /// The smallest element (nil skipped), nil when there is none.
    ///
    /// ```swift
    /// let lowest = reading.history.min()
    /// ```
    public func min() -> Element? { StoredAggregate.extreme(self, largest: false) }

    /// The largest element (nil skipped), nil when there is none.
    ///
    /// ```swift
    /// let highest = reading.history.max()
    /// ```
    public func max() -> Element? { StoredAggregate.extreme(self, largest: true) }
}

extension RealmCollection where Element.PersistedType: AddableType {
    /// The sum of the elements (0 when empty, nil skipped).
    ///
    /// ```swift
    /// let total = receipt.amounts.sum()
    /// ```
    public func sum() -> Element { StoredAggregate.sum(self, stored: realm != nil) }

    /// The mean of the elements (nil skipped), nil when there are none.
    ///
    /// ```swift
    /// let mean: Double? = receipt.amounts.average()
    /// ```
    public func average<T: _TroveStorable & _HasPersistedType>() -> T? where T.PersistedType: AddableType {
        StoredAggregate.average(self)
    }

    /// The mean of the elements as a Double (nil skipped), nil when there are none.
    ///
    /// ```swift
    /// let mean = receipt.amounts.average()
    /// ```
    public func average() -> Double? { StoredAggregate.average(self) }
}

extension RealmCollection where Element: Object {
    /// The collection's objects as live Trove ``Results``, in its order. A
    /// list or set of an unmanaged object has none: it traps, saying so.
    ///
    /// ```swift
    /// let explained = try kennel.dogs.realmResults.explain()
    /// ```
    public var realmResults: Results<Element> {
        guard let results = _objectResults else {
            preconditionFailure("TroveRealm: the \(Self.self) of an unmanaged object cannot be queried; add its owner first")
        }
        return results
    }

    /// The value of `keyPath` in the unmanaged objects, in order, as stored values (nil skipped).
    private func unmanagedValues<V: _TroveStorable>(_ keyPath: KeyPath<Element, V>) -> [StoredValue]? {
        _unmanagedObjects?.map { $0[keyPath: keyPath]._troveStored }.filter { $0 != .null }
    }

    /// The position of `object` in the collection, or nil.
    public func index(of object: Element) -> Int? {
        firstIndex { $0.isSameStoredObject(as: object) }
    }

    /// The position of the first object a query string matches, or nil.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        if let objects = _unmanagedObjects { return unmanagedIndex(in: objects, predicateFormat, args) }
        let matching = realmQuery(predicateFormat, args)
        guard let first = matching.first else { return nil }
        return index(of: first)
    }

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
    public func min<T: _TroveStorable>(ofProperty property: String) -> T? {
        guard _unmanagedObjects == nil else {
            return ValueComparison.extreme(numbers(property), largest: false).map { T._troveFromStored($0) }
        }
        return realmResults.min(ofProperty: property)
    }

    /// The largest value of a property, or nil when there are none.
    public func max<T: _TroveStorable>(ofProperty property: String) -> T? {
        guard _unmanagedObjects == nil else {
            return ValueComparison.extreme(numbers(property), largest: true).map { T._troveFromStored($0) }
        }
        return realmResults.max(ofProperty: property)
    }

    /// The sum of a numeric property (0 when there are none).
    public func sum<T: _TroveStorable & AdditiveArithmetic>(ofProperty property: String) -> T {
        numbers(property).reduce(T.zero) { $0 + T._troveFromStored($1) }
    }

    /// The mean of a numeric property, or nil when there are none.
    public func average<T: _TroveStorable>(ofProperty property: String) -> T? {
        let values = numbers(property).compactMap(\.numeric)
        guard !values.isEmpty else { return nil }
        return T._troveFromStored(.double(values.reduce(0, +) / Double(values.count)))
    }

    /// The objects a query string matches (no `try`: a bad query traps, as in Realm).
    ///
    /// ```swift
    /// func adults<C: RealmCollection>(_ people: C) -> Results<C.Element> { people.filter("age >= %@", 18) }
    /// ```
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }

    /// The objects sorted by a property.
    ///
    /// ```swift
    /// let byAge = dogs.sorted(by: \.age, ascending: false)
    /// ```
    public func sorted<V: _TroveStorable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        realmResults.sorted(by: keyPath, ascending: ascending)
    }

    /// The objects grouped into live sections by a property, sorted by it
    /// (Realm's `sectioned(by:ascending:)`).
    ///
    /// ```swift
    /// let byAge = kennel.dogs.sectioned(by: \.age)
    /// ```
    public func sectioned<Key: _TroveStorable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        realmResults.sectioned(by: keyPath, ascending: ascending)
    }

    /// The objects sorted and grouped into live sections by the key `block`
    /// gives each (Realm's `sectioned(by:sortDescriptors:)`).
    ///
    /// ```swift
    /// let byDay = photos.sectioned(by: { Calendar.current.startOfDay(for: $0.date) },
    ///                              sortDescriptors: [SortDescriptor(keyPath: "date", ascending: false)])
    /// ```
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [Trove.SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        realmResults.sectioned(by: block, sortDescriptors: sortDescriptors)
    }

    /// The first object of each distinct combination of properties.
    ///
    /// ```swift
    /// let oneDogPerAge = dogs.distinct(by: [\.age])
    /// ```
    public func distinct(by keyPaths: [PartialKeyPath<Element>]) -> Results<Element> {
        realmResults.distinct(by: keyPaths)
    }

    /// The smallest value of a property, or nil when there are none.
    ///
    /// ```swift
    /// let youngest = dogs.min(of: \.age)
    /// ```
    public func min<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? {
        if let values = unmanagedValues(keyPath) {
            return ValueComparison.extreme(values, largest: false).map { V._troveFromStored($0) }
        }
        return realmResults.min(of: keyPath)
    }

    /// The largest value of a property, or nil when there are none.
    ///
    /// ```swift
    /// let oldest = dogs.max(of: \.age)
    /// ```
    public func max<V: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> V? {
        if let values = unmanagedValues(keyPath) {
            return ValueComparison.extreme(values, largest: true).map { V._troveFromStored($0) }
        }
        return realmResults.max(of: keyPath)
    }

    /// The sum of a numeric property (0 when there are none).
    ///
    /// ```swift
    /// let years = dogs.sum(of: \.age)
    /// ```
    public func sum<V: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Element, V>) -> V {
        if let objects = _unmanagedObjects { return objects.reduce(.zero) { $0 + $1[keyPath: keyPath] } }
        return realmResults.sum(of: keyPath)
    }

    /// The mean of a numeric property as `T` (Realm's typed `average(of:)`), or nil when there are none.
    ///
    /// ```swift
    /// let meanAge: Double? = dogs.average(of: \.age)
    /// ```
    public func average<V: _TroveStorable, T: _TroveStorable>(of keyPath: KeyPath<Element, V>) -> T? {
        if let values = unmanagedValues(keyPath) {
            let numbers = values.compactMap(\.numeric)
            return numbers.isEmpty ? nil : T._troveFromStored(.double(numbers.reduce(0, +) / Double(numbers.count)))
        }
        return realmResults.average(of: keyPath).map { T._troveFromStored(.double($0)) }
    }

    /// The sum of a numeric property as an `NSNumber` (Realm code that reads aggregates untyped).
    ///
    /// ```swift
    /// let total = dogs.sum(ofProperty: "age") as NSNumber
    /// ```
    public func sum(ofProperty property: String) -> NSNumber {
        let values = numbers(property)
        if values.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
            return NSNumber(value: values.reduce(Int64(0)) { $0 + Int64(_troveStored: $1) })
        }
        return NSNumber(value: values.compactMap(\.numeric).reduce(0, +))
    }

    /// The mean of a numeric property as an `NSNumber`, or nil when there are none.
    ///
    /// ```swift
    /// let mean = dogs.average(ofProperty: "age") as NSNumber?
    /// ```
    public func average(ofProperty property: String) -> NSNumber? {
        let values = numbers(property).compactMap(\.numeric)
        return values.isEmpty ? nil : NSNumber(value: values.reduce(0, +) / Double(values.count))
    }

    /// The smallest value of a numeric property as an `NSNumber`, or nil when there are none.
    ///
    /// ```swift
    /// let youngest = dogs.min(ofProperty: "age") as NSNumber?
    /// ```
    public func min(ofProperty property: String) -> NSNumber? { extremeNumber(property, largest: false) }

    /// The largest value of a numeric property as an `NSNumber`, or nil when there are none.
    ///
    /// ```swift
    /// let oldest = dogs.max(ofProperty: "age") as NSNumber?
    /// ```
    public func max(ofProperty property: String) -> NSNumber? { extremeNumber(property, largest: true) }

    /// The earliest value of a date property as an `NSDate`, or nil when there are none.
    ///
    /// ```swift
    /// let first = photos.min(ofProperty: "dateAdded") as NSDate?
    /// ```
    public func min(ofProperty property: String) -> NSDate? {
        (min(ofProperty: property) as Date?).map { NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate) }
    }

    /// The latest value of a date property as an `NSDate`, or nil when there are none.
    ///
    /// ```swift
    /// let last = photos.max(ofProperty: "dateAdded") as NSDate?
    /// ```
    public func max(ofProperty property: String) -> NSDate? {
        (max(ofProperty: property) as Date?).map { NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate) }
    }

    private func extremeNumber(_ property: String, largest: Bool) -> NSNumber? {
        guard let best = ValueComparison.extreme(numbers(property), largest: largest) else { return nil }
        if case .int(let v) = best { return NSNumber(value: v) }
        return best.numeric.map { NSNumber(value: $0) }
    }

    /// The values of one property of every object, in order, as an array
    /// (`[Any?]`, nil where the value is nil), as key-value coding gives it.
    ///
    /// ```swift
    /// let names = dogs.value(forKey: "name") as! [String]
    /// ```
    public func value(forKey key: String) -> Any? { map { $0.value(forKey: key) } as [Any?] }

    /// The values of one property of every object as objects (nil as
    /// `NSNull`), as Realm's `List` and `MutableSet` give them.
    ///
    /// ```swift
    /// let names: [AnyObject] = person.dogs.value(forKey: "name")
    /// ```
    @_disfavoredOverload
    public func value(forKey key: String) -> [AnyObject] { map { ($0.value(forKey: key) ?? NSNull()) as AnyObject } }

    /// The values at a key path of every object as objects (nil as `NSNull`).
    ///
    /// ```swift
    /// let owners: [AnyObject] = dogs.value(forKeyPath: "owner.name")
    /// ```
    @_disfavoredOverload
    public func value(forKeyPath keyPath: String) -> [AnyObject] {
        guard let values = value(forKeyPath: keyPath) as Any? as? [Any?] else {
            preconditionFailure("TroveRealm: \(keyPath) gives one value, not one per object; read it as Any?")
        }
        return values.map { ($0 ?? NSNull()) as AnyObject }
    }

    /// The values at a key path of every object, in order: `"owner.name"`
    /// follows the link (nil where it is nil), `"self"` is the object. A
    /// key-value coding collection operator first gives one value:
    /// `"@count"`, `"@sum.age"`, `"@avg.age"`, `"@min.age"`, `"@max.age"`
    /// (an `NSNumber`, or nil over no objects), and `"@unionOfObjects.name"`
    /// or `"@distinctUnionOfObjects.name"` (an array).
    ///
    /// ```swift
    /// let names = dogs.value(forKeyPath: "owner.name") as! [String?]
    /// let total = dogs.value(forKeyPath: "@sum.age") as! NSNumber
    /// ```
    public func value(forKeyPath keyPath: String) -> Any? {
        guard keyPath.hasPrefix("@") else { return values(atPath: keyPath) }
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        let rest = parts.count > 1 ? parts[1] : ""
        switch parts[0] {
        case "@count": return count
        case "@sum": return sum(ofProperty: rest) as NSNumber
        case "@avg": return average(ofProperty: rest) as NSNumber?
        case "@min": return min(ofProperty: rest) as NSNumber?
        case "@max": return max(ofProperty: rest) as NSNumber?
        case "@unionOfObjects": return values(atPath: rest)
        case "@distinctUnionOfObjects":
            var seen = Set<StoredValue>()
            return values(atPath: rest).filter { seen.insert(StoredValue(any: $0) ?? .null).inserted }
        default:
            realmMisuse(
                "Cannot read '\(keyPath)'",
                TroveError(
                    .invalidProperty,
                    "\(parts[0]) is not a collection operator; use @count, @sum, @avg, @min, @max, @unionOfObjects or @distinctUnionOfObjects"
                ))
        }
    }

    private func values(atPath keyPath: String) -> [Any?] {
        map { $0.value(forKeyPath: keyPath) }
    }

    /// Sets one property of every object (inside a write).
    public func setValue(_ value: Any?, forKey key: String) { forEach { $0.setValue(value, forKey: key) } }

    /// ``observe(keyPaths:on:_:)`` with the properties given as key paths
    /// (`[\.name]`, or `[\.owner?.name]` through a link).
    ///
    /// ```swift
    /// let token = dogs.observe(keyPaths: [\.age]) { change in … }
    /// ```
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        realmResults.observe(keyPaths: keyPaths, realmChangeHandler(on: queue, block))
    }

    /// The position of the first object of an unmanaged collection a query
    /// matches, read from the objects themselves (as Realm does).
    func unmanagedIndex(in objects: [Element], _ predicateFormat: String, _ args: [Any?]) -> Int? {
        do {
            return try UnmanagedMatching(Element.self, predicateFormat, args).firstIndex(in: objects)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }

    func realmQuery(_ predicateFormat: String, _ args: [Any?]) -> Results<Element> {
        do {
            return try realmResults.filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }

    func numbers(_ property: String) -> [StoredValue] {
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

extension RealmCollectionChange {
    /// A stored list's or set's change set as Realm hands it over, `collection` showing its new state.
    init(_ change: CollectionChangeSet, _ collection: @autoclosure () -> CollectionType) {
        if let error = change.error {
            self = .error(error)
        } else if change.isInitial {
            self = .initial(collection())
        } else {
            self = .update(
                collection(), deletions: change.deletions, insertions: change.insertions,
                modifications: change.modifications)
        }
    }
}

extension Results: RealmCollection where Element: RealmCollectionValue {
    /// The results themselves.
    public var _objectResults: Results<Element>? { self }

    /// The Realm the results read from.
    public var realm: Realm? { Realm(database) }

    /// Whether the Realm invalidated what it handed out since these results were made.
    public var isInvalidated: Bool { isStale }

    /// Results of values again, sorted or distinct (from the collection they come from).
    public func _valueResults(ascending: Bool?) -> Results<Element>? {
        guard let (collection, order) = valueCollection else { return nil }
        guard let ascending else { return order == .distinct ? self : collection.valueResults(.distinct) as? Results }
        return sorted(byKeyPath: "self", ascending: ascending)
    }

    /// The same query and order in a frozen Realm: the matches at the latest commit, for good.
    public func freeze() -> Results {
        if database.isFrozen { return self }
        guard let frozen = realmCopy(of: self, from: database, frozen: true, "results") else {
            realmMisuse("Cannot freeze results", TroveError(.invalidObject, "the object owning their values was deleted"))
        }
        return frozen
    }

    /// The same query and order in a live Realm of the current isolation.
    public func thaw() -> Results? {
        guard database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: false, "results")
    }
}

extension List: RealmCollection where Element: RealmCollectionValue {
    /// The list's objects, in its order, when it holds objects and is stored.
    public var _objectResults: Results<Element>? { objectResults }

    public func _observeValues(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken { observe(block) }

    public var _unmanagedObjects: [Element]? { database == nil ? Array(self) : nil }

    /// The list as its owner's frozen copy holds it; an unmanaged list traps, as in Realm.
    public func freeze() -> List {
        guard let database else {
            realmMisuse("Cannot freeze a list", TroveError(.invalidObject, "only the list of a stored object can be frozen"))
        }
        if database.isFrozen { return self }
        guard let frozen = realmCopy(of: self, from: database, frozen: true, "a list") else {
            realmMisuse("Cannot freeze a list", TroveError(.invalidObject, "the object owning it was deleted"))
        }
        return frozen
    }

    /// The list as a live copy of its owner holds it, or nil when the owner was deleted.
    public func thaw() -> List? {
        guard let database, database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: false, "a list")
    }
}

extension MutableSet: RealmCollection where Element: RealmCollectionValue {
    /// The set's objects, in its order, when it holds objects and is stored.
    public var _objectResults: Results<Element>? { objectResults }

    public func _observeValues(_ block: @escaping (CollectionChangeSet) -> Void) -> NotificationToken { observe(block) }

    public var _unmanagedObjects: [Element]? { database == nil ? Array(self) : nil }

    /// The set as its owner's frozen copy holds it; an unmanaged set traps, as in Realm.
    public func freeze() -> MutableSet {
        guard let database else {
            realmMisuse("Cannot freeze a set", TroveError(.invalidObject, "only the set of a stored object can be frozen"))
        }
        if database.isFrozen { return self }
        guard let frozen = realmCopy(of: self, from: database, frozen: true, "a set") else {
            realmMisuse("Cannot freeze a set", TroveError(.invalidObject, "the object owning it was deleted"))
        }
        return frozen
    }

    /// The set as a live copy of its owner holds it, or nil when the owner was deleted.
    public func thaw() -> MutableSet? {
        guard let database, database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: false, "a set")
    }
}

extension MutableSet where Element: Object {
    /// The values of one property of the set's objects, as a set (Realm
    /// gives an `NSSet`): each distinct value once, nil as `NSNull`.
    ///
    /// ```swift
    /// let names = pound.dogs.value(forKey: "name") as! Set<String>
    /// ```
    public func value(forKey key: String) -> Any? { distinctValues(forKey: key) }

    /// The distinct values of one property of the set's objects as objects,
    /// each once (Realm's `NSSet` as an array), nil as `NSNull`.
    ///
    /// ```swift
    /// let names: [AnyObject] = pound.dogs.value(forKey: "name")
    /// ```
    @_disfavoredOverload
    public func value(forKey key: String) -> [AnyObject] { distinctValues(forKey: key).map { $0.base as AnyObject } }

    private func distinctValues(forKey key: String) -> Set<AnyHashable> {
        Set(map { ($0.value(forKey: key) as? AnyHashable) ?? AnyHashable(NSNull()) })
    }
}

extension LinkingObjects: RealmCollection {
    /// The objects linking here; nil for an unmanaged object's.
    public var _objectResults: Results<Element>? { asResults() }

    /// Whether the Realm invalidated what it handed out since these inverse links were read.
    public var isInvalidated: Bool { asResults()?.isStale ?? false }

    /// The inverse links read in a frozen Realm.
    public func freeze() -> LinkingObjects {
        let database = realmResults.database
        if database.isFrozen { return self }
        guard let frozen = realmCopy(of: self, from: database, frozen: true, "linking objects") else {
            realmMisuse("Cannot freeze linking objects", TroveError(.invalidObject, "the object linked to was deleted"))
        }
        return frozen
    }

    /// The inverse links read in a live Realm of the current isolation.
    public func thaw() -> LinkingObjects? {
        let database = realmResults.database
        guard database.isFrozen else { return self }
        return realmCopy(of: self, from: database, frozen: false, "linking objects")
    }
}

extension RealmCollection {
    /// Objective-C's `isEqual(_:)`, which Realm collections inherit: the
    /// same collection (see the type's `==`); for results and inverse links,
    /// the same query over the same handle.
    ///
    /// ```swift
    /// kennel.dogs.isEqual(kennel.dogs)   // true
    /// ```
    public func isEqual(_ other: Any?) -> Bool {
        guard let other = other as? Self else { return false }
        if let list = self as? List<Element>, let otherList = other as? List<Element> { return list == otherList }
        if let set = self as? MutableSet<Element>, let otherSet = other as? MutableSet<Element> { return set == otherSet }
        if let mine = _objectResults, let theirs = other._objectResults {
            return mine.database === theirs.database && Array(self) == Array(other)
        }
        return Array(self) == Array(other)
    }

    /// The collection's type and elements, as Realm prints a collection.
    ///
    /// ```swift
    /// print(dogs.description)   // Results<Dog> <0x…> (\n\t[0] Dog {\n\t\tname = Rex;\n\t}\n)
    /// ```
    public var description: String {
        RealmStyleDescription.collection(
            String(String(describing: Self.self).prefix { $0 != "<" }), of: RealmStyleDescription.elementName(Element.self),
            identity: nil, count: count, elements: map { $0 as Any? }, depth: RealmStyleDescription.maxDepth)
    }
}
