import Foundation
import Trove

/// A value read through key-value coding (an element of
/// `value(forKey: "self")`, `Map.object(forKey:)`) as the Swift type `T`
/// (Realm's `dynamicBridgeCast(fromObjectiveC:)`); traps when it is not one.
///
/// ```swift
/// let score: Int = dynamicBridgeCast(fromObjectiveC: player.scores.value(forKey: "self")[0])
/// ```
public func dynamicBridgeCast<T>(fromObjectiveC x: Any) -> T {
    if let value = x as? T { return value }
    if let storable = T.self as? any _TroveStorable.Type, let value = converted(x, to: storable) as? T { return value }
    preconditionFailure("TroveRealm: could not convert value '\(x)' to type '\(T.self)'")
}

/// A Swift value as key-value coding hands it over (Realm's
/// `dynamicBridgeCast(fromSwift:)`): nil as `NSNull`, a mixed value as what it holds.
///
/// ```swift
/// let object = dynamicBridgeCast(fromSwift: AnyRealmValue.int(3))   // 3
/// ```
public func dynamicBridgeCast<T>(fromSwift x: T) -> Any {
    let value = (x as? Mixed).map(\.boxedValue) ?? flattenOptional(x)
    return value ?? NSNull()
}

private func converted<S: _TroveStorable>(_ value: Any, to _: S.Type) -> Any? {
    S._troveConvert(value is NSNull ? nil : value)
}
