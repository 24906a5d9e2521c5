import Foundation
import Trove

/// A condition on the objects of a collection, built in Swift and checked by
/// the compiler: Realm's typed query builder. You never create one; the
/// closure of `where` receives one for the collection's element type.
///
/// ```swift
/// let adults = realm.objects(Person.self).where { $0.age >= 18 && $0.name.starts(with: "A") }
/// let rexOwners = realm.objects(Person.self).where { $0.dogs.name == "Rex" }           // any of the dogs
/// let busy = realm.objects(Person.self).where { ($0.dogs.age > 5 && $0.dogs.isGood).count > 1 }
/// ```
///
/// Properties are reached by name (`$0.name`), through links
/// (`$0.owner.city`, optional or not) and collections (`$0.dogs.age`
/// compares each dog, as `ANY` does). The operators:
///
/// - Comparisons: `==`, `!=`, `>`, `>=`, `<`, `<=`, with a value or another
///   property of the same object (`$0.age > $0.minimumAge`).
/// - Logic: `&&`, `||` and prefix `!`. A `Bool` property is a condition by itself.
/// - Strings and data: `contains(_:options:)`, `starts(with:options:)`,
///   `ends(with:options:)`, `equals(_:options:)`, `notEquals(_:options:)`,
///   `like(_:caseInsensitive:)`, with ``StringOptions``.
/// - Sets of values: `in(_:)`, and `contains(_:)` with a range (`BETWEEN`).
/// - Collections: `count`, `contains(_:)`, `containsAny(in:)`, `min`, `max`,
///   `sum`, `avg`; maps add `keys`, `values` and `map["key"]`.
/// - Subqueries: `(condition on one collection).count`.
///
/// The closure becomes a Trove query string with `%@` arguments, so a typed
/// query uses the same indexes as the string (`Results.explain()` shows them).
/// A query Trove cannot run traps with the reason, as Realm raises.
@dynamicMemberLookup
public struct Query<T> {
    let node: QueryNode
    let names: QueryNames

    init(_ node: QueryNode, names: QueryNames) {
        self.node = node
        self.names = names
    }

    /// The query at the object a collection holds, to pass to a `where` closure.
    init(root database: Database) {
        self.init(.path(QueryPath()), names: QueryNames(database))
    }

    /// A query of another type on the same objects.
    func with<U>(_ node: QueryNode) -> Query<U> {
        Query<U>(node, names: names)
    }

    /// The key path this query stands for; misuse when it is a condition.
    var path: QueryPath {
        guard case .path(let path) = node else {
            queryMisuse("a key path such as $0.dogs.age was expected here, not a condition or a count")
        }
        return path
    }

    /// `self op rhs`, `rhs` a node.
    func compare(_ op: ComparisonOperator, _ rhs: QueryNode, _ options: StringOptions = []) -> Query<Bool> {
        // An unmanaged object is linked from nowhere, as Realm's query finds.
        if case .value(let value) = rhs, QueryNames.isUnmanagedObject(value) {
            return with(.constant(op == .notEqual))
        }
        if case .values(let values) = rhs, values.contains(where: QueryNames.isUnmanagedObject) {
            let managed = values.filter { !QueryNames.isUnmanagedObject($0) }
            return managed.isEmpty ? with(.constant(false)) : compare(op, .values(managed), options)
        }
        return with(.comparison(node, op, rhs, options))
    }

    /// The step through a property, by its key path from `Root`.
    func member<Root, V>(_ keyPath: KeyPath<Root, V>) -> Query<V> {
        let name = names.name(for: keyPath)
        let kind: QueryPropertyKind =
            V.self is any _QueryMap.Type ? .map : V.self is any _QueryCollection.Type ? .collection : .value
        return with(.path(path.appending(name, kind)))
    }

    /// A query at an object of `T` read by no Realm, to build a condition and
    /// read its ``_constructPredicate()`` (Realm's test hook).
    ///
    /// ```swift
    /// let (format, arguments) = (Query<Person>._constructForTesting().age > 18)._constructPredicate()
    /// ```
    public static func _constructForTesting() -> Query<T> {
        Query(.path(QueryPath()), names: QueryNames(nil))
    }

