import Trove

// MARK: Lists, sets and linking objects

extension Query where T: _QueryCollection, T.Element: Object {
    /// A property of the collection's objects; a comparison holds when it
    /// holds for any of them: `$0.dogs.name == "Rex"` is `ANY dogs.name == 'Rex'`.
    public subscript<V>(dynamicMember member: KeyPath<T.Element, V>) -> Query<V> {
        self.member(member)
    }
}

extension Query where T: _QueryCollection {
    /// How many elements the collection has (`@count`): `$0.dogs.count > 2`.
    public var count: Query<Int> { with(.path(path.appendingToCollection(.aggregate("@count"), "count"))) }

    /// The collection holds the element: `$0.tags.contains("swift")`, `$0.dogs.contains(rex)`.
    public func contains(_ value: T.Element) -> Query<Bool> {
        with(.comparison(.value(QueryNames.argument(value)), .in, node, []))
    }

    /// The collection holds any of the elements: `$0.tags.containsAny(in: ["swift", "lmdb"])`.
    public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Element {
        compare(.in, .values(QueryNames.arguments(collection)))
    }

    /// Some element equals the value: `$0.scores == 10` is `ANY scores == 10`.
    public static func == (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.equal, .value(QueryNames.argument(rhs)))
    }

    /// Some element differs from the value: `$0.scores != 10` is `ANY scores != 10`.
    public static func != (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        lhs.compare(.notEqual, .value(QueryNames.argument(rhs)))
    }
}

extension Query where T: _QueryCollection, T.Element: _HasPersistedType, T.Element.PersistedType: _QueryComparable {
    /// Some element is greater than the value: `$0.scores > 90`.
    public static func > (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.greater, .value(rhs)) }

    /// Some element is greater than or equal to the value: `$0.scores >= 90`.
    public static func >= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.greaterOrEqual, .value(rhs)) }

    /// Some element is less than the value: `$0.scores < 10`.
    public static func < (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.less, .value(rhs)) }

    /// Some element is less than or equal to the value: `$0.scores <= 10`.
    public static func <= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> { lhs.compare(.lessOrEqual, .value(rhs)) }
}

extension Query where T: _QueryCollection, T.Element: _HasPersistedType, T.Element.PersistedType: _QueryNumeric {
    /// The smallest element (`@min`; none when empty): `$0.scores.min >= 50`.
    public var min: Query<T.Element> { with(.path(path.appendingToCollection(.aggregate("@min"), "min"))) }

    /// The largest element (`@max`; none when empty): `$0.scores.max < 100`.
    public var max: Query<T.Element> { with(.path(path.appendingToCollection(.aggregate("@max"), "max"))) }

    /// The mean of the elements (`@avg`; none when empty): `$0.scores.avg > 75`.
    public var avg: Query<T.Element> { with(.path(path.appendingToCollection(.aggregate("@avg"), "avg"))) }

    /// The sum of the elements (`@sum`; 0 when empty): `$0.scores.sum > 200`.
    public var sum: Query<T.Element> { with(.path(path.appendingToCollection(.aggregate("@sum"), "sum"))) }
}

extension Query where T: _QueryCollection, T.Element: Comparable {
    /// Every element is within a half-open range (an empty collection is not):
    /// `$0.scores.contains(50..<100)` is `scores.@min >= 50 && scores.@max < 100`.
    public func contains(_ range: Range<T.Element>) -> Query<Bool> {
        allWithin(range.lowerBound, .less, range.upperBound)
    }

    /// Every element is within a closed range (an empty collection is not):
    /// `$0.scores.contains(50...100)`.
    public func contains(_ range: ClosedRange<T.Element>) -> Query<Bool> {
        allWithin(range.lowerBound, .lessOrEqual, range.upperBound)
    }
}

extension Query where T: _QueryCollection, T.Element: OptionalProtocol, T.Element.Wrapped: Comparable {
    /// Every element of a collection of optionals is within a half-open range: `$0.ratings.contains(1..<5)`.
    public func contains(_ range: Range<T.Element.Wrapped>) -> Query<Bool> {
        allWithin(range.lowerBound, .less, range.upperBound)
    }

    /// Every element of a collection of optionals is within a closed range: `$0.ratings.contains(1...5)`.
    public func contains(_ range: ClosedRange<T.Element.Wrapped>) -> Query<Bool> {
        allWithin(range.lowerBound, .lessOrEqual, range.upperBound)
    }
}

// MARK: Maps

extension Query where T: _QueryMap {
    /// How many entries the map has (`@count`): `$0.prices.count > 0`.
    public var count: Query<Int> { with(.path(path.appendingToCollection(.aggregate("@count"), "count"))) }

