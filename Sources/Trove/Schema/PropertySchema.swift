/// One persisted property, as stored in the file's schema catalog.
public struct PropertySchema: Codable, Sendable, Equatable {
    public var name: String
    public var type: PropertyType
    public var isOptional: Bool
    public var isPrimaryKey: Bool
    public var isIndexed: Bool
    /// A primary key that takes the next free value when an object is added with 0.
    public var isAutoIncrement: Bool
    /// What records written before this property existed read for it.
    public var defaultValue: StoredValue?

    public init(
        name: String, type: PropertyType, isOptional: Bool = false, isPrimaryKey: Bool = false, isIndexed: Bool = false,
        isAutoIncrement: Bool = false, defaultValue: StoredValue? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
        self.isAutoIncrement = isAutoIncrement
        self.defaultValue = defaultValue
    }

    /// The Swift spelling of the type, with `?` when optional.
    public var typeDescription: String { type.swiftName + (isOptional ? "?" : "") }

    /// The value a missing property reads as.
    var fallback: StoredValue {
        if let defaultValue { return defaultValue }
        if isOptional { return .null }
        return type.zeroValue
    }
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
        }
    }
}
