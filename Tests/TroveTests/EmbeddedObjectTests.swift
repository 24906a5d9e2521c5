import Foundation
import Testing

@testable import Trove

final class Address: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
    @Persisted var geo: GeoPoint?

    convenience init(_ street: String, _ city: String) {
        self.init()
        self.street = street
        self.city = city
    }
}

final class GeoPoint: EmbeddedObject {
    @Persisted var latitude = 0.0
    @Persisted var longitude = 0.0
}

final class AddressBookEntry: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var address: Address?
    @Persisted var previous = List<Address>()
}

final class KeyedEmbedded: EmbeddedObject {
    @Persisted(primaryKey: true) var id = 0
}

final class HoldsKeyedEmbedded: Object {
    @Persisted var part: KeyedEmbedded?
}

@Suite struct EmbeddedObjectTests {
    private func contact(_ name: String, in city: String) -> AddressBookEntry {
        let contact = AddressBookEntry()
        contact.name = name
        contact.address = Address("1 Main St", city)
        return contact
    }

    @Test func anEmbeddedObjectIsAddedWithItsOwnerAndQueriedThroughIt() throws {
        let db = try makeDatabase()
        let ana = contact("Ana", in: "Seoul")
        ana.address?.geo = GeoPoint()
        ana.address?.geo?.latitude = 37.5
        try db.write { try db.add([ana, contact("Bo", in: "Busan")]) }
        #expect(db.objects(Address.self).count == 2)
        #expect(try db.objects(AddressBookEntry.self).filter("address.city == 'Seoul'").map(\.name) == ["Ana"])
        #expect(try db.objects(AddressBookEntry.self).filter("address.geo.latitude > 30").map(\.name) == ["Ana"])
        #expect(db.objects(AddressBookEntry.self).sorted(byKeyPath: "address.city").map(\.name) == ["Bo", "Ana"])
        expectValid(db)
    }

    @Test func replacingOrClearingTheLinkDeletesTheOldEmbeddedObject() throws {
        let db = try makeDatabase()
        let ana = contact("Ana", in: "Seoul")
        ana.address?.geo = GeoPoint()
        try db.write { try db.add(ana) }
        let old = try #require(ana.address)
        try db.write { ana.address = Address("2 Side St", "Busan") }
        #expect(old.isInvalidated)
        #expect(db.objects(Address.self).map(\.city) == ["Busan"])
        #expect(db.objects(GeoPoint.self).isEmpty)  // the old address took its own embedded point along
        try db.write { ana.address = nil }
        #expect(db.objects(Address.self).isEmpty)
        expectValid(db)
    }

    @Test func deletingTheOwnerDeletesItsEmbeddedObjectsInLinksAndLists() throws {
        let db = try makeDatabase()
        let ana = contact("Ana", in: "Seoul")
        ana.previous.append(contentsOf: [Address("old 1", "Daegu"), Address("old 2", "Incheon")])
        try db.write { try db.add([ana, contact("Bo", in: "Busan")]) }
        #expect(db.objects(Address.self).count == 4)
        try db.write { ana.previous.remove(at: 0) }
        #expect(db.objects(Address.self).count == 3)  // removed from the list: gone
        try db.write { try db.delete(ana) }
        #expect(db.objects(Address.self).map(\.city) == ["Busan"])
        expectValid(db)
    }

    @Test func anEmbeddedObjectHasOneOwnerAndIsNeverAddedAlone() throws {
        let db = try makeDatabase()
        let ana = contact("Ana", in: "Seoul")
        let bo = contact("Bo", in: "Busan")
        try db.write { try db.add([ana, bo]) }
        let error = expectTroveError(.invalidObject) { try db.write { try db.add(Address("x", "y")) } }
        #expect(error?.message.contains("embedded") == true)
        expectTroveError(.invalidObject) { try db.write { bo.address = ana.address } }
        #expect(bo.address?.city == "Busan")
        #expect(ana.address?.city == "Seoul")
        expectValid(db)
    }

    @Test func anEmbeddedTypeWithAPrimaryKeyIsAModelError() throws {
        let db = try makeDatabase()
        let error = expectTroveError(.invalidModel) { try db.write { try db.add(HoldsKeyedEmbedded()) } }
        #expect(error?.message.contains("EmbeddedObject has no primary key") == true)
    }

    @Test func anUpsertReplacesTheEmbeddedObjects() throws {
        let db = try makeDatabase()
        try db.write { try db.add(contact("Ana", in: "Seoul")) }
        try db.write { try db.add(contact("Ana", in: "Jeju"), update: .modified) }
        #expect(db.objects(Address.self).map(\.city) == ["Jeju"])
        expectValid(db)
    }

    @Test("an upsert of what changed writes the new embedded objects into the stored ones' places; .all replaces them")
    func anUpsertKeepsTheEmbeddedObjectsInPlace() throws {
        let db = try makeDatabase()
        let first = contact("Ana", in: "Seoul")
        first.address?.geo = GeoPoint()
        first.previous.append(Address("2 Old Rd", "Busan"))
        first.previous.append(Address("3 Older Rd", "Daegu"))
        try db.write { try db.add(first) }
        let (home, oldest) = (try #require(first.address), first.previous[1])
        let second = contact("Ana", in: "Jeju")
        second.address?.geo = GeoPoint()
        second.address?.geo?.latitude = 33.5
        second.previous.append(Address("4 New Rd", "Incheon"))
        try db.write { try db.add(second, update: .modified) }
        // The embedded objects read before the upsert read what it wrote into their places.
        #expect(!home.isInvalidated && home.city == "Jeju" && home.geo?.latitude == 33.5)
        #expect(second.address?.city == "Jeju" && first.address?.city == "Jeju")
        // A list keeps as many places as the new list has; the rest go.
        #expect(first.previous.map(\.city) == ["Incheon"] && oldest.isInvalidated)
        #expect(db.objects(Address.self).count == 2 && db.objects(GeoPoint.self).count == 1)
        // Without an embedded object in the new one, the stored one goes.
        let third = AddressBookEntry()
        third.name = "Ana"
        try db.write { try db.add(third, update: .modified) }
        #expect(home.isInvalidated && db.objects(Address.self).count == 0 && db.objects(GeoPoint.self).count == 0)
        // An upsert of everything replaces the embedded objects: those read before are gone.
        let fourth = contact("Ana", in: "Mokpo")
        try db.write { try db.add(fourth, update: .modified) }
        let kept = try #require(fourth.address)
        try db.write { try db.add(contact("Ana", in: "Suwon"), update: .all) }
        #expect(kept.isInvalidated && db.objects(Address.self).map(\.city) == ["Suwon"])
        expectValid(db)
    }
}
