import Foundation
import Trove
import TroveStorage

extension Decimal128 {
    /// Whether the value is a NaN, quiet or signaling: Realm's `isSignaling`
    /// (Trove's ``Decimal128/isSignalingNaN`` is the IEEE 754 test).
    ///
    /// ```swift
    /// if price.isSignaling { price = 0 }
    /// ```
    public var isSignaling: Bool { isNaN }

    /// Converts a number, a numeric string, a `Decimal` or a `Decimal128`
    /// (Realm's `Decimal128(value:)`); `NSNull` gives a signaling NaN, Realm's
    /// null decimal. Anything else is a programmer error and traps, naming
    /// the value, as Realm's does.
    ///
    /// ```swift
    /// let price = Decimal128(value: dictionary["price"]!)
    /// ```
    public init(value: Any) {
        // Realm's null decimal is a signaling NaN.
        if value is NSNull {
            self = .signalingNaN
            return
        }
        if let string = value as? String {
            do {
                self = try Decimal128(string: string)
            } catch {
                realmMisuse("Cannot make a Decimal128 from \"\(string)\"", error)
            }
            return
        }
        guard let stored = StoredValue(any: value), let decimal = stored.decimal128Value else {
            realmMisuse(
                "Cannot make a Decimal128 from \(value)",
                TroveError(.invalidValue, "\(type(of: value)) is not a number, a numeric string or a decimal"))
        }
        self = decimal
    }

    /// Converts an `NSNumber` (Realm's `Decimal128(number:)`).
    ///
    /// ```swift
    /// let price = Decimal128(number: 12)
    /// ```
    public init(number: NSNumber) {
        self.init(value: number)
    }
}
