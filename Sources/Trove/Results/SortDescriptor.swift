import Foundation

/// A sort criterion by property name, for ``Results/sorted(by:)-([SortDescriptor])``.
public struct SortDescriptor: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The property to sort by, named as for ``Results/sorted(byKeyPath:ascending:)``:
    /// it may go through links and end in an aggregate, such as `tasks.@count`.
    public var keyPath: String
    /// True to sort from smallest to largest (the default), false for the reverse.
    public var ascending: Bool

    /// A sort by `keyPath`, ascending unless `ascending` is false.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// A sort by the property a model key path reads, through links too
    /// (`\Task.owner?.name` sorts by `owner.name`). A key path that reads no
    /// stored property traps.
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: \PhotoData.dateAdded, ascending: false)
    /// ```
    public init<Root: Object, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        guard let path = ModelInfo.of(Root.self).path(of: keyPath) else {
            preconditionFailure("Trove: \(keyPath) is not a persisted property of \(Root.self)")
        }
        self.init(keyPath: path, ascending: ascending)
    }

    /// An ascending sort by the property a string literal names.
    ///
    /// ```swift
    /// let byName: SortDescriptor = "name"
    /// ```
    public init(stringLiteral keyPath: String) {
        self.init(keyPath: keyPath)
    }

    /// The same sort in the other direction.
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: "date").reversed()
    /// ```
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    /// The key path and direction, as Realm describes a sort descriptor:
    /// `SortDescriptor(keyPath: name, direction: ascending)`.
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
    }
}
