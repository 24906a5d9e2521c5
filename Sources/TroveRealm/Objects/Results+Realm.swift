import Trove

extension Results {
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
    /// Realm's `filter(_:_:)` on a list, which does not throw: a query string
    /// that cannot be read traps with Trove's message.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do {
            return try resultsOfList.filter(predicateFormat, arguments: args)
        } catch {
            realmMisuse("Invalid predicate '\(predicateFormat)'", error)
        }
    }
}
