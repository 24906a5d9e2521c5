import Foundation
import Testing

@testable import Trove

@Suite("Persistable structs")
struct PersistableTests {
    @Test("the schema comes from the Codable shape, optionals and enums included")
    func schema() throws {
        let schema = try ValueModel.schema(of: Contact.self)
        #expect(schema.name == "Contact")
        #expect(schema.properties.map(\.name) == ["id", "firstName", "lastName", "gender", "age", "photo", "mood", "birthday"])
        #expect(schema.primaryKey?.name == "id")
        #expect(schema["id"]?.isAutoIncrement == true)
        #expect(schema["lastName"]?.isIndexed == true)
        #expect(schema["age"]?.isOptional == true)
        #expect(schema["age"]?.type == .int)
        #expect(schema["firstName"]?.isOptional == false)
        #expect(schema["photo"]?.type == .data)
        #expect(schema["mood"]?.type == .string)
        #expect(schema["birthday"]?.type == .date)
        #expect(schema["birthday"]?.isOptional == true)
    }

    @Test("values are stored and read back with auto-increment ids, no mapping layer")
    func crud() throws {
        let db = try makeDatabase()
        let saved = try db.write {
            [
                try db.add(Contact(firstName: "트랜잭션", lastName: "테스트", gender: 0, age: 22, photo: Data([1, 2, 3]))),
                try db.add(Contact(firstName: "Ada", lastName: "Lovelace", gender: 1, age: 36, mood: .happy)),
                try db.add(Contact(firstName: "Alan", lastName: "Turing", birthday: Date(timeIntervalSince1970: -1_821_000_000))),
            ]
        }
        #expect(saved.map(\.id) == [1, 2, 3])
        let all = db.values(Contact.self)
        #expect(all.count == 3)
        #expect(Array(all) == saved)
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 1)?.photo == Data([1, 2, 3]))
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 3)?.age == nil)

        let adults = try db.values(Contact.self).filter("age > 20").sorted(by: \.age, ascending: false).array()
        #expect(adults.map(\.firstName) == ["Ada", "트랜잭션"])
        #expect(try db.values(Contact.self).filter("lastName == %@", "Turing").first?.id == 3)
        #expect(try db.values(Contact.self).filter("mood == %@", Mood.happy).count == 1)
        #expect(db.values(Contact.self).max(of: \.id) == 3)

        var ada = saved[1]
        ada.age = 37
        try db.write { try db.add(ada, update: .modified) }
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 2)?.age == 37)
        #expect(db.values(Contact.self).count == 3)

        try db.write { try db.delete(saved[2]) }
        #expect(db.values(Contact.self).count == 2)
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 3) == nil)
        let next = try db.write { try db.add(Contact(firstName: "New", lastName: "One")) }
        #expect(next.id == 4)  // ids are not reused
        expectValid(db)
    }

    /// Coding keys renamed, and read in another order than they were declared.
    struct Renamed: Persistable, Equatable {
        static var primaryKey: KeyPath<Renamed, Int> { \.id }
        var id = 0
        var fullName = ""
        var nickname: String?
        var score = 0.0

        enum CodingKeys: String, CodingKey {
            case id
            case fullName = "name"
            case nickname, score
        }

        init(id: Int, fullName: String, nickname: String?, score: Double) {
            self.id = id
            self.fullName = fullName
            self.nickname = nickname
            self.score = score
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            score = try container.decode(Double.self, forKey: .score)
            nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
            id = try container.decode(Int.self, forKey: .id)
            fullName = try container.decode(String.self, forKey: .fullName)
            // A key read again, out of turn.
            if try container.decode(Double.self, forKey: .score) != score { throw CancellationError() }
        }
    }

    @Test("values read straight from their records: renamed coding keys, keys read out of order, nil and every type")
    func readsFromRecords() throws {
        let db = try makeDatabase()
        let renamed = [
            Renamed(id: 1, fullName: "김하늘", nickname: nil, score: 1.5),
            Renamed(id: 2, fullName: "Ada", nickname: "countess", score: -2),
        ]
        let birthday = Date(timeIntervalSince1970: 1_000_000)
        let contacts = [
            Contact(id: 1, firstName: "A", lastName: "B", gender: nil, age: 40, photo: Data(), mood: .happy, birthday: birthday),
            Contact(id: 2, firstName: String(repeating: "긴이름", count: 20), lastName: "", photo: Data([0, 255])),
        ]
        try db.write {
            for value in renamed { try db.add(value) }
            for value in contacts { try db.add(value) }
        }
        // The schema follows the order init(from:) reads the keys in.
        #expect(try ValueModel.schema(of: Renamed.self).properties.map(\.name) == ["score", "nickname", "id", "name"])
        #expect(Array(db.values(Renamed.self)) == renamed)
        #expect(db.value(ofType: Renamed.self, forPrimaryKey: 2) == renamed[1])
        #expect(try db.values(Renamed.self).filter("name == %@", "Ada").array() == [renamed[1]])
        #expect(Array(db.values(Contact.self)) == contacts)
        #expect(Array(db.values(Contact.self).sorted(by: \.id, ascending: false)) == contacts.reversed())
    }

    /// One stored type, `Book`, before and after a property was added.
    enum FirstVersion {
        struct Book: Persistable {
            static var primaryKey: KeyPath<Book, Int> { \.id }
            var id = 0
            var title = ""
        }
    }
    enum SecondVersion {
        struct Book: Persistable, Equatable {
            static var primaryKey: KeyPath<Book, Int> { \.id }
            var id = 0
            var title = ""
            var pages = 0
            var note: String?
        }
    }

    @Test("a value stored before a property was added reads the property's default")
    func readsOlderRecords() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("values.trove")
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.add(FirstVersion.Book(id: 7, title: "old")) }
        }
        let db = try Database(fileURL: url)
        #expect(Array(db.values(SecondVersion.Book.self)) == [SecondVersion.Book(id: 7, title: "old", pages: 0, note: nil)])
        try db.write { try db.add(SecondVersion.Book(id: 8, title: "new", pages: 3, note: "n")) }
        #expect(db.values(SecondVersion.Book.self).map(\.pages) == [0, 3])
        #expect(db.value(ofType: SecondVersion.Book.self, forPrimaryKey: 7)?.note == nil)
    }

    @Test("a duplicate primary key in a struct throws primaryKeyExists")
    func duplicate() throws {
        let db = try makeDatabase()
        try db.write {
            try db.add(Contact(id: 5, firstName: "A", lastName: "B"))
            expectTroveError(.primaryKeyExists) { try db.add(Contact(id: 5, firstName: "C", lastName: "D")) }
        }
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 5)?.firstName == "A")
    }

    @Test("a struct with a property Trove cannot store is rejected with its name")
    func unsupportedProperty() throws {
        struct Bad: Persistable {
            static var primaryKey: KeyPath<Bad, Int> { \.id }
            var id = 0
            var tags: [String] = []
        }
        let db = try makeDatabase()
        let error = expectTroveError(.invalidModel) { try db.write { try db.add(Bad()) } }
        #expect(error?.message.contains("tags") == true)
    }
}
