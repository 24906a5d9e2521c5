import Foundation
import Testing

@testable import Trove

final class Book: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var genre = ""
    @Persisted var title = ""
    @Persisted var notes: List<String>
}

/// Space that deletes free comes back when the file is compacted or copied.
@Suite struct CompactionTests {
    private func book(_ id: Int) -> Book {
        let book = Book()
        book.id = id
        book.genre = ["poetry", "history", "travel", "cooking"][id % 4]
        book.title = "book \(id) " + String(repeating: "책", count: id % 40)
        book.notes.append(objectsIn: (0..<(id % 3)).map { "note \($0)" })
        return book
    }

    private func fileSize(_ url: URL) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
    }

    /// A file of N objects with a scattered half deleted compacts to about
    /// the size of a file that only ever held the other half.
    @Test func aFileWithAScatteredHalfDeletedCompactsToTheSizeOfWhatIsLeft() throws {
        let count = 20_000
        let kept = (0..<count).filter { $0 % 2 == 0 }
        let halved = try makeDatabase("halved")
        try halved.write { for id in 0..<count { try halved.add(book(id)) } }
        try halved.write {
            for id in 0..<count where id % 2 == 1 {
                try halved.delete(halved.object(ofType: Book.self, forPrimaryKey: id)!)
            }
        }
        let reference = try makeDatabase("reference")
        try reference.write { for id in kept { try reference.add(book(id)) } }
        let referenceCopy = makeTemporaryDirectory().appendingPathComponent("reference-copy.trove")
        try reference.writeCopy(to: referenceCopy)
        let referenceSize = try fileSize(referenceCopy)

        // (The cluster layout's half-empty clusters are merged: within the same 10%.)
        let slack = 11
        let copy = makeTemporaryDirectory().appendingPathComponent("halved-copy.trove")
        try halved.writeCopy(to: copy)
        #expect(try fileSize(copy) <= referenceSize * slack / 10)

        let url = halved.configuration.fileURL
        let configuration = halved.configuration
        let before = try fileSize(url)
        _ = consume halved
        let (_, after) = try Database.compact(configuration: configuration)
        #expect(after <= referenceSize * slack / 10)
        #expect(after < before / 2)

        // Everything is still there, indexes and lists included, and checks out.
        for database in [try Database(configuration: configuration), try Database(fileURL: copy)] {
            #expect(try database.verify().isValid)
            #expect(database.objects(Book.self).count == kept.count)
            #expect(try database.objects(Book.self).filter("genre == 'travel'").count == kept.filter { $0 % 4 == 2 }.count)
            let sample = database.object(ofType: Book.self, forPrimaryKey: 1_234)!
            #expect(sample.title == book(1_234).title)
            #expect(Array(sample.notes) == Array(book(1_234).notes))
            #expect(database.object(ofType: Book.self, forPrimaryKey: 1_235) == nil)
        }
    }
}
