import Dispatch
import Foundation
@_spi(Reflection) import Swift
import Trove
import TroveStorage

/// What a `@Projected` field tells its projection's schema.
private protocol AnyProjected {
    /// The key path of the field at `field`.
    static func keyPath(at field: UnsafeRawPointer) -> AnyKeyPath
}

/// A property of a ``Projection``: the value a key path reads from the
/// projected object (Realm's `@Projected`). The key path may go through
/// links and end in a computed property; setting it writes the object's
/// property when the key path is writable.
///
/// ```swift
/// final class PersonView: Projection<Person> {
///     @Projected(\Person.firstName) var name
///     @Projected(\Person.address?.city) var city
///     @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
/// ```
@propertyWrapper
public struct Projected<T: Object, Value>: AnyProjected {
    private let keyPath: KeyPath<T, Value>

    fileprivate static func keyPath(at field: UnsafeRawPointer) -> AnyKeyPath {
        field.assumingMemoryBound(to: Self.self).pointee.keyPath
    }

    /// Projects what `projectedKeyPath` reads from the object.
    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        keyPath = projectedKeyPath
    }

    /// Unavailable: `@Projected` works only on a subclass of ``Projection``.
    @available(*, unavailable, message: "@Projected can only be used on properties of a Projection")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// The projected value, read from (and written to) the projection's object.
    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get { projection.rootObject[keyPath: projection[keyPath: storageKeyPath].keyPath] }
        set {
            guard let writable = projection[keyPath: storageKeyPath].keyPath as? ReferenceWritableKeyPath<T, Value>
            else {
                preconditionFailure(
                    "TroveRealm: \(type(of: projection)).\(wrappedKeyPath) projects a key path that cannot be written")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }
}

/// What every ``Projection`` is, for code generic over them (Realm's
/// `ProjectionObservable`): the object it projects, and a way to project one.
///
/// ```swift
/// func names<P: ProjectionObservable>(_ projections: Results<P>) -> Int { projections.count }
/// ```
public protocol ProjectionObservable: AnyObject, ThreadConfined {
    /// The class of the projected objects.
    associatedtype Root: Object
    /// The projected object.
    var rootObject: Root { get }
    /// A projection of `object`.
    init(projecting object: Root)
}

/// A view of an object through some of its properties, renamed or derived
/// (Realm's `Projection`): subclass it, declare `@Projected` properties,
/// and read projections from ``Realm/objects(_:)-(P.Type)`` or make one
/// with ``init(projecting:)``. A projection is live as its object is, and
/// observing it reports changes by the projection's property names.
///
/// ```swift
/// final class PersonView: Projection<Person> {
///     @Projected(\Person.firstName) var name
///     @Projected(\Person.lastName.localizedUppercase) var shoutedLastName
/// }
/// let people = realm.objects(PersonView.self)
/// print(people.first?.name ?? "-")
/// ```
open class Projection<Root: Object>: ProjectionObservable, Hashable, CustomStringConvertible {
    /// The projected object.
    public let rootObject: Root

    /// A projection of `object`.
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// Projections of the same stored object are equal.
    public static func == (lhs: Projection, rhs: Projection) -> Bool { lhs.rootObject.isSameStoredObject(as: rhs.rootObject) }

    /// Hashes the projected object.
    public func hash(into hasher: inout Hasher) { hasher.combine(rootObject) }

    /// The projection's class, its object's class, its address and each
    /// projected property with its value, as Realm prints a projection.
    open var description: String {
        let lines = ProjectionSchema.of(type(of: self)).properties.map { property in
            "\t\(property.label)(\\.\(property.originPath ?? "?")) = \(rootObject[keyPath: property.keyPath] ?? "nil");"
        }
        let address = String(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()), radix: 16)
        // Realm's first line has one tab more than the others.
        return "\(type(of: self))<\(Root.objectTypeName)> <0x\(address)> {\n\t" + lines.joined(separator: "\n") + "\n}"
    }

    /// The projected object's handover: a projection crosses threads as its object does.
    public var _threadSafeHandover: _ThreadSafeHandover { rootObject._threadSafeHandover }

    /// A projection of the object a handover describes, read by `database`.
    public class func _resolve(_ handover: _ThreadSafeHandover, in database: Database) -> Self? {
        Root._resolve(handover, in: database).map { Self(projecting: $0) }
    }
}

