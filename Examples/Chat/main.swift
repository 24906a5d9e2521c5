// The chat app from the second seed document, on Trove: a `User` base class
// with `Me` and `OtherUser` subclasses, chat rooms holding a list of
// messages, photos attached to messages, enums stored as themselves (the seed
// kept a private raw key plus a computed property and `ignoredProperties()`),
// a `Date` stored as a Date, an ignored cache property, inverse links, and a
// room deleted with everything it owns.
//
//     swift run Chat [path/to/messenger.trove]

import Foundation
import Trove

// MARK: Models

/// The seed's `User` superclass; `Me` and `OtherUser` are each stored as their own type.
class User: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
    @Persisted var about = ""
    @Persisted var profileImageUrl: String?
}

final class Me: User {
    @Persisted var activityStatus = ""
    @Persisted var lastActiveAt: Date?
}

enum ChatRoomBlockState: String, PersistableEnum {
    case none, blockedByMe, blockedMe
}

final class OtherUser: User {
    @Persisted var blockState: ChatRoomBlockState = .none
    /// The rooms whose `partner` is this user: answered from the link, never stored twice.
    @Persisted(originProperty: "partner") var rooms: LinkingObjects<ChatRoom>
    /// The seed's `hasBlockedChat`: computed, so simply not `@Persisted`.
    var hasBlockedChat: Bool { blockState != .none }
}

enum PhotoState: Int, PersistableEnum {
    case normal, liked, reported
}

final class Photo: Object {
    @Persisted(primaryKey: true) var id = UUID()
    @Persisted var url = ""
    @Persisted var photoState: PhotoState = .normal
    /// A decoded image kept in memory only (the seed's ignored property).
    var thumbnailCache: Data?

    convenience init(url: String) {
        self.init()
        self.url = url
    }
}

enum MessageState: Int, PersistableEnum {
    case sending, sent, read
}

final class ChatMessage: Object {
    @Persisted(primaryKey: true) var id = UUID()
    @Persisted var text = ""
    @Persisted(indexed: true) var sentAt = Date()
    @Persisted var state: MessageState = .sending
    /// Who sent it: `Me` or an `OtherUser`, each read back as its own class
    /// (a link declared with the base class holds its subclasses' objects).
    @Persisted var sender: User?
    /// Deleted with the message.
    @Persisted(deleteRule: .cascade) var photo: Photo?

    convenience init(_ text: String, from sender: User, at date: Date, photo: Photo? = nil) {
        self.init()
        self.text = text
        self.sender = sender
        self.sentAt = date
        self.photo = photo
    }
}

final class ChatRoom: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var partner: OtherUser?
    @Persisted var tags = List<String>()
    /// Deleting the room deletes its messages, and their photos with them.
    @Persisted(deleteRule: .cascade) var messages = List<ChatMessage>()
}

// MARK: The seed's managers, without the mapping code

/// The seed's `MeManager`: `me()`, `registerMe()`, `updateMe()`, `updateProfileImage()`.
struct MeManager {
    let db: Database

    func me() -> Me? { db.objects(Me.self).first }

    func registerMe(name: String, about: String) throws -> Me {
        let me = Me()
        me.id = "me"
        me.name = name
        me.about = about
        try db.write { try db.add(me, update: .modified) }
        return me
    }

    func updateProfileImage(_ url: String) throws {
        guard let me = me() else { return }
        try db.write { me.profileImageUrl = url }
    }

    func updateMyActivityStatus(_ status: String, at date: Date) throws {
        guard let me = me() else { return }
        try db.write {
            me.activityStatus = status
            me.lastActiveAt = date
        }
    }
}

func user(_ id: String, _ name: String) -> OtherUser {
    let user = OtherUser()
    user.id = id
    user.name = name
    return user
}

