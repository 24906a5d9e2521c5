import Foundation
import Testing
import TroveRealm

@Suite("Sectioned results, as Realm has them")
struct SectionedResultsTests {
    private func kennel() throws -> Realm {
        let realm = try makeRealm()
        try realm.write {
            for (name, age) in [("Ace", 2), ("Bo", 5), ("Bea", 3), ("Cy", 8)] {
                realm.add(Dog(value: ["name": name, "age": age]))
            }
        }
        return realm
    }

    @Test("freeze, thaw and isFrozen of sections and of one section")
    func freezing() throws {
        let realm = try kennel()
        let byInitial = realm.objects(Dog.self).sectioned(
            by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        let frozen = byInitial.freeze()
        let frozenB = byInitial[1].freeze()
        try realm.write { realm.add(Dog(value: ["name": "Bix", "age": 1])) }
        #expect(frozen.isFrozen && !byInitial.isFrozen && frozen.realm?.isFrozen == true)
        #expect(frozen[1].map(\.name) == ["Bea", "Bo"] && frozenB.map(\.name) == ["Bea", "Bo"] && frozenB.isFrozen)
        #expect(byInitial[1].map(\.name) == ["Bea", "Bix", "Bo"])
        #expect(frozen.thaw()?[1].count == 3 && frozenB.thaw()?.isFrozen == false)
        #expect(frozenB.count == 2 && frozenB.thaw()?.map(\.name) == ["Bea", "Bix", "Bo"])  // the live section, Bix too
    }

    @Test("observe(keyPaths:) on sections counts only those properties' changes; a section observes its own members")
    func observation() throws {
        let realm = try kennel()
        let byInitial = realm.objects(Dog.self).sectioned(
            by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        var all: [String] = []
        var section: [String] = []
        let token = byInitial.observe(keyPaths: [\Dog.age]) { change in
            switch change {
            case .initial(let sections): all.append("initial \(sections.count)")
            case .update(_, let deletions, let insertions, let modifications, let inserted, _):
                all.append("del \(deletions.count) ins \(insertions.count) mod \(modifications.count) new \(Array(inserted))")
            }
        }
        let bToken = byInitial[1].observe { change in
            switch change {
            case .initial(let members): section.append("initial \(members.key) \(members.count)")
            case .update(let members, _, let insertions, let modifications, _, _):
                section.append("\(members.count) ins \(insertions.map(\.item)) mod \(modifications.map(\.item))")
            }
        }
        try realm.write { realm.objects(Dog.self).filter("name == 'Cy'").first?.toys.append("ball") }  // not age
        try realm.write { realm.objects(Dog.self).filter("name == 'Bo'").first?.age = 6 }
        try realm.write { realm.add(Dog(value: ["name": "Dee", "age": 1])) }
        #expect(all == ["initial 3", "del 0 ins 0 mod 1 new []", "del 0 ins 0 mod 0 new [3]"])  // a new section, not its items
        #expect(section == ["initial B 2", "2 ins [] mod [1]"])
        token.invalidate()
        bToken.invalidate()
    }

    @Test(
        "a section's observer hears it emptied (a section deletion) and filled again (its elements and the section inserted); a change that moves an element is a move"
    )
    func sectionDeletedAndBack() throws {
        let realm = try makeRealm()
        try realm.write {
            for (name, age) in [("Ace", 2), ("Bea", 3), ("Cy", 8)] { realm.add(Dog(value: ["name": name, "age": age])) }
        }
        let byInitial = realm.objects(Dog.self).sectioned(
            by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "age")])
        var aEvents: [String] = []
        var bEvents: [String] = []
        func describe(_ change: SectionedResultsChange<ResultsSection<String, Dog>>) -> String {
            switch change {
            case .initial(let section): return "initial \(section.count)"
            case .update(let section, let deletions, let insertions, let modifications, let added, let removed):
                return
                    "\(section.count) del \(deletions.map { [$0.section, $0.item] }) ins \(insertions.map { [$0.section, $0.item] }) mod \(modifications.count) +\(Array(added)) -\(Array(removed))"
            }
        }
        let aToken = byInitial[0].observe(keyPaths: ["age"]) { aEvents.append(describe($0)) }
        let bToken = byInitial[1].observe(keyPaths: ["age"]) { bEvents.append(describe($0)) }
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name == 'Ace'")) }
        try realm.write { realm.add(Dog(value: ["name": "Ada", "age": 1])) }
        // Bea gets older and moves behind Bix, added: by its own change, a move.
        try realm.write {
            realm.objects(Dog.self).filter("name == 'Bea'").first?.age = 6
            realm.add(Dog(value: ["name": "Bix", "age": 4]))
        }
        #expect(aEvents == ["initial 1", "0 del [] ins [] mod 0 +[] -[0]", "1 del [] ins [[0, 0]] mod 0 +[0] -[]"])
        #expect(bEvents.first == "initial 1" && bEvents.last == "2 del [[1, 0]] ins [[1, 0], [1, 1]] mod 0 +[] -[]")
        aToken.invalidate()
        bToken.invalidate()
    }
}
