import Foundation
import Testing
import TroveRealm

final class MappedPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var friends: List<MappedPerson>

    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name", "friends": "custom_friends"] }
}

@Suite("Custom column names (propertiesMapping)")
struct CustomColumnNameTests {
    @Test("propertiesMapping names the columns; code, queries, sorts and key paths keep the Swift names")
    func mappedColumns() throws {
        let realm = try makeRealm(objectTypes: [MappedPerson.self])
        let schema = try #require(realm.schema["MappedPerson"])
        #expect(schema.properties.map(\.columnName) == ["id", "first_name", "custom_friends"])
        #expect(schema.properties.map(\.name) == ["id", "firstName", "friends"])
        try realm.write {
            let ann = realm.create(MappedPerson.self, value: ["id": 1, "firstName": "Ann"])
            realm.create(MappedPerson.self, value: ["id": 2, "firstName": "Bo", "friends": [ann]])
        }
        let people = realm.objects(MappedPerson.self)
        #expect(people.filter("firstName == 'Bo'").first?.friends.first?.firstName == "Ann")
        #expect(people.where { $0.firstName == "Ann" }.count == 1)
        #expect(people.sorted(byKeyPath: "firstName", ascending: false).map(\.id) == [2, 1])
        #expect(people.first?["firstName"] as? String == "Ann")
        #expect(_name(for: \MappedPerson.firstName) == "firstName")
    }
}
