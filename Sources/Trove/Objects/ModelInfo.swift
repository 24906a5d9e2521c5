@_spi(Reflection) import Swift

/// What reflection learns about an ``Object`` subclass: its `@Persisted`
/// fields in declaration order (superclass first), where each sits in the
/// instance, and the schema they describe. Computed once per class.
final class ModelInfo: @unchecked Sendable {
    struct Field {
        let schema: PropertySchema
        /// Where the `Persisted` wrapper sits in an instance.
        let offset: Int
        /// Where its value sits in an instance.
        let valueOffset: Int
        /// Where its column (or, unmanaged, its own offset) sits in an instance.
        let columnOffset: Int
        /// The `@Persisted` wrapper's type; nil for a legacy field.
        let accessor: (any PersistedField.Type)?
        let storable: any _TroveStorable.Type
        let linkTarget: Object.Type?
        /// A field declared without `@Persisted`, as Realm's legacy models do
        /// (`let tags = List<String>()`): the instance it holds is attached to
        /// the stored property when the object is bound. nil for `@Persisted`.
        let legacy: (any _TroveDeclaredWithPersisted.Type)?

        /// The field's value in an unmanaged instance.
        @inline(__always)
        func value(in base: UnsafeRawPointer) -> StoredValue {
            storable._troveLoad(from: base + valueOffset)
        }
    }

    let typeName: String
    let fields: [Field]
    let schema: ObjectSchema
    let type: Object.Type
    /// The fields as key-value access and `Object(value:)` reach them.
    let namedProperties: [NamedProperty]
    /// The legacy fields (declared without `@Persisted`), attached when an object is bound.
    let legacyFields: [Field]

    private static let cache = Locked<[ObjectIdentifier: ModelInfo]>([:])

    /// The index in `fields` of the legacy field of `instance` that holds
    /// `value` (the same collection or wrapper instance): how a key path to
    /// a field declared without `@Persisted` (`\Dog.tags` of `let tags =
    /// List<String>()`) is told apart, since reading it records no column.
    func legacyFieldIndex(holding value: Any?, in instance: Object) -> Int? {
        guard !legacyFields.isEmpty, let value = value.flatMap(flattenOptional) else { return nil }
        // Inverse links are a value: known by the field holding the same origin.
        if let inverse = value as? any _TroveOriginNamed, let origin = inverse.originProperty {
            var mirror: Mirror? = Mirror(reflecting: instance)
            while let current = mirror {
                for child in current.children {
                    guard let label = child.label, let held = child.value as? any _TroveOriginNamed,
                        Swift.type(of: held) == Swift.type(of: inverse), held.originProperty == origin
                    else { continue }
                    return fields.indices.first { fields[$0].legacy != nil && fields[$0].schema.name == label }
                }
                mirror = current.superclassMirror
            }
            return nil
        }
        guard Swift.type(of: value) is AnyClass else { return nil }
        let target = UnsafeRawPointer(Unmanaged.passUnretained(value as AnyObject).toOpaque())
        let base = UnsafeRawPointer(Unmanaged.passUnretained(instance).toOpaque())
        return fields.indices.first { index in
            fields[index].legacy != nil && base.load(fromByteOffset: fields[index].offset, as: UnsafeRawPointer?.self) == target
        }
    }
    /// Classes whose info is being worked out (their probe instance is being made).
    private static let building = Locked<Set<ObjectIdentifier>>([])

    static func of(_ type: Object.Type) -> ModelInfo {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        building.withLock { _ = $0.insert(ObjectIdentifier(type)) }
        defer { building.withLock { _ = $0.remove(ObjectIdentifier(type)) } }
        let info = ModelInfo(type)
        cache.withLock { $0[ObjectIdentifier(type)] = info }
        return info
    }

    /// The info of `type`, unless it is being worked out right now: a setter
    /// called from the `init()` that makes the probe must not ask for it again.
    static func unlessBuilding(_ type: Object.Type) -> ModelInfo? {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        if building.withLock({ $0.contains(ObjectIdentifier(type)) }) { return nil }
        return of(type)
    }

