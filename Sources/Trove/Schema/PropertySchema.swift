/// One persisted property, as stored in the file's schema catalog.
public struct PropertySchema: Codable, Sendable, Equatable {
    /// The property's name, as queries, migrations and dynamic objects spell it.
    public var name: String
    /// The stored type; for a collection, the type of its elements.
    public var type: PropertyType
    /// Whether the property can hold nil; for a collection, whether its elements can.
    public var isOptional: Bool
    /// Whether the property is the type's primary key.
    public var isPrimaryKey: Bool
    /// Whether a secondary index is kept on the property.
    public var isIndexed: Bool
    /// Whether a full-text index is kept on the property
    /// (`@Persisted(indexed: .fullText)`), which the `TEXT` operator searches.
    public var isFullTextIndexed: Bool {
        get { fullText ?? false }
        set { fullText = newValue ? true : nil }
    }
    /// Stored only when set, so schemas written before full-text indexes
    /// existed read, compare and encode as they did.
    private var fullText: Bool?
    /// A primary key that takes the next free value when an object is added with 0.
    public var isAutoIncrement: Bool
    /// What records written before this property existed read for it.
    public var defaultValue: StoredValue?
    /// For a link, or a collection of links: the type linked to.
    public var objectType: String?
    /// For a collection (``List``, ``LinkingObjects``): which kind; nil for one value.
    public var collection: CollectionKind?
    /// For a link or a list of links: what deleting the owning object does to the targets.
    public var deleteRule: DeleteRule?
    /// For ``LinkingObjects``: the link property of ``objectType`` that points here.
    public var originProperty: String?
    /// A link (or collection of links) to an ``EmbeddedObject`` type: it owns
    /// its targets, which are deleted when no longer linked.
    public var ownsTargets: Bool?
    /// The name a model's `propertiesMapping()` gives the property in the
    /// file, stored only when it differs from ``name``.
    private var mappedName: String?

    /// The property's name in the file (Realm's `columnName`): the one the
    /// model's `propertiesMapping()` gives it, else ``name``. Code, queries
    /// and key paths use ``name``.
    public var columnName: String {
        get { mappedName ?? name }
        set { mappedName = newValue == name ? nil : newValue }
    }

    /// A property named `name` of `type`; each argument sets the property of the
    /// same name, and the defaults describe a plain value: not optional, not a
    /// key, not indexed, not a link or a collection.
    public init(
        name: String, type: PropertyType, isOptional: Bool = false, isPrimaryKey: Bool = false, isIndexed: Bool = false,
        isAutoIncrement: Bool = false, defaultValue: StoredValue? = nil, objectType: String? = nil,
        collection: CollectionKind? = nil, deleteRule: DeleteRule? = nil, originProperty: String? = nil, ownsTargets: Bool? = nil,
        isFullTextIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.isAutoIncrement = isAutoIncrement
        self.defaultValue = defaultValue
        self.objectType = objectType
        self.collection = collection
        self.deleteRule = deleteRule
        self.originProperty = originProperty
        self.ownsTargets = ownsTargets
        self.isFullTextIndexed = isFullTextIndexed
    }

    /// Realm's name for ``isPrimaryKey``.
    public var isPrimary: Bool { isPrimaryKey }
    /// Realm's name for ``objectType``: the class a link or a collection of links holds.
    public var objectClassName: String? { objectType }

    /// The Swift spelling of the type, with `?` when optional.
    public var typeDescription: String {
        let element = (type == .link ? objectType ?? "Object" : type.swiftName) + (isOptional ? "?" : "")
        switch collection {
        case nil: return element
        case .list: return "List<\(element)>"
        case .set: return "MutableSet<\(element)>"
        case .map: return "Map<String, \(element)>"
        case .linkingObjects: return "LinkingObjects<\(objectType ?? "Object")>"
        }
    }

    /// Whether the value sits in the object's record (collections live in tables of their own).
    var isInRecord: Bool { collection == nil }

    /// A value in the record that is not a link.
    var isPlainValue: Bool { isInRecord && type != .link && type != .mixed }

    /// Whether the property points at objects: a link or a list of links.
    var isLink: Bool { type == .link && collection != .linkingObjects }

    /// The value a missing property reads as.
    var fallback: StoredValue {
        if let defaultValue { return defaultValue }
        if isOptional || !isInRecord { return .null }
        return type.zeroValue
    }
}

/// How a collection property holds its values.
public enum CollectionKind: String, Codable, Sendable {
    /// An ordered ``List``.
    case list
    /// A ``MutableSet``: distinct values, kept in value order.
    case set
    /// A ``Map`` from strings to values.
    case map
    /// The objects whose link property points at this one (``LinkingObjects``), computed, not stored.
    case linkingObjects
}

/// What deleting an object does to the objects its link (or list of links) points at.
///
/// ```swift
/// final class ChatRoom: Object {
///     @Persisted(deleteRule: .cascade) var messages = List<ChatMessage>()
/// }
/// ```
public enum DeleteRule: String, Codable, Sendable {
    /// The targets stay; only the link goes (the default).
    case nullify
    /// The targets are deleted too, and what they cascade to, cycles included.
    case cascade
    /// The delete fails with `TroveError.Kind.deleteDenied` while the link points at anything.
    case deny
}

extension PropertyType {
    var zeroValue: StoredValue {
        switch self {
        case .bool: return .bool(false)
        case .int, .int8, .int16, .int32: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .data: return .data(.init())
        case .date: return .date(.init(timeIntervalSinceReferenceDate: 0))
        case .uuid: return .uuid(.init(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .decimal: return .decimal(0)
        case .objectId: return .objectId(ObjectId())
        case .decimal128: return .decimal128(Decimal128())
        case .link, .mixed: return .null
        }
    }
}
