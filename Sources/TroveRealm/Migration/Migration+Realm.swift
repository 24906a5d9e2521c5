import Trove

/// An object's properties during a migration, by name and as Swift values
/// (what Realm's migration block receives as its `MigrationObject`s): the
/// old object is read-only, the new one is written back when the block returns.
///
/// ```swift
/// migration.enumerateObjects(ofType: Person.className()) { oldObject, newObject in
///     newObject!["fullName"] = "\(oldObject!["firstName"] as! String) \(oldObject!["lastName"] as! String)"
/// }
/// ```
public final class MigrationProperties {
    private let old: DynamicObject?
    private let new: MigrationObject?

    init(old: DynamicObject) {
        self.old = old
        new = nil
    }

    init(new: MigrationObject) {
        old = nil
        self.new = new
    }

    /// The property named `name` as a Swift value (nil when it is empty or the
    /// type has no such property); setting it on the new object stores it.
    public subscript(name: String) -> Any? {
        get { (old?[name] ?? new?[name])?.swiftValue }
        set {
            guard let new else { preconditionFailure("TroveRealm: the old object of a migration is read-only") }
            guard let stored = StoredValue(any: newValue) else {
                preconditionFailure("TroveRealm: a \(newValue.map { "\(type(of: $0))" } ?? "nil") cannot be stored in \(name)")
            }
            new[name] = stored
        }
    }
}

extension Migration {
    /// Realm's `enumerateObjects(ofType:_:)`, which does not throw: the block
    /// gets each object before and after, by property name; an error traps.
    public func enumerateObjects(
        ofType typeName: String, _ block: (_ oldObject: MigrationProperties?, _ newObject: MigrationProperties?) -> Void
    ) {
        do {
            try enumerateObjects(ofType: typeName) { old, new in
                block(MigrationProperties(old: old), MigrationProperties(new: new))
            }
        } catch {
            realmMisuse("Cannot enumerate \(typeName) in the migration", error)
        }
    }
}

extension Object {
    /// Realm's name for the type's stored name (``Trove/Object/objectTypeName``).
    public class func className() -> String { objectTypeName }
}
