import Trove

extension RealmCollection where Element: Object {
    /// The objects a typed query matches, as live results (Realm's `where`).
    ///
    /// ```swift
    /// let adults = realm.objects(Person.self).where { $0.age >= 18 && $0.name.starts(with: "A") }
    /// let rexes = kennel.dogs.where { $0.name == "Rex" }
    /// ```
    ///
    /// See ``Query`` for the operators. The closure becomes a query string
    /// for `filter(_:_:)`, so indexes apply as they do to the string. A
    /// query Trove cannot run traps with the reason, as Realm raises.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let (format, arguments) = isIncluded(Query(root: realmResults.database)).predicateParts()
        return realmQuery(format, arguments)
    }

    /// The position of the first object a typed query matches, or nil.
    ///
    /// ```swift
    /// let firstPuppy = kennel.dogs.index(matching: { $0.age < 1 })
    /// ```
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        if let objects = _unmanagedObjects {
            let (format, arguments) = isIncluded(Query._constructForTesting())._constructPredicate()
            return unmanagedIndex(in: objects, format, arguments)
        }
        guard let first = self.where(isIncluded).first else { return nil }
        return index(of: first)
    }
}
