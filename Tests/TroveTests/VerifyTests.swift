import Foundation
import Testing
import TroveStorage

@testable import Trove

@Suite("verify()")
struct VerifyTests {
    /// A database with persons (integer keys, two indexes) and contacts (a struct).
    private func populated(_ name: String = #function) throws -> Database {
        let db = try makeDatabase(name)
        try db.write {
            for id in 1...30 {
                let person = Person()
                person.id = id
                person.name = "p\(id % 7)"
                person.city = id % 2 == 0 ? "Oslo" : "Lima"
                try db.add(person)
            }
            for index in 0..<5 { try db.add(Contact(firstName: "c\(index)", lastName: "l\(index % 2)")) }
        }
        return db
    }

    @Test("a file written through the API verifies clean, after inserts, updates, upserts and deletes")
    func cleanAfterWrites() throws {
        let db = try populated()
        try db.write {
            for person in db.objects(Person.self) where person.id % 3 == 0 { person.name = "renamed" }
            let replacement = Person()
            replacement.id = 4
            replacement.city = "Quito"
            try db.add(replacement, update: .modified)
            try db.delete(db.objects(Person.self).filter("id > 25"))
            try db.delete(Contact.self, forPrimaryKey: 2)
        }
        let report = try db.verify()
        #expect(report.isValid, "\(report)")
        #expect(report.objectsChecked == 29)
        #expect(report.indexEntriesChecked == 25 * 2 + 4)  // name and city; lastName (integer keys need no index)
    }

    @Test("verify() checks the last commit, however many commits a handle's snapshot is behind")
    func verifyWhileOthersCommit() throws {
        let db = try makeDatabase()
        try db.write { try db.add(Dog()) }
        #expect(db.objects(Dog.self).count == 1)  // the handle holds this snapshot
        let other = try Database(configuration: db.configuration)
        for _ in 0..<3 { try other.write { try other.add(Dog()) } }
        let report = try db.verify()
        #expect(report.isValid, "\(report)")
        #expect(report.objectsChecked == 4)
    }

    @Test("damage is reported, each problem with its type and object")
    func reportsDamage() throws {
        let db = try populated()
        let people = try db.objectBinding(for: Person.self).table
        let contacts = try db.valueBinding(for: Contact.self).table
        let write = try WriteTransaction(environment: db.environment)
        // 1. An index entry for a value object 5 does not have.
        let dangling: [UInt8] = IndexKey.make(.string("ghost"), type: .string).bytes
        var five = TableInfo.objectKey(forInteger: 5).bigEndian
        try dangling.withUnsafeBytes { k in
            try withUnsafeBytes(of: &five) { _ = try write.put(people.indexes[1]!, key: k, value: $0) }
        }
        // 2. Object 6's real city entry removed.
        var six = TableInfo.objectKey(forInteger: 6).bigEndian
        try IndexKey.make(.string("Oslo"), type: .string).bytes.withUnsafeBytes { k in
            try withUnsafeBytes(of: &six) { _ = try write.delete(people.indexes[3]!, key: k, value: $0) }
        }
        // 3. Object 7's record cut short (in the cluster layout, its cluster's first column).
        let seven = TableInfo.objectKey(forInteger: 7)
        if let clusters = people.store.clusters {
            let start = try #require(try clusters.clusterStart(for: seven, in: write))
            try ClusterTable.withKey(start, part: 1) { key in
                try [UInt8](repeating: 5, count: 3).withUnsafeBytes { _ = try write.put(people.store.table, key: key, value: $0) }
            }
        } else {
            try [UInt8](repeating: 5, count: 3).withUnsafeBytes { try people.store.replace(seven, record: $0, in: write) }
        }
        // 4. A contact's record deleted behind its index's back.
        try contacts.store.delete(TableInfo.objectKey(forInteger: 1), in: write)
        try write.commit()
        db.refresh()

        let report = try db.verify()
        #expect(!report.isValid)
        let kinds = report.problems.map(\.kind)
        #expect(kinds.contains(.danglingIndexEntry))
        // A damaged cluster hides every object in it (object 6 too): their index entries are then dangling.
        let clustered = people.store.clusters != nil
        #expect(kinds.contains(.missingIndexEntry) || clustered)
        #expect(kinds.contains(.damagedRecord))
        #expect(report.problems.contains { $0.typeName == "Person" && $0.kind == .damagedRecord && $0.detail.contains("object") })
        #expect(
            report.problems.contains {
                $0.typeName == "Contact" && $0.kind == .danglingIndexEntry && $0.detail.contains("lastName")
            })
        #expect(report.problems.contains { $0.kind == .missingIndexEntry && $0.detail.contains("city") } || clustered)
    }
}
