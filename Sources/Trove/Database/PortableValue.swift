/// One property of an object in a form that means the same in any file: what
/// ``ObjectExporter`` reads and ``ObjectImporter`` writes (the `trove` tool's
/// export and import), so that an export imports into another file.
///
/// Object keys are private to a file, so a link is written as the linked
/// object's primary key. A type without a primary key has nothing else to
/// name its objects by: a link to one is its object key, which names the same
/// object only in the file it came from and in copies of it. An embedded
/// object has no identity of its own and is written in full, in place.
package enum PortableValue: Equatable, Sendable {
    /// A value; for a link, the linked object's primary key (its object key
    /// when its type has none), or `.null` for no link.
    case value(StoredValue)
    /// An embedded object: its values by column of its type, nil where a
    /// value is not given (the property's default; an export gives every value).
    case object([PortableValue?])
    /// The elements of a list, or the members of a set (in value order).
    case elements([PortableValue])
    /// The entries of a map, in key order.
    case entries([PortableEntry])
    /// A link held in a mixed value: the linked object's type and primary key
    /// (object key without one).
    case link(typeName: String, key: StoredValue)

    /// `.value(.null)`: no value, no link.
    package static let null = PortableValue.value(.null)
}

/// One entry of a map as a ``PortableValue``.
package struct PortableEntry: Equatable, Sendable {
    package var key: String
    package var value: PortableValue

    package init(key: String, value: PortableValue) {
        self.key = key
        self.value = value
    }
}

/// How a link, in portable form, names the objects of the type it points at.
enum PortableTarget {
    /// An embedded object: written in full, in place.
    case embedded(TableInfo)
    /// An integer primary key, which is the object key too.
    case integerKey(TableInfo)
    /// Any other primary key (the column holding it).
    case primaryKey(TableInfo, column: Int)
    /// A type without a primary key: the object key.
    case objectKey(TableInfo)

    /// The naming of links from `property` (a link, or a collection of links).
    init(of property: PropertySchema, in database: Database) throws {
        let table = try database.tableInfo(named: property.objectType ?? "")
        self.init(table, owned: property.ownsTargets == true)
    }

    init(_ table: TableInfo, owned: Bool) {
        if owned {
            self = .embedded(table)
        } else if let column = table.primaryKeyColumn {
            self = table.keyIsPrimaryKey ? .integerKey(table) : .primaryKey(table, column: column)
        } else {
            self = .objectKey(table)
        }
    }

    var table: TableInfo {
        switch self {
        case .embedded(let table), .integerKey(let table), .primaryKey(let table, _), .objectKey(let table): table
        }
    }
}