    /// Some value of the map equals `value`: `$0.prices.contains(10)`.
    public func contains(_ value: T.Value) -> Query<Bool> {
        with(.comparison(.value(QueryNames.argument(value)), .in, node, []))
    }

    /// Some value of the map is one of the values: `$0.prices.containsAny(in: [10, 20])`.
    public func containsAny<U: Sequence>(in collection: U) -> Query<Bool> where U.Element == T.Value {
        compare(.in, .values(QueryNames.arguments(collection)))
    }

    /// The map's values, each compared (`ANY map.@allValues`): `$0.prices.values > 100`.
    public var values: Query<T.Value> { with(.path(path.appendingToCollection(.mapValues, "values"))) }

    /// The value under one key (none when the key is absent): `$0.prices["eur"] > 10`.
    public subscript(key: T.Key) -> Query<T.Value> {
        guard let key = key as? String else { queryMisuse("map keys are strings") }
        return with(.path(path.appendingToCollection(.mapKey(key), "a subscript")))
    }
}

extension Query where T: _QueryMap, T.Key == String {
    /// The map's keys, each compared (`ANY map.@allKeys`): `$0.prices.keys.starts(with: "eu")`.
    public var keys: Query<String> { with(.path(path.appendingToCollection(.mapKeys, "keys"))) }
}

extension Query where T: _QueryMap, T.Value: _HasPersistedType, T.Value.PersistedType: _QueryNumeric {
    /// The smallest value of the map (`@min`): `$0.prices.min > 1`.
    public var min: Query<T.Value> { with(.path(path.appendingToCollection(.aggregate("@min"), "min"))) }

    /// The largest value of the map (`@max`): `$0.prices.max < 100`.
    public var max: Query<T.Value> { with(.path(path.appendingToCollection(.aggregate("@max"), "max"))) }

    /// The mean of the map's values (`@avg`): `$0.prices.avg > 10`.
    public var avg: Query<T.Value> { with(.path(path.appendingToCollection(.aggregate("@avg"), "avg"))) }

    /// The sum of the map's values (`@sum`): `$0.prices.sum > 100`.
    public var sum: Query<T.Value> { with(.path(path.appendingToCollection(.aggregate("@sum"), "sum"))) }
}

extension Query where T: _QueryMap, T.Value: Comparable {
    /// Every value of the map is within a half-open range: `$0.prices.contains(1..<100)`.
    public func contains(_ range: Range<T.Value>) -> Query<Bool> {
        allWithin(range.lowerBound, .less, range.upperBound)
    }

    /// Every value of the map is within a closed range: `$0.prices.contains(1...100)`.
    public func contains(_ range: ClosedRange<T.Value>) -> Query<Bool> {
        allWithin(range.lowerBound, .lessOrEqual, range.upperBound)
    }
}

extension Query where T: _QueryMap, T.Value: OptionalProtocol, T.Value.Wrapped: Comparable {
    /// Every value of a map of optionals is within a half-open range: `$0.ratings.contains(1..<5)`.
    public func contains(_ range: Range<T.Value.Wrapped>) -> Query<Bool> {
        allWithin(range.lowerBound, .less, range.upperBound)
    }

    /// Every value of a map of optionals is within a closed range: `$0.ratings.contains(1...5)`.
    public func contains(_ range: ClosedRange<T.Value.Wrapped>) -> Query<Bool> {
        allWithin(range.lowerBound, .lessOrEqual, range.upperBound)
    }
}

// MARK: Subqueries

extension Query where T == Bool {
    /// How many elements of one collection the condition holds for (`SUBQUERY`):
    /// `($0.dogs.age > 5 && $0.dogs.name.starts(with: "R")).count > 0` asks for
    /// one dog that is both, where `$0.dogs.age > 5 && $0.dogs.name.starts(with: "R")`
    /// may find the two in different dogs. Every key path of the condition goes
    /// through the same collection.
    public var count: Query<Int> { with(.subqueryCount(node)) }
}

extension Query {
    /// `@min >= lower && @max op upper`: every element of the collection (or map) is in range.
    fileprivate func allWithin(_ lower: Any, _ op: ComparisonOperator, _ upper: Any) -> Query<Bool> {
        let minimum = path.appendingToCollection(.aggregate("@min"), "contains(range)")
        let maximum = path.appendingToCollection(.aggregate("@max"), "contains(range)")
        return with(
            .and(
                .comparison(.path(minimum), .greaterOrEqual, .value(lower), []),
                .comparison(.path(maximum), op, .value(upper), [])))
    }
}
