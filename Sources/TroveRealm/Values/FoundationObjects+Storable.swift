import Foundation
import Trove

// Realm models written for Objective-C keep Foundation's classes as property
// types (`@objc dynamic var date: NSDate?`); ported to `@Persisted`, they
// store as their Swift counterparts: NSString as a string, NSDate as a date,
// NSData as data. Reads hand back the Foundation class.

extension NSString: _TroveStorable {
    /// Stored as a string.
    public static var _troveType: PropertyType { .string }
    /// An empty string.
    public static var _troveDefault: Self { _troveFromStored(.string("")) }
    /// The stored string as an `NSString`.
    public static func _troveFromStored(_ value: StoredValue) -> Self {
        guard case .string(let string) = value else { return NSString() as! Self }
        return NSString(string: string) as! Self
    }
    /// The string.
    public var _troveStored: StoredValue { .string(self as String) }
}

extension NSDate: _TroveStorable {
    /// Stored as a date.
    public static var _troveType: PropertyType { .date }
    /// The reference date (1 January 2001), as for `Date`.
    public static var _troveDefault: Self { _troveFromStored(.date(Date(timeIntervalSinceReferenceDate: 0))) }
    /// The stored date as an `NSDate`.
    public static func _troveFromStored(_ value: StoredValue) -> Self {
        guard case .date(let date) = value else { return NSDate(timeIntervalSinceReferenceDate: 0) as! Self }
        return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate) as! Self
    }
    /// The date.
    public var _troveStored: StoredValue { .date(self as Date) }
}

extension NSData: _TroveStorable {
    /// Stored as data.
    public static var _troveType: PropertyType { .data }
    /// Empty data.
    public static var _troveDefault: Self { _troveFromStored(.data(Data())) }
    /// The stored bytes as `NSData`.
    public static func _troveFromStored(_ value: StoredValue) -> Self {
        guard case .data(let data) = value else { return NSData() as! Self }
        return NSData(data: data) as! Self
    }
    /// The bytes.
    public var _troveStored: StoredValue { .data(self as Data) }
}
