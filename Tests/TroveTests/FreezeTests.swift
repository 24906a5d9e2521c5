import Foundation
import Testing

@testable import Trove

/// Frozen objects and results: Sendable snapshots read from other tasks.
@Suite("Frozen snapshots")
struct FreezeTests {
    /// Owners, pets and chores, and three playlists, in one file.
    private func shelf() throws -> Database {
        let db = try makeDatabase(#function + UUID().uuidString)
        try addOwners(to: db)
        try addPlaylists(to: db)
        return db
    }

    @Test("a frozen object reads the same from a detached task, through links and collections, whatever happens later")
    func frozenObject() async throws {
        let db = try shelf()
        let ana = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        let frozen = ana.freeze()
        let mix = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "a")).freeze()
        try db.write {
            ana.pet?.name = "Max"
            try db.delete(db.objects(Chore.self).filter("title == 'dishes'"))
        }
        try db.write { try db.delete(ana) }
        #expect(ana.isInvalidated)
        let seen = await Task.detached {
            (
                frozen.name, frozen.pet?.name, frozen.pet?.owner?.name, frozen.chores.map(\.title).sorted(), mix.tags,
                mix.songs.map(\.seconds)
            )
        }.value
        #expect(seen.0 == "Ana")
        #expect(seen.1 == "Rex")
        #expect(seen.2 == "Ana")
        #expect(seen.3 == ["dishes", "laundry"])
        #expect(seen.4 == ["Rock", "live"])
        #expect(seen.5 == [200, 100, 200])
        #expect(frozen.thaw(in: db) == nil)  // deleted since
        #expect(mix.thaw(in: db)?.name == "a")
    }

    @Test("frozen results keep their query's members and order, and many tasks read them at once")
    func frozenResults() async throws {
        let db = try shelf()
        let snapshot = db.objects(Chore.self).sorted(by: \.title, ascending: false).freeze()
        try db.write {
            let extra = Chore()
            extra.title = "zzz"
            try db.add(extra)
            try db.delete(db.objects(Chore.self).filter("title == 'bins'"))
        }
        #expect(snapshot.map(\.title) == ["laundry", "dishes", "bins"])
        #expect(db.objects(Chore.self).count == 3)
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var seen = 0
                    for _ in 0..<50 { seen += snapshot.filter { $0.owner?.name != nil }.count }
                    return seen
                }
            }
            return await group.reduce(0, +)
        }
        #expect(counts == 8 * 50 * 3)
        #expect(Set(snapshot).count == 3)  // Hashable: one per object
    }
}
