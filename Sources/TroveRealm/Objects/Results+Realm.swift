import Foundation
import Trove
import TroveStorage

// Realm's `filter` does not throw; Trove's does. Swift cannot overload by
// `throws` alone, so these win by shape in code that imports TroveRealm:
// no argument (a non-variadic overload beats a variadic one), one argument
// of any kind, an optional included (non-variadic again), and several
// arguments (`Any...` is more specific than Trove's `Any?...`; several
// arguments that are all optionals still pick Trove's, which needs `try`). A query string that cannot be read traps with Trove's message,
// as Realm's raises.

extension Results {
    /// Realm's `filter(_:)`, without arguments.
    public func filter(_ predicateFormat: String) -> Results { realmFilter(predicateFormat, []) }

    /// Realm's `filter(_:_:)` with one argument (optionals included).
    public func filter(_ predicateFormat: String, _ first: Any?) -> Results { realmFilter(predicateFormat, [first]) }

    /// Realm's `filter(_:_:)` with any number of arguments.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results { realmFilter(predicateFormat, args) }

    private func realmFilter(_ predicateFormat: String, _ args: [Any?]) -> Results {
        do {
            return try filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }
}

extension List where Element: Object {
    /// Realm's `filter(_:)` on a list, without arguments.
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// Realm's `filter(_:_:)` on a list, with one argument (optionals included).
    public func filter(_ predicateFormat: String, _ first: Any?) -> Results<Element> {
        realmQuery(predicateFormat, [first])
    }

    /// Realm's `filter(_:_:)` on a list, with any number of arguments.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }
}

extension LinkingObjects {
    /// Realm's `filter(_:)` on inverse links, without arguments.
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// Realm's `filter(_:_:)` on inverse links, with one argument (optionals included).
    public func filter(_ predicateFormat: String, _ first: Any?) -> Results<Element> {
        realmQuery(predicateFormat, [first])
    }

    /// Realm's `filter(_:_:)` on inverse links, with any number of arguments.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }
}

extension MutableSet where Element: Object {
    /// Realm's `filter(_:)` on a set, without arguments.
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// Realm's `filter(_:_:)` on a set, with one argument (optionals included).
    public func filter(_ predicateFormat: String, _ first: Any?) -> Results<Element> {
        realmQuery(predicateFormat, [first])
    }

    /// Realm's `filter(_:_:)` on a set, with any number of arguments.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { realmQuery(predicateFormat, args) }
}

/// The query string and arguments of an `NSPredicate`; a block predicate, which has none, traps.
func queryParts(of predicate: NSPredicate) -> (String, [Any?]) {
    #if canImport(Darwin)
        let text = predicate.predicateFormat
        let arguments: [Any?] = []
    #else
        let text = predicate.predicateFormat
        let arguments: [Any?] = predicate.arguments.map { $0 is NSNull ? nil : $0 }
    #endif
    guard !text.hasPrefix("BLOCKPREDICATE") else {
        realmMisuse(
            "Cannot query with an NSPredicate", TroveError(.invalidQuery, "a block predicate has no query string to run"))
    }
    return (text, arguments)
}

extension RealmCollection where Element: Object {
    /// The objects an `NSPredicate` matches (Realm's `filter(_: NSPredicate)`):
    /// its format string runs as a query string, with its arguments (on
    /// Linux, TroveRealm's `NSPredicate` stands in for Foundation's).
    ///
    /// ```swift
    /// let all = dogs.filter(NSPredicate(value: true))
    /// ```
    public func filter(_ predicate: NSPredicate) -> Results<Element> {
        let (format, arguments) = queryParts(of: predicate)
        return realmQuery(format, arguments)
    }

    /// The position of the first object an `NSPredicate` matches, or nil.
    ///
    /// ```swift
    /// let first = dogs.index(matching: NSPredicate(value: true))
    /// ```
    public func index(matching predicate: NSPredicate) -> Int? {
        let (format, arguments) = queryParts(of: predicate)
        if let objects = _unmanagedObjects { return unmanagedIndex(in: objects, format, arguments) }
        guard let first = realmQuery(format, arguments).first else { return nil }
        return index(of: first)
    }
}
