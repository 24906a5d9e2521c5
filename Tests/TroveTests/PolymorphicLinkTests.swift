import Foundation
import Testing

@testable import Trove

/// The seeds' chat: a message's sender is declared as the base class and
/// holds whichever user sent it.
final class ChatLine: Object {
    @Persisted var text = ""
    @Persisted var sender: User?
    @Persisted var readers: List<User>
    @Persisted var reactions: Map<String, User?>
    @Persisted(deleteRule: .cascade) var draftBy: User?
}

final class Mention: Object {
    @Persisted var line: ChatLine?
    @Persisted var who: User?
}

/// A subclass that sees the messages it sent: the inverse of a link declared to its base class.
final class Moderator: User {
    @Persisted(originProperty: "sender") var sent: LinkingObjects<ChatLine>
}

@Suite("Links declared with a base class hold subclass objects")
struct PolymorphicLinkTests {
    private func user<U: User>(_ type: U.Type, _ id: Int, _ name: String) -> U {
        let user = U()
        user.id = id
        user.name = name
        return user
    }

    @Test("a link, a list and a map declared as User hold a Me and an OtherUser and read them back as their own class")
    func linksReadBackAsTheirOwnClass() throws {
        let directory = makeTemporaryDirectory()
        var configuration = Configuration(fileURL: directory.appendingPathComponent("chat.trove"))
        configuration.encryptionKey = suiteEncryptionKey
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let me = user(Me.self, 1, "Min")
                me.about = "hi"
                let line = ChatLine()
                line.text = "hello"
                line.sender = me
                line.readers.append(objectsIn: [user(User.self, 1, "Plain"), user(OtherUser.self, 1, "Ju"), me])
                line.reactions["like"] = user(OtherUser.self, 2, "Bo")
                try db.add(line)
            }
            let line = try #require(db.objects(ChatLine.self).first)
            #expect((line.sender as? Me)?.about == "hi")
            #expect(line.readers.map { String(describing: type(of: $0)) } == ["User", "OtherUser", "Me"])
            #expect(line.readers.map(\.name) == ["Plain", "Ju", "Min"])
            #expect(line.reactions["like"]??.name == "Bo")
            #expect(line.reactions["like"].flatMap { $0 } is OtherUser)
            expectValid(db)
        }
        // A new handle, which has not used the subclasses yet, finds their classes.
        let db = try Database(configuration: configuration)
        let line = try #require(db.objects(ChatLine.self).first)
        #expect(line.sender is Me)
        #expect(line.readers[1] is OtherUser)
        try db.write { (line.sender as? Me)?.about = "changed" }
        #expect(db.objects(Me.self).first?.about == "changed")
    }

    @Test("one primary key may be used by a User, a Me and an OtherUser, and links tell them apart")
    func samePrimaryKeyInEachClass() throws {
        let db = try makeDatabase()
        try db.write {
            for (index, made) in [user(User.self, 7, "u"), user(Me.self, 7, "m"), user(OtherUser.self, 7, "o")].enumerated() {
                let line = ChatLine()
                line.text = "\(index)"
                line.sender = made
                try db.add(line)
            }
        }
        let senders = db.objects(ChatLine.self).sorted(by: \.text).map { $0.sender! }
        #expect(senders.map(\.name) == ["u", "m", "o"])
        #expect(senders.map { String(describing: type(of: $0)) } == ["User", "Me", "OtherUser"])
        #expect(db.object(ofType: Me.self, forPrimaryKey: 7)?.name == "m")
        #expect(db.object(ofType: User.self, forPrimaryKey: 7)?.name == "u")
        expectValid(db)
    }

    @Test("queries follow a link to whichever class it holds: sender.name, ANY readers.name, sorting by sender.name")
    func queriesThroughPolymorphicLinks() throws {
        let db = try makeDatabase()
        try db.write {
            for (text, sender) in [
                ("a", user(Me.self, 1, "Min")), ("b", user(OtherUser.self, 2, "Ju")), ("c", user(User.self, 3, "Al")),
            ] {
                let line = ChatLine()
                line.text = text
                line.sender = sender
                line.readers.append(sender)
                try db.add(line)
            }
        }
        let lines = db.objects(ChatLine.self)
        #expect(try lines.filter("sender.name == 'Min'").map(\.text) == ["a"])
        #expect(try lines.filter("sender.name != 'Min'").map(\.text).sorted() == ["b", "c"])
        #expect(try lines.filter("NOT sender.name BEGINSWITH 'J'").map(\.text).sorted() == ["a", "c"])
        #expect(try lines.filter("ANY readers.name == 'Ju'").map(\.text) == ["b"])
        #expect(try lines.filter("ALL readers.name != 'Ju'").map(\.text).sorted() == ["a", "c"])
        #expect(try lines.filter("SUBQUERY(readers, $r, $r.name BEGINSWITH 'M').@count == 1").map(\.text) == ["a"])
        #expect(lines.sorted(byKeyPath: "sender.name").map(\.text) == ["c", "b", "a"])
        #expect(try lines.filter("sender == nil").isEmpty)
        let me = try #require(db.objects(Me.self).first)
        #expect(try lines.filter("sender == %@", me).map(\.text) == ["a"])
    }

    @Test("a list declared as User is filtered and sorted over the Me and OtherUser objects it holds")
    func listOfBaseClassFilteredAndSorted() throws {
        let db = try makeDatabase()
        try db.write {
            let line = ChatLine()
            line.readers.append(objectsIn: [user(Me.self, 1, "Min"), user(User.self, 2, "Al"), user(OtherUser.self, 3, "Mo")])
            try db.add(line)
        }
        let readers = try #require(db.objects(ChatLine.self).first).readers
        let named = try readers.filter("name BEGINSWITH 'M'")
        #expect(named.map(\.name) == ["Min", "Mo"])
        #expect(named.count == 2)
        #expect(try named.filter("id > 1").map { String(describing: type(of: $0)) } == ["OtherUser"])
        #expect(readers.sorted(by: \.name).map(\.name) == ["Al", "Min", "Mo"])
        #expect(readers.sorted(byKeyPath: "id", ascending: false).map(\.name) == ["Mo", "Al", "Min"])
        #expect(readers.max(of: \.id) == 3)
        #expect(readers.sum(of: \.id) == 6)
        #expect(readers.average(of: \.id) == 2)
    }

    @Test("deleting a subclass object clears the links to it; a cascade reaches a subclass object")
    func deletesAndCascades() throws {
        let db = try makeDatabase()
        try db.write {
            let line = ChatLine()
            line.sender = user(Me.self, 1, "Min")
            line.readers.append(objectsIn: [line.sender!, user(OtherUser.self, 2, "Ju")])
            line.draftBy = user(OtherUser.self, 3, "Drafter")
            try db.add(line)
        }
        let line = try #require(db.objects(ChatLine.self).first)
        try db.write { try db.delete(db.objects(Me.self).first!) }
        #expect(line.sender == nil)
        #expect(line.readers.map(\.name) == ["Ju"])
        try db.write { try db.delete(line) }
        #expect(db.objects(OtherUser.self).map(\.name) == ["Ju"])
        expectValid(db)
    }

    @Test("a subclass's linking objects follow a link declared with its base class")
    func inverseLinksFromSubclasses() throws {
        let db = try makeDatabase()
        try db.write {
            let moderator = user(Moderator.self, 1, "Mod")
            for text in ["x", "y"] {
                let line = ChatLine()
                line.text = text
                line.sender = moderator
                try db.add(line)
            }
            let other = ChatLine()
            other.sender = user(User.self, 1, "Plain")
            try db.add(other)
        }
        let moderator = try #require(db.objects(Moderator.self).first)
        #expect(moderator.sent.map(\.text).sorted() == ["x", "y"])
        #expect(try db.objects(Moderator.self).filter("sent.@count == 2").count == 1)
    }

    @Test("keys of a class hierarchy stay apart across writes, deletes and reopening")
    func keysStayApart() throws {
        let directory = makeTemporaryDirectory()
        var configuration = Configuration(fileURL: directory.appendingPathComponent("keys.trove"))
        configuration.encryptionKey = suiteEncryptionKey
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for id in 0..<5 { try db.add(user(Moderator.self, id, "m\(id)")) }
            }
            try db.write { try db.delete(db.objects(Moderator.self).filter { $0.id == 4 }) }
        }
        let db = try Database(configuration: configuration)
        try db.write {
            for id in 0..<5 {
                let line = ChatLine()
                line.sender = user(Me.self, id, "me\(id)")
                try db.add(line)
                let mention = Mention()
                mention.who = user(OtherUser.self, 100 + id, "o\(id)")
                try db.add(mention)
            }
        }
        #expect(db.objects(ChatLine.self).compactMap { $0.sender as? Me }.count == 5)
        #expect(db.objects(Mention.self).compactMap { $0.who as? OtherUser }.count == 5)
        var keys = Set<UInt64>()
        for object in Array(db.objects(Me.self)) as [Object] + Array(db.objects(OtherUser.self))
            + Array(db.objects(Moderator.self))
        {
            #expect(keys.insert(object._objectKey).inserted, "key \(object._objectKey) used twice")
        }
        expectValid(db)
    }

    @Test("an observer of sender.name and readers.name hears a change of the Me or OtherUser those links hold")
    func observingThroughPolymorphicLinks() throws {
        let db = try makeDatabase()
        let me = user(Me.self, 1, "Min")
        let other = user(OtherUser.self, 2, "Ju")
        let line = ChatLine()
        line.sender = me
        line.readers.append(other)
        try db.write { try db.add(line) }
        var changes: [[String]] = []
        let token = line.observe(keyPaths: ["sender.name", "readers.name"]) { (change: ObjectChange<ChatLine>) in
            if case .change(_, let properties) = change { changes.append(properties.map(\.name)) }
        }
        var resultsChanges: [[Int]] = []
        let resultsToken = try db.objects(ChatLine.self).observe(properties: ["sender.name"]) { change in
            if case .update(_, _, _, let modified) = change { resultsChanges.append(modified) }
        }
        try db.write { me.about = "not observed" }
        #expect(changes.isEmpty)
        try db.write { me.name = "Minji" }
        try db.write { other.name = "Juno" }
        #expect(changes == [["sender"], ["readers"]])
        #expect(resultsChanges == [[0]])
        _ = (token, resultsToken)
    }

    @Test("a migration reads a link declared with a base class as the subclass object it holds, and keeps it")
    func migrationReadsSubclassTargets() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("migrate.trove")
        var configuration = Configuration(fileURL: url, objectTypes: [ChatLine.self, Me.self, OtherUser.self, Moderator.self])
        configuration.encryptionKey = suiteEncryptionKey
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for (text, sender) in [("a", user(Me.self, 1, "Min")), ("b", user(OtherUser.self, 1, "Ju"))] as [(String, User)] {
                    let line = ChatLine()
                    line.text = text
                    line.sender = sender
                    line.readers.append(sender)
                    try db.add(line)
                }
            }
        }
        configuration.schemaVersion = 1
        let seen = Locked<[String]>([])
        configuration.migration = { migration, _ in
            migration.enumerateObjects(ofType: "ChatLine") { old, new in
                let sender = old?["sender"] as? DynamicObject
                let reader = (old?["readers"] as? List<DynamicObject>)?.first
                seen.withLock { $0.append("\(sender?.objectSchema.name ?? "nil") \(reader?.objectSchema.name ?? "nil")") }
                new?["text"] = "\(sender?["name"] as? String ?? "?")"
            }
        }
        let db = try Database(configuration: configuration)
        #expect(seen.withLock { $0.sorted() } == ["Me Me", "OtherUser OtherUser"])
        #expect(db.objects(ChatLine.self).map(\.text).sorted() == ["Ju", "Min"])
        #expect(db.objects(ChatLine.self).compactMap { $0.sender as? Me }.count == 1)
        expectValid(db)
    }

    @Test("a subclass stored before classes shared their keys is refused as a link target, with the reason")
    func subclassStoredApartIsRefused() throws {
        let db = try makeDatabase()
        // How an earlier Trove stored Me: a type of its own, without its place in the hierarchy.
        try db.createType(ObjectSchema(name: "Me", properties: ModelInfo.of(Me.self).schema.properties))
        let error = expectTroveError(.invalidValue) {
            try db.write {
                let line = ChatLine()
                line.sender = user(Me.self, 1, "Min")
                try db.add(line)
            }
        }
        #expect(error?.message.contains("this file stored Me before") == true, "\(error?.message ?? "")")
        #expect(db.objects(ChatLine.self).isEmpty)
        try db.write { try db.add(user(Me.self, 2, "still stored on its own")) }
        #expect(db.objects(Me.self).count == 1)
    }
}
