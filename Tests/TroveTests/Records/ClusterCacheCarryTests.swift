import Foundation
import Testing

@testable import Trove

/// A handle's next write starts with the clusters its last write left
/// (``ClusterTable/ClusterCache/carry(into:)``) only when nobody committed
/// in between; these check that what it reads and writes is the file's.
@Suite("Clusters carried from one write into the next")
struct ClusterCacheCarryTests {
    private static func open(_ url: URL) throws -> Database {
        var configuration = Configuration(fileURL: url, objectTypes: [Person.self])
        configuration.encryptionKey = suiteEncryptionKey
        return try Database(configuration: configuration)
    }

    private static func person(_ id: Int) -> Person {
        let person = Person()
        person.id = id
        person.name = "p\(id)"
        person.age = id % 7 == 0 ? nil : id % 90
        person.city = ["Seoul", "Busan", "Incheon"][id % 3]
        person.score = Double(id)
        return person
    }

    @Test("a write after another handle's commit reads that commit, not the clusters this handle's last write left")
    func anotherHandlesCommitIsSeen() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("carry.trove")
        let mine = try Self.open(url)
        let other = try Self.open(url)
        try mine.write { for id in 1...1200 { try mine.add(Self.person(id)) } }
        let first = try #require(mine.object(ofType: Person.self, forPrimaryKey: 600))
        try mine.write { first.score = 1 }
        try mine.write { first.score += 1 }
        #expect(first.score == 2)

        other.refresh()
        let theirs = try #require(other.object(ofType: Person.self, forPrimaryKey: 600))
        #expect(theirs.score == 2)
        try other.write {
            theirs.score = 50
            theirs.city = "Daegu"
            try other.add(Self.person(1201))
            try other.delete(try #require(other.object(ofType: Person.self, forPrimaryKey: 601)))
        }

        try mine.write { first.score += 1 }
        #expect(first.score == 51)
        #expect(first.city == "Daegu")
        #expect(mine.objects(Person.self).count == 1200)
        #expect(mine.object(ofType: Person.self, forPrimaryKey: 601) == nil)
        other.refresh()
        #expect(theirs.score == 51)
        expectValid(mine)
    }

    @Test("a cancelled write's changes are not in the next write of the handle")
    func aCancelledWriteLeavesNothing() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("cancel.trove")
        let db = try Self.open(url)
        try db.write { for id in 1...600 { try db.add(Self.person(id)) } }
        let person = try #require(db.object(ofType: Person.self, forPrimaryKey: 10))
        try db.write { person.score = 1 }
        try db.beginWrite()
        person.score = 99
        person.city = "Jeju"
        try db.add(Self.person(601))
        db.cancelWrite()
        try db.write { person.age = 33 }
        #expect(person.score == 1)
        #expect(person.city == Self.person(10).city)
        #expect(db.objects(Person.self).count == 600)
        let reopened = try Self.open(url)
        let stored = try #require(reopened.object(ofType: Person.self, forPrimaryKey: 10))
        #expect(stored.score == 1)
        #expect(stored.age == 33)
        expectValid(reopened)
    }

    @Test("single-object commits from two handles in turn, with inserts and deletes, leave every object as a model says")
    func commitsFromTwoHandlesAgreeWithAModel() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("model.trove")
        let handles = [try Self.open(url), try Self.open(url)]
        var model: [Int: Double] = [:]
        try handles[0].write { for id in 1...1000 { try handles[0].add(Self.person(id)) } }
        for id in 1...1000 { model[id] = Double(id) }
        var random = SystemRandomNumberGenerator()
        var nextID = 1001
        for step in 0..<400 {
            // Mostly the same handle, so that most writes carry the last one's clusters.
            let db = handles[step % 9 == 0 ? 1 : 0]
            db.refresh()
            let choice = Int.random(in: 0..<10, using: &random)
            let id = model.keys.randomElement(using: &random)!
            try db.write {
                if choice < 7 {
                    let person = try #require(db.object(ofType: Person.self, forPrimaryKey: id))
                    person.score += 1
                    model[id]! += 1
                } else if choice < 9 {
                    try db.add(Self.person(nextID))
                    model[nextID] = Double(nextID)
                    nextID += 1
                } else {
                    try db.delete(try #require(db.object(ofType: Person.self, forPrimaryKey: id)))
                    model[id] = nil
                }
            }
        }
        for db in handles {
            db.refresh()
            let stored = Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, $0.score) })
            #expect(stored == model)
        }
        expectValid(handles[0])
    }
}
