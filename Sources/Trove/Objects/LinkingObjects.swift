/// The objects whose link property points at this one: an inverse
/// relationship, answered from the link's inverse-link table, never stored twice.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var name = ""
///     @Persisted(originProperty: "owner") var tasks: LinkingObjects<Task>
/// }
/// final class Task: Object {
///     @Persisted var title = ""
///     @Persisted var owner: Person?
/// }
/// print(person.tasks.count, try person.tasks.filter("done == false").count)
/// ```
///
/// Live like ``Results``: it reflects the handle's current snapshot. An
/// unmanaged object has no inverse links.
public struct LinkingObjects<Element: Object>: RandomAccessCollection {
    /// nil for an unmanaged object.
    let results: Results<Element>?
    /// The link property of `Element` that points here, as declared.
    let originProperty: String?
    /// The object linked to and this property's column in it, when read as
    /// a stored object's property (a ``ThreadSafeReference`` names it so).
    let owner: (object: Object, column: Int)?
    /// On a key-path probe: what `[0]` reads, so that `\.owners[0].name` reads on.
    private var probe: Element?

    /// An inverse relationship as seen by an unmanaged object (empty).
    public init() {
        results = nil
        originProperty = nil
        owner = nil
    }

    init(originProperty: String) {
        results = nil
        self.originProperty = originProperty
        owner = nil
    }

    /// An inverse relationship written as Realm's legacy models wrote it:
    /// the `type` objects whose `property` links here. The same as
    /// `@Persisted(originProperty:)`.
    ///
    /// ```swift
    /// @Persisted var owners = LinkingObjects(fromType: Person.self, property: "dogs")
    /// ```
    public init(fromType type: Element.Type, property: String) {
        self.init(originProperty: property)
    }

    package init(results: Results<Element>) {
        self.init(results: results, owner: nil)
    }

    init(results: Results<Element>, owner: (object: Object, column: Int)?) {
        self.results = results
        originProperty = nil
        self.owner = owner
    }

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }
    /// One past the last position: ``count``.
    public var endIndex: Int { count }
    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }
    /// How many objects link here; 0 for an unmanaged object.
    public var count: Int { results?.count ?? 0 }

    /// The linking object at `position`. Traps on an unmanaged object, which has
    /// none, and when `position` is out of range.
    public subscript(position: Int) -> Element {
        guard let results else {
            if let probe { return probe }
            preconditionFailure("Trove: an unmanaged object has no linking objects")
        }
        return results[position]
    }

    /// Iterates a snapshot of the linking objects taken when the loop starts,
    /// so deleting them inside the loop neither skips nor repeats any.
    ///
    /// ```swift
    /// try db.write { for chore in owner.chores { try db.delete(chore) } }
    /// ```
    public func makeIterator() -> IndexingIterator<[Element]> {
        (results.map { Array($0) } ?? []).makeIterator()
    }

    /// The linking objects as ``Results``, to filter, sort and aggregate.
    public func asResults() -> Results<Element>? { results }

    /// The linking objects that match a predicate.
    public func filter(_ predicateFormat: String, _ arguments: Any?...) throws -> Results<Element> {
        guard let results else { preconditionFailure("Trove: an unmanaged object has no linking objects to query") }
        return try results.filter(predicateFormat, arguments: arguments)
    }

    /// The linking objects sorted by a property.
    public func sorted<V: _TroveStorable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        guard let results else { preconditionFailure("Trove: an unmanaged object has no linking objects to sort") }
        return results.sorted(by: keyPath, ascending: ascending)
    }
}

/// How reflection finds the origin property of a `LinkingObjects` field without knowing its element type.
protocol _TroveOriginNamed {
    var originProperty: String? { get }
}

extension LinkingObjects: _TroveOriginNamed {}

extension LinkingObjects: Equatable {
    /// Equal when they are the same read of the inverse links (see `Results`'s
    /// `==`); each read of the property is a new one.
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        guard let left = lhs.results, let right = rhs.results else { return false }
        return left == right
    }
}

extension LinkingObjects: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .link }
    public static var _troveDefault: LinkingObjects { LinkingObjects() }
    public init(_troveStored: StoredValue) { self.init() }
    public var _troveStored: StoredValue { .null }
    public static var _troveLinkTarget: Object.Type? { Element.self }
    public static var _troveCollection: CollectionKind? { .linkingObjects }

    /// On a key-path probe: inverse links whose `[0]` is a probe of the linking type.
    public static func _troveProbeGet(_ object: Object, column: Int) -> LinkingObjects {
        _ = object._readColumn(column)
        var probed = LinkingObjects()
        probed.probe = object.linkProbe(Element.self, column: column)
        return probed
    }

    public static func _troveManagedGet(_ object: Object, column: Int) -> LinkingObjects {
        let database = object._database.unsafelyUnwrapped
        let binding = object._binding.unsafelyUnwrapped
        let property = binding.table.schema.properties[column]
        let origin = database.bindingOrTrap(for: Element.self, storedAs: property.objectType ?? "")
        guard let originName = property.originProperty, let originColumn = origin.table.columnIndex[originName],
            let refs = origin.table.refs[originColumn],
            binding.table.schema.isKind(of: origin.table.schema.properties[originColumn].objectType ?? "")
        else {
            fatalError(
                "Trove: \(binding.table.name).\(property.name) names origin property '\(property.originProperty ?? "")', which is not a link from \(origin.table.name) to \(binding.table.name)"
            )
        }
        let target = object._objectKey
        return LinkingObjects(
            results: Results(
                database: database, source: .object(origin),
                predicate: .objectKeys { try Database.sources(of: target, in: refs, $0) }),
            owner: (object, column))
    }

    public static func _troveManagedSet(_ value: LinkingObjects, _ object: Object, column: Int) {
        fatalError("Trove: linking objects are computed from the links that point here; set the link on the other side")
    }
}

extension Persisted {
    /// An inverse relationship: the `Element` objects whose `originProperty`
    /// (a link or a list of links) points at this object.
    ///
    /// ```swift
    /// @Persisted(originProperty: "owner") var tasks: LinkingObjects<Task>
    /// ```
    public init<T: Object>(originProperty: String) where Value == LinkingObjects<T> {
        self.init(wrappedValue: LinkingObjects(originProperty: originProperty))
    }
}
