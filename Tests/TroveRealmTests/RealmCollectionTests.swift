import Foundation
import Testing
import TroveRealm

final class Kennel: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var dogs = List<Dog>()
}

final class Walker: Object {
    @Persisted var name = ""
    @Persisted var dog: Dog?
}

/// Sums ages through the protocol, whatever the collection.
private func totalAge<C: RealmCollection>(_ dogs: C) -> Int where C.Element == Dog {
    dogs.sum(ofProperty: "age")
}

@Suite("RealmCollection and AnyRealmCollection")
struct RealmCollectionTests {
    private func realm(_ name: String = #function) throws -> Realm {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-realm-tests")
            .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try Realm(configuration: Realm.Configuration(fileURL: directory.appendingPathComponent("c.realm")))
    }

    @Test("Results, List and LinkingObjects answer the same calls, also behind AnyRealmCollection")
    func oneSurface() throws {
        let realm = try realm()
        let kennel = Kennel(value: ["name": "k", "dogs": [["Rex", 3], ["Bo", 5], ["Cy", 7]]])
        try realm.write {
            realm.add(kennel)
            realm.add(Walker(value: ["name": "Ann", "dog": kennel.dogs[1]]))
        }
        let all = realm.objects(Dog.self)
        #expect(totalAge(all) == 15)
        #expect(totalAge(kennel.dogs) == 15)
        #expect(totalAge(AnyRealmCollection(kennel.dogs.filter("age > 3"))) == 12)
        let erased = AnyRealmCollection(all)
        #expect(erased.count == 3)
        #expect(erased.index(of: kennel.dogs[2]) == 2)
        #expect(erased.index(matching: "name == %@", "Bo") == 1)
        #expect(erased.objects(at: IndexSet([0, 2])).map(\.name) == ["Rex", "Cy"])
        #expect(erased.max(ofProperty: "age") as Int? == 7)
        #expect(erased.min(ofProperty: "name") as String? == "Bo")
        #expect(erased.average(ofProperty: "age") as Double? == 5)
        #expect(
            erased.sorted(by: [RealmSwift.SortDescriptor(keyPath: "age", ascending: false)]).map(\.name) == ["Cy", "Bo", "Rex"])
        #expect(erased.distinct(by: ["age"]).count == 3)
        #expect(erased.value(forKey: "name").compactMap { $0 as? String } == ["Rex", "Bo", "Cy"])
        #expect(erased.realm == realm)
        #expect(erased.index(matching: "age > 100") == nil)
        #expect(realm.objects(Walker.self).first?.dog?.name == "Bo")
    }

    @Test("observe delivers RealmCollectionChange: the initial collection, then positions")
    func observeChanges() throws {
        let realm = try realm()
        try realm.write { realm.create(Dog.self, value: ["Rex", 3]) }
        var events: [String] = []
        let token = AnyRealmCollection(realm.objects(Dog.self)).observe { change in
            switch change {
            case .initial(let dogs): events.append("initial \(dogs.count)")
            case .update(_, let deletions, let insertions, let modifications):
                events.append("update \(deletions) \(insertions) \(modifications)")
            case .error(let error): events.append("error \(error)")
            }
        }
        try realm.write { realm.create(Dog.self, value: ["Bo", 5]) }
        try realm.write { realm.objects(Dog.self).first?.age = 4 }
        #expect(events == ["initial 1", "update [] [1] []", "update [] [] [0]"])
        token.invalidate()
    }
}
