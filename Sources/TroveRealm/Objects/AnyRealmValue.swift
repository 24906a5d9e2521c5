import Trove

/// Realm's mixed value type: Trove's ``Trove/Mixed``.
///
/// ```swift
/// @Persisted var value: AnyRealmValue = .none
/// ```
public typealias AnyRealmValue = Mixed
