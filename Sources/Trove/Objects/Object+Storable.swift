/// An object type is what a link property holds: `@Persisted var owner: Person?`
/// stores the object key of a `Person`, and reads back the live object.
extension Object: _TroveStoredInitializable {
    public static var _troveType: PropertyType { .link }
    public static var _troveDefault: Self {
        fatalError("Trove: a link to \(Self.self) must be optional: declare it as `@Persisted var name: \(Self.self)?`")
    }
    public var _troveStored: StoredValue { _database != nil ? .int(Int64(bitPattern: _objectKey)) : .null }
    public static var _troveLinkTarget: Object.Type? { Self.self }

    public static func _troveResolve(_ value: StoredValue, in database: Database) -> Self {
        guard case .int(let key) = value else {
            fatalError("Trove: a link to \(Self.self) holds \(value), not an object key; the file is damaged")
        }
        return database.linkedObject(Self.self, objectKey: UInt64(bitPattern: key))
    }

    public static func _troveManagedGet(_ object: Object, column: Int) -> Self {
        fatalError("Trove: a link to \(Self.self) must be optional: declare it as `\(Self.self)?`")
    }

    public static func _troveManagedSet(_ value: Object, _ object: Object, column: Int) {
        object._writeLink(column, value)
    }

    public static func _troveProbeGet(_ object: Object, column: Int) -> Self {
        _ = object._readColumn(column)
        return object.linkProbe(Self.self, column: column)
    }
}