func run() throws {
    let path = CommandLine.arguments.dropFirst().first ?? ".trove-demo/messenger.trove"
    let url = URL(fileURLWithPath: path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let db = try Database(
        configuration: Configuration(
            fileURL: url, objectTypes: [Me.self, OtherUser.self, ChatRoom.self, ChatMessage.self, Photo.self]))
    print("Chat on \(url.path)")
    let earlier = db.objects(ChatMessage.self).count
    print("- found \(earlier) message(s) from earlier runs")

    let manager = MeManager(db: db)
    let me = try manager.registerMe(name: "동현", about: "iOS")
    try manager.updateProfileImage("https://example.com/me.png")
    try manager.updateMyActivityStatus("online", at: Date(timeIntervalSince1970: 1_700_000_000))
    print("- me: \(me.name), image \(me.profileImageUrl ?? "none"), \(me.activityStatus)")

    // Rooms: one kept across runs, one deleted at the end of this run.
    let bo = user("bo", "Bo")
    let cy = user("cy", "Cy")
    let start = Date(timeIntervalSince1970: 1_700_000_000 + Double(earlier) * 60)
    try db.write {
        try db.add([bo, cy], update: .modified)
        if db.object(ofType: ChatRoom.self, forPrimaryKey: "room-bo") == nil {
            let room = ChatRoom()
            room.id = "room-bo"
            room.partner = bo
            room.tags.append("friends")
            try db.add(room)
        }
    }
    let room = db.object(ofType: ChatRoom.self, forPrimaryKey: "room-bo")!
    let scratch = ChatRoom()
    scratch.id = "room-cy-\(UUID().uuidString.prefix(8))"
    scratch.partner = cy

    // Sending: appending an unmanaged message adds it (and its photo).
    try db.write {
        room.messages.append(ChatMessage("hi Bo", from: me, at: start))
        room.messages.append(ChatMessage("hey!", from: bo, at: start + 60))
        room.messages.append(ChatMessage("look", from: me, at: start + 120, photo: Photo(url: "https://example.com/cat.jpg")))
        room.messages.append(ChatMessage("cute", from: bo, at: start + 180))
        try db.add(scratch)
        scratch.messages.append(ChatMessage("hello Cy", from: me, at: start, photo: Photo(url: "https://example.com/dog.jpg")))
        scratch.messages.append(ChatMessage("bye", from: cy, at: start + 30))
    }
    print("- room-bo holds \(room.messages.count) message(s), tags \(Array(room.tags))")

    // The photo in a message, liked (the seed's `photo.photoState = .Liked`).
    let withPhoto = try room.messages.filter("text == 'look'").last!
    try db.write { withPhoto.photo?.photoState = .liked }
    print("- liked photo: \(withPhoto.photo?.url ?? "-") is \(withPhoto.photo!.photoState)")

    // Marking Bo's messages read, then the room's last three messages, newest first.
    try db.write {
        for message in try room.messages.filter("sender == %@ AND state != %@", bo, MessageState.read) {
            message.state = .read
        }
    }
    let lastThree = room.messages.sorted(by: \.sentAt, ascending: false).prefix(3)
    print(
        "- last 3 in room-bo: "
            + lastThree.map { "\($0.sender is Me ? "me" : $0.sender?.name ?? "?"): \($0.text) [\($0.state)]" }
            .joined(separator: " | "))
    let mine = try room.messages.filter("sender.name == %@", me.name).count
    print("- messages I sent in room-bo (a query through the sender link, whichever class): \(mine)")

    // Blocking (the seed's chatRoomBlockState), and the rooms of a user through the inverse link.
    try db.write { cy.blockState = .blockedByMe }
    let blocked = try db.objects(OtherUser.self).filter("blockState != %@", ChatRoomBlockState.none)
    print("- blocked users: \(blocked.map(\.name)); Cy has \(cy.rooms.count) room(s), hasBlockedChat = \(cy.hasBlockedChat)")

    // Deleting a room deletes its messages and their photos: nothing dangles.
    let photosBefore = db.objects(Photo.self).count
    try db.write { try db.delete(scratch) }
    print(
        "- deleted the room with Cy: Cy has \(cy.rooms.count) room(s), messages from Cy: \(try db.objects(ChatMessage.self).filter("sender == %@", cy).count), photos \(photosBefore) -> \(db.objects(Photo.self).count)"
    )

    // Class hierarchy: each subclass is its own type with the inherited
    // properties, and the base class queries them all (Realm cannot).
    let users = db.objects(User.self, includingSubclasses: true).sorted(by: \.name)
    print("- users: " + users.map { "\($0.name) (\(type(of: $0)))" }.joined(separator: ", "))

    let report = try db.verify()
    print("- integrity: \(report.isValid ? "no problems" : report.description)")

    let reopened = try Database(configuration: db.configuration)
    print("- reopened the file: \(reopened.objects(ChatMessage.self).count) message(s) (expected \(earlier + 4))")
}

do {
    try run()
} catch {
    print("Chat failed: \(error)")
    exit(1)
}
