/// The base class of stored model classes.
///
/// Subclass it and mark stored properties with ``Persisted``:
///
/// ```swift
/// final class PhotoData: Object {
///     @Persisted(primaryKey: true) var id = UUID().uuidString
///     @Persisted var memo = ""
/// }
///
/// let photo = PhotoData()
/// photo.memo = "first"                 // unmanaged: an ordinary object
/// try db.write { try db.add(photo) }   // now managed: backed by the file
/// try db.write { photo.memo = "edited" }
/// ```
///
/// A managed object is live: its properties read the database handle's
/// current snapshot. It belongs to its ``Database`` handle and, like it, stays
/// in one isolation domain (it is not `Sendable`); pass its primary key to
/// another one instead.
open class Object: CustomStringConvertible {
    // The state a managed read touches is exempt from Swift's dynamic
    // exclusivity checks (a `swift_beginAccess` per read; a live object stays
    // in one isolation domain, so they buy nothing). Measured per field:
    // exempting `_database` and the record copy made W3/W4 8–10% faster,
    // and the key, table and epoch `bind` sets ~76 instructions a lookup;
    // `@Persisted` tells managed from unmanaged objects by `_database`.
    @exclusivity(unchecked) @usableFromInline final var _database: Database?
    @exclusivity(unchecked) final var _objectKey: UInt64 = 0
    /// The table of a managed object (its binding's), or of a key path probe.
    /// Not a field of its own: each object made would retain and release it.
    final var _table: TableInfo? { _binding?.table ?? _recorder?.table }
    /// Set while the object is managed; `@Persisted` reads and writes the
    /// database through it.
    @exclusivity(unchecked) @usableFromInline final var _binding: ObjectBinding?
    final var _recorder: KeyPathRecorder?
    /// A private copy of the record, valid while the handle's generation is
    /// `_recordGeneration`: property reads then need no lookup and no lock.
    /// Raw memory the object owns rather than an array, so a read retains
    /// nothing; replaced only by ``keepRecord(_:layout:generation:)``.
    @exclusivity(unchecked) final var _record = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// The allocation `_record` views, reused while records fit in it.
    @exclusivity(unchecked) final var _recordStorage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    /// The batch `_record` lies in instead, when it was read with others
    /// (``RecordBatch``); nil once the object keeps a record of its own.
    final var _recordBatch: RecordBatch?
    @exclusivity(unchecked) final var _recordGeneration: UInt64 = .max
    /// How many columns the record copy holds and where its fixed slots start:
    /// found, and the record's structure checked, once when the copy is kept,
    /// so a property read does neither.
    @exclusivity(unchecked) final var _recordColumns = 0
    @exclusivity(unchecked) final var _recordHeader = 0
    /// The cluster whose columns the object reads in place instead of a
    /// record copy, and its slot there (``Database/readsInPlace(_:)``); nil
    /// while it reads `_record`. Valid while `_recordGeneration` is the
    /// handle's generation: the snapshot that read it is then still the
    /// handle's, and its pages stay where the view points (the map is fixed).
    @exclusivity(unchecked) final var _view: ClusterView?
    @exclusivity(unchecked) final var _viewSlot = 0
    /// Inside a write: the cluster of the write's cache the object reads and
    /// sets its values in, its slot there, and the cluster's shape and the
    /// handle's write number when the slot was found
    /// (``Database/clusterPlaceIsCurrent(of:)``); nil otherwise.
    @exclusivity(unchecked) final var _cluster: ClusterTable.Cluster?
    @exclusivity(unchecked) final var _clusterSlot = 0
    @exclusivity(unchecked) final var _clusterShape = 0
    @exclusivity(unchecked) final var _clusterSerial: UInt64 = 0
    /// The handle's ``Database/invalidationEpoch`` when the object was bound:
    /// an object handed out before the handle invalidated them is invalidated.
    @exclusivity(unchecked) final var _epoch: UInt32 = 0
    /// The Observation registrar of a tracked object (``ObservationTracked``), once read.
    final var _observation: AnyObject?

