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

private class ReadmeUser: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
}
private final class ReadmeMe: ReadmeUser {}
private final class ReadmeOtherUser: ReadmeUser {
    @Persisted(originProperty: "partner") var rooms: LinkingObjects<ReadmeChatRoom>
}
private final class ReadmePlace: EmbeddedObject { @Persisted var city = "" }
private final class ReadmeChatMessage: Object {
    @Persisted var text = ""
    @Persisted var sentAt = Date()
    @Persisted var place: ReadmePlace?
}
private final class ReadmeChatRoom: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var partner: ReadmeOtherUser?
    @Persisted var tags = MutableSet<String>()
    @Persisted var drafts = Map<String, String>()
    @Persisted(deleteRule: .cascade) var messages = List<ReadmeChatMessage>()
}

private final class ReadmePhoto: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var memo = ""
    @Persisted var dateAdded = Date()
}

@MainActor private final class PhotoListModel {
    let db: Database
    private(set) var ids: [String] = []
    var token: NotificationToken?

    init(configuration: Configuration) throws {
        db = try Database(configuration: configuration)
    }

    func start() {
        token = db.objects(ReadmePhoto.self).sorted(by: \.dateAdded, ascending: false).observe { [unowned self] change in
            switch change {
            case .initial(let photos): ids = photos.map(\.id)
            case .update(let photos, let deletions, let insertions, _):
                for index in deletions.reversed() { ids.remove(at: index) }
                for index in insertions { ids.insert(photos[index].id, at: index) }
            case .error(let error): Issue.record("\(error)")
            }
        }
    }
}

