import Foundation
import Trove

extension RealmCollection {
    /// The values as key-value coding reads a collection of values (Realm's
    /// `value(forKey: "self")`): each element as an object, nil as `NSNull`.
    /// A collection of values has no other key; another traps.
    ///
    /// ```swift
    /// let scores = player.scores.value(forKey: "self").map { $0 as! Int }
    /// ```
    @_disfavoredOverload
    public func value(forKey key: String) -> [AnyObject] {
        precondition(
            key == "self",
            "TroveRealm: a collection of \(Element.self) values has only the key \"self\" (NSUnknownKeyException '\(key)')")
        return map { element in
            let value = (element as? Mixed).map(\.boxedValue) ?? flattenOptional(element)
            return (value ?? NSNull()) as AnyObject
        }
    }

    /// The position of the first value an `NSPredicate` on `self` matches
    /// (`self == 7`), or nil.
    ///
    /// ```swift
    /// let position = player.scores.index(matching: NSPredicate(format: "self > 10"))
    /// ```
    @_disfavoredOverload
    public func index(matching predicate: NSPredicate) -> Int? {
        let (format, arguments) = queryParts(of: predicate)
        return valueIndex(format, arguments)
    }

    /// The position of the first value a query string on `self` matches, or nil.
    ///
    /// ```swift
    /// let position = player.scores.index(matching: "self BETWEEN {%@, %@}", 10, 20)
    /// ```
    @_disfavoredOverload
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        valueIndex(predicateFormat, args)
    }

    /// The position of the first value a typed query matches (`{ $0 > 10 }`), or nil.
    ///
    /// ```swift
    /// let position = player.scores.index(matching: { $0 == 7 })
    /// ```
    @_disfavoredOverload
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        let (format, arguments) = isIncluded(Query._constructForTesting())._constructPredicate()
        return valueIndex(format, arguments)
    }

    private func valueIndex(_ predicateFormat: String, _ args: [Any?]) -> Int? {
        do {
            return try UnmanagedMatching(Element.self, predicateFormat, args).firstIndex(in: map { $0 as Any })
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }
}
