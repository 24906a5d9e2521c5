import Foundation
import Trove

extension Map {
    /// The map's objects an `NSPredicate` matches, as live results of the
    /// map's value type (Realm's `Map.filter`): the values, not the keys.
    ///
    /// ```swift
    /// let ripe: Results<Fruit?> = basket.fruits.filter(NSPredicate(format: "ripe == true"))
    /// ```
    public func filter<Wrapped: Object>(_ predicate: NSPredicate) -> Results<Value> where Value == Wrapped? {
        let (format, arguments) = queryParts(of: predicate)
        return filtered(format, arguments)
    }

    /// The map's objects a query string matches, as live results of the map's value type.
    ///
    /// ```swift
    /// let ripe = basket.fruits.filter("ripe == %@", true)
    /// ```
    public func filter<Wrapped: Object>(_ predicateFormat: String, _ args: Any...) -> Results<Value>
    where Value == Wrapped? {
        filtered(predicateFormat, args)
    }

    /// The map's objects sorted by a property named in a string (Realm's `Map.sorted(byKeyPath:ascending:)`).
    ///
    /// ```swift
    /// let byName: Results<Fruit?> = basket.fruits.sorted(byKeyPath: "name")
    /// ```
    public func sorted<Wrapped: Object>(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value>
    where Value == Wrapped? {
        optionals(storedObjects("sorted(byKeyPath:ascending:)").sorted(byKeyPath: keyPath, ascending: ascending))
    }

    /// The map's objects sorted by a property (Realm's `Map.sorted(by:ascending:)`).
    ///
    /// ```swift
    /// let byName = basket.fruits.sorted(by: \.name, ascending: false)
    /// ```
    public func sorted<Wrapped: Object, T: _TroveStorable>(by keyPath: KeyPath<Wrapped, T>, ascending: Bool = true)
        -> Results<Value> where Value == Wrapped?
    {
        optionals(storedObjects("sorted(by:ascending:)").sorted(by: keyPath, ascending: ascending))
    }

    /// The map's objects sorted by several properties, most significant first.
    ///
    /// ```swift
    /// let ordered = basket.fruits.sorted(by: [SortDescriptor(keyPath: "name")])
    /// ```
    public func sorted<Wrapped: Object, S: Sequence>(by sortDescriptors: S) -> Results<Value>
    where Value == Wrapped?, S.Element == Trove.SortDescriptor {
        optionals(storedObjects("sorted(by:)").sorted(by: Array(sortDescriptors)))
    }

    /// Whether a key and its value satisfy `predicate` (Realm's `Map.contains(where:)`
    /// with the key and the value as two arguments).
    ///
    /// ```swift
    /// let hasCheap = item.prices.contains { key, price in key != "old" && price < 2 }
    /// ```
    public func contains(where predicate: (_ key: Key, _ value: Value) -> Bool) -> Bool {
        contains { entry in predicate(entry.key, entry.value) }
    }

    /// The value a key path reads: the value for its first key, and through
    /// it the rest of the path (Realm's `Map.value(forKeyPath:)`).
    ///
    /// ```swift
    /// let name = basket.fruits.value(forKeyPath: "apple.name") as? String
    /// ```
    public func value(forKeyPath keyPath: String) -> AnyObject? {
        let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
        guard let first = parts.first, let value = value(forKey: first) else { return nil }
        guard parts.count == 2 else { return value }
        guard let object = value as? Object else {
            preconditionFailure("TroveRealm: the value for '\(first)' is not an object; it has no key path '\(parts[1])'")
        }
        return object.value(forKeyPath: parts[1]).flatMap(flattenOptional).map { $0 as AnyObject }
    }

    private func filtered<Wrapped: Object>(_ predicateFormat: String, _ args: [Any?]) -> Results<Value>
    where Value == Wrapped? {
        do {
            return optionals(try storedObjects("filter").filter(predicateFormat, arguments: args))
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }

    private func storedObjects<Wrapped: Object>(_ method: String) -> Results<Wrapped> where Value == Wrapped? {
        guard let results = objectResults(Wrapped.self) else {
            preconditionFailure(
                "TroveRealm: \(method) makes Results, which only a stored Map has (as in Realm); add its owner first")
        }
        return results
    }

    private func optionals<Wrapped: Object>(_ results: Results<Wrapped>) -> Results<Value> where Value == Wrapped? {
        results.mapped({ Optional($0) }, path: { _ in nil })
    }
}
