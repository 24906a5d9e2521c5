import Foundation
import Testing
import TroveRealm

// MARK: Seed 001: the chat's users and messages
//
// The seed's model: `User` is the superclass of `Me` and `OtherUser`, and a
// chat message's sender is declared as `User`. Realm cannot store that (a
// link holds objects of exactly its class); TroveRealm does. As in the seed,
// the primary key is named by `primaryKey()` and enums are kept in a private
// raw property behind a computed one named in `ignoredProperties()`.

class ChatUser: Object {
    @Persisted var id = ""
    @Persisted var name = ""
    @Persisted var profileImageUrl = ""

    override static func primaryKey() -> String? {
        return "id"
    }
}

final class ChatMe: ChatUser {
    @Persisted var activityStatus = ""
}

enum ChatRoomBlockState: Int {
    case none, blockedByMe
}

final class ChatOtherUser: ChatUser {
    @Persisted private var blockStateRaw = ChatRoomBlockState.none.rawValue
    var chatRoomBlockState: ChatRoomBlockState {
        get { ChatRoomBlockState(rawValue: blockStateRaw) ?? .none }
        set { blockStateRaw = newValue.rawValue }
    }
    var hasBlockedChat: Bool { chatRoomBlockState != .none }

    override static func ignoredProperties() -> [String] {
        return ["hasBlockedChat", "chatRoomBlockState"]
    }
}

final class ChatMsg: Object {
    @Persisted var id = 0
    @Persisted var msg = ""
    @Persisted var sender: ChatUser?
    @Persisted var readBy = List<ChatUser>()

    override static func primaryKey() -> String? {
        return "id"
    }

    private convenience init(id: Int) {
        self.init()
        self.id = id
    }

    final class func create(id: Int, msg: String, from sender: ChatUser) -> ChatMsg {
        let message = ChatMsg(id: id)
        message.msg = msg
        message.sender = sender
        return message
    }
}

@Suite("The seed's chat on TroveRealm")
@MainActor struct ChatSeedTests {
    @Test("a message's sender declared as the base class holds Me or an OtherUser; queries, inverse reads and deletes follow it")
    func senderHoldsSubclasses() throws {
        let realm = try makeRealm()
        let me = ChatMe()
        me.id = "me"
        me.name = "동현"
        let friend = ChatOtherUser()
        friend.id = "bo"
        friend.name = "Bo"
        try realm.write {
            realm.add(ChatMsg.create(id: 1, msg: "안녕", from: me))
            realm.add(ChatMsg.create(id: 2, msg: "hi", from: friend))
            let third = ChatMsg.create(id: 3, msg: "ㅋㅋ", from: friend)
            third.readBy.append(objectsIn: [me, friend])
            realm.add(third)
        }
        let messages = realm.objects(ChatMsg.self).sorted(byKeyPath: "id")
        #expect(messages.map { $0.sender is ChatMe } == [true, false, false])
        #expect((messages[1].sender as? ChatOtherUser)?.hasBlockedChat == false)
        #expect(messages.filter("sender.name == %@", "Bo").map(\.id) == [2, 3])
        #expect(messages.filter("ANY readBy.name == %@", "동현").map(\.id) == [3])
        #expect(messages.where { $0.sender.name == "동현" }.map(\.id) == [1])
        #expect(messages[2].readBy.map { $0 is ChatMe } == [true, false])
        #expect(messages.filter("sender == %@", friend).count == 2)

        try realm.write { (messages[1].sender as? ChatOtherUser)?.chatRoomBlockState = .blockedByMe }
        #expect(realm.object(ofType: ChatOtherUser.self, forPrimaryKey: "bo")?.hasBlockedChat == true)

        try realm.write { realm.delete(friend) }
        #expect(messages.map { $0.sender?.name } == ["동현", nil, nil])
        #expect(messages[2].readBy.map(\.name) == ["동현"])
    }
}