/// A projection class's properties: label, key path and the property path it reads.
struct ProjectionSchema {
    struct Property {
        let label: String
        let keyPath: AnyKeyPath
        let originPath: String?
    }
    let properties: [Property]

    private static let cache = Locked<[ObjectIdentifier: ProjectionSchema]>([:])

    /// `type` is the projection's class as it is at run time (a generic
    /// parameter may name its base class).
    static func of<P: ProjectionObservable>(_ type: P.Type) -> ProjectionSchema {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        // A projection of a probe object: its fields say what it projects.
        let probe = type.init(projecting: P.Root())
        let base = UnsafeRawPointer(Unmanaged.passUnretained(probe).toOpaque())
        var properties: [Property] = []
        // _EachFieldOptions.classType == 1: walk a class, superclass fields first.
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
            guard let projected = fieldType as? any AnyProjected.Type else { return true }
            var label = String(cString: name)
            if label.hasPrefix("_") { label.removeFirst() }
            let keyPath = projected.keyPath(at: base + offset)
            properties.append(
                Property(
                    label: label, keyPath: keyPath, originPath: P.Root.propertyPath(readBy: { $0[keyPath: keyPath] })))
            return true
        }
        withExtendedLifetime(probe) {}
        let schema = ProjectionSchema(properties: properties)
        cache.withLock { $0[ObjectIdentifier(type)] = schema }
        return schema
    }

    /// The property path a key path of the projection class reads of its object.
    static func path<P: ProjectionObservable>(of keyPath: AnyKeyPath, in type: P.Type) -> String? {
        P.Root.propertyPath(readBy: { object in
            guard let root = object as? P.Root else { return nil }
            return type.init(projecting: root)[keyPath: keyPath]
        })
    }
}

extension ProjectionObservable {
    /// The Realm of the projected object; nil while it is unmanaged.
    public var realm: Realm? { rootObject.realm }

    /// Whether the projected object was deleted (or its Realm invalidated).
    public var isInvalidated: Bool { rootObject.isInvalidated }

    /// Whether the projected object belongs to a frozen Realm.
    public var isFrozen: Bool { rootObject.isFrozen }

    /// The projection of the object frozen at the latest commit.
    ///
    /// ```swift
    /// let snapshot = personView.freeze()
    /// ```
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }

    /// The projection of a live copy of the frozen object, nil when it was deleted since.
    ///
    /// ```swift
    /// if let live = snapshot.thaw() { print(live.isFrozen) }   // false
    /// ```
    public func thaw() -> Self? { rootObject.thaw().map { Self(projecting: $0) } }

    /// Calls `block` after each commit that changes a projected property of
    /// the object (those named in `keyPaths`, as the object's property paths
    /// or the projection's labels, when given), or deletes it; each change is
    /// named by the projection's property and carries its projected values.
    /// A projection with several properties reading one of the object's
    /// reports each of them.
    ///
    /// ```swift
    /// let token = personView.observe { change in
    ///     if case .change(let view, let properties) = change { print(view.name, properties.map(\.name)) }
    /// }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        var observed = ProjectionSchema.of(Self.self).properties.filter { $0.originPath != nil }
        if let keyPaths, !keyPaths.isEmpty {
            observed = observed.filter { keyPaths.contains($0.originPath!) || keyPaths.contains($0.label) }
        }
        let paths = Array(Set(observed.map { $0.originPath! })).sorted()
        let hop = deliveryQueue(queue)
        let projection = self
        return rootObject.observe(keyPaths: paths, on: nil) { (change: ObjectChange<Object>) in
            switch change {
            case .change(let object, let changes):
                guard let root = object as? Root else { return }
                let view = hop == nil ? projection : Self(projecting: root.freeze())
                var projected: [PropertyChange] = []
                for change in changes {
                    for property in observed
                    where property.originPath!.split(separator: ".").first.map(String.init) == change.name {
                        projected.append(
                            PropertyChange(
                                name: property.label, oldStoredValue: Self.oldValue(of: property, in: change),
                                newStoredValue: Self.stored(root[keyPath: property.keyPath])))
                    }
                }
                if !projected.isEmpty { deliver(ObjectChange<Self>.change(view, projected), on: hop, to: block) }
            case .deleted: deliver(ObjectChange<Self>.deleted, on: hop, to: block)
            case .error(let error): deliver(ObjectChange<Self>.error(error), on: hop, to: block)
            }
        }
    }

    /// ``observe(keyPaths:on:_:)`` with the projection's properties given as
    /// key paths: each names the object's properties it reads (a computed
    /// property of the projection, those its body reads).
    ///
    /// ```swift
    /// let token = personView.observe(keyPaths: [\PersonView.name]) { change in … }
    /// ```
    public func observe(
        keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        let names = keyPaths.map { keyPath in
            guard let name = Root.propertyPath(readBy: { probe in Self(projecting: probe as! Root)[keyPath: keyPath] }) else {
                preconditionFailure("TroveRealm: \(keyPath) reads no persisted property of \(Root.self)")
            }
            return name
        }
        return observe(keyPaths: names, on: queue, block)
    }

    /// A projected value as a stored one (null when it is not a stored type).
    private static func stored(_ value: Any?) -> StoredValue {
        (value as? any _TroveStorable)?._troveStored ?? .null
    }

    /// The projected value before the change: the key path read on an
    /// unmanaged object holding the property's old value.
    private static func oldValue(of property: ProjectionSchema.Property, in change: PropertyChange) -> StoredValue {
        guard change.oldStoredValue != .null, property.originPath == change.name,
            case let old? = change.oldValue, !(old is Object)
        else { return .null }
        let before = Root()
        before.setValue(old, forKey: change.name)
        return stored(before[keyPath: property.keyPath])
    }
}

