import Foundation

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Results {
    /// The elements that match a Foundation `#Predicate`, answered by the
    /// same engine (and indexes) as a query string.
    ///
    /// ```swift
    /// let start = Date.now.addingTimeInterval(-86_400)
    /// let cats = try db.objects(PhotoData.self)
    ///     .filter(#Predicate { $0.memo.contains("cat") && $0.dateAdded > start })
    /// ```
    ///
    /// Comparisons, `&&`, `||`, `!`, `contains`, `starts(with:)`, `??`,
    /// optional chains through links (`$0.owner?.name == "Ann"`), `+`/`-` of
    /// a constant, ranges, `contains(where:)`, `allSatisfy`, `filter { }.count`
    /// and `count`/`isEmpty` of collections translate; so does any part that
    /// does not read the object (it is evaluated once). Anything else throws
    /// `TroveError.Kind.unsupportedPredicate` naming the expression, rather
    /// than answer differently from the closure.
    public func filter(_ predicate: Predicate<Element>) throws -> Results {
        let expression = try PredicateTranslation.expression(of: predicate) { [database] in
            database.propertyName(for: $0)
        }
        return try filtered(by: expression)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension List where Element: Object {
    /// The list's objects that match a `#Predicate`, in list order.
    ///
    /// ```swift
    /// let long = try playlist.songs.filter(#Predicate { $0.seconds > 300 })
    /// ```
    public func filter(_ predicate: Predicate<Element>) throws -> Results<Element> {
        try results().filter(predicate)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension MutableSet where Element: Object {
    /// The set's objects that match a `#Predicate`.
    public func filter(_ predicate: Predicate<Element>) throws -> Results<Element> {
        try results().filter(predicate)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension LinkingObjects {
    /// The linking objects that match a `#Predicate`.
    public func filter(_ predicate: Predicate<Element>) throws -> Results<Element> {
        guard let results = asResults() else {
            preconditionFailure("Trove: an unmanaged object has no linking objects to query")
        }
        return try results.filter(predicate)
    }
}

extension Database {
    /// The stored property a model key path names (`\Person.age` is "age"), or nil.
    /// TroveRealm's typed queries (`where { $0.age > 18 }`) name properties with it.
    package func propertyName(for keyPath: AnyKeyPath) -> String? {
        let root = type(of: keyPath).rootType
        if let objectType = root as? Object.Type {
            guard let binding = try? objectBinding(for: objectType), let column = binding.column(forKeyPath: keyPath) else {
                return nil
            }
            return binding.table.schema.properties[column].name
        }
        if let valueType = root as? any Persistable.Type {
            func name<T: Persistable>(_: T.Type) -> String? {
                guard let path = keyPath as? PartialKeyPath<T> else { return nil }
                return ValueModel.propertyName(of: path, in: T.self)
            }
            return name(valueType)
        }
        return nil
    }
}

/// The comparison of ``Results/filter(_:_:_:)``.
public enum QueryOperator: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
    /// String operators; `caseInsensitive` ignores case (as `[c]` does).
    case beginsWith(caseInsensitive: Bool = false)
    case endsWith(caseInsensitive: Bool = false)
    case contains(caseInsensitive: Bool = false)

    var parts: (ComparisonOperator, StringOptions) {
        switch self {
        case .equal: return (.equal, [])
        case .notEqual: return (.notEqual, [])
        case .less: return (.less, [])
        case .lessOrEqual: return (.lessOrEqual, [])
        case .greater: return (.greater, [])
        case .greaterOrEqual: return (.greaterOrEqual, [])
        case .beginsWith(let folded): return (.beginsWith, folded ? .caseInsensitive : [])
        case .endsWith(let folded): return (.endsWith, folded ? .caseInsensitive : [])
        case .contains(let folded): return (.contains, folded ? .caseInsensitive : [])
        }
    }
}

extension Results {
    /// The elements whose property compares as given with a value: a
    /// one-condition filter checked by the compiler, on every platform.
    ///
    /// ```swift
    /// let adults = db.objects(Person.self).filter(\.age, .greaterOrEqual, 18)
    /// let kims = db.objects(Person.self).filter(\.name, .beginsWith(caseInsensitive: true), "kim")
    /// ```
    public func filter<Value: _TroveStorable>(_ keyPath: KeyPath<Element, Value>, _ op: QueryOperator, _ value: Value)
        -> Results
    {
        let name = table.schema.properties[source.column(for: keyPath)].name
        let (comparison, options) = op.parts
        do {
            return try filtered(
                by: PropertyPath(names: [name]).comparison(comparison, .value(value._troveStored), options))
        } catch {
            preconditionFailure(
                "Trove: cannot filter \(table.name).\(name) with \(op): \((error as? TroveError)?.message ?? "\(error)")")
        }
    }

    /// The elements whose property is one of `values` (`IN`).
    ///
    /// ```swift
    /// let nearby = db.objects(Person.self).filter(\.city, in: ["Oslo", "Bergen"])
    /// ```
    public func filter<Value: _TroveStorable>(_ keyPath: KeyPath<Element, Value>, in values: [Value]) -> Results {
        let name = table.schema.properties[source.column(for: keyPath)].name
        do {
            return try filtered(by: PropertyPath(names: [name]).comparison(.in, .list(values.map(\._troveStored)), []))
        } catch {
            preconditionFailure("Trove: cannot filter \(table.name).\(name) by IN: \(error)")
        }
    }
}
