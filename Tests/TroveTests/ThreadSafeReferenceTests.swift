import Foundation
import Testing

@testable import Trove

/// A handle of its own on another actor, where references are resolved.
/// It does not follow commits by itself: what it sees of a commit made after
/// it read, it sees because resolving refreshes it.
private actor Elsewhere {
    private var db: Database?

    static func opened(_ configuration: Configuration) async throws -> Elsewhere {
        let elsewhere = Elsewhere()
        try await elsewhere.open(configuration)
        return elsewhere
    }

    private func open(_ configuration: Configuration) throws {
        db = try Database(configuration: configuration)
        db?.autorefresh = false
    }

    private var handle: Database {
        guard let db else { preconditionFailure("open the handle first") }
        return db
    }

    /// What `read` makes of the value `reference` resolves to here; nil when it resolves to nil.
    func read<T: ThreadConfined, R: Sendable>(_ reference: ThreadSafeReference<T>, _ read: @Sendable (T) -> R) -> R? {
        handle.resolve(reference).map(read)
    }

    /// Resolves `reference` here and changes the value in a write of this
    /// actor's handle; false when it resolves to nil.
    func write<T: ThreadConfined>(_ reference: ThreadSafeReference<T>, _ change: @Sendable (T) -> Void) throws -> Bool {
        guard let value = handle.resolve(reference) else { return false }
        try handle.write { change(value) }
        return true
    }
}

/// Thread-safe references to objects, results and collections, resolved on
/// another actor's handle.
@Suite("Thread-safe references")
struct ThreadSafeReferenceTests {
    private func chore(_ title: String, of owner: Owner?, done: Bool = false) -> Chore {
        let chore = Chore()
        chore.title = title
        chore.owner = owner
        chore.done = done
        return chore
    }

