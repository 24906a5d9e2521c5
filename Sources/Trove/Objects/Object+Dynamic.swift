/// The collections of objects of any stored object seen as ``DynamicObject``s
/// (Realm's `dynamicList`, `dynamicMutableSet` and `dynamicMap`), and a
/// stored object seen through another class.
extension Object {
    /// The list of objects named `propertyName`, its elements as
    /// ``DynamicObject``s: live, and changed like any list inside a write.
    /// Traps when the type has no such property, or it is not a list of
    /// objects, or the object is not stored.
    ///
    /// ```swift
    /// let children = parent.dynamicList("children")
    /// try db.write { children.append(try db.create("Child", value: ["name": "Ann"])) }
    /// ```
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        List(owner: self, column: objectCollectionColumn(propertyName, .list))
    }

    /// The set of objects named `propertyName`, its elements as
    /// ``DynamicObject``s (see ``dynamicList(_:)``).
    ///
    /// ```swift
    /// let friends = person.dynamicMutableSet("friends")
    /// print(friends.count)
    /// ```
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        MutableSet(owner: self, column: objectCollectionColumn(propertyName, .set))
    }

    /// The map of objects named `propertyName`, its values as
    /// ``DynamicObject``s (see ``dynamicList(_:)``).
    ///
    /// ```swift
    /// let pets: Map<String, DynamicObject?> = person.dynamicMap("pets")
    /// print(pets["best"]??["name"] ?? "-")
    /// ```
    public func dynamicMap<Key: _TroveMapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        Map(owner: self, column: objectCollectionColumn(propertyName, .map))
    }

    /// The column of a stored object's collection of objects; traps naming
    /// what is wrong when there is none.
    private func objectCollectionColumn(_ name: String, _ kind: CollectionKind) -> Int {
        guard _database != nil, let table = _table else {
            preconditionFailure(
                "Trove: \(storedTypeName).\(name) is read as dynamic objects only on a stored object; add it first")
        }
        let property = namedProperty(name).schema
        guard let column = table.columnIndex[name], property.collection == kind, property.type == .link else {
            let wanted = PropertySchema(name: name, type: .link, objectType: "DynamicObject", collection: kind)
            preconditionFailure(
                "Trove: \(table.name).\(name) is a \(property.typeDescription), not a \(wanted.typeDescription); read it with object[\"\(name)\"]"
            )
        }
        return column
    }

    /// This stored object as an instance of `type`: a ``DynamicObject``, or
    /// the model class stored under the same name. Nil when unmanaged or
    /// stored as another type.
    func viewed(as type: Object.Type) -> Object? {
        guard let database = _database, let table = _table, Swift.type(of: self) != type, !table.isRetired else { return nil }
        if type == DynamicObject.self { return database.dynamicObject(in: table, objectKey: _objectKey) }
        guard ModelInfo.storedName(of: type) == table.name else { return nil }
        return database.object(ofClass: type, objectKey: _objectKey)
    }
}
