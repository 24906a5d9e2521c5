import Foundation
import Observation
import Testing

@testable import Trove

final class TrackedNote: Object, ObservationTracked {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var body = ""
}

/// Counts `onChange` calls, from whatever thread makes them.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

@Suite("Observation")
struct ObservationTests {
    private func noteDatabase() throws -> (Database, TrackedNote) {
        let db = try makeDatabase(#function + UUID().uuidString)
        let note = TrackedNote()
        note.id = 1
        note.title = "draft"
        try db.write { try db.add(note) }
        return (db, note)
    }

    @Test("withObservationTracking fires on a committed change of a property it read, not of others")
    func ownWrites() throws {
        let (db, note) = try noteDatabase()
        let changes = Counter()
        let title = withObservationTracking {
            note.title
        } onChange: {
            changes.increment()
        }
        #expect(title == "draft")
        try db.write { note.body = "not read above" }
        #expect(changes.count == 0)
        try db.write { note.title = "final" }
        #expect(changes.count == 1)
        // onChange fires once per tracking; track again to hear the next change.
        _ = withObservationTracking {
            note.title
        } onChange: {
            changes.increment()
        }
        try db.write { try db.delete(note) }
        #expect(changes.count == 2)
    }

    @Test("a commit by another handle fires when this handle refreshes")
    func otherHandles() throws {
        let (db, note) = try noteDatabase()
        db.autorefresh = false
        let other = try Database(configuration: db.configuration)
        let changes = Counter()
        _ = withObservationTracking {
            (note.title, note.body)
        } onChange: {
            changes.increment()
        }
        try other.write { other.object(ofType: TrackedNote.self, forPrimaryKey: 1)?.body = "from elsewhere" }
        #expect(changes.count == 0)  // not before this handle moves on
        db.refresh()
        #expect(changes.count == 1)
        #expect(note.body == "from elsewhere")
    }

    @Test("objects of classes that do not adopt ObservationTracked are not tracked")
    func untrackedClasses() throws {
        let db = try makeDatabase()
        let person = Person()
        person.id = 1
        try db.write { try db.add(person) }
        let changes = Counter()
        _ = withObservationTracking {
            person.name
        } onChange: {
            changes.increment()
        }
        try db.write { person.name = "changed" }
        #expect(changes.count == 0)
        #expect(db.trackedObjects == nil)
    }

    @Test("reading many tracked objects without a commit keeps only the live ones")
    func releasedObjectsAreForgotten() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...3_000 {
                let note = TrackedNote()
                note.id = id
                try db.add(note)
            }
        }
        for note in db.objects(TrackedNote.self) { _ = note.title }  // each object released after its read
        let kept = try #require(db.trackedObjects).entries.count
        #expect(kept < 2_048)
        let survivor = try #require(db.object(ofType: TrackedNote.self, forPrimaryKey: 7))
        let changes = Counter()
        _ = withObservationTracking {
            survivor.title
        } onChange: {
            changes.increment()
        }
        try db.write { survivor.title = "still heard" }
        #expect(changes.count == 1)
    }
}
