import TroveStorage

/// The order live results of a collection's values give them.
package enum ValueOrder: Sendable, Equatable {
    /// As the collection holds them.
    case collection
    /// Sorted (nil first when ascending), equal values in collection order.
    case sorted(ascending: Bool)
    /// Each distinct value once, where it first occurs.
    case distinct

    /// The positions of `values` in this order.
    func positions(of values: [StoredValue]) -> [Int] {
        switch self {
        case .collection:
            return Array(values.indices)
        case .sorted(let ascending):
            return values.indices.sorted { a, b in
                let order = ValueComparison.sortOrder(values[a], values[b])
                if order == .orderedSame { return a < b }
                return (order == .orderedAscending) == ascending
            }
        case .distinct:
            var seen = Set<StoredValue>()
            return values.indices.filter { seen.insert(values[$0]).inserted }
        }
    }
}

/// Where live results of values come from: the list, set or map holding
/// them and the order, so they can be made again (in another order, or from
/// the same collection read by another handle).
struct ValueOrigin {
    let collection: any ValueResultsCollection
    let order: ValueOrder
    /// The collection's stored values in a snapshot, by position: what tells
    /// an observer which positions a commit changed.
    let storedValues: (Transaction) throws -> [StoredValue]
}

/// A managed ``List``, ``MutableSet`` or ``Map`` whose values can be read as
/// live ``Results`` (TroveRealm's `sorted(ascending:)` and `distinct()` on
/// collections of values).
package protocol ValueResultsCollection: AnyObject {
    /// The values as live results in `order` (a `Results` of the element,
    /// or of a map's value); nil while the collection is unmanaged, or
    /// nested in a mixed value.
    func valueResults(_ order: ValueOrder) -> Any?
}

/// The elements of a collection of values at one state of its handle, read
/// once per state for the results made of them.
private final class ValueSnapshot<Element: _TroveStorable> {
    var generation: UInt64?
    var elements: [Element] = []

    func element(at position: UInt64, _ place: CollectionPlace) -> Element {
        if generation != place.database.generation {
            let stored = place.read {
                try place.database.listValues(owner: place.key, column: place.column, table: place.table, $0)
            }
            elements = place.resolve(stored, as: Element.self)
            generation = place.database.generation
        }
        precondition(
            position < UInt64(elements.count), "Trove: \(place.name) changed while its values were read; read them again")
        return elements[Int(position)]
    }
}

extension CollectionPlace {
    /// The collection's values as live ``Results`` in `order`. An element's
    /// key is its position in the collection: the results follow it through
    /// commits, and an observer is told which positions changed.
    func valueResults<E: _TroveStorable>(_: E.Type, order: ValueOrder, of collection: any ValueResultsCollection)
        -> Results<E>
    {
        let (table, owner, column) = (self.table, key, self.column)
        let snapshot = ValueSnapshot<E>()
        let place = self
        let storedValues: @Sendable (Transaction) throws -> [StoredValue] = { transaction in
            var values: [StoredValue] = []
            try Database.forEachCollectionEntry(owner: owner, column: column, table: table, transaction) { _, element in
                values.append(element.value(at: 0))
            }
            return values
        }
        let source = ResultsSource<E>(
            table: table,
            materialize: { _, key in snapshot.element(at: key, place) },
            materializeBatch: { _, keys in keys.map { snapshot.element(at: $0, place) } },
            columnForKeyPath: { _ in nil },
            valueOrigin: ValueOrigin(collection: collection, order: order, storedValues: storedValues))
        return Results(
            database: database, source: source,
            predicate: .objectKeys { transaction in order.positions(of: try storedValues(transaction)).map { UInt64($0) } })
    }
}

extension Results {
    /// Whether these are results of a collection's values (sorted or distinct), not of objects.
    package var holdsValues: Bool { source.valueOrigin != nil }

    /// The list, set or map these results of values come from, and their order.
    package var valueCollection: (collection: any ValueResultsCollection, order: ValueOrder)? {
        source.valueOrigin.map { ($0.collection, $0.order) }
    }

    /// Traps when these are results of values: a query names properties, and values have none.
    func requireObjects(_ operation: String) {
        guard source.valueOrigin != nil else { return }
        preconditionFailure(
            "Trove: cannot \(operation) results of \(Element.self) values; a query names properties of objects. Filter or sort the values in Swift (`Array(results).filter { … }`), or sort them with sorted(byKeyPath: \"self\")"
        )
    }

    /// These values again, in `order` ("self" is the only key path values have).
    func reordered(byKeyPath keyPath: String, ascending: Bool) -> Results? {
        guard let origin = source.valueOrigin else { return nil }
        precondition(
            keyPath == "self",
            "Trove: results of \(Element.self) values sort only by \"self\", not by '\(keyPath)'")
        return origin.collection.valueResults(.sorted(ascending: ascending)) as? Results
    }
}
