import Trove

/// How a ``Query`` compares strings: by default case and diacritics count
/// (Realm's `StringOptions`; `[c]`, `[d]` and `[cd]` in a query string).
///
/// ```swift
/// realm.objects(Person.self).where { $0.city.equals("zurich", options: [.caseInsensitive, .diacriticInsensitive]) }
/// ```
public struct StringOptions: OptionSet, Sendable {
    /// The options as bits: 1 ignores case, 2 ignores diacritics.
    public let rawValue: Int8

    /// Options from their bits: `StringOptions(rawValue: 3)` is both.
    public init(rawValue: Int8) {
        self.rawValue = rawValue
    }

    /// "A" matches "a" (`[c]`): `$0.name.starts(with: "a", options: .caseInsensitive)`.
    public static let caseInsensitive = StringOptions(rawValue: 1)

    /// "é" matches "e" (`[d]`): `$0.city.contains("zur", options: .diacriticInsensitive)`.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryBinary {
    /// Contains a substring (`CONTAINS`): `$0.name.contains("ex", options: .caseInsensitive)`.
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, .value(value), options)
    }

    /// Contains another property of the same object: `$0.fullName.contains($0.nickname)`.
    public func contains<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.contains, column.node, options)
    }

    /// Starts with a prefix (`BEGINSWITH`; an index on the property answers it):
    /// `$0.name.starts(with: "A")`.
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, .value(value), options)
    }

    /// Starts with another property of the same object: `$0.fullName.starts(with: $0.firstName)`.
    public func starts<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.beginsWith, column.node, options)
    }

    /// Ends with a suffix (`ENDSWITH`): `$0.email.ends(with: ".org", options: .caseInsensitive)`.
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, .value(value), options)
    }

    /// Ends with another property of the same object: `$0.fullName.ends(with: $0.lastName)`.
    public func ends<U>(with column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.endsWith, column.node, options)
    }

    /// Equal to a value, with options (`==[c]`): `$0.name.equals("rex", options: .caseInsensitive)`.
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, .value(value), options)
    }

    /// Equal to another property of the same object, with options:
    /// `$0.nickname.equals($0.name, options: .caseInsensitive)`.
    public func equals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.equal, column.node, options)
    }

    /// Not equal to a value, with options (`!=[c]`): `$0.name.notEquals("rex", options: .caseInsensitive)`.
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, .value(value), options)
    }

    /// Not equal to another property of the same object, with options:
    /// `$0.nickname.notEquals($0.name, options: .caseInsensitive)`.
    public func notEquals<U>(_ column: Query<U>, options: StringOptions = []) -> Query<Bool> {
        compare(.notEqual, column.node, options)
    }
}

extension Query where T: _HasPersistedType, T.PersistedType: _QueryString {
    /// Matches a wildcard pattern (`LIKE`): `?` is one character, `*` any run:
    /// `$0.name.like("R?x*")`.
    public func like(_ value: T, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, .value(value), caseInsensitive ? .caseInsensitive : [])
    }

    /// Matches the pattern another property of the same object holds: `$0.name.like($0.pattern)`.
    public func like<U>(_ column: Query<U>, caseInsensitive: Bool = false) -> Query<Bool> {
        compare(.like, column.node, caseInsensitive ? .caseInsensitive : [])
    }
}
