import Foundation
import Testing
import Trove

// The README's quick start, compiled and run as written.

private final class PhotoData: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted(indexed: true) var date = ""
    @Persisted var dateAdded = Date()
    @Persisted var image: Data?
    @Persisted var memo = ""
    @Persisted var mood: ReadmeMood = .happy
    var thumbnailCache: Data?
}

private enum ReadmeMood: String, PersistableEnum { case happy, sad }

private struct ReadmePerson: Persistable {
    static var primaryKey: KeyPath<ReadmePerson, Int> { \.id }
    static let autoIncrementsPrimaryKey = true
    var id = 0, firstName: String, age: Int?, photo: Data?
}

@Suite("README")
struct ReadmeTests {
    @Test("the quick start works as printed")
    func quickStart() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("photos.trove")
        let db = try Database(configuration: .init(fileURL: url))
        let photo = PhotoData()
        photo.date = "2024-05-01"
        try db.write { try db.add(photo) }
        try db.write { photo.memo = "edited" }
        let feed = db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
        let day = try db.objects(PhotoData.self).filter("date == %@", "2024-05-01").first
        let same = db.object(ofType: PhotoData.self, forPrimaryKey: photo.id)
        #expect(feed.count == 1)
        #expect(day?.memo == "edited")
        #expect(same?.id == photo.id)
        try db.write { try db.delete(photo) }
        #expect(photo.isInvalidated)

        let saved = try db.write { try db.add(ReadmePerson(firstName: "Ann", age: 30, photo: nil)) }
        #expect(saved.id == 1)
        let adults: [ReadmePerson] = try db.values(ReadmePerson.self).filter("age > 20").array()
        #expect(adults.map(\.firstName) == ["Ann"])
        let nextID = (db.values(ReadmePerson.self).max(of: \.id) ?? 0) + 1
        #expect(nextID == 2)
    }
}
