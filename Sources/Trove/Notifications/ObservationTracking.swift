import Observation
import TroveStorage

/// Adopt it to make a model class take part in Swift's Observation: a
/// managed object's `@Persisted` reads inside `withObservationTracking` (or
/// a SwiftUI view's body) are tracked, and a committed change of one of them —
/// by this handle, another handle or another process — fires `onChange` when
/// the object's handle refreshes.
///
/// ```swift
/// final class PhotoData: Object, ObservationTracked { @Persisted var memo = "" }
///
/// withObservationTracking {
///     print(photo.memo)
/// } onChange: {
///     print("memo changed")      // after a commit that changes photo.memo
/// }
/// ```
///
/// Opt-in per class, because tracking costs each read of such a class a
/// little bookkeeping; other classes pay nothing.
public protocol ObservationTracked: AnyObject {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Object: Observable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class RegistrarBox {
    let registrar = ObservationRegistrar()
}

/// The tracked objects a handle has handed out, with the values last read
/// from each: on every refresh, the columns whose values changed (or all, for
/// a deleted object) tell Observation.
final class TrackedObjects: ChangeObserver {
    struct Entry {
        weak var object: Object?
        let key: UInt64
        let table: TableInfo
        var values: [Int: StoredValue]
    }

    var entries: [ObjectIdentifier: Entry] = [:]
    /// Entries of released objects go at the next delivery, or when the
    /// table reaches this size without one (a long run of reads, no commit).
    var pruneAt = 1024

    func update(in database: Database, notify: Bool) {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let transaction = database.readTransaction()
        for (id, entry) in entries {
            guard let object = entry.object, let box = object._observation as? RegistrarBox else {
                entries[id] = nil
                continue
            }
            let current = (try? database.recordValues(entry.key, in: entry.table, transaction)) ?? nil
            var changed: [Int] = []
            for (column, old) in entry.values where current.map({ $0[column] != old }) ?? true {
                changed.append(column)
            }
            if current == nil {
                entries[id] = nil
            } else if !changed.isEmpty {
                for column in changed { entries[id]?.values[column] = current![column] }
            }
            for column in changed {
                let keyPath = Object.observationKeyPath(column)
                box.registrar.willSet(object, keyPath: keyPath)
                box.registrar.didSet(object, keyPath: keyPath)
            }
        }
    }
}

extension Object {
    /// One key path per column, the identity Observation tracks a property by.
    nonisolated(unsafe) private static var columnKeyPaths: [KeyPath<Object, Int>] = []
    private static let columnKeyPathsLock = Locked(())

    static func observationKeyPath(_ column: Int) -> KeyPath<Object, Int> {
        columnKeyPathsLock.withLock { _ in
            while columnKeyPaths.count <= column { columnKeyPaths.append(\Object.[_troveColumn: columnKeyPaths.count]) }
            return columnKeyPaths[column]
        }
    }

    final subscript(_troveColumn column: Int) -> Int { column }

    /// A read of a tracked object: reported to Observation, and remembered
    /// (with its value) so a later change can be told.
    final func _trackAccess(_ column: Int, _ value: StoredValue, _ table: TableInfo) {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *), let database = _database else { return }
        let box: RegistrarBox
        if let existing = _observation as? RegistrarBox {
            box = existing
        } else {
            box = RegistrarBox()
            _observation = box
        }
        let tracked: TrackedObjects
        if let existing = database.trackedObjects {
            tracked = existing
        } else {
            tracked = TrackedObjects()
            database.trackedObjects = tracked
            database.nextObserverID += 1
            database.observers[database.nextObserverID] = tracked
        }
        let id = ObjectIdentifier(self)
        if tracked.entries.count >= tracked.pruneAt {
            tracked.entries = tracked.entries.filter { $0.value.object != nil }
            tracked.pruneAt = max(1024, tracked.entries.count * 2)
        }
        if tracked.entries[id]?.object !== self {  // new, or an earlier object at the same address
            tracked.entries[id] = TrackedObjects.Entry(object: self, key: _objectKey, table: table, values: [:])
        }
        if tracked.entries[id]?.values[column] == nil { tracked.entries[id]?.values[column] = value }
        box.registrar.access(self, keyPath: Object.observationKeyPath(column))
    }
}
