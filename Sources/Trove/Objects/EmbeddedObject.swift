/// An object that belongs to exactly one other object: it is added with its
/// owner, lives while the owner links to it, and is deleted with the owner
/// or when the owner's link moves on. Query through it with a key path.
///
/// ```swift
/// final class Address: EmbeddedObject {
///     @Persisted var street = ""
///     @Persisted var city = ""
/// }
/// final class Contact: Object {
///     @Persisted(primaryKey: true) var name = ""
///     @Persisted var address: Address?
///     @Persisted var previousAddresses = List<Address>()
/// }
///
/// try db.write { contact.address = Address(city: "Seoul") }   // the old one is deleted
/// let inSeoul = try db.objects(Contact.self).filter("address.city == 'Seoul'")
/// ```
///
/// Each embedded type is stored as a type of its own (so ``Database/verify()``
/// and the `trove` CLI see it); what makes it embedded is that links own it.
open class EmbeddedObject: Object {}
