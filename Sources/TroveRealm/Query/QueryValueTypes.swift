import Foundation
import Trove

/// Any `Optional`, so a ``Query`` on an optional can reach its wrapped type
/// (Realm's `OptionalProtocol`).
///
/// ```swift
/// realm.objects(Dog.self).where { $0.owner.name == "Ann" }   // owner: Person?
/// ```
public protocol OptionalProtocol {
    /// The type of the value inside.
    associatedtype Wrapped
}

/// `Optional` is an ``OptionalProtocol``, so optional links and values query
/// as their wrapped type: `$0.owner.name`, `$0.nickname.starts(with: "A")`.
extension Optional: OptionalProtocol {}

/// The property types that a ``Query`` orders with `<`, `<=`, `>` and `>=`:
/// numbers, dates, strings and data, and their optionals.
///
/// ```swift
/// realm.objects(Person.self).where { $0.born < cutoff && $0.name > "M" }
/// ```
public protocol _QueryComparable {}

/// The numeric property types of a ``Query`` (numbers and dates), which also
/// have the collection aggregates `min`, `max`, `sum` and `avg` (Realm's `_QueryNumeric`).
///
/// ```swift
/// realm.objects(Person.self).where { $0.dogs.age.avg > 5 }
/// ```
public protocol _QueryNumeric: _QueryComparable {}

/// The property types the substring operators of a ``Query`` apply to:
/// `String` and `Data`, and their optionals (Realm's `_QueryBinary`).
///
/// ```swift
/// realm.objects(Photo.self).where { $0.thumbnail.starts(with: Data([0xFF, 0xD8])) }
/// ```
public protocol _QueryBinary: _QueryComparable {}

/// The string property types of a ``Query``, which also have `like(_:caseInsensitive:)`
/// (Realm's `_QueryString`).
///
/// ```swift
/// realm.objects(Person.self).where { $0.name.like("A?n*") }
/// ```
public protocol _QueryString: _QueryBinary {}

extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
/// A mixed value orders against numbers, dates, strings and data by what
/// it holds, and has the collection aggregates (as in Realm).
extension Mixed: _QueryNumeric {}
extension Data: _QueryBinary {}
extension String: _QueryString {}

/// An optional of an ordered type orders as it does (`nil` matches no `<` or `>`).
extension Optional: _QueryComparable where Wrapped: _QueryComparable {}
/// An optional number is numeric in a query (aggregates skip `nil`).
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}
/// An optional `String` or `Data` has the substring operators.
extension Optional: _QueryBinary where Wrapped: _QueryBinary {}
/// An optional `String` has `like(_:caseInsensitive:)`.
extension Optional: _QueryString where Wrapped: _QueryString {}

/// The collection properties a ``Query`` goes through, comparing each
/// element: `List`, `MutableSet` and `LinkingObjects`.
///
/// ```swift
/// realm.objects(Person.self).where { $0.dogs.name == "Rex" }   // ANY dogs.name == 'Rex'
/// ```
public protocol _QueryCollection {
    /// The type of the elements.
    associatedtype Element
}

/// A list's elements, one by one, in a query.
extension List: _QueryCollection {}
/// A set's elements, one by one, in a query.
extension MutableSet: _QueryCollection {}
/// The linking objects, one by one, in a query.
extension LinkingObjects: _QueryCollection {}

/// The map properties a ``Query`` reads by key or compares value by value.
///
/// ```swift
/// realm.objects(Item.self).where { $0.prices["eur"] > 10 || $0.prices.keys == "usd" }
/// ```
public protocol _QueryMap {
    /// The type of the keys (`String`).
    associatedtype Key
    /// The type of the values.
    associatedtype Value
}

/// A map's keys and values in a query.
extension Map: _QueryMap {}
