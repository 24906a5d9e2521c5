import CTroveRuntime

/// Every ``Object`` subclass in the program, as Realm's default schema
/// has them: Realm finds its model classes through the Objective-C runtime;
/// Trove reads the Swift runtime's type records (see `CTroveRuntime`).
/// Trove's own base classes are left out.
package enum ModelClasses {
    /// The model classes, found once, by stored type name.
    private static let byName: [String: Object.Type] = {
        final class Found {
            var classes: [Object.Type] = []
        }
        let found = Found()
        trove_enumerate_classes(
            { metadata, context in
                guard let metadata, let context, inheritsFromObject(metadata) else { return }
                let model = unsafeBitCast(metadata, to: Object.Type.self)
                Unmanaged<Found>.fromOpaque(context).takeUnretainedValue().classes.append(model)
            }, Unmanaged.passUnretained(found).toOpaque())
        let bases: Set<ObjectIdentifier> = [
            ObjectIdentifier(Object.self), ObjectIdentifier(EmbeddedObject.self), ObjectIdentifier(DynamicObject.self),
        ]
        var byName: [String: Object.Type] = [:]
        for type in found.classes where !bases.contains(ObjectIdentifier(type)) {
            byName[type.objectTypeName] = type
        }
        return byName
    }()

    /// Whether class metadata descends from ``Object``, read from the
    /// metadata itself: a cast (`as? Object.Type`) misreads the metadata of
    /// the runtime's foreign classes (CoreFoundation's).
    private static func inheritsFromObject(_ metadata: UnsafeRawPointer) -> Bool {
        let object = unsafeBitCast(Object.self as AnyClass, to: UnsafeRawPointer.self)
        var current: UnsafeRawPointer? = metadata
        while let type = current {
            // A Swift class's metadata starts with kind 0 (or, with Objective-C, an isa pointer).
            let kind = type.load(as: UInt.self)
            guard kind == 0 || kind > 0x7FF else { return false }
            if type == object { return true }
            current = type.load(fromByteOffset: MemoryLayout<UInt>.size, as: UnsafeRawPointer?.self)
        }
        return false
    }

    /// The model class whose objects are stored under `name`, or nil.
    package static func named(_ name: String) -> Object.Type? { byName[name] }

    /// Every model class, in name order.
    package static var all: [Object.Type] { byName.keys.sorted().compactMap { byName[$0] } }

    /// The most tables every model class can use (``Configuration/tableCount(of:)``), found once.
    static let tableCount = Configuration.tableCount(of: Array(byName.values))
}
