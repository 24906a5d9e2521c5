import Foundation
import Trove
import TroveStorage

/// A property, local variable or function parameter that holds a managed
/// object, results or collection so that it can cross threads and actors
/// (Realm's `@ThreadSafe`). It keeps a ``Trove/ThreadSafeReference`` and the
/// value's configuration; each read resolves the reference in the Realm of
/// the reading thread — `try Realm(configuration:)` there — so the value is
/// the latest committed one, or nil once it was deleted.
///
/// ```swift
/// struct Upload: Sendable {
///     @ThreadSafe var photo: Photo?
/// }
/// let upload = Upload(photo: photo)
/// Task.detached {
///     guard let photo = upload.photo else { return }   // deleted meanwhile
///     try photo.realm!.write { photo.isUploaded = true }
/// }
///
/// func archive(@ThreadSafe dog: Dog?) {
///     Task.detached { print(dog?.name ?? "gone") }
/// }
/// ```
///
/// Swift 6 checks a closure that captures a wrapped variable or parameter by
/// the wrapped type, which is not `Sendable`: hand it to `Task` and
/// `Task.detached` (whose closures are `sending`), or pass the wrapper
/// itself (`_dog`, which is `Sendable`), rather than capturing it in a
/// `@Sendable` closure such as `DispatchQueue.async`'s.
///
/// The wrapper is a class, shared by every copy of what holds it: setting
/// the value on one thread changes what every holder reads. Setting an
/// unmanaged or deleted object traps, as in Realm.
///
/// Read it where the value is used, and use the value there: in code that
/// runs outside any actor, the Realm is the thread's; on the main actor, the
/// main thread's. Inside another actor, write through the value's own Realm
/// (`value.realm!.write { … }`): a getter cannot know the actor, so the Realm
/// is the current thread's rather than the actor's `Realm(actor:)`.
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: Sendable {
    /// The reference to the current value (nil for nil), under a lock: the
    /// wrapper is read and set from any thread.
    private let reference: Locked<ThreadSafeReference<T>?>

    /// Wraps `wrappedValue`, a managed value or nil.
    ///
    /// ```swift
    /// @ThreadSafe var results = realm.objects(Dog.self).filter("age > 2")
    /// ```
    public init(wrappedValue: T?) {
        reference = Locked(wrappedValue.map { ThreadSafeReference(unpinned: $0) })
    }

    /// The value, resolved in the Realm of the reading thread (nil once
    /// deleted); setting it keeps a reference to the new value.
    ///
    /// ```swift
    /// upload.photo = otherPhoto   // from any thread
    /// ```
    public var wrappedValue: T? {
        get {
            guard let reference = reference.withLock({ $0 }) else { return nil }
            do {
                let realm = try Realm(configuration: Realm.Configuration(reference.handover.configuration))
                let value = realm.database.resolve(reference, refreshing: .toReference)
                // Taken again where it was read (as Realm does), so a reader elsewhere
                // catches up with what this one has seen, its own writes included.
                if let value { self.reference.withLock { $0 = ThreadSafeReference(unpinned: value) } }
                return value
            } catch {
                realmMisuse("Cannot open the Realm of a @ThreadSafe value", error)
            }
        }
        set {
            let new = newValue.map { ThreadSafeReference(unpinned: $0) }
            reference.withLock { $0 = new }
        }
    }
}

extension ThreadSafeReference {
    /// Whether a Realm resolved the reference already (Realm's
    /// `isInvalidated`): a reference resolves once.
    ///
    /// ```swift
    /// if !reference.isInvalidated, let dog = realm.resolve(reference) { print(dog.name) }
    /// ```
    public var isInvalidated: Bool { resolved.withLock { $0 } }
}