private actor ReadmeImporter {
    func importPhotos(_ names: [String], configuration: Configuration) throws -> Int {
        let db = try Database(configuration: configuration)
        try db.write {
            for (offset, name) in names.enumerated() {
                let photo = ReadmePhoto()
                photo.id = name
                photo.dateAdded = Date(timeIntervalSince1970: Double(offset))
                try db.add(photo, update: .modified)
            }
        }
        return db.objects(ReadmePhoto.self).count
    }
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
        try db.write { try feed.set(\.mood, to: .sad) }
        try db.write { try feed.update(\.memo) { $0 + "!" } }
        #expect(photo.mood == .sad && photo.memo == "edited!")
        try db.write { try db.delete(photo) }
        #expect(photo.isInvalidated)

        let saved = try db.write { try db.add(ReadmePerson(firstName: "Ann", age: 30, photo: nil)) }
        #expect(saved.id == 1)
        let adults: [ReadmePerson] = try db.values(ReadmePerson.self).filter("age > 20").array()
        #expect(adults.map(\.firstName) == ["Ann"])
        let nextID = (db.values(ReadmePerson.self).max(of: \.id) ?? 0) + 1
        #expect(nextID == 2)
    }

    @Test("the queries example works as printed")
    func queries() throws {
        let db = try makeDatabase()
        let start = Date(timeIntervalSince1970: 500)
        try db.write {
            for (index, memo) in ["cat nap", "cat", "dog", "", "cat toy"].enumerated() {
                let photo = PhotoData()
                photo.date = index < 4 ? "2024-05-01" : "2024-05-02"
                photo.memo = memo
                photo.mood = index == 2 ? .sad : .happy
                photo.dateAdded = Date(timeIntervalSince1970: Double(index) * 1_000)
                try db.add(photo)
            }
            let room = ReadmeChatRoom()
            room.id = "r1"
            room.drafts["ko-KR"] = "안녕"
            for index in 0..<3 {
                let message = ReadmeChatMessage()
                message.text = "Lunch at \(index)?"
                message.sentAt = Date(timeIntervalSince1970: 2_000 + Double(index))
                room.messages.append(message)
            }
            try db.add(room)
        }
        let photos = db.objects(PhotoData.self)
        let cats = try photos.filter(#Predicate { $0.memo.contains("cat") && $0.dateAdded > start })
        #expect(cats.map(\.memo) == ["cat", "cat toy"])
        let happy = photos.filter(\.mood, .equal, .happy)
        #expect(happy.count == 4)
        let busy = try db.objects(ReadmeChatRoom.self)
            .filter("SUBQUERY(messages, $m, $m.text CONTAINS[c] 'lunch' AND $m.sentAt > %@).@count > 2", start)
        #expect(busy.map(\.id) == ["r1"])
        let latest = try photos.filter("memo != '' SORT(dateAdded DESC) DISTINCT(date) LIMIT(10)")
        #expect(latest.map(\.memo) == ["cat toy", "dog"])
        let drafted = try db.objects(ReadmeChatRoom.self).filter("drafts['en'] != nil OR ANY drafts.@allKeys BEGINSWITH 'ko'")
        #expect(drafted.count == 1)
        let plan = try photos.filter("date == '2024-05-01' AND memo BEGINSWITH 'c'").explain()
        #expect(
            plan == "PhotoData: index on date == \"2024-05-01\": 4 candidates, each checked against the rest of the predicate")
        expectTroveError(.unsupportedPredicate) { try photos.filter(#Predicate { $0.memo.count > 3 }) }
    }

    @Test("the links and collections example works as printed")
    func linksAndCollections() throws {
        let db = try makeDatabase()
        let bo = ReadmeOtherUser()
        bo.id = "bo"
        bo.name = "Bo"
        let me = ReadmeMe()
        me.id = "me"
        let room = ReadmeChatRoom()
        room.id = "r1"
        room.partner = bo
        try db.write { try db.add([room, me] as [Object]) }
        for index in 0..<11 {
            let message = ReadmeChatMessage()
            message.text = "m\(index)"
            message.sentAt = Date(timeIntervalSince1970: Double(100 - index))
            message.place = ReadmePlace()
            message.place?.city = index % 2 == 0 ? "Seoul" : "Busan"
            try db.write { room.messages.append(message) }
        }
        let busy = try db.objects(ReadmeChatRoom.self).filter("messages.@count > 10 AND partner.name BEGINSWITH 'B'")
        #expect(busy.map(\.id) == ["r1"])
        let inSeoul = try room.messages.filter("place.city == 'Seoul'").sorted(by: \.sentAt)
        #expect(inSeoul.map(\.text) == ["m10", "m8", "m6", "m4", "m2", "m0"])
        #expect(db.objects(ReadmeOtherUser.self).sorted(byKeyPath: "rooms.@count", ascending: false).first?.name == "Bo")
        #expect(db.objects(ReadmeUser.self, includingSubclasses: true).count == 2)
        try db.write { try db.delete(room) }
        #expect(db.objects(ReadmeChatMessage.self).isEmpty)
        #expect(db.objects(ReadmePlace.self).isEmpty)
        expectValid(db)
    }

    @Test("the concurrency examples: a main-actor model, a background importer, a detached task")
    @MainActor func concurrency() async throws {
        let configuration = Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("photos.trove"))
        let model = try PhotoListModel(configuration: configuration)
        model.start()
        let imported = try await ReadmeImporter().importPhotos(["a", "b", "c"], configuration: configuration)
        #expect(imported == 3)
        model.db.refresh()  // or wait: autorefresh delivers on the main actor when it is free
        #expect(model.ids == ["c", "b", "a"])
        let id = "b"
        try await Task.detached {
            let db = try Database(configuration: configuration)
            if let photo = db.object(ofType: ReadmePhoto.self, forPrimaryKey: id) {
                try db.write { photo.memo = "seen in the background" }
            }
        }.value
        model.db.refresh()
        #expect(model.db.object(ofType: ReadmePhoto.self, forPrimaryKey: "b")?.memo == "seen in the background")
        // Frozen snapshots cross into a detached task; a later write does not change them.
        let photo = try #require(model.db.object(ofType: ReadmePhoto.self, forPrimaryKey: "b"))
        let frozen = photo.freeze()
        let page = model.db.objects(ReadmePhoto.self).sorted(by: \.id).freeze()
        try model.db.write { photo.memo = "changed after freezing" }
        let seen = await Task.detached { (frozen.memo, page.count, page.first?.id ?? "-") }.value
        #expect(seen == ("seen in the background", 3, "a"))
        #expect(frozen.thaw(in: model.db)?.memo == "changed after freezing")
    }

    @Test("the object observers and the async sequence with its initial element, as printed")
    @MainActor func observersAndChanges() async throws {
        let db = try Database(configuration: Configuration(fileURL: makeTemporaryDirectory().appendingPathComponent("p.trove")))
        let photo = PhotoData()
        try db.write { try db.add(photo) }
        var memoLabel = ""
        let memoToken = photo.observe(keyPaths: [\.memo]) { change in
            if case .change(let photo, _) = change { memoLabel = photo.memo }
        }
        var moods: [String] = []
        let moodToken = photo.observe(keyPaths: ["mood"]) { change in moods.append("\(change)") }
        try db.write { photo.memo = "walk" }
        try db.write { photo.mood = .sad }
        #expect(memoLabel == "walk")
        #expect(moods.count == 1)
        _ = (memoToken, moodToken)

        let photos = db.objects(PhotoData.self)
        var reloads = 0
        var applied: [[Int]] = []
        let stream = photos.changes  // observing from here on, whenever the task below runs
        let consumer = Task { @MainActor in
            for await change in stream {
                if change.isInitial {
                    reloads += 1
                    continue
                }
                applied.append(change.insertions)
                if applied.count == 1 { break }
            }
        }
        try db.write { try db.add(PhotoData()) }
        await consumer.value
        #expect(reloads == 1)
        #expect(applied == [[1]])
    }
}
