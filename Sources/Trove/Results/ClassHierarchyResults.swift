/// The objects of a class and of its subclasses, queried together — what
/// Realm cannot do (realm-swift #1109). Each subclass is stored as a type of
/// its own; this collection chains one ``Results`` per type, in the order the
/// types were registered, and filters each with the same predicate.
///
/// ```swift
/// class User: Object { @Persisted var name = "" }
/// final class Me: User {}
/// final class OtherUser: User {}
///
/// let everyone = db.objects(User.self, includingSubclasses: true)
/// let named = try everyone.filter("name BEGINSWITH 'A'").sorted(by: \.name)
/// ```
///
/// The subclasses found are the ones this handle knows: listed in
/// ``Configuration/objectTypes`` or used with it before.
public struct ClassHierarchyResults<Element: Object>: RandomAccessCollection {
    /// One results per stored type, the class's own first.
    public let parts: [Results<Element>]

    init(parts: [Results<Element>]) {
        self.parts = parts
    }

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }
    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of objects of every type in the hierarchy: the sum of each
    /// part's ``Results/count``.
    public var count: Int { parts.reduce(0) { $0 + $1.count } }

    /// The object at `position`, counting through the parts in order (the
    /// class's own objects first), each part counted on the way. Traps when
    /// `position` is out of range.
    public subscript(position: Int) -> Element {
        var offset = position
        for part in parts {
            let count = part.count
            if offset < count { return part[offset] }
            offset -= count
        }
        preconditionFailure("Trove: index \(position) is out of range for \(count) objects")
    }

    /// Iterates every part in turn: the class's own objects, then each subclass's.
    public func makeIterator() -> FlattenSequence<[Results<Element>]>.Iterator {
        parts.joined().makeIterator()
    }

    /// The objects of every type in the hierarchy that match a predicate on
    /// the properties they share.
    public func filter(_ predicateFormat: String, _ arguments: Any?...) throws -> ClassHierarchyResults {
        ClassHierarchyResults(parts: try parts.map { try $0.filter(predicateFormat, arguments: arguments) })
    }

    /// All the objects, sorted by a shared property (each type sorted by its
    /// store, then merged).
    public func sorted<V: _TroveStorable & Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> [Element] {
        var streams = parts.map { $0.sorted(by: keyPath, ascending: ascending).makeIterator() }
        var heads = streams.indices.map { streams[$0].next() }
        var merged: [Element] = []
        while true {
            var best: Int?
            for (index, head) in heads.enumerated() {
                guard let head else { continue }
                guard let current = best, let currentHead = heads[current] else {
                    best = index
                    continue
                }
                let (a, b) = (head[keyPath: keyPath], currentHead[keyPath: keyPath])
                if ascending ? a < b : a > b { best = index }
            }
            guard let chosen = best else { return merged }
            merged.append(heads[chosen]!)
            heads[chosen] = streams[chosen].next()
        }
    }
}

extension Database {
    /// The objects of a class and of every subclass this handle knows, queried together.
    ///
    /// ```swift
    /// let users = db.objects(User.self, includingSubclasses: true)   // Me and OtherUser too
    /// print(users.count, try users.filter("name == %@", "Bo").first?.name ?? "-")
    /// ```
    public func objects<T: Object>(_ type: T.Type, includingSubclasses: Bool) -> ClassHierarchyResults<T> {
        let own = objects(type)
        guard includingSubclasses else { return ClassHierarchyResults(parts: [own]) }
        let subclasses = objectBindings.values
            .filter { $0.info.type != type && $0.info.type is T.Type && !$0.table.isRetired }
            .sorted { $0.info.typeName < $1.info.typeName }
        let parts = subclasses.map { binding in
            Results<T>(database: self, source: .polymorphic(binding))
        }
        return ClassHierarchyResults(parts: [own] + parts)
    }
}

extension ResultsSource where Element: Object {
    /// Objects of the binding's class (a subclass of `Element`), typed as `Element`.
    static func polymorphic(_ binding: ObjectBinding) -> ResultsSource {
        made(binding, objectType: binding.info.type) { _, _ in binding }
    }

    /// The objects a collection of links holds, declared as the binding's
    /// class: each made as the class it is stored as (a subclass's objects
    /// share their hierarchy's keys).
    static func linkTargets(_ binding: ObjectBinding) -> ResultsSource {
        var source = made(binding, objectType: Element.self) { database, key in
            database.targetBinding(key, declared: binding)
        }
        source.reachesSubclasses = true
        return source
    }

    /// Objects of `binding`'s table and, when `bindingOf` says so, of its
    /// subclasses', each made as the class its binding names, typed as `Element`.
    private static func made(
        _ binding: ObjectBinding, objectType: Object.Type, bindingOf: @escaping (Database, UInt64) -> ObjectBinding
    ) -> ResultsSource {
        let make: (Database, UInt64) -> Element = { database, key in
            let own = bindingOf(database, key)
            let object = own.info.type.init()
            object.bind(to: database, objectKey: key, binding: own)
            return unsafeDowncast(object, to: Element.self)
        }
        return ResultsSource(
            table: binding.table,
            materialize: make,
            materializeBatch: { database, keys in
                var objects: [Element] = []
                objects.reserveCapacity(keys.count)
                for key in keys { objects.append(make(database, key)) }
                // (A subclass's objects read their records one at a time.)
                database.loadRecords(into: objects.filter { $0._table === binding.table }, table: binding.table)
                return objects
            },
            columnForKeyPath: { binding.column(forKeyPath: $0) }, objectType: objectType,
            pathForKeyPath: { binding.path(forKeyPath: $0) })
    }
}
