import TroveStorage

extension Results {
    /// Sets one property of every element to `value`, inside a write, and
    /// returns how many elements it set. SQL's `UPDATE … SET`, and Realm's
    /// `setValue(_:forKey:)` on results, checked by the compiler.
    ///
    /// ```swift
    /// try db.write {
    ///     try db.objects(Photo.self).filter("albumID == %@", albumID).set(\.isHidden, to: true)
    /// }
    /// ```
    ///
    /// No element is materialized: the stored values are changed where they
    /// lie (see ``update(_:_:)``). Change notifications report each element as
    /// modified, as a setter would. Throws `notInWriteTransaction` outside a
    /// write, `invalidProperty` for the primary key.
    @discardableResult
    public func set<Value: _TroveStorable>(_ keyPath: WritableKeyPath<Element, Value>, to value: Value) throws -> Int {
        try update(keyPath) { _ in value }
    }

    /// Replaces one property of every element by `transform` of its current
    /// value, inside a write, and returns how many elements it changed.
    ///
    /// ```swift
    /// try db.write {
    ///     try db.objects(Player.self).update(\.score) { $0 + 10 }
    /// }
    /// ```
    ///
    /// The elements are the results' matches when the call starts; each is
    /// visited once, in storage order. No object or struct is made: each
    /// stored value is read, transformed and written back where it lies (in
    /// the cluster layout, column by column, cluster by cluster), and indexes,
    /// link counts and full-text indexes follow as they do for a setter.
    /// `transform` must not read or write the database. If it throws, the
    /// error comes out of this call and the elements already changed stay
    /// changed in the write (throwing out of `write` cancels them all).
    ///
    /// A key path through a link (`\.owner!.name`), or to a link, sets each
    /// element in turn through its setter instead.
    @discardableResult
    public func update<Value: _TroveStorable>(
        _ keyPath: WritableKeyPath<Element, Value>, _ transform: (Value) throws -> Value
    ) throws -> Int {
        if let column = source.columnForKeyPath(keyPath), Value._troveLinkTarget == nil {
            precondition(
                Value._troveCollection == nil,
                "Trove: \(table.name).\(table.schema.properties[column].name) is a collection; change its elements instead of setting it on every element"
            )
            let property = table.schema.properties[column]
            let typed = Value._troveType == property.type && (property.isOptional || !Value._troveIsOptional)
            // Every object of the type: no list of keys is made where a walk over them all will do.
            let selected = predicate == nil && sort.isEmpty ? nil : keys
            return try database.updateEach(selected, column: column, table: table, typed: typed) { stored in
                try transform(Value._troveFromStored(stored))._troveStored
            }
        }
        precondition(
            source.objectType != nil,
            "Trove: \(keyPath) is not a stored property of \(table.name); update(_:_:) sets stored properties")
        _ = try database.requireWrite("update(_:_:)")
        var count = 0
        for element in self {
            var object = element  // a class: the setter writes through
            object[keyPath: keyPath] = try transform(object[keyPath: keyPath])
            count += 1
        }
        return count
    }
}
