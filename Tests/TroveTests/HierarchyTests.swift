import Foundation
import Testing

@testable import Trove

/// The second seed's users: a base class and two subclasses, each stored as
/// its own table with the inherited properties first.
class User: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var profileImageUrl: String?
}

final class Me: User {
    @Persisted var about = ""
    var hasBlockedChat = false  // ignored, like Realm's ignoredProperties
}

final class OtherUser: User {
    @Persisted(indexed: true) var activityStatus = 0
}

@Suite("Class hierarchies")
struct HierarchyTests {
    @Test("subclasses of a model class are stored as their own types, inherited properties first")
    func subclasses() throws {
        let db = try makeDatabase()
        let me = Me()
        me.id = 1
        me.name = "me"
        me.about = "hello"
        me.hasBlockedChat = true
        let other = OtherUser()
        other.id = 1  // another table: the same key is fine
        other.name = "you"
        other.activityStatus = 2
        try db.write {
            try db.add(me)
            try db.add(other)
        }
        #expect(ModelInfo.of(Me.self).schema.properties.map(\.name) == ["id", "name", "profileImageUrl", "about"])
        #expect(db.objects(Me.self).first?.about == "hello")
        #expect(db.objects(Me.self).first?.hasBlockedChat == false)
        #expect(try db.objects(OtherUser.self).filter("activityStatus == 2").first?.name == "you")
        try db.write { me.profileImageUrl = "https://example.com/me.png" }
        #expect(db.object(ofType: Me.self, forPrimaryKey: 1)?.profileImageUrl == "https://example.com/me.png")
        expectValid(db)
    }

    @Test("a class and its subclasses are queried together, filtered and sorted on the properties they share")
    func queriedTogether() throws {
        let db = try makeDatabase { $0.objectTypes = [User.self, Me.self, OtherUser.self] }
        try db.write {
            for (id, name) in [(1, "Cy"), (2, "Al")] {
                let user = User()
                user.id = id
                user.name = name
                try db.add(user)
            }
            let me = Me()
            me.id = 1
            me.name = "Bo"
            try db.add(me)
            let other = OtherUser()
            other.id = 9
            other.name = "Di"
            try db.add(other)
        }
        let everyone = db.objects(User.self, includingSubclasses: true)
        #expect(everyone.count == 4)
        #expect(db.objects(User.self, includingSubclasses: false).count == 2)
        #expect(Set(everyone.map(\.name)) == ["Al", "Bo", "Cy", "Di"])
        #expect(everyone.sorted(by: \.name).map(\.name) == ["Al", "Bo", "Cy", "Di"])
        #expect(
            everyone.sorted(by: \.name, ascending: false).map { String(describing: type(of: $0)) } == [
                "OtherUser", "User", "Me", "User",
            ])
        let filtered = try everyone.filter("name > %@", "Bo")
        #expect(Set(filtered.map(\.name)) == ["Cy", "Di"])
        #expect(filtered.contains { $0 is OtherUser })
    }
}
