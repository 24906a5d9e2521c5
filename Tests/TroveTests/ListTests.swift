import Foundation
import Testing

@testable import Trove

final class Playlist: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var tags = List<String>()
    @Persisted var ratings = List<Int?>()
    @Persisted var stamps = List<Date>()
    @Persisted var songs = List<Song>()
}

final class Song: Object {
    @Persisted var title = ""
    @Persisted var seconds = 0
    @Persisted var plays: Int?
    @Persisted(originProperty: "songs") var playlists: LinkingObjects<Playlist>
}

final class Album: Object {
    @Persisted(primaryKey: true) var title = ""
    @Persisted(deleteRule: .cascade) var tracks = List<Song>()
}

@Suite struct ListTests {
    private func song(_ title: String, _ seconds: Int = 180) -> Song {
        let song = Song()
        song.title = title
        song.seconds = seconds
        return song
    }

    @Test(
        "an array of values with a place for each linking-objects property (as objectSchema.properties lists them) makes the object"
    )
    func arrayWithLinkingObjectsPlaces() throws {
        let names = Song().objectSchema.properties.map(\.name)
        #expect(names == ["title", "seconds", "plays", "playlists"])
        let song = Song(value: ["Intro", 90, 3, NSNull()])
        #expect(song.title == "Intro" && song.seconds == 90 && song.plays == 3)
        let short = Song(value: ["Outro", 30])
        #expect(short.title == "Outro" && short.seconds == 30 && short.plays == nil)
    }

