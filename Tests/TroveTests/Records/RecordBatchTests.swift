import Foundation
import Testing

@testable import Trove

/// Objects read together share one allocation for their record copies
/// (``RecordBatch``); each must still behave as if it had its own.
@Suite("Record batches")
struct RecordBatchTests {
    @Test("objects read in one batch keep their own values through writes, newer snapshots and their batch-mates' release")
    func batchMates() throws {
        let db = try makeDatabase()
        try db.write {
            for id in 1...200 {
                let person = Person()
                person.id = id
                person.name = "person \(id)"
                person.age = id % 3 == 0 ? nil : id
                person.city = "city \(id % 7)"
                person.score = Double(id) / 4
                try db.add(person)
            }
        }
        // Iteration reads 64 objects per batch; keep a few from each, neighbours among them.
        let keptIDs = [1, 2, 3, 64, 65, 66, 129, 130, 200]
        var kept: [Person] = []
        for person in db.objects(Person.self) where keptIDs.contains(person.id) { kept.append(person) }
        try #require(kept.map(\.id) == keptIDs)
        func expectStored(_ person: Person, name: String? = nil, age: Int?? = nil, score: Double? = nil) {
            let id = person.id
            #expect(person.name == (name ?? "person \(id)"))
            #expect(person.age == (age ?? (id % 3 == 0 ? nil : id)))
            #expect(person.city == "city \(id % 7)")
            #expect(person.score == (score ?? Double(id) / 4))
        }
        kept.forEach { expectStored($0) }

        // A fixed-size write patches the copy in place, a string write replaces it:
        // neither may touch the records beside it in the batch.
        try db.write {
            kept[1].score = -1
            kept[4].name = String(repeating: "long name ", count: 40)
            kept[7].age = nil
        }
        for (index, person) in kept.enumerated() {
            switch index {
            case 1: expectStored(person, score: -1)
            case 4: expectStored(person, name: String(repeating: "long name ", count: 40))
            case 7: expectStored(person, age: .some(nil))
            default: expectStored(person)
            }
        }

        // Another handle's commit: each kept object reads the newer snapshot.
        let other = try Database(configuration: db.configuration)
        try other.write {
            for person in try other.objects(Person.self).filter("id IN %@", [2, 3, 65]) { person.score += 1000 }
        }
        db.refresh()
        #expect(kept[0].score == 0.25)
        #expect(kept[1].score == 999)
        #expect(kept[2].score == 1000.75)
        #expect(kept[4].score == 1016.25)

        // Every other object of the batches is gone; the kept ones still read (and outlive the results).
        let late = kept.filter { $0.id == 130 || $0.id == 200 }
        kept.removeAll()
        expectStored(late[0], age: .some(nil))
        expectStored(late[1])
    }
}
