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
