import Trove

/// Realm's name for the objects a migration block gets and makes: Trove's
/// ``Trove/DynamicObject`` (the old object read-only, in the old schema; the
/// new one live, in the new schema).
///
/// ```swift
/// migration.enumerateObjects(ofType: Person.className()) { oldObject, newObject in
///     newObject!["fullName"] = "\(oldObject!["firstName"] as! String) \(oldObject!["lastName"] as! String)"
/// }
/// ```
public typealias MigrationObject = DynamicObject

extension Migration {
    /// Realm's `create(_:value:)`: makes an object of a type in its new
    /// schema from values — a dictionary by property name, an array in
    /// property order, or another object — and returns it. A value the type
    /// cannot take traps, as Realm's raises.
    ///
    /// ```swift
    /// let owner = migration.create("Person", value: ["name": "Ann"])
    /// newObject!["owner"] = owner
    /// ```
    @discardableResult
    public func create(_ typeName: String, value: Any = [Any]()) -> MigrationObject {
        do {
            return try createObject(typeName, from: value)
        } catch {
            realmMisuse("Cannot create a \(typeName) in the migration", error)
        }
    }
}

extension Object {
    /// Realm's name for the type's stored name (``Trove/Object/objectTypeName``).
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: Person.className()) { _, _ in }
    /// ```
    public class func className() -> String { objectTypeName }
}

/// Realm's top-level name for a migration block (also ``Realm/MigrationBlock``).
///
/// ```swift
/// let block: MigrationBlock = { migration, oldSchemaVersion in … }
/// ```
public typealias MigrationBlock = Realm.MigrationBlock