    /// A new, unmanaged object with its properties at their initial values.
    /// Trove also calls it for every object it reads from a file: keep it cheap
    /// and free of side effects.
    public required init() {}

    /// The name of the primary key property, for models written the way
    /// Realm's legacy (`@objc dynamic`) models were; `nil` by default.
    /// `@Persisted(primaryKey: true)` says the same on the property itself.
    ///
    /// ```swift
    /// final class Dog: Object {
    ///     @Persisted var name = ""
    ///     override class func primaryKey() -> String? { "name" }
    /// }
    /// ```
    open class func primaryKey() -> String? { nil }

    /// The names of properties to index, Realm's legacy spelling of
    /// `@Persisted(indexed: true)`; none by default.
    ///
    /// ```swift
    /// override class func indexedProperties() -> [String] { ["name"] }
    /// ```
    open class func indexedProperties() -> [String] { [] }

    /// The names of properties Trove must not store. A property without
    /// `@Persisted` is never stored anyway; naming a `@Persisted` one here is
    /// a model error (Trove cannot tell which of the two is meant).
    ///
    /// ```swift
    /// var thumbnail: Data?   // not stored: no @Persisted needed
    /// override class func ignoredProperties() -> [String] { ["thumbnail"] }
    /// ```
    open class func ignoredProperties() -> [String] { [] }

    /// Names the file should give properties other than their Swift names
    /// (Realm's `propertiesMapping()`): Swift name to column name. Code,
    /// queries and key paths keep the Swift names; the column name is
    /// ``PropertySchema/columnName``.
    ///
    /// ```swift
    /// override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
    /// ```
    open class func propertiesMapping() -> [String: String] { [:] }

    /// The name the type is stored under when it is not the class's name
    /// (Realm's `_realmObjectName()`): queries, migrations, the `trove` tool
    /// and links name the type by it.
    ///
    /// ```swift
    /// override class func _realmObjectName() -> String? { "Person_v2" }
    /// ```
    open class func _realmObjectName() -> String? { nil }

    /// Trove's plumbing for links (`_TroveStorable`); makes a fresh unmanaged object.
    public required convenience init(_troveStored: StoredValue) { self.init() }

    /// Whether the object is stored in a database (added, or read from one).
    public var isManaged: Bool { _database != nil }

    /// The database handle the object belongs to, when managed.
    public var database: Database? { _database }

    /// True once a managed object has been deleted (or its add was rolled
    /// back). Reading its properties then traps; check this first.
    public var isInvalidated: Bool {
        guard let database = _database, let table = _table else { return false }
        return table.isRetired || _epoch != database.invalidationEpoch || !database.contains(objectKey: _objectKey, in: table)
    }

    /// The stored type name and each persisted property with its value, as
    /// Realm prints an object (linked objects and collections five levels
    /// deep), or `[invalid object]` once deleted:
    ///
    /// ```
    /// PhotoData {
    ///     id = a1;
    ///     memo = cat;
    ///     isFavorite = 0;
    /// }
    /// ```
    public var description: String { RealmStyleDescription.object(self, depth: RealmStyleDescription.maxDepth) }

    /// The schema of this object's type (Realm's `objectSchema`): as its class
    /// declares it, or for a ``DynamicObject`` as the file stores it.
    ///
    /// ```swift
    /// for property in photo.objectSchema.properties { print(property.name, property.type) }
    /// ```
    public var objectSchema: ObjectSchema { ModelInfo.of(Swift.type(of: self)).schema }

    /// The schema the class declares, whether or not a database stores it
    /// (Realm's `sharedSchema()`); nil when the declaration is not a valid
    /// model (adding it would throw `TroveError.Kind.invalidModel`).
    ///
    /// ```swift
    /// PhotoData.sharedSchema()?.primaryKey   // "id"
    /// ```
    public class func sharedSchema() -> ObjectSchema? {
        let info = ModelInfo.of(self)
        return info.validate().isEmpty ? info.schema : nil
    }

    /// The name the object's type is stored under (the table of a managed object).
    var storedTypeName: String { _table?.name ?? ModelInfo.storedName(of: Swift.type(of: self)) }

