import Trove

/// Realm's mixed value type: Trove's ``Trove/Mixed``.
///
/// ```swift
/// @Persisted var value: AnyRealmValue = .none
/// ```
public typealias AnyRealmValue = Mixed

extension Mixed {
    /// The stored object this value holds, read as a ``DynamicObject`` (its
    /// properties by name, Realm's `AnyRealmValue.dynamicObject`); nil when
    /// it holds no object, or one that is not stored.
    ///
    /// ```swift
    /// let name = setting.value.dynamicObject?["name"] as? String
    /// ```
    public var dynamicObject: DynamicObject? {
        guard case .object(let object) = self, let database = object.database else { return nil }
        return database.dynamicView(of: object)
    }
}
