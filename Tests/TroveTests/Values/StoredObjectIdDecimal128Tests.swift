import Foundation
import Testing

@testable import Trove

final class LedgerEntry: Object {
    @Persisted(primaryKey: true) var id = ObjectId.generate()
    @Persisted(indexed: true) var ref: ObjectId?
    @Persisted var amount: Decimal128 = 0
    @Persisted var fee: Decimal128?
    @Persisted var parts = List<Decimal128>()
    @Persisted var seen = MutableSet<ObjectId>()
}

/// ObjectId and Decimal128 as stored property types: keys, indexes, queries,
/// sorting, sums, collections, and exact round trips through the file.
@Suite struct StoredObjectIdDecimal128Tests {
    private let ids = (1...4).map { try! ObjectId(string: String(repeating: "0", count: 23) + String($0)) }

    private func fill(_ db: Database) throws {
        try db.write {
            for (index, amount) in ["0.1", "-2.5", "1E+2", "99.5"].enumerated() {
                let entry = LedgerEntry()
                entry.id = ids[index]
                entry.ref = index.isMultiple(of: 2) ? ids[3 - index] : nil
                entry.amount = try Decimal128(string: amount)
                entry.parts.append(objectsIn: [try Decimal128(string: amount), 1])
                entry.seen.insert(ids[index])
                try db.add(entry)
            }
        }
    }

    @Test("values come back exactly, also after reopening, and in lists and sets")
    func roundTrips() throws {
        let directory = makeTemporaryDirectory()
        let configuration = Configuration(fileURL: directory.appendingPathComponent("ledger.trove"))
        let wide = try Decimal128(string: "1234567890123456789012345678901234E-20")
        do {
            let db = try Database(configuration: configuration)
            try fill(db)
            try db.write {
                let entry = try #require(db.object(ofType: LedgerEntry.self, forPrimaryKey: ids[0]))
                entry.fee = wide
                entry.amount = entry.amount + (try Decimal128(string: "0.2"))
            }
            expectValid(db)
        }
        let db = try Database(configuration: configuration)
        let entry = try #require(db.object(ofType: LedgerEntry.self, forPrimaryKey: ids[0]))
        #expect(entry.amount == (try Decimal128(string: "0.3")))
        #expect(entry.amount.description == (try Decimal128(string: "0.3")).description)
        #expect(entry.fee == wide)
        #expect(entry.fee?.description == wide.description)
        #expect(entry.ref == ids[3])
        #expect(Array(entry.parts) == [try Decimal128(string: "0.1"), 1])
        #expect(Array(entry.seen) == [ids[0]])
    }

    @Test("an ObjectId primary key is unique and looked up by value")
    func primaryKey() throws {
        let db = try makeDatabase()
        try fill(db)
        #expect(db.object(ofType: LedgerEntry.self, forPrimaryKey: ids[2])?.amount == (try Decimal128(string: "1E+2")))
        expectTroveError(.primaryKeyExists) {
            try db.write {
                let duplicate = LedgerEntry()
                duplicate.id = ids[1]
                try db.add(duplicate)
            }
        }
        #expect(db.objects(LedgerEntry.self).count == 4)
    }

    @Test("queries: ObjectId by argument, by oid() literal and by string; Decimal128 against decimals and numbers, exactly")
    func queries() throws {
        let db = try makeDatabase()
        try fill(db)
        let entries = db.objects(LedgerEntry.self)
        #expect(try entries.filter("ref == %@", ids[3]).map(\.id) == [ids[0]])
        #expect(try entries.filter("ref == oid(\(ids[1].stringValue))").map(\.id) == [ids[2]])
        #expect(try entries.filter("id == %@", ids[1].stringValue).count == 1)
        #expect(try entries.filter("ref == nil").count == 2)
        #expect(try entries.filter("amount > %@", try Decimal128(string: "99.49")).map(\.id) == [ids[2], ids[3]])
        #expect(try entries.filter("amount >= 100").map(\.id) == [ids[2]])
        #expect(try entries.filter("amount < 0").map(\.id) == [ids[1]])
        #expect(try entries.filter("amount == %@", try Decimal128(string: "0.10")).map(\.id) == [ids[0]])
        #expect(throws: TroveError.self) { try entries.filter("ref == oid(12345)") }
        #expect(throws: TroveError.self) { try entries.filter("ref == 'not an id'") }
    }

    @Test("sorting, min, max and sum follow decimal values, not their text")
    func orderAndAggregates() throws {
        let db = try makeDatabase()
        try fill(db)
        let entries = db.objects(LedgerEntry.self)
        let ascending = entries.sorted(by: \.amount).map { $0.amount.description }
        let expected = try ["-2.5", "0.1", "99.5", "1E+2"].map { try Decimal128(string: $0).description }
        #expect(ascending == expected)
        #expect(entries.sorted(by: \.id, ascending: false).map(\.id) == ids.reversed())
        #expect(entries.max(of: \.amount) == (try Decimal128(string: "100")))
        #expect(entries.min(of: \.amount) == (try Decimal128(string: "-2.5")))
        #expect(entries.sum(of: \.amount) == (try Decimal128(string: "197.1")))
    }
}