    /// The query string and arguments Trove runs for this query, as Realm's
    /// `_constructPredicate()` gives them (a null argument as `NSNull`); for
    /// tests and debugging.
    ///
    /// ```swift
    /// var format = ""
    /// _ = realm.objects(Person.self).where { query in
    ///     let condition = query.age > 18
    ///     format = condition._constructPredicate().0    // "(age > %@)"
    ///     return condition
    /// }
    /// ```
    public func _constructPredicate() -> (String, [Any]) {
        let (format, arguments) = predicateParts()
        return (format, arguments.map(Self.bridged))
    }

    /// An argument as Realm hands it over: nil as `NSNull`, a list of values as `[Any]`.
    private static func bridged(_ value: Any?) -> Any {
        guard let value = value.flatMap(flattenOptional) else { return NSNull() }
        if let list = value as? [Any?] { return list.map(bridged) }
        return value
    }

    /// The query string and its arguments, nil for null.
    func predicateParts() -> (String, [Any?]) {
        QueryFormat.predicate(node)
    }

    // MARK: Equality and sets of values

    /// Equal to a value (`nil` for an optional): `$0.name == "Rex"`, `$0.owner == nil`.
    public static func == (lhs: Query, rhs: T) -> Query<Bool> {
        lhs.compare(.equal, .value(QueryNames.argument(rhs)))
    }

    /// Equal to another property of the same object: `$0.nickname == $0.name`.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> {
        lhs.compare(.equal, rhs.node)
    }

    /// Not equal to a value: `$0.name != "Rex"`.
    public static func != (lhs: Query, rhs: T) -> Query<Bool> {
        lhs.compare(.notEqual, .value(QueryNames.argument(rhs)))
    }

    /// Not equal to another property of the same object: `$0.nickname != $0.name`.
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> {
        lhs.compare(.notEqual, rhs.node)
    }

    /// One of the values (`IN`): `$0.age.in([1, 2, 3])`, `$0.mood.in([.happy, .calm])`.
    public func `in`<U: Sequence>(_ collection: U) -> Query<Bool> where U.Element == T {
        compare(.in, .values(QueryNames.arguments(collection)))
    }
}

// MARK: Properties

extension Query where T: Object {
    /// A property of the object: `$0.name`, `$0.owner`, `$0.dogs`.
    public subscript<V>(dynamicMember member: KeyPath<T, V>) -> Query<V> {
        self.member(member)
    }
}

extension Query where T: OptionalProtocol, T.Wrapped: Object {
    /// A property of the object an optional link points at: `$0.owner.name`
    /// (false where the link is nil).
    public subscript<V>(dynamicMember member: KeyPath<T.Wrapped, V>) -> Query<V> {
        self.member(member)
    }
}

// MARK: Logic

extension Query where T == Bool {
    /// Both conditions hold: `$0.age > 18 && $0.isMember`.
    public static func && (lhs: Query, rhs: Query) -> Query<Bool> {
        lhs.with(.and(lhs.node, rhs.node))
    }

    /// Either condition holds: `$0.age < 12 || $0.age > 65`.
    public static func || (lhs: Query, rhs: Query) -> Query<Bool> {
        lhs.with(.or(lhs.node, rhs.node))
    }

    /// The condition does not hold: `!$0.name.contains("x")`; on a `Bool`
    /// property, `!$0.isMember` is `isMember == false`.
    public static prefix func ! (query: Query) -> Query<Bool> {
        query.with(.not(query.node))
    }
}

/// Resolves the key paths of a typed query to property names, with the
/// database whose collection is queried.
final class QueryNames {
    /// Where the names come from; without one, from the model classes alone.
    private let database: Database?

    init(_ database: Database?) {
        self.database = database
    }

    func name(for keyPath: AnyKeyPath) -> String {
        let found =
            database.map { $0.propertyName(for: keyPath) }
            ?? (type(of: keyPath).rootType as? Object.Type)?.propertyPath(of: keyPath)
        guard let name = found else {
            queryMisuse("\(keyPath) is not a persisted property; a query reads @Persisted properties")
        }
        return name
    }

    /// A value to compare with, as a query argument.
    static func argument<V>(_ value: V) -> Any? { value }

    /// Whether a query argument is an object not yet stored: it has no
    /// identity in the file, so no link holds it (a comparison with it
    /// becomes a constant condition).
    static func isUnmanagedObject(_ value: Any?) -> Bool {
        guard let object = value.flatMap({ $0 }) as? Object else { return false }
        return !object.isManaged
    }

    /// The values of a sequence, as one array argument.
    static func arguments<S: Sequence>(_ values: S) -> [Any?] {
        values.map { argument($0) }
    }
}
