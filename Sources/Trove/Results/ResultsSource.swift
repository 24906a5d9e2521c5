import Foundation
import TroveStorage

/// How a ``Results`` turns object keys into elements and key paths into
/// columns: objects for ``Object`` classes, values for ``Persistable`` structs.
struct ResultsSource<Element> {
    let table: TableInfo
    let materialize: (Database, UInt64) -> Element
    let materializeBatch: (Database, ArraySlice<UInt64>) -> [Element]
    let columnForKeyPath: (AnyKeyPath) -> Int?
    /// The class of the objects a source of objects makes (`Element` or,
    /// for a class hierarchy, a subclass): what another handle needs to
    /// bind the same source (see ``ThreadSafeReference``). nil for values.
    var objectType: Object.Type? = nil
    /// Whether the keys may be of subclasses' objects (a collection of links
    /// declared with a class that has subclasses), each in its own table.
    var reachesSubclasses = false
    /// The property path a key path reads through links (`\.owner?.name` is
    /// `owner.name`); nil where key paths name only the element's own properties.
    var pathForKeyPath: ((AnyKeyPath) -> String?)? = nil
    /// For results of a collection's values: the collection and the order.
    var valueOrigin: ValueOrigin? = nil
    /// For objects that read their columns in place: a batch's places,
    /// found at once (after the iteration's previous batch), whose objects
    /// an iteration makes as it reaches them (nil when the batch needs
    /// ``materializeBatch``).
    var placedBatch: ((Database, ArraySlice<UInt64>, PlacedBatch?) -> PlacedBatch?)? = nil

    /// The property or the path through links a key path names.
    func path(for keyPath: AnyKeyPath) -> String {
        if let path = pathForKeyPath?(keyPath) { return path }
        return table.schema.properties[column(for: keyPath)].name
    }

    func column(for keyPath: AnyKeyPath) -> Int {
        guard let column = columnForKeyPath(keyPath) else {
            preconditionFailure("Trove: \(keyPath) is not a persisted property of \(table.name)")
        }
        return column
    }

    /// This source's objects, each handed out as what `make` makes of it;
    /// key paths of the made type name the properties `path` says they read.
    func mapped<Made>(_ make: @escaping (Element) -> Made, path: @escaping (AnyKeyPath) -> String?) -> ResultsSource<Made> {
        let materialize = self.materialize
        let materializeBatch = self.materializeBatch
        let table = self.table
        return ResultsSource<Made>(
            table: table,
            materialize: { make(materialize($0, $1)) },
            materializeBatch: { materializeBatch($0, $1).map(make) },
            columnForKeyPath: { keyPath in
                path(keyPath).flatMap { name in table.schema.properties.firstIndex { $0.name == name } }
            },
            reachesSubclasses: reachesSubclasses, pathForKeyPath: path)
    }

    static func object(_ binding: ObjectBinding) -> ResultsSource where Element: Object {
        ResultsSource(
            table: binding.table,
            materialize: { database, key in database.materialize(Element.self, objectKey: key, binding: binding) },
            materializeBatch: { database, keys in
                // A loop rather than `map`: this closure is not specialized, and
                // `map` walked the slice through its generic witnesses.
                var objects: [Element] = []
                objects.reserveCapacity(keys.count)
                for key in keys { objects.append(database.materialize(Element.self, objectKey: key, binding: binding)) }
                database.loadRecords(into: objects, table: binding.table)
                return objects
            },
            columnForKeyPath: { binding.column(forKeyPath: $0) }, objectType: Element.self,
            pathForKeyPath: { binding.path(forKeyPath: $0) },
            placedBatch: { database, keys, previous in database.placedBatch(of: keys, binding: binding, after: previous) })
    }

    static func value(_ binding: ValueBinding, _: Element.Type) -> ResultsSource where Element: Persistable {
        ResultsSource(
            table: binding.table,
            materialize: { database, key in
                do {
                    return try database.loadValue(Element.self, objectKey: key, binding: binding)
                } catch {
                    fatalError("Trove: cannot read a \(binding.table.name) value: \(error)")
                }
            },
            materializeBatch: { database, keys in
                do {
                    return try database.loadValues(Element.self, keys: keys, binding: binding)
                } catch {
                    fatalError("Trove: cannot read a \(binding.table.name) value: \(error)")
                }
            },
            columnForKeyPath: { keyPath in
                guard let path = keyPath as? PartialKeyPath<Element>,
                    let name = ValueModel.propertyName(of: path, in: Element.self)
                else { return nil }
                return binding.table.columnIndex[name]
            },
            placedBatch: { database, keys, previous in database.placedBatch(of: keys, values: binding, after: previous) })
    }
}
