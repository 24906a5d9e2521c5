import CLMDB
import Foundation
import Testing
import TroveStorage

@testable import Trove

/// Every LMDB call of a representative write made to fail in turn: each
/// failure must surface as a typed TroveError, leave exactly the committed
/// state, keep the handle usable, and leave a file that verifies.
@Suite("Fault injection")
struct FaultInjectionTests {
    private struct State: Equatable {
        var persons: [Int: String]
        var contacts: [Int: String]
    }

    private func state(_ db: Database) -> State {
        db.refresh()
        return State(
            persons: Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, "\($0.name)/\($0.city)") }),
            contacts: Dictionary(uniqueKeysWithValues: db.values(Contact.self).map { ($0.id, $0.lastName) }))
    }

    /// A file set up once per run, copied for the reference and for every
    /// failing write: an encrypted file's keys hold tokens of its own salt,
    /// and where they sort decides whether an insert appends or searches,
    /// so only copies of one file make the same calls.
    private func setUp(_ name: String, from template: URL) throws -> Database {
        let directory = makeTemporaryDirectory(name)
        let url = directory.appendingPathComponent("test.trove")
        try FileManager.default.copyItem(at: template, to: url)
        var configuration = Configuration(fileURL: url)
        configuration.encryptionKey = suiteEncryptionKey
        return try Database(configuration: configuration)
    }

    private func template(_ code: Int32) throws -> URL {
        let db = try setUp("template-\(code)")
        let copy = makeTemporaryDirectory("template-copy-\(code)").appendingPathComponent("test.trove")
        try db.writeCopy(to: copy)
        return copy
    }

    private func setUp(_ name: String) throws -> Database {
        let db = try makeDatabase(name)
        try db.write {
            for id in 1...3 {
                let person = Person()
                person.id = id
                person.name = "p\(id)"
                person.city = "Oslo"
                try db.add(person)
            }
            try db.add(Contact(firstName: "a", lastName: "b"))
        }
        return db
    }

    /// Inserts, updates (indexed), upserts and deletes, objects and structs.
    /// The objects it changes are looked up before: only throwing calls (and
    /// setters, whose failures `commitWrite` throws) run under injection.
    private func representativeWrite(_ db: Database, first: Person, third: Person) throws {
        try db.write {
            let person = Person()
            person.id = 10
            person.name = "new"
            person.city = "Lima"
            try db.add(person)
            first.city = "Seoul"
            let replacement = Person()
            replacement.id = 2
            replacement.name = "replaced"
            try db.add(replacement, update: .modified)
            try db.delete(third)
            try db.add(Contact(firstName: "c", lastName: "d"))
        }
    }

    private func targets(_ db: Database) -> (Person, Person) {
        (db.object(ofType: Person.self, forPrimaryKey: 1)!, db.object(ofType: Person.self, forPrimaryKey: 3)!)
    }

    @Test(
        "each LMDB call of a write fails in turn: typed error, rollback, usable handle, valid file",
        arguments: [
            EIO, ENOSPC, MDB_CORRUPTED, MDB_MAP_FULL,
        ])
    func everyCallFails(code: Int32) throws {
        // Count the calls of the write, and learn its outcome.
        let template = try template(code)
        let reference = try setUp("reference-\(code)", from: template)
        let before = state(reference)
        let (first, third) = targets(reference)
        FaultInjection.arm(failAt: .max, code: code)
        try representativeWrite(reference, first: first, third: third)
        let calls = FaultInjection.disarm().calls
        let after = state(reference)
        #expect(calls > 10)
        defer { print("fault injection: each of \(calls) LMDB calls of the representative write failed in turn with \(code)") }

        for failAt in 1...calls {
            let db = try setUp("fault-\(code)-\(failAt)", from: template)
            let (first, third) = targets(db)
            FaultInjection.arm(failAt: failAt, code: code)
            var thrown: (any Error)?
            do { try representativeWrite(db, first: first, third: third) } catch { thrown = error }
            let fired = FaultInjection.disarm().fired
            #expect(fired, "call \(failAt) of \(calls) did not happen")
            let now = state(db)
            if let thrown {
                #expect(thrown is TroveError, "call \(failAt): \(thrown) is not a TroveError")
                #expect(now == before, "call \(failAt) failed with \(thrown) but the write was not rolled back")
            } else {
                // Only a full map is absorbed: the map grows and the write is replayed.
                #expect(code == MDB_MAP_FULL, "call \(failAt) failed with \(code) but the write reported success")
                #expect(now == after)
            }
            // The handle stays usable, and the file verifies.
            try db.write {
                let extra = Person()
                extra.id = 99
                try db.add(extra)
            }
            #expect(db.object(ofType: Person.self, forPrimaryKey: 99) != nil)
            expectValid(db)
        }
    }
}