    @Test func anUnmanagedListIsStoredWithItsObjectAndReadsBackAfterReopen() throws {
        let url: URL
        do {
            let db = try makeDatabase()
            url = db.configuration.fileURL
            let list = Playlist()
            list.name = "road"
            list.tags.append(contentsOf: ["a", "b"])
            list.ratings.append(nil)
            list.ratings.append(5)
            list.stamps.append(Date(timeIntervalSince1970: 1000))
            list.songs.append(song("one"))
            try db.write { try db.add(list) }
            #expect(list.tags.isManaged)
            expectValid(db)
        }
        let db = try Database(configuration: .init(fileURL: url))
        let list = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "road"))
        #expect(Array(list.tags) == ["a", "b"])
        #expect(Array(list.ratings) == [nil, 5])
        #expect(Array(list.stamps) == [Date(timeIntervalSince1970: 1000)])
        #expect(list.songs.map(\.title) == ["one"])
    }

    @Test("a list held before its object was added is the stored list after, and outlives its object")
    func aListKeepsItsIdentity() throws {
        let db = try makeDatabase()
        let playlist = Playlist()
        playlist.name = "road"
        let tags = playlist.tags
        let songs = playlist.songs
        tags.append(contentsOf: ["a", "b"])
        songs.append(song("one"))
        #expect(!tags.isManaged && tags === playlist.tags)
        try db.write { try db.add(playlist) }
        #expect(tags.isManaged && tags === playlist.tags && songs === playlist.songs)
        #expect(Array(tags) == ["a", "b"] && songs.map(\.title) == ["one"])
        try db.write { tags.append("c") }
        #expect(Array(playlist.tags) == ["a", "b", "c"])
        let fetched = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "road"))
        #expect(Array(fetched.tags) == ["a", "b", "c"])
        // A list kept after its object is gone still reads and writes its row.
        var kept: List<String>?
        do {
            let other = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "road"))
            kept = other.tags
        }
        try db.write { kept?.append("d") }
        #expect(Array(fetched.tags) == ["a", "b", "c", "d"])
        expectValid(db)
    }

    @Test func everyMutationMatchesAnArrayAndPersists() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "p"
        try db.write { try db.add(list) }
        var model: [String] = []
        var generator = SystemRandomNumberGenerator()
        for step in 0..<300 {
            try db.write {
                let count = model.count
                switch Int.random(in: 0..<7, using: &generator) {
                case 0, 1:
                    list.tags.append("t\(step)")
                    model.append("t\(step)")
                case 2:
                    let position = Int.random(in: 0...count, using: &generator)
                    list.tags.insert("i\(step)", at: position)
                    model.insert("i\(step)", at: position)
                case 3 where count > 0:
                    let position = Int.random(in: 0..<count, using: &generator)
                    list.tags.remove(at: position)
                    model.remove(at: position)
                case 4 where count > 1:
                    let from = Int.random(in: 0..<count, using: &generator)
                    let to = Int.random(in: 0..<count, using: &generator)
                    list.tags.move(from: from, to: to)
                    model.insert(model.remove(at: from), at: to)
                case 5 where count > 0:
                    let position = Int.random(in: 0..<count, using: &generator)
                    list.tags[position] = "r\(step)"
                    model[position] = "r\(step)"
                case 6 where step % 50 == 0:
                    list.tags.removeAll()
                    model.removeAll()
                default:
                    list.tags.append("d\(step)")
                    model.append("d\(step)")
                }
            }
            #expect(list.tags.count == model.count)
        }
        #expect(Array(list.tags) == model)
        #expect(list.tags.first == model.first)
        #expect(list.tags.last == model.last)
        let reopened = try Database(configuration: db.configuration)
        #expect(Array(reopened.object(ofType: Playlist.self, forPrimaryKey: "p")!.tags) == model)
        expectValid(db)
    }

    @Test func aListOfObjectsAddsItsElementsAndAnswersInverseLinks() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "p"
        try db.write { try db.add(list) }
        let hit = song("hit", 200)
        hit.plays = 7
        try db.write {
            list.songs.append(hit)
            list.songs.append(song("b-side", 100))
            list.songs.append(hit)  // the same object twice
        }
        #expect(db.objects(Song.self).count == 2)
        #expect(list.songs.map(\.title) == ["hit", "b-side", "hit"])
        #expect(hit.playlists.map(\.name) == ["p"])
        // Queries on a list keep its order and its repeats, as the list does.
        #expect(try list.songs.filter("seconds > 150").map(\.title) == ["hit", "hit"])
        #expect(list.songs.sorted(by: \.seconds).map(\.title) == ["b-side", "hit", "hit"])
        #expect(list.songs.sum(of: \.seconds) == 500)
        #expect(list.songs.sum(of: \.plays) == 14)  // the b-side's nil is skipped, the repeat counts again
        #expect(list.songs.max(of: \.seconds) == 200)
        #expect(list.songs.average(of: \.seconds) == 500.0 / 3)
        #expect(list.songs.results().count == 3)
        try db.write { list.songs.remove(at: 0) }
        #expect(hit.playlists.count == 1)  // still there once
        try db.write { list.songs.remove(at: 1) }
        #expect(hit.playlists.isEmpty)
        expectValid(db)
    }

    @Test("aggregates over a long list read each object's value where it is stored, repeats and nils as the list holds them")
    func aggregatesOverALongList() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "long"
        var random = SystemRandomNumberGenerator()
        // Thousands of songs (many clusters in the default layout), listed out of order with repeats.
        let songs = (0..<3_000).map { index -> Song in
            let made = song("s\(index)", Int.random(in: -500...5_000, using: &random))
            made.plays = index % 4 == 0 ? nil : Int.random(in: 0...99, using: &random)
            return made
        }
        let order = (0..<4_000).map { _ in Int.random(in: 0..<songs.count, using: &random) }
        try db.write {
            for made in songs { try db.add(made) }
            for index in order { list.songs.append(songs[index]) }
        }
        func expectAggregates(_ listed: [Song], sourceLocation: SourceLocation = #_sourceLocation) {
            let seconds = listed.map(\.seconds)
            #expect(list.songs.sum(of: \.seconds) == seconds.reduce(0, +), sourceLocation: sourceLocation)
            #expect(list.songs.sum(of: \.plays) == listed.compactMap(\.plays).reduce(0, +), sourceLocation: sourceLocation)
            #expect(list.songs.min(of: \.seconds) == seconds.min(), sourceLocation: sourceLocation)
            #expect(list.songs.max(of: \.title) == listed.map(\.title).max(), sourceLocation: sourceLocation)
            #expect(list.songs.max(of: \.plays) == listed.compactMap(\.plays).max(), sourceLocation: sourceLocation)
            let average = list.songs.average(of: \.seconds) ?? .nan
            let expected = Double(seconds.reduce(0, +)) / Double(seconds.count)
            #expect(abs(average - expected) < 1e-9, sourceLocation: sourceLocation)
        }
        let listed = order.map { songs[$0] }
        expectAggregates(listed)
        // Inside a write, with changes the write has not committed.
        try db.write {
            songs[order[0]].seconds += 1_000_000
            songs[order[1]].plays = nil
            expectAggregates(order.map { songs[$0] })
        }
        expectAggregates(order.map { songs[$0] })
        // Another handle's commit, seen after a refresh.
        let other = try Database(configuration: db.configuration)
        try other.write { for song in try other.objects(Song.self).filter("seconds < 0") { song.seconds = 0 } }
        db.refresh()
        expectAggregates(order.map { songs[$0] })
        #expect(list.songs.min(of: \.seconds) == 0)
    }

    @Test func deletingAnObjectRemovesEveryOccurrenceFromEveryList() throws {
        let db = try makeDatabase()
        let gone = song("gone")
        let lists = (0..<3).map { index -> Playlist in
            let list = Playlist()
            list.name = "p\(index)"
            list.songs.append(contentsOf: [song("x\(index)"), gone, song("y\(index)"), gone])
            return list
        }
        try db.write { try db.add(lists) }
        try db.write { try db.delete(gone) }
        for (index, list) in lists.enumerated() {
            #expect(list.songs.map(\.title) == ["x\(index)", "y\(index)"])
        }
        expectValid(db)
    }

    @Test func deletingTheOwnerCascadesToTheListsObjectsOnlyWhenAsked() throws {
        let db = try makeDatabase()
        let album = Album()
        album.title = "Blue"
        album.tracks.append(contentsOf: [song("a"), song("b")])
        let mix = Playlist()
        mix.name = "mix"
        try db.write {
            try db.add(album)
            mix.songs.append(album.tracks[0])
            try db.add(mix)
        }
        try db.write { try db.delete(mix) }  // nullify: the songs stay
        #expect(db.objects(Song.self).count == 2)
        try db.write { try db.delete(album) }  // cascade: the tracks go
        #expect(db.objects(Song.self).isEmpty)
        expectValid(db)
    }

    @Test func upsertReplacesTheListAndAssigningReplacesTheContents() throws {
        let db = try makeDatabase()
        let first = Playlist()
        first.name = "p"
        first.tags.append(contentsOf: ["a", "b", "c"])
        first.songs.append(song("old"))
        try db.write { try db.add(first) }
        let second = Playlist()
        second.name = "p"
        second.tags.append("z")
        try db.write { try db.add(second, update: .modified) }
        let stored = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "p"))
        #expect(Array(stored.tags) == ["z"])
        #expect(stored.songs.isEmpty)
        try db.write { stored.tags = List(["x", "y"]) }
        #expect(Array(stored.tags) == ["x", "y"])
        expectValid(db)
    }

    @Test func aRolledBackListChangeIsUndone() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "p"
        list.tags.append(contentsOf: ["a", "b"])
        try db.write { try db.add(list) }
        try db.beginWrite()
        list.tags.removeAll()
        list.tags.append("c")
        list.songs.append(song("new"))
        db.cancelWrite()
        #expect(Array(list.tags) == ["a", "b"])
        #expect(list.songs.isEmpty)
        #expect(db.objects(Song.self).isEmpty)
        expectValid(db)
    }

    @Test func nilInANonOptionalListIsAnErrorAndTheWriteIsKept() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "p"
        try db.write { try db.add(list) }
        try db.write {
            // Through the dynamic API a nil element is possible; it must be refused.
            expectTroveError(.invalidValue) {
                try db.listInsert(.null, at: 0, owner: list._objectKey, column: 1, table: list._table!, db.writeState!)
            }
        }
        #expect(list.tags.isEmpty)
    }

    /// Appending to a long list rewrites at most its last chunk: the bytes a
    /// commit writes do not grow with the list.
    @Test func appendingToALongListDoesNotRewriteIt() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "long"
        try db.write { try db.add(list) }
        func bytesWrittenByOneAppend() throws -> Int {
            try db.beginWrite()
            let before = db.writeState!.transaction.loggedBytes
            list.tags.append("one more")
            let written = db.writeState!.transaction.loggedBytes - before
            try db.commitWrite()
            return written
        }
        let short = try bytesWrittenByOneAppend()
        try db.write {
            for index in 0..<1_000_000 { list.tags.append("element \(index)") }
        }
        let long = try bytesWrittenByOneAppend()
        #expect(list.tags.count == 1_000_002)
        #expect(long <= short + ListChunk.softLimit, "one append wrote \(short) bytes to a short list, \(long) to a long one")
        #expect(list.tags[1_000_001] == "one more")
    }

    @Test func aCollectionCannotBeSetOrComparedAsOneValue() throws {
        let db = try makeDatabase()
        let list = Playlist()
        list.name = "p"
        list.tags.append("a")
        try db.write { try db.add(list) }
        try db.write {
            expectTroveError(.invalidProperty) {
                try db.setValue(.string("x"), forProperty: "tags", ofType: "Playlist", primaryKey: .string("p"))
            }
        }
        expectTroveError(.invalidQuery) { try db.objects(Playlist.self).filter("name == tags") }
        #expect(Array(list.tags) == ["a"])
        let playlist = try #require(try db.dynamicObjects("Playlist").first)
        #expect(playlist.storedValues[try #require(playlist.objectSchema.properties.firstIndex { $0.name == "tags" })] == .null)
        #expect((playlist["tags"] as? List<String>)?.array() == ["a"])
        #expect(try db.elements(of: db.dynamicObjects("Playlist").first!, property: "tags") == [.string("a")])
    }
}
