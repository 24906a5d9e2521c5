import Foundation
import Testing
import TroveRealm

final class ProjectedAddress: EmbeddedObject {
    @Persisted var city = ""
}

final class ProjectedPerson: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var address: ProjectedAddress?
    @Persisted var friends: List<ProjectedPerson>
}

final class PersonCard: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.firstName) var name
    @Projected(\ProjectedPerson.lastName.localizedUppercase) var shoutedLastName
    @Projected(\ProjectedPerson.address?.city) var city
    @Projected(\ProjectedPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

@Suite("Projections")
struct ProjectionTests {
    private func people(_ realm: Realm) throws {
        try realm.write {
            let ann = realm.create(ProjectedPerson.self, value: ["firstName": "Ann", "lastName": "Lee", "age": 31])
            ann.address = ProjectedAddress(value: ["city": "Seoul"])
            let bo = realm.create(ProjectedPerson.self, value: ["firstName": "Bo", "lastName": "Kim", "age": 25])
            let cy = realm.create(ProjectedPerson.self, value: ["firstName": "Cy", "lastName": "Park", "age": 40])
            ann.friends.append(objectsIn: [bo, cy])
        }
    }

    @Test("a projection reads renamed, derived and linked properties and a projected list, live")
    func readsThroughTheObject() throws {
        let realm = try makeRealm(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        try people(realm)
        let cards = realm.objects(PersonCard.self)
        #expect(cards.count == 3)
        let ann = try #require(cards.first { $0.name == "Ann" })
        #expect(ann.shoutedLastName == "LEE" && ann.city == "Seoul")
        #expect(Array(ann.friendNames) == ["Bo", "Cy"] && ann.friendNames.index(of: "Cy") == 1)
        // A projected collection freezes and observes as the list it reads.
        let frozenNames = ann.friendNames.freeze()
        #expect(frozenNames.isFrozen && !ann.friendNames.isFrozen && ann.friendNames.realm == realm)
        var seen: [String] = []
        let token = ann.friendNames.observe { change in
            if case .update(let names, let deletions, _, _) = change { seen.append("\(Array(names)) -\(deletions)") }
        }
        #expect(cards.first { $0.name == "Bo" }?.city == nil)
        // Live: a write to the object shows through the projection, and a write through it lands in the object.
        try realm.write { ann.rootObject.friends.remove(at: 0) }
        #expect(Array(ann.friendNames) == ["Cy"])
        #expect(Array(frozenNames) == ["Bo", "Cy"] && frozenNames.thaw().map(Array.init) == ["Cy"])
        #expect(seen == ["[\"Cy\"] -[0]"])
        token.invalidate()
        try realm.write { ann.name = "Anne" }
        #expect(realm.objects(ProjectedPerson.self).filter("firstName == 'Anne'").count == 1)
        #expect(ann == PersonCard(projecting: ann.rootObject) && ann.realm != nil && !ann.isFrozen)
        #expect(ann.description.contains("name(\\.firstName) = Anne"))
        // Realm's format: class, object class and address, then the properties (the first with a tab more).
        #expect(ann.description.hasPrefix("PersonCard<ProjectedPerson> <0x"))
        #expect(ann.description.contains("> {\n\t\tname(\\.firstName) = Anne;\n\t"))
        #expect(ann.friendNames.description == "ProjectedCollection<String> {\n\t[0] Cy\n}")
    }

    @Test("projection results filter by the object's properties and sort by the projection's key paths")
    func resultsOfProjections() throws {
        let realm = try makeRealm(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        try people(realm)
        let sorted = realm.objects(PersonCard.self).sorted(by: \.name, ascending: false)
        #expect(sorted.map(\.name) == ["Cy", "Bo", "Ann"])
        let older = realm.objects(PersonCard.self).filter("age > 30")
        #expect(Set(older.map(\.name)) == ["Ann", "Cy"])
        let fromResults = realm.objects(ProjectedPerson.self).filter("age < 30").projected(as: PersonCard.self)
        #expect(fromResults.map(\.shoutedLastName) == ["KIM"])
    }

    @Test("observing a projection reports changes by its property names, and deletion")
    func observation() throws {
        let realm = try makeRealm(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        try people(realm)
        let card = try #require(realm.objects(PersonCard.self).first { $0.name == "Bo" })
        var seen: [[String]] = []
        var deleted = false
        let token = card.observe { change in
            switch change {
            case .change(_, let properties): seen.append(properties.map(\.name).sorted())
            case .deleted: deleted = true
            case .error: break
            }
        }
        try realm.write { card.rootObject.age = 26 }  // not projected: no call
        try realm.write { card.rootObject.lastName = "Kang" }
        try realm.write { card.rootObject.firstName = "Bob" }
        realm.refresh()
        #expect(seen == [["shoutedLastName"], ["name"]])
        let named = card.observe(keyPaths: ["name"]) { _ in seen.append(["filtered"]) }
        try realm.write { card.rootObject.lastName = "Ko" }
        realm.refresh()
        #expect(seen.last == ["shoutedLastName"])
        try realm.write { realm.delete(card.rootObject) }
        realm.refresh()
        #expect(deleted && card.isInvalidated)
        token.invalidate()
        named.invalidate()
    }

    @Test("observe(keyPaths:) takes the projection's key paths, a derived property by what it reads")
    func observationByKeyPaths() throws {
        let realm = try makeRealm(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        try people(realm)
        let card = try #require(realm.objects(PersonCard.self).first { $0.name == "Bo" })
        var seen: [[String]] = []
        let token = card.observe(keyPaths: [\PersonCard.shoutedLastName]) { change in
            if case .change(_, let properties) = change { seen.append(properties.map(\.name)) }
        }
        try realm.write { card.rootObject.firstName = "Bob" }  // not observed
        try realm.write { card.rootObject.lastName = "Kang" }
        realm.refresh()
        #expect(seen == [["shoutedLastName"]])
        token.invalidate()
    }

    @Test("setting a projected collection's element sets the property of that object; schemas name their class")
    func projectedCollectionWrites() throws {
        let realm = try makeRealm(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        try people(realm)
        let ann = try #require(realm.objects(PersonCard.self).first { $0.name == "Ann" })
        try realm.write { ann.friendNames[1] = "Cyrus" }
        #expect(Array(ann.friendNames) == ["Bo", "Cyrus"])
        #expect(realm.objects(ProjectedPerson.self).filter("firstName == 'Cyrus'").count == 1)
        #expect(realm.schema["ProjectedPerson"]?.objectClass == ProjectedPerson.self)
        #expect(realm.schema["ProjectedAddress"]?.objectClass == ProjectedAddress.self)
    }
}
