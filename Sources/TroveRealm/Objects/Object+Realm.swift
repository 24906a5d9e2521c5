import Trove

extension Object {
    /// The Realm that manages this object, or nil while it is unmanaged
    /// (Realm's `object.realm`).
    public var realm: Realm? { database.map(Realm.init) }
}

extension Results {
    /// The Realm the results read from (Realm's `results.realm`).
    public var realm: Realm? { Realm(database) }
}

extension List {
    /// The Realm of the object that owns the list; nil while it is unmanaged.
    public var realm: Realm? { managingObject?.database.map(Realm.init) }
}
