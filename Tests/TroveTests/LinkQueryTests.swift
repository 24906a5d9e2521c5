import Foundation
import Testing

@testable import Trove

final class Keepsake: Object {
    @Persisted var label = ""
    @Persisted var item: Mixed = .none
}

/// Queries and sorts whose key paths go through links, lists, sets and inverse links.
@Suite struct LinkQueryTests {
    private func makeOwners() throws -> Database {
        let db = try makeDatabase(#function + UUID().uuidString)
        try addOwners(to: db)
        return db
    }

    private func makePlaylists() throws -> Database {
        let db = try makeDatabase(#function + UUID().uuidString)
        try addPlaylists(to: db)
        return db
    }

    @Test func aKeyPathThroughToOneLinksComparesTheTarget() throws {
        let db = try makeOwners()
        #expect(try db.objects(Chore.self).filter("owner.name == 'Ana'").map(\.title) == ["dishes", "laundry"])
        #expect(try db.objects(Pet.self).filter("owner.pet.age > 5").map(\.name) == ["Tom"])
        #expect(try db.objects(Chore.self).filter("owner.pet.name BEGINSWITH[c] 'r' AND done == false").count == 2)
        #expect(try db.objects(Owner.self).filter("pet.name == nil").isEmpty)  // a nil link matches nothing
        #expect(try db.objects(Owner.self).filter("pet == nil").map(\.name) == ["Cy"])
    }

    @Test("an object argument finds the mixed values that hold it, and the links to it; a wrong or unstored object is refused")
    func anObjectArgumentComparesWithMixedLinksAndLinks() throws {
        let db = try makeOwners()
        let bo = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Bo"))
        let ana = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        try db.write {
            for (label, item) in [("bo's", Mixed.object(bo)), ("ana's", .object(ana)), ("text", .string("Bo")), ("key", .int(2))]
            {
                let note = Keepsake()
                note.label = label
                note.item = item
                try db.add(note)
            }
        }
        let notes = db.objects(Keepsake.self)
        #expect(try notes.filter("item == %@", bo).map(\.label) == ["bo's"])
        #expect(try notes.filter("item == %@", Mixed.object(bo)).map(\.label) == ["bo's"])
        #expect(try notes.filter("item != %@", bo).map(\.label) == ["ana's", "text", "key"])
        #expect(try notes.filter("item IN %@", [bo, ana]).map(\.label) == ["bo's", "ana's"])
        let tom = try #require(bo.pet)
        #expect(try db.objects(Owner.self).filter("pet == %@", tom).map(\.name) == ["Bo"])
        #expect(try db.objects(Owner.self).filter("pet == %@", Mixed.object(tom)).map(\.name) == ["Bo"])
        #expect(try db.objects(Owner.self).filter("pet != %@", tom).map(\.name) == ["Ana", "Cy"])
        let refused = expectTroveError(.invalidQuery) { try db.objects(Owner.self).filter("pet == %@", bo) }
        #expect(refused?.message.contains("links to Pet but is compared with a Owner object") == true)
        // An object not stored yet is linked from nowhere, as Realm finds.
        #expect(try notes.filter("item == %@", Owner()).isEmpty)
        #expect(try notes.filter("item != %@", Owner()).count == 4)
        #expect(try notes.filter("item IN %@", [Owner(), bo]).map(\.label) == ["bo's"])
    }

    @Test func quantifiersCombineTheElementsOfACollection() throws {
        let db = try makePlaylists()
        let lists = db.objects(Playlist.self)
        #expect(try lists.filter("ANY songs.title == 'hit'").map(\.name) == ["a"])
        #expect(try lists.filter("songs.title == 'b-side'").map(\.name) == ["a", "b"])  // ANY is implied
        #expect(try lists.filter("ALL songs.seconds >= 100").map(\.name) == ["a", "b", "c"])  // vacuous for "c"
        #expect(try lists.filter("ALL songs.seconds > 150").map(\.name) == ["c"])
        #expect(try lists.filter("NONE songs.seconds > 150").map(\.name) == ["b", "c"])
        #expect(try lists.filter("ANY tags ==[c] 'rock'").map(\.name) == ["a"])
        #expect(try lists.filter("ANY tags BEGINSWITH 'j'").map(\.name) == ["b"])
        #expect(try lists.filter("NONE tags == 'live'").map(\.name) == ["b", "c"])
    }

    @Test func countsOfCollectionsAndInverseLinksAreComparable() throws {
        let lists = try makePlaylists().objects(Playlist.self)
        #expect(try lists.filter("songs.@count == 3").map(\.name) == ["a"])
        #expect(try lists.filter("songs.@count < 2 AND tags.@count > 0").map(\.name) == ["b"])
        let owners = try makeOwners().objects(Owner.self)
        #expect(try owners.filter("chores.@count >= 1").map(\.name) == ["Ana", "Bo"])
        #expect(try owners.filter("ANY chores.done == true").map(\.name) == ["Bo"])
    }

    @Test func aggregatesOverACollectionAreComparable() throws {
        let lists = try makePlaylists().objects(Playlist.self)
        #expect(try lists.filter("songs.@sum.seconds > 400").map(\.name) == ["a"])  // 200 + 100 + 200, repeats count
        #expect(try lists.filter("songs.@avg.seconds <= 100").map(\.name) == ["b"])
        #expect(try lists.filter("songs.@max.seconds == 200").map(\.name) == ["a"])
        #expect(try lists.filter("songs.@min.title BEGINSWITH 'b'").map(\.name) == ["a", "b"])
        #expect(try lists.filter("songs.@max.seconds != 200").map(\.name) == ["b", "c"])  // empty: no maximum
        let error = expectTroveError(.invalidQuery) { try lists.filter("songs.@sum.title > 1") }
        #expect(error?.message.contains("numeric") == true)
        expectTroveError(.invalidQuery) { try lists.filter("songs.@sum > 1") }
    }

    @Test func queriesThroughInverseLinksSeeTheLinkingObjects() throws {
        let db = try makePlaylists()
        #expect(try db.objects(Song.self).filter("ANY playlists.name == 'b'").map(\.title) == ["b-side"])
        #expect(try db.objects(Song.self).filter("playlists.@count == 2").map(\.title) == ["b-side"])
    }

    @Test func sortingThroughLinksAndByAggregatesOfCollections() throws {
        let db = try makePlaylists()
        let lists = db.objects(Playlist.self)
        #expect(lists.sorted(byKeyPath: "songs.@count", ascending: false).map(\.name) == ["a", "b", "c"])
        #expect(lists.sorted(byKeyPath: "songs.@sum.seconds").map(\.name) == ["c", "b", "a"])
        #expect(lists.sorted(byKeyPath: "songs.@max.seconds", ascending: false).map(\.name) == ["a", "b", "c"])
        let owners = try makeOwners()
        #expect(owners.objects(Chore.self).sorted(byKeyPath: "owner.pet.age", ascending: false).map(\.title).first == "bins")
        #expect(owners.objects(Owner.self).sorted(byKeyPath: "chores.@count").map(\.name) == ["Cy", "Bo", "Ana"])
    }

    @Test func aValueInACollectionPropertyMatchesAnyElement() throws {
        let lists = try makePlaylists().objects(Playlist.self)
        #expect(try lists.filter("%@ IN tags", "jazz").map(\.name) == ["b"])
        #expect(try lists.filter("'live' IN tags OR 'jazz' IN tags").map(\.name) == ["a", "b"])
        #expect(try lists.filter("NOT ('Rock' IN tags)").map(\.name) == ["b", "c"])
    }

    @Test func anObjectInACollectionOfObjectsMatchesByIdentity() throws {
        let db = try makePlaylists()
        let lists = db.objects(Playlist.self)
        let bSide = try #require(db.objects(Song.self).filter("title == 'b-side'").first)
        let hit = try #require(db.objects(Song.self).filter("title == 'hit'").first)
        #expect(try lists.filter("%@ IN songs", bSide).map(\.name) == ["a", "b"])
        #expect(try lists.filter("ANY songs == %@", hit).map(\.name) == ["a"])
        #expect(try lists.filter("ANY songs IN %@", [hit, bSide]).map(\.name) == ["a", "b"])
        #expect(try lists.filter("NONE songs == %@", hit).map(\.name) == ["b", "c"])
        #expect(try lists.filter("ANY songs != %@", hit).map(\.name) == ["a", "b"])
    }

    @Test func subqueryCountsTheElementsThatMatchEveryCondition() throws {
        let db = try makePlaylists()
        let lists = db.objects(Playlist.self)
        // The same element must match both conditions: "a" has a long song and a "b-" song, but not one song that is both.
        #expect(try lists.filter("SUBQUERY(songs, $s, $s.seconds > 150 AND $s.title BEGINSWITH 'b').@count > 0").isEmpty)
        #expect(try lists.filter("ANY songs.seconds > 150 AND ANY songs.title BEGINSWITH 'b'").map(\.name) == ["a"])
        #expect(try lists.filter("SUBQUERY(songs, $s, $s.seconds > 150).@count == 2").map(\.name) == ["a"])
        #expect(try lists.filter("SUBQUERY(songs, $s, $s.seconds < %@).@count >= 1", 150).map(\.name) == ["a", "b"])
        #expect(
            try lists.filter("subquery(tags, $t, $t BEGINSWITH[c] 'r' OR $t == 'jazz').@count = 1").map(\.name) == ["a", "b"])
        // Through inverse links and a to-one link.
        let owners = try makeOwners()
        #expect(
            try owners.objects(Owner.self).filter("SUBQUERY(chores, $c, $c.done == false).@count == 2").map(\.name) == ["Ana"])
        #expect(
            try owners.objects(Pet.self).filter("SUBQUERY(owner.chores, $c, $c.done == true).@count > 0").map(\.name) == ["Tom"])
    }

    @Test func aMalformedSubqueryPointsAtTheMistake() throws {
        let lists = try makePlaylists().objects(Playlist.self)
        let notACollection = expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(name, $n, $n == 'a').@count > 0") }
        #expect(notACollection?.message.contains("not a collection") == true)
        let noVariable = expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(songs, $s, seconds > 1).@count > 0") }
        #expect(noVariable?.message.contains("start with $s") == true)
        #expect(
            expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(songs, s, $s.seconds > 1).@count > 0") }?.position == 16)
        #expect(expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(songs, $s, $s.seconds > 1) > 0") }?.position == 36)
        expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(songs, $s, $s.seconds > 1).@count > 'x'") }
        expectTroveError(.invalidQuery) { try lists.filter("SUBQUERY(songs, $s, $s.seconds > 1") }
    }

    @Test func aBadKeyPathSaysWhatIsWrong() throws {
        let db = try makePlaylists()
        let lists = db.objects(Playlist.self)
        let error = expectTroveError(.invalidQuery) { try lists.filter("name.length == 3") }
        #expect(error?.message.contains("cannot follow") == true)
        expectTroveError(.invalidQuery) { try lists.filter("songs.@count == 'many'") }
        expectTroveError(.invalidQuery) { try lists.filter("tags.@sum > 1") }
        let unknown = expectTroveError(.invalidQuery) { try lists.filter("songs.titel == 'x'") }
        #expect(unknown?.message.contains("did you mean 'title'") == true)
    }
}