    // MARK: Properties by name (overridden by DynamicObject)

    /// The property key-value access names `key`: a `@Persisted` field of the
    /// class; nil when it has none.
    func _namedProperty(_ key: String) -> NamedProperty? {
        ModelInfo.of(Swift.type(of: self)).namedProperties.first { $0.schema.name == key }
    }

    /// Every property, in order: what `Object(value:)` and `create` fill.
    var _namedProperties: [NamedProperty] { ModelInfo.of(Swift.type(of: self)).namedProperties }

    /// A property's value as a Swift value: a link as its object, a collection
    /// as the collection, nil for an empty optional.
    func _readProperty(_ property: NamedProperty) -> Any? {
        let value = property.storable._troveAnyGet(self, field: property.field!)
        // A mixed property reads as the value it holds (nil for `.none`), as a dynamic object's does.
        if let mixed = value as? Mixed { return mixed.boxedValue }
        if let wrapper = value as? any _TroveWrappedValue {
            let wrapped = wrapper._troveWrappedValue
            return (wrapped as? Mixed).map(\.boxedValue) ?? wrapped
        }
        return value
    }

    /// Stores `value` in a property when it has (or converts without loss to)
    /// the property's type; false otherwise.
    func _storeProperty(_ value: Any?, in property: NamedProperty) -> Bool {
        property.storable._troveAnySet(value, self, field: property.field!)
    }

