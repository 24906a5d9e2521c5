import Foundation
import Trove

/// Realm's base class of `Object` and `EmbeddedObject`: Trove's ``Trove/Object``.
public typealias ObjectBase = Object

extension Object {
    /// The Realm that manages this object, or nil while it is unmanaged
    /// (Realm's `object.realm`).
    public var realm: Realm? { database.map(Realm.init) }

    /// Whether `object` is this object: the same instance, or the same stored
    /// object read twice (Realm's `isSameObject(as:)`).
    ///
    /// ```swift
    /// let again = realm.object(ofType: Dog.self, forPrimaryKey: "Rex")
    /// dog.isSameObject(as: again)   // true
    /// ```
    public func isSameObject(as object: Object?) -> Bool {
        guard let object else { return false }
        return isSameStoredObject(as: object)
    }

    /// Objective-C's `hash`, which Realm objects inherit from `NSObject`:
    /// equal for the same stored object read twice, as ``isEqual(_:)`` needs.
    ///
    /// ```swift
    /// dog.hash == again.hash   // true
    /// ```
    public var hash: Int { hashValue }

    /// Objective-C's `isEqual(_:)`, which Realm objects inherit from
    /// `NSObject`: the same stored object (see ``isSameObject(as:)``).
    ///
    /// ```swift
    /// dog.isEqual(again)   // true
    /// ```
    public func isEqual(_ object: Any?) -> Bool {
        guard let object = object as? Object else { return false }
        return isSameObject(as: object)
    }

    /// Realm's generic `observe`: the change hands the object over as `T`
    /// (`ObjectChange<ObjectBase>` in code written against any object), and
    /// `keyPaths` names the properties to watch.
    ///
    /// ```swift
    /// let token = dog.observe { (change: ObjectChange<ObjectBase>) in … }
    /// ```
    ///
    /// With a `queue` other than the one the Realm belongs to, each change
    /// arrives there asynchronously, with the object frozen at that change.
    /// As in Realm, a change this thread's Realm committed itself comes
    /// without old values (`oldValue` is nil); Trove's own `observe` keeps them.
    public func observe<T: ObjectBase>(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<T>) -> Void
    ) -> NotificationToken {
        let hop = deliveryQueue(queue)
        let forward: (ObjectChange<Object>) -> Void = { change in
            switch change {
            case .change(let object, var properties):
                // As Realm: no old values for the observing thread's own change.
                if hop == nil, object.database?.isDeliveringOwnCommit == true {
                    properties = properties.map(\.withoutOldValue)
                }
                deliver(ObjectChange<T>.change((hop == nil ? object : object.freeze()) as! T, properties), on: hop, to: block)
            case .deleted: deliver(ObjectChange<T>.deleted, on: hop, to: block)
            case .error(let error): deliver(ObjectChange<T>.error(error), on: hop, to: block)
            }
        }
        return observeAsObject(keyPaths: keyPaths, forward)
    }
}

extension _ObservableObject where Self: Object {
    /// Trove's typed `observe`, with the object handed over as an `Object`.
    func observeAsObject(keyPaths: [String]?, _ block: @escaping (ObjectChange<Object>) -> Void)
        -> NotificationToken
    {
        let forward: (ObjectChange<Self>) -> Void = { change in
            switch change {
            case .change(let object, let properties): block(.change(object, properties))
            case .deleted: block(.deleted)
            case .error(let error): block(.error(error))
            }
        }
        if let keyPaths { return observe(keyPaths: keyPaths, forward) }
        return observe(forward)
    }
}

extension Results {
    /// The Realm the results read from (Realm's `results.realm`).
    public var realm: Realm? { Realm(database) }
}

extension List {
    /// The Realm of the object that owns the list; nil while it is unmanaged.
    public var realm: Realm? { database.map(Realm.init) }
}

extension MutableSet {
    /// The Realm of the object that owns the set; nil while it is unmanaged.
    public var realm: Realm? { database.map(Realm.init) }
}

extension Map {
    /// The Realm of the object that owns the map; nil while it is unmanaged.
    public var realm: Realm? { database.map(Realm.init) }
}

extension LinkingObjects {
    /// The Realm of the object linked to; nil while it is unmanaged.
    public var realm: Realm? { asResults().map { Realm($0.database) } }
}

/// The property, or path through links, a key path of a model reads
/// (Realm's `_name(for:)`): `_name(for: \Dog.owner?.name)` is "owner.name".
/// A key path that reads no persisted property traps.
///
/// ```swift
/// let sortKey = _name(for: \Dog.age)   // "age"
/// ```
public func _name<T: ObjectBase>(for keyPath: PartialKeyPath<T>) -> String {
    guard let name = T.propertyPath(of: keyPath) else {
        preconditionFailure("TroveRealm: \(keyPath) reads no persisted property of \(T.self)")
    }
    return name
}