extension Realm {
    /// Projections of every object of the projected class (Realm's
    /// `objects(_:)` of a projection type): live, filtered and sorted by the
    /// object's properties, or by the projection's key paths.
    ///
    /// ```swift
    /// let views = realm.objects(PersonView.self).sorted(by: \.name)
    /// ```
    public func objects<P: ProjectionObservable>(_ type: P.Type) -> Results<P> {
        database.objects(P.Root.self).projected(as: type)
    }
}

extension Results where Element: Object {
    /// These results with each object handed out as a projection of it.
    ///
    /// ```swift
    /// let views = realm.objects(Person.self).filter("age > 18").projected(as: PersonView.self)
    /// ```
    public func projected<P: ProjectionObservable>(as type: P.Type) -> Results<P> where P.Root == Element {
        mapped({ type.init(projecting: $0) }, path: { ProjectionSchema.path(of: $0, in: type) })
    }
}

/// The objects of a list or set seen through one of their properties, in a
/// ``Projection`` (Realm's `projectTo`): `\Person.friends.projectTo.firstName`.
///
/// ```swift
/// @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// ```
@dynamicMemberLookup
public struct ElementMapper<Element: Object> {
    fileprivate let collection: AnyRealmCollection<Element>

    /// The collection's objects seen through `member`.
    public subscript<V>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(collection, member)
    }
}

extension List where Element: Object {
    /// The list's objects seen through one of their properties, for a ``Projected`` property.
    ///
    /// ```swift
    /// @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
    /// ```
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}

extension MutableSet where Element: Object {
    /// The set's objects seen through one of their properties, for a ``Projected`` property.
    ///
    /// ```swift
    /// @Projected(\Person.pets.projectTo.name) var petNames: ProjectedCollection<String>
    /// ```
    public var projectTo: ElementMapper<Element> { ElementMapper(collection: AnyRealmCollection(self)) }
}