    /// The instance's address, where reflection's field offsets start.
    func withBaseAddress<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
        body(Unmanaged.passUnretained(self).toOpaque())
    }

    // MARK: Managed access (called by Persisted)

    /// A managed property read: the column from the object's record copy
    /// (refreshed when the handle has moved on).
    @usableFromInline
    final func _readManaged(column: Int) -> StoredValue {
        unowned(unsafe) let database = _database.unsafelyUnwrapped  // self keeps them alive
        unowned(unsafe) let binding = _binding.unsafelyUnwrapped
        if _cluster != nil { _leaveClusterUnlessCurrent(database) }
        if _recordGeneration != database.generation {
            database.loadRecord(into: self, table: binding.table)
        }
        let value: StoredValue
        if _cluster != nil {
            value = _clusterValue(column, binding.table)
        } else if _view != nil {
            value = _viewValue(column, binding.table)
        } else {
            unowned(unsafe) let layout = binding.layout
            value = RecordReader.value(
                at: column, in: UnsafeRawBufferPointer(_record), columns: _recordColumns, header: _recordHeader, layout: layout)
        }
        if binding.isTracked { _trackAccess(column, value, binding.table) }
        return value
    }

    /// Lets go of the object's cluster when it no longer holds the object's
    /// slot (or the write is over): the object then looks again.
    @inline(__always)
    private final func _leaveClusterUnlessCurrent(_ database: Database) {
        if database.clusterPlaceIsCurrent(of: self) {
            _recordGeneration = database.generation
        } else {
            _cluster = nil
            _recordGeneration = .max
        }
    }

    /// A column's value read from the object's cluster in the write's cache; a damaged column traps.
    @inline(never)
    private final func _clusterValue(_ column: Int, _ table: TableInfo) -> StoredValue {
        do {
            return try _cluster.unsafelyUnwrapped.value(_clusterSlot, column, table.layout)
        } catch {
            fatalError("Trove: cannot read a \(table.name) object from \(_database?.path ?? "its file"): \(error)")
        }
    }

    /// A column's value read from the object's cluster view; a damaged column traps, as a damaged record does.
    @inline(never)
    private final func _viewValue(_ column: Int, _ table: TableInfo) -> StoredValue {
        do {
            return try _view.unsafelyUnwrapped.value(_viewSlot, column)
        } catch {
            fatalError("Trove: cannot read a \(table.name) object from \(_database?.path ?? "its file"): \(error)")
        }
    }

    /// Where a fixed-size property's bytes sit in the record copy, for reads
    /// that load them as their Swift type without a ``StoredValue``; nil when
    /// the read must go through ``_readManaged(column:)`` (nil stored, a
    /// column the record predates, another stored type, Observation tracking).
    @usableFromInline
    final func _managedSlot(column: Int, of type: PropertyType) -> UnsafeRawPointer? {
        unowned(unsafe) let database = _database.unsafelyUnwrapped  // self keeps them alive
        unowned(unsafe) let binding = _binding.unsafelyUnwrapped
        // (An object reading a write's cluster reads through `_readManaged`.)
        if binding.isTracked || _cluster != nil { return nil }
        // The reload is out of line: a read of a current copy then calls nothing and saves no registers.
        if _recordGeneration != database.generation { return _reloadedSlot(column: column, of: type) }
        return _slotInRecord(column: column, of: type)
    }

    @inline(never)
    private final func _reloadRecord() {
        _database.unsafelyUnwrapped.loadRecord(into: self, table: _binding.unsafelyUnwrapped.table)
    }

    @inline(never)
    private final func _reloadedSlot(column: Int, of type: PropertyType) -> UnsafeRawPointer? {
        _database.unsafelyUnwrapped.loadRecord(into: self, table: _binding.unsafelyUnwrapped.table)
        return _slotInRecord(column: column, of: type)
    }

    @inline(__always)
    private final func _slotInRecord(column: Int, of type: PropertyType) -> UnsafeRawPointer? {
        unowned(unsafe) let binding = _binding.unsafelyUnwrapped
        if _view != nil {
            guard binding.layout.columnSlots[column].type == type else { return nil }
            return _view.unsafelyUnwrapped.fixedPlace(_viewSlot, column)
        }
        // `_recordColumns` never exceeds the layout's columns (see `keepRecord`); it is 0 for an
        // object reading a write's cluster, which then reads through `_readManaged`.
        guard column < _recordColumns, let base = _record.baseAddress else { return nil }
        let slot = binding.layout.columnSlots[column]
        guard slot.type == type, base.load(fromByteOffset: 2 + column / 8, as: UInt8.self) & (1 << UInt8(column % 8)) == 0
        else { return nil }
        return UnsafeRawPointer(base + _recordHeader + slot.offset)
    }

    /// The bytes of a string or data property in the record copy, for reads
    /// that build the Swift value straight from them; nil as for ``_managedSlot(column:of:)``.
    @usableFromInline
    final func _managedBytes(column: Int, of type: PropertyType) -> UnsafeRawBufferPointer? {
        unowned(unsafe) let database = _database.unsafelyUnwrapped  // self keeps them alive
        unowned(unsafe) let binding = _binding.unsafelyUnwrapped
        if binding.isTracked || _cluster != nil { return nil }
        if _recordGeneration != database.generation { _reloadRecord() }
        if _view != nil {
            guard binding.layout.columnSlots[column].type == type else { return nil }
            return _view.unsafelyUnwrapped.variablePlace(_viewSlot, column)
        }
        guard let slot = _slotInRecord(column: column, of: type), let base = _record.baseAddress else { return nil }
        let offset = Int(UInt32(littleEndian: slot.loadUnaligned(as: UInt32.self)))
        let count = Int(UInt32(littleEndian: slot.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        // Out of bounds: the general read reports the damaged record.
        guard offset + count <= _record.count else { return nil }
        return UnsafeRawBufferPointer(start: base + offset, count: count)
    }

    @usableFromInline
    func _readColumn(_ column: Int) -> StoredValue {
        if let recorder = _recorder {
            recorder.columns.append(column)
            return recorder.fallbacks[column]
        }
        guard let database = _database, let table = _table else {
            preconditionFailure("Trove: a managed property of \(Swift.type(of: self)) has no database; this is a bug in Trove")
        }
        if _cluster != nil { _leaveClusterUnlessCurrent(database) }
        if _recordGeneration != database.generation {
            database.loadRecord(into: self, table: table)
        }
        if _cluster != nil { return _clusterValue(column, table) }
        if _view != nil { return _viewValue(column, table) }
        return RecordReader.value(
            at: column, in: UnsafeRawBufferPointer(_record), columns: _recordColumns, header: _recordHeader, layout: table.layout)
    }

    @usableFromInline
    func _writeColumn(_ column: Int, _ value: StoredValue) {
        guard let database = _database, let table = _table else {
            preconditionFailure("Trove: a managed property of \(Swift.type(of: self)) has no database; this is a bug in Trove")
        }
        database.writeColumn(column, value, of: self, table: table)
    }

    /// Sets a link property of a managed object (adding an unmanaged target).
    @usableFromInline
    func _writeLink(_ column: Int, _ target: Object?) {
        guard let database = _database, let table = _table else {
            preconditionFailure("Trove: a managed property of \(Swift.type(of: self)) has no database; this is a bug in Trove")
        }
        database.writeLink(column, to: target, of: self, table: table)
    }

    /// Keeps `record` as this object's copy for the handle's `generation`. Its
    /// structure is checked here, once (a damaged record traps, as a read would).
    final func keepRecord(_ record: UnsafeRawBufferPointer, layout: RecordLayout, generation: UInt64) {
        let reader = RecordReader(record, layout: layout)
        if record.count > _recordStorage.count {
            _recordStorage.deallocate()
            _recordStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(record.count, 64), alignment: 8)
        }
        _record = UnsafeMutableRawBufferPointer(rebasing: _recordStorage[0..<record.count])
        if record.count > 0 { _record.copyMemory(from: record) }
        _recordBatch = nil
        _view = nil
        _cluster = nil
        _recordColumns = reader.columns
        _recordHeader = reader.header
        _recordGeneration = generation
    }

    /// Keeps the record at `range` of `batch` as this object's copy (the
    /// batch outlives it as long as the object does not replace it).
    final func keepRecord(in batch: RecordBatch, at range: Range<Int>, layout: RecordLayout, generation: UInt64) {
        let record = UnsafeMutableRawBufferPointer(rebasing: batch.bytes[range])
        let reader = RecordReader(UnsafeRawBufferPointer(record), layout: layout)
        _record = record
        _recordBatch = batch
        _view = nil
        _cluster = nil
        _recordColumns = reader.columns
        _recordHeader = reader.header
        _recordGeneration = generation
    }

    final func keepRecord(_ record: [UInt8], layout: RecordLayout, generation: UInt64) {
        record.withUnsafeBytes { keepRecord($0, layout: layout, generation: generation) }
    }

    /// Reads the object's columns from `slot` of `view` in place from now on,
    /// for the handle's `generation` (the view must be prepared: ``ClusterView/prepareForObjects()``).
    @inline(__always)
    final func keepView(_ view: ClusterView, slot: Int, generation: UInt64) {
        _view = view
        _viewSlot = slot
        _cluster = nil
        _forgetRecord(generation: generation)
    }

    /// Reads and sets the object's values in `slot` of `cluster`, a cluster
    /// of the open write's cache, until the cluster's slots move or the write
    /// `serial` is over (``Database/clusterPlaceIsCurrent(of:)``).
    @inline(__always)
    final func keepCluster(_ cluster: ClusterTable.Cluster, slot: Int, serial: UInt64, generation: UInt64) {
        _cluster = cluster
        _clusterSlot = slot
        _clusterShape = cluster.shape
        _clusterSerial = serial
        _view = nil
        _forgetRecord(generation: generation)
    }

    /// Drops the record copy (its storage is kept for reuse) for an object
    /// that reads elsewhere from `generation` on.
    @inline(__always)
    private final func _forgetRecord(generation: UInt64) {
        _record = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        _recordBatch = nil
        _recordColumns = 0
        _recordHeader = 0
        _recordGeneration = generation
    }

    deinit {
        _recordStorage.deallocate()
    }

    /// Marks each `@Persisted` field of an unmanaged object with its own offset
    /// (as `-2 - offset` in the field's column), so a setter writes straight
    /// to the field instead of through its key path (the runtime's key path
    /// write costs ~1,800 instructions; Swift folds only key path reads).
    /// False when the class's reflection is not available yet.
    @usableFromInline
    final func _markFieldOffsets() -> Bool {
        guard let info = ModelInfo.unlessBuilding(Swift.type(of: self)) else { return false }
        let base = Unmanaged.passUnretained(self).toOpaque()
        for field in info.fields where field.legacy == nil && base.load(fromByteOffset: field.columnOffset, as: Int.self) == -1 {
            base.storeBytes(of: -2 - field.offset, toByteOffset: field.columnOffset, as: Int.self)
        }
        return true
    }

    /// Makes this object read from and write to `database` from now on. Each
    /// `@Persisted` field gets its column, so a property read finds it
    /// without looking its key path up.
    @inline(__always)
    func bind(to database: Database, objectKey: UInt64, binding: ObjectBinding, attachingLegacyFields: Bool = true) {
        _database = database
        _binding = binding
        _objectKey = objectKey
        stampColumns(binding, database: database)
        if attachingLegacyFields, !binding.legacyAttachments.isEmpty { attachLegacyFields(binding) }
    }

    /// Binds an instance fresh from `init()` to its database and its place in
    /// `view`: its references are still nil, so they are initialized where an
    /// assignment would release the nil each held (a call per field).
    @inline(__always)
    final func bindFresh(
        to database: Database, objectKey: UInt64, binding: ObjectBinding, view: ClusterView?, slot: Int, generation: UInt64
    ) {
        withUnsafeMutablePointer(to: &_database) { $0.initialize(to: database) }
        withUnsafeMutablePointer(to: &_binding) { $0.initialize(to: binding) }
        _objectKey = objectKey
        stampColumns(binding, database: database)
        if !binding.legacyAttachments.isEmpty { attachLegacyFields(binding) }
        guard let view else { return }
        withUnsafeMutablePointer(to: &_view) { $0.initialize(to: view) }
        _viewSlot = slot
        _recordGeneration = generation
    }

    @inline(__always)
    private final func stampColumns(_ binding: ObjectBinding, database: Database) {
        _epoch = database.invalidationEpoch
        let base = Unmanaged.passUnretained(self).toOpaque()
        for stamp in binding.columnStamps {
            base.storeBytes(of: stamp.column, toByteOffset: stamp.offset, as: Int.self)
        }
    }

    /// Attaches what the legacy fields (declared without `@Persisted`) hold to their stored properties.
    func attachLegacyFields(_ binding: ObjectBinding) {
        let base = Unmanaged.passUnretained(self).toOpaque()
        for attachment in binding.legacyAttachments {
            attachment.type._troveAttachLegacy(at: base + attachment.offset, to: self, column: attachment.column)
        }
    }
}