    private init(_ type: Object.Type) {
        self.type = type
        typeName = ModelInfo.storedName(of: type)
        var found: [(name: String, offset: Int, accessor: any PersistedField.Type)] = []
        var legacy: [(name: String, offset: Int, type: any (_TroveDeclaredWithPersisted & _TroveStorable).Type)] = []
        let ignored = Set(type.ignoredProperties())
        // _EachFieldOptions.classType == 1: walk a class, superclass fields first.
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
            if let accessor = fieldType as? any PersistedField.Type {
                var label = String(cString: name)
                if label.hasPrefix("_") { label.removeFirst() }
                found.append((label, offset, accessor))
            } else if let legacyType = fieldType as? any (_TroveDeclaredWithPersisted & _TroveStorable).Type,
                !ignored.contains(String(cString: name))
            {
                legacy.append((String(cString: name), offset, legacyType))
            }
            return true
        }
        // Realm's legacy class methods name the key and indexes (`primaryKey()`, `indexedProperties()`).
        let namedKey = type.primaryKey()
        let namedIndexes = Set(type.indexedProperties())
        // A fresh instance supplies each property's options and default value.
        let probe = _TroveSchemaProbe.$isMaking.withValue(true) { type.init() }
        let base = Unmanaged.passUnretained(probe).toOpaque()
        var fields = found.map { entry in
            let pointer = UnsafeRawPointer(base.advanced(by: entry.offset))
            var options = entry.accessor.options(at: pointer)
            if entry.name == namedKey { options.primaryKey = true }
            if namedIndexes.contains(entry.name) { options.indexed = true }
            let valueOffset = entry.offset + entry.accessor.valueOffset
            let storable = entry.accessor.storableType
            let target = entry.accessor.linkTarget
            let collection = entry.accessor.collection
            let isPlain = target == nil && collection == nil
            let schema = PropertySchema(
                name: entry.name, type: entry.accessor.valueType, isOptional: entry.accessor.isOptional,
                isPrimaryKey: options.primaryKey, isIndexed: options.indexed || options.primaryKey,
                isAutoIncrement: options.autoIncrement,
                defaultValue: isPlain ? storable._troveLoad(from: UnsafeRawPointer(base) + valueOffset) : nil,
                objectType: target.map { ModelInfo.storedName(of: $0) }, collection: collection,
                deleteRule: target != nil && collection != .linkingObjects && options.deleteRule != .nullify
                    ? options.deleteRule : nil,
                originProperty: (storable._troveLoadAny(from: UnsafeRawPointer(base) + valueOffset) as? any _TroveOriginNamed)?
                    .originProperty,
                ownsTargets: target is EmbeddedObject.Type && collection != .linkingObjects ? true : nil,
                isFullTextIndexed: options.fullText)
            return Field(
                schema: schema, offset: entry.offset, valueOffset: valueOffset,
                columnOffset: entry.offset + entry.accessor.columnOffset, accessor: entry.accessor, storable: storable,
                linkTarget: target, legacy: nil)
        }
        // Legacy fields hold the value itself (a List, a RealmProperty...): no wrapper, no column slot.
        legacyFields = legacy.map { entry in
            let pointer = UnsafeRawPointer(base.advanced(by: entry.offset))
            let storable = entry.type as any _TroveStorable.Type
            let target = storable._troveLinkTarget
            let collection = storable._troveCollection
            let isPlain = target == nil && collection == nil
            let schema = PropertySchema(
                name: entry.name, type: storable._troveType, isOptional: storable._troveIsOptional,
                isPrimaryKey: entry.name == namedKey, isIndexed: namedIndexes.contains(entry.name) || entry.name == namedKey,
                defaultValue: isPlain ? storable._troveLoad(from: pointer) : nil,
                objectType: target.map { ModelInfo.storedName(of: $0) }, collection: collection,
                originProperty: (storable._troveLoadAny(from: pointer) as? any _TroveOriginNamed)?.originProperty,
                ownsTargets: target is EmbeddedObject.Type && collection != .linkingObjects ? true : nil)
            return Field(
                schema: schema, offset: entry.offset, valueOffset: entry.offset, columnOffset: -1, accessor: nil,
                storable: storable, linkTarget: target, legacy: entry.type)
        }
        fields += legacyFields
        // Realm's custom column names (`propertiesMapping()`).
        let mapping = type.propertiesMapping()
        if !mapping.isEmpty {
            fields = fields.map { field in
                var schema = field.schema
                if let column = mapping[schema.name] { schema.columnName = column }
                return Field(
                    schema: schema, offset: field.offset, valueOffset: field.valueOffset, columnOffset: field.columnOffset,
                    accessor: field.accessor, storable: field.storable, linkTarget: field.linkTarget, legacy: field.legacy)
            }
        }
        self.fields = fields
        schema = ObjectSchema(name: typeName, properties: fields.map(\.schema), ancestors: ModelInfo.ancestors(of: type))
        namedProperties = fields.map(NamedProperty.init(field:))
    }

    /// The model classes `type` descends from, nearest first, up to (not
    /// including) Trove's own base classes.
    static func ancestors(of type: Object.Type) -> [String] {
        var names: [String] = []
        var current: AnyClass? = _getSuperclass(type)
        while let candidate = current, let model = candidate as? Object.Type,
            model != Object.self, model != EmbeddedObject.self, model != DynamicObject.self
        {
            names.append(storedName(of: model))
            current = _getSuperclass(candidate)
        }
        return names
    }

    /// The model class stored under `name`: one this process has used, or
    /// any in the program.
    static func knownType(named name: String) -> Object.Type? {
        cache.withLock { $0.values.first { $0.typeName == name }?.type } ?? ModelClasses.named(name)
    }

    /// The unqualified Swift name, so a model moved between modules keeps its table.
    static func storedName(of type: Any.Type) -> String {
        if let model = type as? Object.Type, let name = model._realmObjectName() { return name }
        let full = String(describing: type)
        return full.split(separator: ".").last.map(String.init) ?? full
    }

    /// Checks what Trove needs of a model; returns the problems in words.
    func validate() -> [String] {
        var problems: [String] = []
        if type == DynamicObject.self {
            return [
                "DynamicObject is a stored type read by its name: use dynamicObjects(\"Type\"), dynamicObject(ofType:forPrimaryKey:) or create(\"Type\", value:)"
            ]
        }
        for field in fields where field.linkTarget == DynamicObject.self {
            problems.append("\(typeName).\(field.schema.name): a model links to a model class, not to DynamicObject")
        }
        if fields.isEmpty {
            problems.append("\(typeName) has no @Persisted properties")
        }
        if let named = type.primaryKey(), !fields.contains(where: { $0.schema.name == named }) {
            problems.append("\(typeName).primaryKey() names '\(named)', which is not a @Persisted property")
        }
        for named in type.indexedProperties() where !fields.contains(where: { $0.schema.name == named }) {
            problems.append("\(typeName).indexedProperties() names '\(named)', which is not a @Persisted property")
        }
        for named in type.ignoredProperties() where fields.contains(where: { $0.schema.name == named }) {
            problems.append(
                "\(typeName).\(named) is @Persisted and named in ignoredProperties(); remove @Persisted to keep it out of the database"
            )
        }
        let keys = fields.filter { $0.schema.isPrimaryKey }
        if type is EmbeddedObject.Type, let key = keys.first {
            problems.append(
                "\(typeName).\(key.schema.name): an EmbeddedObject has no primary key; it is identified by the object that holds it"
            )
        }
        if keys.count > 1 {
            problems.append(
                "\(typeName) declares \(keys.count) primary keys (\(keys.map(\.schema.name).joined(separator: ", "))); use one")
        }
        for field in fields {
            let property = field.schema
            if property.isPrimaryKey, ![.int, .int8, .int16, .int32, .string, .uuid, .objectId].contains(property.type) {
                problems.append(
                    "\(typeName).\(property.name): a primary key must be an integer, String, UUID or ObjectId, not \(property.typeDescription)"
                )
            }
            if property.isFullTextIndexed, property.type != .string || property.collection != nil || property.isPrimaryKey {
                problems.append(
                    "\(typeName).\(property.name): a full-text index needs a String property (not a primary key), not \(property.typeDescription)"
                )
            }
            if property.isIndexed, !property.type.isIndexable {
                problems.append("\(typeName).\(property.name): \(property.typeDescription) properties cannot be indexed")
            }
            if property.type == .link {
                if property.collection == nil, !property.isOptional {
                    problems.append(
                        "\(typeName).\(property.name): a link must be optional; declare it as `\(property.objectType ?? "Object")?`"
                    )
                }
                if property.collection == .list || property.collection == .set, property.isOptional {
                    problems.append(
                        "\(typeName).\(property.name): a collection of objects cannot hold nil; use \(property.collection == .list ? "List" : "MutableSet")<\(property.objectType ?? "Object")>"
                    )
                }
                if property.isIndexed {
                    problems.append("\(typeName).\(property.name): links are indexed already; remove `indexed: true`")
                }
            }
            if property.collection != nil, property.isIndexed || property.isPrimaryKey {
                problems.append("\(typeName).\(property.name): a collection cannot be a primary key or indexed")
            }
            if property.collection == .linkingObjects, property.originProperty == nil {
                problems.append(
                    "\(typeName).\(property.name): declare LinkingObjects with `@Persisted(originProperty: \"link\")`")
            }
            if property.isAutoIncrement, !(property.isPrimaryKey && property.type.isInteger) {
                problems.append("\(typeName).\(property.name): autoIncrement needs an integer primary key")
            }
        }
        return problems
    }
}

/// Whether the instance being made is the one schema discovery reads its
/// defaults and options from (a model whose property default cannot be made
/// is refused when an object of it is made, not when it is registered).
public enum _TroveSchemaProbe {
    /// True while schema discovery makes that instance.
    @TaskLocal public static var isMaking = false
}
