import Trove

// MARK: Ordering

extension Query where T: _HasPersistedType, T.PersistedType: _QueryComparable {
    /// Greater than a value: `$0.age > 18`, `$0.born > cutoff`, `$0.name > "M"`.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greater, .value(rhs)) }

    /// Greater than another property of the same object: `$0.age > $0.minimumAge`.
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greater, rhs.node) }

    /// Greater than or equal to a value: `$0.age >= 18`.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.greaterOrEqual, .value(rhs)) }

    /// Greater than or equal to another property: `$0.age >= $0.minimumAge`.
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.greaterOrEqual, rhs.node) }

    /// Less than a value: `$0.age < 18`.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.less, .value(rhs)) }

    /// Less than another property: `$0.age < $0.minimumAge`.
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.less, rhs.node) }

    /// Less than or equal to a value: `$0.age <= 18`.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { lhs.compare(.lessOrEqual, .value(rhs)) }

    /// Less than or equal to another property: `$0.age <= $0.minimumAge`.
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { lhs.compare(.lessOrEqual, rhs.node) }
}

extension Query where T: Comparable {
    /// Within a half-open range: `$0.age.contains(18..<65)` is `age >= 18 && age < 65`;
    /// through a collection, one element is (`$0.dogs.age.contains(1..<3)`).
    public func contains(_ range: Range<T>) -> Query<Bool> {
        with(.halfOpenRange(node, lower: range.lowerBound, upper: range.upperBound))
    }

    /// Within a closed range (`BETWEEN`): `$0.age.contains(18...65)`.
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        with(.between(node, lower: range.lowerBound, upper: range.upperBound))
    }
}

extension Query where T: OptionalProtocol, T.Wrapped: Comparable {
    /// An optional value within a half-open range (`nil` is not): `$0.rating.contains(1..<4)`.
    public func contains(_ range: Range<T.Wrapped>) -> Query<Bool> {
        with(.halfOpenRange(node, lower: range.lowerBound, upper: range.upperBound))
    }

    /// An optional value within a closed range (`nil` is not): `$0.rating.contains(1...3)`.
    public func contains(_ range: ClosedRange<T.Wrapped>) -> Query<Bool> {
        with(.between(node, lower: range.lowerBound, upper: range.upperBound))
    }
}

// MARK: Enums and custom types

extension Query where T: _HasPersistedType {
    /// The value as it is stored, to query a custom type by its persisted
    /// form: `$0.temperature.persistableValue > 20.5`.
    public var persistableValue: Query<T.PersistedType> { with(node) }
}

extension Query where T: PersistableEnum {
    /// The enum's raw value, to query what the cases do not spell:
    /// `$0.mood.rawValue.starts(with: "ha")`.
    public var rawValue: Query<T.RawValue> { with(node) }
}

extension Query where T: OptionalProtocol, T.Wrapped: PersistableEnum {
    /// An optional enum's raw value (`nil` stays `nil`): `$0.mood.rawValue > 2`.
    public var rawValue: Query<T.Wrapped.RawValue?> { with(node) }
}

// MARK: Aggregates through a collection

extension Query where T: _HasPersistedType, T.PersistedType: _QueryNumeric {
    /// The smallest value of this property among a collection's objects:
    /// `$0.dogs.age.min > 2` is `dogs.@min.age > 2`.
    public var min: Query { with(.path(path.aggregating("@min", "min"))) }

    /// The largest value of this property among a collection's objects:
    /// `$0.dogs.age.max < 10` is `dogs.@max.age < 10`.
    public var max: Query { with(.path(path.aggregating("@max", "max"))) }

    /// The mean of this property over a collection's objects:
    /// `$0.dogs.age.avg > 5` is `dogs.@avg.age > 5`.
    public var avg: Query { with(.path(path.aggregating("@avg", "avg"))) }

    /// The sum of this property over a collection's objects:
    /// `$0.dogs.age.sum >= 20` is `dogs.@sum.age >= 20`.
    public var sum: Query { with(.path(path.aggregating("@sum", "sum"))) }
}

extension Query where T == AnyRealmValue {
    /// The element at `position` of a list held in the mixed value:
    /// `$0.anyCol[0] == .int(3)` (no element there: no match).
    public subscript(position: Int) -> Query<AnyRealmValue> {
        with(.path(QueryPath(steps: path.steps + [.mixedIndex(position)])))
    }

    /// The value under `key` of a dictionary held in the mixed value:
    /// `$0.anyCol["theme"] == .string("dark")` (a missing key is nil).
    public subscript(key: String) -> Query<AnyRealmValue> {
        with(.path(QueryPath(steps: path.steps + [.mixedKey(key)])))
    }

    /// Every element of a list or value of a dictionary held in the mixed
    /// value; a comparison holds when it holds for one: `$0.anyCol.any == .int(3)`.
    public var any: Query<AnyRealmValue> {
        with(.path(QueryPath(steps: path.steps + [.mixedAny])))
    }
}