    @Test("an object resolves on another actor as its handle sees it, commits after the reference included, and writes there")
    func object() async throws {
        let db = try makeDatabase()
        try addOwners(to: db)
        let ana = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        let reference = ThreadSafeReference(to: ana)
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(reference) { $0.pet?.name ?? "-" } == "Rex")
        try db.write { ana.pet?.name = "Max" }
        #expect(await elsewhere.read(reference) { $0.pet?.name ?? "-" } == "Max")
        #expect(try await elsewhere.write(reference) { $0.pet?.age = 4 })
        db.refresh()
        #expect(ana.pet?.age == 4)
        // Resolved again: a reference is not used up.
        #expect(await elsewhere.read(reference) { $0.pet?.age ?? 0 } == 4)
    }

    @Test("filtered and sorted results resolve as their query, run again by the other handle")
    func results() async throws {
        let db = try makeDatabase()
        try addOwners(to: db)
        let bo = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Bo"))
        let open = try db.objects(Chore.self).filter("done == false").sorted(byKeyPath: "title", ascending: false)
        let reference = ThreadSafeReference(to: open)
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(reference) { $0.map(\.title) } == ["laundry", "dishes"])
        try db.write {
            try db.add(chore("ironing", of: bo))
            db.objects(Chore.self).first { $0.title == "laundry" }?.done = true
        }
        #expect(await elsewhere.read(reference) { $0.map(\.title) } == ["ironing", "dishes"])
        #expect(try await elsewhere.write(reference) { $0[0].done = true })
        #expect(open.map(\.title) == ["dishes"])
    }

    @Test("results made distinct keep their earlier steps: the same elements and the same explain() there")
    func shapedResults() async throws {
        let db = try makeDatabase()
        try addOwners(to: db)
        let perOwner = db.objects(Chore.self).sorted(byKeyPath: "title").distinct(by: ["owner.name"])
        let reference = ThreadSafeReference(to: perOwner)
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(perOwner.map(\.title) == ["bins", "dishes"])
        #expect(await elsewhere.read(reference) { $0.map(\.title) } == ["bins", "dishes"])
        #expect(perOwner.explain().contains("distinct by owner.name"))
        #expect(await elsewhere.read(reference) { $0.explain() } == perOwner.explain())
    }

    @Test("a list of objects and a list of values resolve as their owner's property on the other handle")
    func lists() async throws {
        let db = try makeDatabase()
        try addPlaylists(to: db)
        let mix = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "a"))
        let songs = ThreadSafeReference(to: mix.songs)
        let tags = ThreadSafeReference(to: mix.tags)
        try db.write {
            let encore = Song()
            encore.title = "encore"
            mix.songs.append(encore)
            mix.tags.append("loud")
        }
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(songs) { $0.map(\.title) } == ["hit", "b-side", "hit", "encore"])
        #expect(await elsewhere.read(tags) { $0.array() } == ["Rock", "live", "loud"])
        #expect(try await elsewhere.write(songs) { $0.remove(at: 0) })
        db.refresh()
        #expect(mix.songs.map(\.title) == ["b-side", "hit", "encore"])
    }

    @Test("a set and a map resolve as their owner's property on the other handle")
    func setsAndMaps() async throws {
        let db = try makeDatabase()
        let profile = Profile(value: ["name": "p", "tags": ["a"], "links": ["blog": "old"]])
        try db.write { try db.add(profile) }
        let tags = ThreadSafeReference(to: profile.tags)
        let links = ThreadSafeReference(to: profile.links)
        try db.write {
            profile.tags.insert("b")
            profile.links["blog"] = "new"
            profile.links["mail"] = "m"
        }
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(tags) { $0.sorted() } == ["a", "b"])
        #expect(await elsewhere.read(links) { [$0.count == 2, $0["blog"] == "new", $0["mail"] == "m"] } == [true, true, true])
        #expect(try await elsewhere.write(tags) { $0.remove("a") })
        db.refresh()
        #expect(Array(profile.tags) == ["b"])
    }

    @Test("linking objects resolve on the other handle, through a link and through a list")
    func linkingObjects() async throws {
        let db = try makeDatabase()
        try addOwners(to: db)
        try addPlaylists(to: db)
        let ana = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        let hit = try #require(db.objects(Song.self).first { $0.title == "hit" })
        let chores = ThreadSafeReference(to: ana.chores)
        let playlists = ThreadSafeReference(to: hit.playlists)
        try db.write {
            try db.add(chore("ironing", of: ana))
            db.object(ofType: Playlist.self, forPrimaryKey: "c")?.songs.append(hit)
        }
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(chores) { $0.map(\.title).sorted() } == ["dishes", "ironing", "laundry"])
        #expect(await elsewhere.read(playlists) { $0.map(\.name).sorted() } == ["a", "c"])
    }

    @Test("once the object, or the object owning the collection, is deleted, resolving gives nil; results stay")
    func deleted() async throws {
        let db = try makeDatabase()
        try addOwners(to: db)
        try addPlaylists(to: db)
        let profile = Profile(value: ["name": "p"])
        try db.write { try db.add(profile) }
        let ana = try #require(db.object(ofType: Owner.self, forPrimaryKey: "Ana"))
        let mix = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "a"))
        let owner = ThreadSafeReference(to: ana)
        let chores = ThreadSafeReference(to: ana.chores)
        let songs = ThreadSafeReference(to: mix.songs)
        let tags = ThreadSafeReference(to: profile.tags)
        let links = ThreadSafeReference(to: profile.links)
        let owners = ThreadSafeReference(to: db.objects(Owner.self))
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(owner) { $0.name } == "Ana")
        #expect(await elsewhere.read(chores) { $0.count } == 2)
        try db.write {
            try db.delete(ana)
            try db.delete(mix)
            try db.delete(profile)
        }
        #expect(await elsewhere.read(owner) { $0.name } == nil)
        #expect(await elsewhere.read(chores) { $0.count } == nil)
        #expect(await elsewhere.read(songs) { $0.count } == nil)
        #expect(await elsewhere.read(tags) { $0.count } == nil)
        #expect(await elsewhere.read(links) { $0.count } == nil)
        #expect(await elsewhere.read(owners) { $0.map(\.name) } == ["Bo", "Cy"])
        #expect(try await elsewhere.write(owner) { $0.pet = nil } == false)
    }

    @Test("a subclass resolves as itself: an object referenced as its superclass, and a class hierarchy's part")
    func subclasses() async throws {
        let db = try makeDatabase { $0.objectTypes = [User.self, Me.self, OtherUser.self] }
        let me = Me()
        me.id = 1
        me.about = "hi"
        let user = User()
        user.id = 1
        try db.write {
            try db.add(me)
            try db.add(user)
        }
        let asUser: User = me
        let object = ThreadSafeReference(to: asUser)
        let everyone = db.objects(User.self, includingSubclasses: true)
        let parts = everyone.parts.map { ThreadSafeReference(to: $0) }
        let elsewhere = try await Elsewhere.opened(db.configuration)
        #expect(await elsewhere.read(object) { ($0 as? Me)?.about ?? "not a Me" } == "hi")
        var kinds: [[String]] = []
        for part in parts { kinds.append(await elsewhere.read(part) { $0.map { "\(type(of: $0))" } } ?? []) }
        #expect(kinds == everyone.parts.map { $0.map { "\(type(of: $0))" } })
        #expect(kinds.contains(["Me"]))
    }

    @Test("a reference to an unmanaged object, or resolved by a handle on another file, traps")
    func misuse() async throws {
        let unmanaged = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadSafeReference(to: Owner())
        }
        #expect(
            String(decoding: try #require(unmanaged).standardErrorContent, as: UTF8.self).contains(
                "needs a stored, not deleted Owner"))
        let otherFile = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try makeDatabase("one")
            try addOwners(to: db)
            let reference = ThreadSafeReference(to: db.objects(Owner.self))
            _ = try makeDatabase("two").resolve(reference)
        }
        #expect(
            String(decoding: try #require(otherFile).standardErrorContent, as: UTF8.self).contains(
                "cannot be resolved by a handle on"))
    }
}
