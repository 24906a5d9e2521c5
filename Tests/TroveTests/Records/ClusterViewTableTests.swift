import Foundation
import Testing

@testable import Trove

/// The hash table of cluster views a snapshot keeps by cluster start.
@Suite("Cluster view table")
struct ClusterViewTableTests {
    @Test("random sets, replacements and removals read back as a Dictionary does, colliding starts included")
    func matchesADictionary() throws {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory().appendingPathComponent("views.trove"), objectTypes: [Person.self])
        configuration.storesNewTypesInClusters = true
        let db = try Database(configuration: configuration)
        try db.write {
            for id in 0..<3_000 {
                let person = Person()
                person.id = id
                try db.add(person)
            }
        }
        // Real views to store (any will do: the table only keeps them), from lookups in every cluster.
        for id in stride(from: 0, to: 3_000, by: 50) { _ = db.object(ofType: Person.self, forPrimaryKey: id)?.score }
        let slot = try db.tableInfo(named: "Person").store.table.slot
        let views = try #require(db.readTransaction().readCacheEntry(slot) as? ClusterViewCache).views.entries.map(\.view)
        #expect(views.count > 3)

        var table = ClusterViewTable()
        var model: [UInt64: ClusterView] = [:]
        var random = SystemRandomNumberGenerator()
        // Starts that share their home slot (multiples of a large power of two) and ordinary ones.
        let keys = (0..<200).map { UInt64($0) << 40 } + (0..<200).map { UInt64($0) &* 7_919 }
        for step in 0..<20_000 {
            let key = keys.randomElement(using: &random)!
            switch step % 5 {
            case 0, 1, 2:
                let view = views.randomElement(using: &random)!
                table[key] = view
                model[key] = view
            case 3:
                table[key] = nil
                model[key] = nil
            default:
                #expect(table[key] === model[key])
            }
            if step % 997 == 0 {
                #expect(table.count == model.count)
                for key in keys { #expect(table[key] === model[key]) }
            }
        }
        #expect(table.count == model.count)
        #expect(Set(table.entries.map { $0.start }) == Set(model.keys))
        #expect(table.entries.allSatisfy { model[$0.start] === $0.view })
        for key in keys { #expect(table[key] === model[key]) }
        table.removeAll(keepingCapacity: true)
        #expect(table.isEmpty && table[keys[0]] == nil)
    }
}
