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
}
