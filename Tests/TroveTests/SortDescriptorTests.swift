import Foundation
import Testing

@testable import Trove

/// Sort descriptors as values: equal by key path and direction, reversible,
/// written as string literals, described as Realm describes them.
@Suite struct SortDescriptorTests {
    @Test("equality, reversal, string literals and description")
    func valueSemantics() throws {
        let byName = Trove.SortDescriptor(keyPath: "name")
        let literal: Trove.SortDescriptor = "name"
        #expect(byName == literal)
        #expect(byName.ascending)
        #expect(byName != Trove.SortDescriptor(keyPath: "name", ascending: false))
        #expect(byName != Trove.SortDescriptor(keyPath: "age"))
        #expect(byName.reversed() == Trove.SortDescriptor(keyPath: "name", ascending: false))
        #expect(byName.reversed().reversed() == byName)
        #expect(Set([byName, literal, byName.reversed()]).count == 2)
        #expect(byName.description == "SortDescriptor(keyPath: name, direction: ascending)")
        #expect(byName.reversed().description == "SortDescriptor(keyPath: name, direction: descending)")
    }

    @Test("a reversed descriptor sorts the other way")
    func reversedSorts() throws {
        let db = try makeDatabase()
        try db.write {
            for (id, title) in [(1, "b"), (2, "a"), (3, "c")] {
                let item = ConformancePart()
                item.id = id
                item.label = title
                try db.add(item)
            }
        }
        let ascending = Trove.SortDescriptor(keyPath: "label")
        #expect(db.objects(ConformancePart.self).sorted(by: [ascending]).map(\.label) == ["a", "b", "c"])
        #expect(db.objects(ConformancePart.self).sorted(by: [ascending.reversed()]).map(\.label) == ["c", "b", "a"])
    }
}
