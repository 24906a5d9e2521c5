import Trove

/// Realm's dynamic API: objects of a type named as a string, as live
/// ``Trove/DynamicObject``s. Misuse traps with the reason, as Realm raises.
extension Realm {
    /// Every object of a type named as a string (Realm's `dynamicObjects`).
    /// Traps when the file has no such type.
    ///
    /// ```swift
    /// let old = realm.dynamicObjects("Dog").filter("age > 3")
    /// print(old.first?["name"] as? String ?? "-")
    /// ```
    public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
        registerModelClass(named: typeName)
        do {
            return try database.dynamicObjects(typeName)
        } catch {
            realmMisuse("Cannot read \(typeName) objects", error)
        }
    }

    /// The object of a type named as a string with a primary key, or nil
    /// (Realm's `dynamicObject(ofType:forPrimaryKey:)`). Traps when the type
    /// does not exist, has no primary key, or `key` is of another type.
    ///
    /// ```swift
    /// let rex = realm.dynamicObject(ofType: "Dog", forPrimaryKey: "Rex")
    /// ```
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        registerModelClass(named: typeName)
        do {
            return try database.dynamicObject(ofType: typeName, forPrimaryKey: key)
        } catch {
            realmMisuse("Cannot look up a \(typeName) by primary key", error)
        }
    }

    /// Makes an object of a type named as a string from values and adds it,
    /// inside a write (Realm's `dynamicCreate`; Trove's `Database.create(_:value:update:)`
    /// with a type name). Traps on a value the type cannot take, outside a
    /// write, and with an update policy for a type without a primary key, as
    /// Realm does.
    ///
    /// ```swift
    /// try realm.write {
    ///     let dog = realm.dynamicCreate("Dog", value: ["name": "Rex", "age": 3])
    ///     dog["age"] = 4
    /// }
    /// ```
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error)
        -> DynamicObject
    {
        registerModelClass(named: typeName)
        do {
            if update != .error, try database.dynamicObjects(typeName).objectSchema.primaryKey == nil {
                throw TroveError(.invalidPrimaryKey, "'\(typeName)' does not have a primary key and can not be updated")
            }
            return try database.create(typeName, value: value, update: update)
        } catch {
            realmMisuse("Cannot create a \(typeName)", error)
        }
    }
}

extension DynamicObject {
    /// Key-value coding's fallback, which a dynamic object answers: the
    /// property named `key`.
    ///
    /// ```swift
    /// let name = dynamicDog.value(forUndefinedKey: "name") as? String
    /// ```
    public func value(forUndefinedKey key: String) -> Any? { value(forKey: key) }

    /// Key-value coding's fallback, which a dynamic object answers: sets the
    /// property named `key` (inside a write).
    ///
    /// ```swift
    /// try realm.write { dynamicDog.setValue("Rex", forUndefinedKey: "name") }
    /// ```
    public func setValue(_ value: Any?, forUndefinedKey key: String) { setValue(value, forKey: key) }
}
