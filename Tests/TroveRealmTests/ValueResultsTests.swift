import Foundation
import Testing
import TroveRealm

final class Scoreboard: Object {
    @Persisted var scores: List<Int>
    @Persisted var maybe: List<Int?>
    @Persisted var words: MutableSet<String>
    @Persisted var prices: Map<String, Double>
}

@Suite("Results of a collection's values, as Realm has them")
struct ValueResultsTests {
    private func board() throws -> (Realm, Scoreboard) {
        let realm = try makeRealm(#function + UUID().uuidString, objectTypes: [Scoreboard.self])
        let board = Scoreboard()
        board.scores.append(objectsIn: [5, 4, 3, 2, 1])
        board.maybe.append(objectsIn: [2, nil, 1])
        board.words.insert(objectsIn: ["box", "apple", "banana", "chalk"])
        board.prices["tea"] = 2.5
        board.prices["cake"] = 4
        board.prices["bun"] = 1.25
        try realm.write { realm.add(board) }
        return (realm, board)
    }

    @Test("sorted(ascending:) and distinct() are live Results that follow the collection through commits")
    func liveSortedValues() throws {
        let (realm, board) = try board()
        let ascending: Results<Int> = board.scores.sorted(ascending: true)
        let descending = board.scores.sorted(ascending: false)
        #expect(Array(ascending) == [1, 2, 3, 4, 5] && Array(descending) == [5, 4, 3, 2, 1])
        #expect(Array(board.maybe.sorted(ascending: true)) == [nil, 1, 2])
        #expect(Array(board.words.sorted(ascending: false)) == ["chalk", "box", "banana", "apple"])
        #expect(Array(board.prices.sorted(ascending: true)) == [1.25, 2.5, 4])
        try realm.write {
            board.scores.append(objectsIn: [0, 3])
            board.scores[0] = 9
        }
        #expect(Array(ascending) == [0, 1, 2, 3, 3, 4, 9] && ascending.count == 7 && ascending[6] == 9)
        #expect(Array(board.scores.distinct()) == [9, 4, 3, 2, 1, 0])
        #expect(Array(ascending.sorted(byKeyPath: "self", ascending: false)) == [9, 4, 3, 3, 2, 1, 0])
        #expect(ascending.realm != nil && !ascending.isFrozen && AnyRealmCollection(ascending).count == 7)
    }

    @Test("observing sorted values reports insertions where they sort, and replaced values as modifications")
    func observedSortedValues() throws {
        let (realm, board) = try board()
        let ascending = board.scores.sorted(ascending: true)
        var changes: [String] = []
        let token = ascending.observe { change in
            switch change {
            case .initial(let values): changes.append("initial \(Array(values))")
            case .update(let values, let deletions, let insertions, let modifications):
                changes.append("\(Array(values)) -\(deletions) +\(insertions) ~\(modifications)")
            case .error(let error): changes.append("error \(error)")
            }
        }
        try realm.write { board.scores.append(0) }
        try realm.write { board.scores[0] = 6 }  // 5 becomes 6: still the largest
        token.invalidate()
        #expect(
            changes == [
                "initial [1, 2, 3, 4, 5]", "[0, 1, 2, 3, 4, 5] -[] +[0] ~[]", "[0, 1, 2, 3, 4, 6] -[] +[] ~[5]",
            ])
    }

    @Test("frozen value results keep their values; thawed ones read the live collection; a reference resolves elsewhere")
    func frozenValues() throws {
        let (realm, board) = try board()
        let ascending = board.scores.sorted(ascending: true)
        let frozen = ascending.freeze()
        try realm.write { board.scores.append(0) }
        #expect(frozen.isFrozen && Array(frozen) == [1, 2, 3, 4, 5])
        #expect(frozen.thaw().map(Array.init) == [0, 1, 2, 3, 4, 5] && frozen.thaw()?.isFrozen == false)
        let reference = ThreadSafeReference(to: board.words.sorted(ascending: true))
        let resolved = try Realm(configuration: realm.configuration).resolve(reference)
        #expect(resolved.map(Array.init) == ["apple", "banana", "box", "chalk"])
    }

    @Test("sectioned(by:ascending:) groups a list, a list of optionals and a set of values by the block's key")
    func sectionedValues() throws {
        let (realm, board) = try board()
        let parity = board.scores.sectioned(by: { $0 % 2 }, ascending: true)
        #expect(parity.allKeys == [1, 0] && parity.map { Array($0) } == [[1, 3, 5], [2, 4]])
        let descending = board.scores.sectioned(by: { $0 % 2 }, ascending: false)
        #expect(descending.map { Array($0) } == [[5, 3, 1], [4, 2]])
        let optional = board.maybe.sectioned(by: { $0.map { $0 % 2 } }, ascending: true)
        #expect(optional.allKeys == [nil, 1, 0] && optional[0][0] == nil)
        let initials = board.words.sectioned(by: { $0.first.map(String.init) ?? "" }, ascending: true)
        #expect(initials.allKeys == ["a", "b", "c"] && Array(initials[1]) == ["banana", "box"])
        #expect(parity == parity && parity != board.scores.sectioned(by: { $0 % 2 }, ascending: true))
        let frozen = parity.freeze()
        try realm.write { board.scores.append(7) }
        #expect(frozen.isFrozen && frozen.map { Array($0) } == [[1, 3, 5], [2, 4]])
        #expect(parity.map { Array($0) } == [[1, 3, 5, 7], [2, 4]])
        #expect(frozen.thaw()?.map { Array($0) } == [[1, 3, 5, 7], [2, 4]])
    }
}
