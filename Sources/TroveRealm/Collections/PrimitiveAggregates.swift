import Foundation
import Trove

// Realm's aggregates of lists, sets and maps of numbers (`tags.max()`,
// `scores.sum()`, `prices.average()`), and of a map of objects by key path.
// They read the elements in memory, managed or not, as Realm's do for values.

/// The mean of stored numbers, nil when there are none.
private func mean<S: Sequence>(_ values: S) -> Double? where S.Element: _TroveStorable {
    let numbers = values.compactMap(\._troveStored.numeric)
    return numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
}

extension List where Element: AdditiveArithmetic {
    /// The sum of the elements (0 when empty).
    ///
    /// ```swift
    /// let total = receipt.amounts.sum()
    /// ```
    public func sum() -> Element { reduce(.zero, +) }

    /// The mean of the elements, nil when empty.
    ///
    /// ```swift
    /// let mean = receipt.amounts.average()
    /// ```
    public func average() -> Double? { mean(self) }
}

extension MutableSet where Element: AdditiveArithmetic {
    /// The sum of the elements (0 when empty).
    ///
    /// ```swift
    /// let total = player.scores.sum()
    /// ```
    public func sum() -> Element { reduce(.zero, +) }

    /// The mean of the elements, nil when empty.
    ///
    /// ```swift
    /// let mean = player.scores.average()
    /// ```
    public func average() -> Double? { mean(self) }
}

extension Map where Value: Comparable {
    /// The smallest value, nil when empty.
    ///
    /// ```swift
    /// let cheapest = item.prices.min()
    /// ```
    public func min() -> Value? { values.min() }

    /// The largest value, nil when empty.
    ///
    /// ```swift
    /// let dearest = item.prices.max()
    /// ```
    public func max() -> Value? { values.max() }
}

extension Map where Value: AdditiveArithmetic {
    /// The sum of the values (0 when empty).
    ///
    /// ```swift
    /// let total = item.prices.sum()
    /// ```
    public func sum() -> Value { values.reduce(.zero, +) }

    /// The mean of the values, nil when empty.
    ///
    /// ```swift
    /// let mean = item.prices.average()
    /// ```
    public func average() -> Double? { mean(values) }
}

extension Map {
    /// The entries as `(key, value)` pairs (Realm's `asKeyValueSequence()`).
    ///
    /// ```swift
    /// for (currency, price) in item.prices.asKeyValueSequence() { print(currency, price) }
    /// ```
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { entries() }

    /// The objects of a map of objects (nil values skipped).
    private func objects<Wrapped: Object>() -> [Wrapped] where Value == Wrapped? { values.compactMap { $0 } }

    /// The smallest value of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let youngest = kennel.dogsByTag.min(of: \.age)
    /// ```
    public func min<Wrapped: Object, V: _TroveStorable & Comparable>(of keyPath: KeyPath<Wrapped, V>) -> V?
    where Value == Wrapped? {
        objects().map { $0[keyPath: keyPath] }.min()
    }

    /// The largest value of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let oldest = kennel.dogsByTag.max(of: \.age)
    /// ```
    public func max<Wrapped: Object, V: _TroveStorable & Comparable>(of keyPath: KeyPath<Wrapped, V>) -> V?
    where Value == Wrapped? {
        objects().map { $0[keyPath: keyPath] }.max()
    }

    /// The sum of a property of the map's objects (0 when there are none).
    ///
    /// ```swift
    /// let years = kennel.dogsByTag.sum(of: \.age)
    /// ```
    public func sum<Wrapped: Object, V: _TroveStorable & AdditiveArithmetic>(of keyPath: KeyPath<Wrapped, V>) -> V
    where Value == Wrapped? {
        objects().reduce(.zero) { $0 + $1[keyPath: keyPath] }
    }

    /// The mean of a property of the map's objects, nil when there are none.
    ///
    /// ```swift
    /// let meanAge = kennel.dogsByTag.average(of: \.age)
    /// ```
    public func average<Wrapped: Object, V: _TroveStorable>(of keyPath: KeyPath<Wrapped, V>) -> Double?
    where Value == Wrapped? {
        mean(objects().map { $0[keyPath: keyPath] })
    }
}