extension Object {
    /// Drops the links, collections and mixed values this object held while
    /// unmanaged, once they are stored: a managed object reads them from the
    /// database, and keeping them would keep a cycle of objects (a link back
    /// to this one) alive for good.
    func dropUnmanagedRelations(_ binding: ObjectBinding) {
        let base = Unmanaged.passUnretained(self).toOpaque()
        for field in binding.info.fields where !field.schema.isPlainValue {
            field.accessor?.releaseUnmanaged(at: base.advanced(by: field.offset), of: self)
        }
    }

    /// Turns this fresh instance into a probe whose property reads record
    /// their column instead of reading a database.
    func bindProbe(table: TableInfo, columns: [Int], info: ModelInfo) {
        _recorder = KeyPathRecorder(
            names: table.schema.properties.map(\.name), fallbacks: table.layout.fallbacks, table: table)
        let base = Unmanaged.passUnretained(self).toOpaque()
        for (field, column) in zip(info.fields, columns) {
            field.accessor?.bindProbe(at: base.advanced(by: field.offset), column: column)
        }
    }

    /// The probe a link read on this probe hands out, so that a key path
    /// reads on through it (`\.owner?.name`); its columns are field indexes.
    func linkProbe<Target: Object>(_ type: Target.Type, column: Int) -> Target {
        let (probe, recorder) = ModelInfo.of(type).makeProbe()
        _recorder?.linked[column] = recorder
        return unsafeDowncast(probe, to: Target.self)
    }
}