/// A property of each object of a list or set, read live in the
/// collection's order (Realm's `ProjectedCollection`).
///
/// ```swift
/// for name in personView.friendNames { print(name) }
/// ```
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
    private let backing: ProjectedBacking<Element>

    /// The values at `keyPath` of the objects of `collection`.
    init<Root: Object>(_ collection: AnyRealmCollection<Root>, _ keyPath: KeyPath<Root, Element>) {
        backing = ProjectedBacking(
            read: { collection.map { $0[keyPath: keyPath] } },
            isInvalidated: { collection.isInvalidated }, realm: { collection.realm },
            isFrozen: { collection.isFrozen },
            write: { position, value in
                guard let writable = keyPath as? ReferenceWritableKeyPath<Root, Element> else {
                    realmMisuse(
                        "Cannot set a value of a ProjectedCollection",
                        TroveError(.invalidProperty, "\(keyPath) is read-only"))
                }
                collection[position][keyPath: writable] = value
            },
            freeze: { ProjectedCollection(collection.freeze(), keyPath) },
            thaw: { collection.thaw().map { ProjectedCollection($0, keyPath) } },
            observe: { keyPaths, queue, block in
                collection.observe(keyPaths: keyPaths, on: queue) { change in
                    switch change {
                    case .initial(let objects): block(.initial(ProjectedCollection(objects, keyPath)))
                    case .update(let objects, let deletions, let insertions, let modifications):
                        block(
                            .update(
                                ProjectedCollection(objects, keyPath), deletions: deletions, insertions: insertions,
                                modifications: modifications))
                    case .error(let error): block(.error(error))
                    }
                }
            })
    }

    private var values: [Element] { backing.read() }

    /// The first position (0).
    public var startIndex: Int { 0 }
    /// One past the last position.
    public var endIndex: Int { values.count }
    /// The value of the object at `position`; setting it sets the object's
    /// property (in a write transaction).
    ///
    /// ```swift
    /// try realm.write { personView.friendNames[0] = "Ann" }
    /// ```
    public subscript(position: Int) -> Element {
        get { values[position] }
        nonmutating set { backing.write(position, newValue) }
    }
    /// Iterates the values as they are when the loop starts.
    public func makeIterator() -> IndexingIterator<[Element]> { values.makeIterator() }

    /// Whether the collection's owner was deleted.
    public var isInvalidated: Bool { backing.isInvalidated() }

    /// The Realm of the collection's owner; nil while it is unmanaged.
    public var realm: Realm? { backing.realm() }

    /// Whether the collection belongs to a frozen Realm.
    public var isFrozen: Bool { backing.isFrozen() }

    /// The values as a frozen Realm holds the collection, fixed at the latest commit.
    ///
    /// ```swift
    /// let names = personView.friendNames.freeze()
    /// ```
    public func freeze() -> ProjectedCollection { backing.freeze() }

    /// A live copy of a frozen collection, nil when its owner was deleted since.
    ///
    /// ```swift
    /// let live = frozenNames.thaw()
    /// ```
    public func thaw() -> ProjectedCollection? { backing.thaw() }

    /// Observes the collection of objects the values are read from: the
    /// initial state, then the positions each commit deleted, inserted and
    /// modified (modified: a change of `keyPaths` of the objects, when given).
    ///
    /// ```swift
    /// let token = personView.friendNames.observe { change in … }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmCollectionChange<ProjectedCollection>) -> Void
    ) -> NotificationToken {
        backing.observe(keyPaths, queue, block)
    }

    /// The values in order, as Realm prints them:
    /// `ProjectedCollection<String> {\n\t[0] Ann\n\t[1] Bo\n}`.
    public var description: String {
        "ProjectedCollection<\(Element.self)> {\n"
            + values.enumerated().map { "\t[\($0.offset)] \($0.element)" }.joined(separator: "\n") + "\n}"
    }
}

/// What a ``ProjectedCollection`` reads and does, over its collection of objects.
private final class ProjectedBacking<Element> {
    let read: () -> [Element]
    let isInvalidated: () -> Bool
    let realm: () -> Realm?
    let isFrozen: () -> Bool
    let write: (Int, Element) -> Void
    let freeze: () -> ProjectedCollection<Element>
    let thaw: () -> ProjectedCollection<Element>?
    let observe:
        ([String]?, DispatchQueue?, @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void) ->
            NotificationToken

    init(
        read: @escaping () -> [Element], isInvalidated: @escaping () -> Bool, realm: @escaping () -> Realm?,
        isFrozen: @escaping () -> Bool, write: @escaping (Int, Element) -> Void,
        freeze: @escaping () -> ProjectedCollection<Element>,
        thaw: @escaping () -> ProjectedCollection<Element>?,
        observe:
            @escaping (
                [String]?, DispatchQueue?, @escaping (RealmCollectionChange<ProjectedCollection<Element>>) -> Void
            ) -> NotificationToken
    ) {
        self.read = read
        self.isInvalidated = isInvalidated
        self.realm = realm
        self.isFrozen = isFrozen
        self.write = write
        self.freeze = freeze
        self.thaw = thaw
        self.observe = observe
    }
}

extension ProjectedCollection where Element: Equatable {
    /// The position of the first object whose projected value equals `value`, or nil.
    ///
    /// ```swift
    /// let position = personView.friendNames.index(of: "Bo")
    /// ```
    public func index(of value: Element) -> Int? { firstIndex(of: value) }
}
