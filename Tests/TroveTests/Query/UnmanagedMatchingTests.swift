import Foundation
import Testing

@testable import Trove

/// Query strings tested against objects that are not stored.
@Suite struct UnmanagedMatchingTests {
    private let pets = [
        Pet(value: ["name": "Rex", "age": 3]), Pet(value: ["name": "bo", "age": 9]),
        Pet(value: ["name": "Cy", "age": 5, "owner": ["name": "Ann"]]),
    ]

    private func first(_ query: String, _ arguments: Any?...) throws -> Int? {
        try UnmanagedMatching(Pet.self, query, arguments).firstIndex(in: pets)
    }

    @Test("comparisons, string operators, IN, BETWEEN, links and @count read the objects' own values")
    func comparisons() throws {
        #expect(try first("age > %@", 4) == 1)
        #expect(try first("name BEGINSWITH[c] 'B'") == 1)
        #expect(try first("name == 'Cy' AND age BETWEEN {4, 6}") == 2)
        #expect(try first("age IN {5, 9} AND NOT name CONTAINS 'o'") == 2)
        #expect(try first("owner.name == %@", "Ann") == 2)
        #expect(try first("owner == nil") == 0)
        #expect(try first("7 < age") == 1)  // the value on the left
        #expect(try first("owner != nil AND owner.chores.@count == 0") == 2)  // an unmanaged owner has no inverse links
        #expect(try first("age > 100") == nil)
    }

    @Test("ANY, ALL and NONE through a collection; what only stored objects can do is refused with the reason")
    func collectionsAndRefusals() throws {
        let item = ConformanceItem(value: ["id": 1, "tags": ["a", "b"], "numbers": [1, 2]])
        func matches(_ query: String) throws -> Bool { try UnmanagedMatching(ConformanceItem.self, query, []).matches(item) }
        #expect(try matches("ANY tags == 'b'") && matches("'a' IN tags") && matches("ALL numbers < 3"))
        #expect(try !matches("NONE tags == 'a'") && matches("tags.@count == 2"))
        for refused in ["SUBQUERY(tags, $t, $t == 'a').@count > 0", "numbers[0] == 1", "age > 1 SORT(age ASC)"] {
            #expect(throws: TroveError.self, "\(refused)") { try UnmanagedMatching(ConformanceItem.self, refused, []) }
        }
        #expect(throws: TroveError.self) { try UnmanagedMatching(Pet.self, "age >", []) }
    }
}
