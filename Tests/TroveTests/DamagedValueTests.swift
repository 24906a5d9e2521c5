import Foundation
import Testing
import TroveStorage

@testable import Trove

/// A mixed value in an indexed property, for damage in an index's source.
final class Tagged: Object {
    @Persisted var label = ""
    @Persisted(indexed: true) var value: Mixed = .none
    @Persisted var owner: Owner?
    @Persisted var marks = MutableSet<String>()
    @Persisted var notes = Map<String, String>()
}

/// Damaged values that pass the page check (a bit flipped inside a record,
/// a cluster column or a collection element): verify() reports them and
/// goes on, and the checked read path the tools use reads every other object.
@Suite("Damaged values")
struct DamagedValueTests {
    /// A file of owners, pets, chores, playlists and tagged objects (links, lists, sets, maps, mixed, indexes).
    private static func base(_ name: String) throws -> URL {
        let url = makeTemporaryDirectory(name).appendingPathComponent("base.trove")
        let db = try Database(fileURL: url)
        try addOwners(to: db)
        try addPlaylists(to: db)
        try db.write {
            let owners = Array(db.objects(Owner.self))
            for index in 0..<40 {
                let tagged = Tagged()
                tagged.label = "tagged \(index) " + String(repeating: "·", count: index)
                tagged.value =
                    index % 3 == 0 ? .string("v\(index)") : index % 3 == 1 ? .int(index) : .object(owners[index % owners.count])
                tagged.owner = owners[index % owners.count]
                tagged.marks.insert(objectsIn: ["m\(index % 4)", "all"])
                tagged.notes["n"] = "note \(index)"
                try db.add(tagged)
            }
        }
        #expect(try db.verify().isValid)
        return url
    }

    /// Every table a stored type's objects and collections live in.
    private static func valueTables(_ db: Database) throws -> [Table] {
        var tables: [Table] = []
        for type in [Owner.self, Pet.self, Chore.self, Playlist.self, Song.self, Tagged.self] as [Object.Type] {
            let table = try db.objectBinding(for: type).table
            tables.append(table.store.table)
            tables.append(contentsOf: table.collections.values)
        }
        return tables
    }

    /// Changes one stored value in place (a flipped bit or a random byte), through LMDB: every page stays sound.
    private static func damage(_ db: Database, seed: UInt64) throws -> String {
        var random = SplitMix64(seed: seed)
        let tables = try valueTables(db)
        let write = try WriteTransaction(environment: db.environment)
        var entries: [(Table, [UInt8], [UInt8])] = []
        for table in tables where !table.isMultiValue {
            try write.withCursor(on: table) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    entries.append((table, Array(current.key), Array(current.value)))
                    entry = try cursor.next()
                }
            }
        }
        var (table, key, value) = entries[Int(random.next() % UInt64(entries.count))]
        guard !value.isEmpty else { return "nothing" }
        let at = Int(random.next() % UInt64(value.count))
        if random.next() % 2 == 0 {
            value[at] ^= 1 << UInt8(random.next() % 8)
        } else {
            value[at] = UInt8(truncatingIfNeeded: random.next())
        }
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { _ = try write.put(table, key: k, value: $0) } }
        try write.commit()
        db.refresh()
        return "\(table.name) byte \(at)"
    }

    /// Reads every object of every type as the tools do: the damaged ones left out, the rest whole.
    private static func readSound(_ db: Database) throws -> Int {
        var read = 0
        for schema in try db.storedSchemas() {
            let damaged = try db.damagedObjects(ofType: schema.name)
            guard !damaged.parts.contains(where: { $0.keys == nil }) else { continue }
            let results = try db.dynamicObjects(schema.name).excluding(damaged)
            for object in results {
                _ = object.storedValues
                for property in schema.properties where property.collection != nil && property.collection != .linkingObjects {
                    _ = try db.entries(of: object, property: property.name)
                }
                read += 1
            }
            // A filter and a sort read only checked records.
            if let text = schema.properties.first(where: { $0.type == .string && $0.collection == nil }) {
                _ = try results.filter("\(text.name) != 'x'").sorted(byKeyPath: text.name).map(\.storedValues)
            }
        }
        return read
    }

    @Test("a flipped bit in a linked type's string column is reported by verify, which goes on; the other objects read")
    func aDamagedClusterOffsetIsReported() throws {
        let url = try Self.base(#function)
        let db = try Database(fileURL: url)
        let pets = try db.objectBinding(for: Pet.self).table
        let write = try WriteTransaction(environment: db.environment)
        let key = try #require(db.objects(Pet.self).first.map(\._objectKey))
        if let clusters = pets.store.clusters {
            // The name column's offset table: the first slot's end offset, made huge.
            let start = try #require(try clusters.clusterStart(for: key, in: write))
            let name = try #require(pets.schema.properties.firstIndex { $0.name == "name" })
            var bytes: [UInt8] = []
            bytes = try #require(
                try ClusterTable.withKey(start, part: name + 1) { try write.value(in: pets.store.table, key: $0) })
            let column = try #require(ClusterColumn(bytes.withUnsafeBytes { $0 }, type: .string))
            bytes[column.dataStart + 4 + 3] ^= 0x40
            try ClusterTable.withKey(start, part: name + 1) { k in
                try bytes.withUnsafeBytes { _ = try write.put(pets.store.table, key: k, value: $0) }
            }
        } else {
            var record = try #require(try pets.store.withRecord(key, in: write) { $0.map { Array($0.bytes) } })
            record[record.count - 1] = 0xFF  // the name's last byte: not UTF-8
            try record.withUnsafeBytes { try pets.store.replace(key, record: $0, in: write) }
        }
        try write.commit()
        db.refresh()
        let report = try db.verify()
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.typeName == "Pet" && $0.kind == .damagedRecord }, "\(report)")
        #expect(report.objectsChecked > 0)
        // Owners link to the damaged pets: no trap, and no dangling-link noise.
        #expect(!report.problems.contains { $0.kind == .danglingLink }, "\(report)")
        let damaged = try db.damagedObjects(ofType: "Pet")
        #expect(damaged.covers(key))
        #expect(try Self.readSound(db) > 0)
    }

    @Test("200 random changes to stored values: verify() reports and never traps, and every other object reads")
    func randomValueDamageNeverTraps() throws {
        let base = try Self.base(#function)
        let directory = base.deletingLastPathComponent()
        var found = 0
        for seed in 0..<200 as Range<UInt64> {
            let url = directory.appendingPathComponent("copy-\(seed).trove")
            try FileManager.default.copyItem(at: base, to: url)
            defer {
                try? FileManager.default.removeItem(at: url)
                try? FileManager.default.removeItem(atPath: url.path + "-lock")
            }
            let db = try Database(fileURL: url)
            let what = try Self.damage(db, seed: seed)
            let report = try db.verify()
            if !report.isValid { found += 1 }
            _ = try Self.readSound(db)
            _ = what
        }
        // Most changes land in checked bytes (lengths, offsets, text, mixed tags); an int or a bool can change silently.
        #expect(found > 40, "only \(found) of 200 changes were reported")
    }
}