extension ModelInfo {
    /// A fresh instance whose property reads record which field they read
    /// (columns are field indexes), and its recorder.
    func makeProbe() -> (Object, KeyPathRecorder) {
        let probe = type.init()
        let recorder = KeyPathRecorder(
            names: fields.map(\.schema.name), fallbacks: fields.map { $0.schema.defaultValue ?? .null })
        probe._recorder = recorder
        let base = Unmanaged.passUnretained(probe).toOpaque()
        for (index, field) in fields.enumerated() {
            field.accessor?.bindProbe(at: base.advanced(by: field.offset), column: index)
        }
        return (probe, recorder)
    }

    /// The property path a model key path reads (`\Person.dog?.name` is
    /// `dog.name`), from the class alone; nil when it reads no property.
    func path(of keyPath: AnyKeyPath) -> String? {
        path(readBy: { $0[keyPath: keyPath] })
    }

    /// The property path `read` reads of an object of this class, from the class alone.
    func path(readBy read: (Object) -> Any?) -> String? {
        let (probe, recorder) = makeProbe()
        guard let value = read(probe) else { return nil }
        let path = recorder.path
        if path.isEmpty, let legacy = legacyFieldIndex(holding: value, in: probe) { return fields[legacy].schema.name }
        return path.isEmpty ? nil : path.joined(separator: ".")
    }
}

