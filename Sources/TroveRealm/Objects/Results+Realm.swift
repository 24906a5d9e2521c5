import Trove

extension Results {
    /// Realm's `filter(_:)` without arguments, which does not throw (it is
    /// chosen over Trove's throwing `filter(_:_:)` in code importing TroveRealm).
    public func filter(_ predicateFormat: String) -> Results {
        do {
            return try filter(predicateFormat, arguments: [])
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }

    /// Realm's `filter(_:_:)`, which does not throw: a query string that
    /// cannot be read traps with Trove's message, as Realm's raises.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results {
        do {
            return try filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }
}

extension List where Element: Object {
    /// Realm's `filter(_:)` on a list without arguments, which does not throw.
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// Realm's `filter(_:_:)` on a list, which does not throw: a query string
    /// that cannot be read traps with Trove's message.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do {
            return try results().filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }
}

extension LinkingObjects {
    /// Realm's `filter(_:)` on inverse links without arguments, which does not throw.
    public func filter(_ predicateFormat: String) -> Results<Element> { realmQuery(predicateFormat, []) }

    /// Realm's `filter(_:_:)` on inverse links, which does not throw.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        realmQuery(predicateFormat, args)
    }
}