/// Collects the columns a key path reads on a probe object, to turn
/// `\PhotoData.dateAdded` into a property name, and `\.owner?.name` into a
/// path through links.
final class KeyPathRecorder {
    var columns: [Int] = []
    /// The property names and the values reads return, by column.
    let names: [String]
    let fallbacks: [StoredValue]
    /// The recorders of the probes handed out for links, by column.
    var linked: [Int: KeyPathRecorder] = [:]

    /// The table of a probe made for a stored type (nil for one made from the class alone).
    let table: TableInfo?

    init(names: [String], fallbacks: [StoredValue], table: TableInfo? = nil) {
        self.names = names
        self.fallbacks = fallbacks
        self.table = table
    }

    func reset() {
        columns.removeAll()
        linked.removeAll()
    }

    /// The names of the properties read, through the links followed: `["owner", "name"]`.
    var path: [String] {
        guard let first = columns.first else { return [] }
        return [names[first]] + (linked[first]?.path ?? [])
    }
}

extension Object: Hashable {
    /// Managed objects hash by their stored identity, unmanaged ones by instance.
    public func hash(into hasher: inout Hasher) {
        if let table = _table, _database != nil {
            hasher.combine(ObjectIdentifier(table))
            hasher.combine(_objectKey)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }

    /// Two managed objects are equal when they are the same stored object
    /// (a frozen one only to the same object frozen at the same commit, as
    /// in Realm); unmanaged objects only when they are the same instance. On
    /// a TroveRealm handle, live objects of a type without a primary key are
    /// equal only when they are the same instance, as Realm's are (compare
    /// rows with `isSameObject(as:)` there).
    public static func == (lhs: Object, rhs: Object) -> Bool {
        if lhs === rhs { return true }
        guard lhs.isSameStoredObject(as: rhs), let database = lhs._database, let other = rhs._database else { return false }
        if database.comparesUnkeyedObjectsByIdentity || other.comparesUnkeyedObjectsByIdentity, !database.isFrozen,
            lhs._table?.primaryKeyColumn == nil
        {
            return false
        }
        return true
    }

    /// Whether `other` is the same stored object: the same instance, or the
    /// same row read twice (a frozen one only at the same commit).
    package func isSameStoredObject(as other: Object) -> Bool {
        if self === other { return true }
        guard let left = _table, let right = other._table, let leftDatabase = _database, let rightDatabase = other._database
        else {
            return false
        }
        if leftDatabase !== rightDatabase, leftDatabase.isFrozen || rightDatabase.isFrozen {
            guard leftDatabase.isFrozen, rightDatabase.isFrozen, leftDatabase.visibleCommit == rightDatabase.visibleCommit
            else { return false }
        }
        return left === right && _objectKey == other._objectKey
    }
}
