import Foundation
import Testing

@testable import Trove

final class DiaryEntry: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var day = 0
    @Persisted var memo = ""
}

@Suite("Sectioned results")
struct SectionedResultsTests {
    private func entry(_ id: Int, day: Int, _ memo: String = "") -> DiaryEntry {
        DiaryEntry(value: ["id": id, "day": day, "memo": memo])
    }

    @Test func sectionsByAPropertyOrAKeyFollowTheSortAndStayLive() throws {
        let db = try makeDatabase()
        try db.write { try db.add([entry(1, day: 2, "b"), entry(2, day: 1, "a"), entry(3, day: 2, "c")]) }
        let byDay = db.objects(DiaryEntry.self).sectioned(by: \.day, ascending: false)
        #expect(byDay.allKeys == [2, 1])
        #expect(byDay.map { $0.map(\.id) } == [[1, 3], [2]])
        #expect(byDay[IndexPath(item: 1, section: 0)].memo == "c")
        let byInitial = db.objects(DiaryEntry.self)
            .sectioned(by: { $0.memo < "b" ? "early" : "late" }, sortDescriptors: [SortDescriptor(keyPath: "memo")])
        #expect(byInitial.allKeys == ["early", "late"] && byInitial[1].count == 2)
        try db.write { try db.add(entry(4, day: 3)) }
        #expect(byDay.allKeys == [3, 2, 1])  // live
    }

    /// Random commits: applying each change (section deletions, element
    /// deletions, section insertions, element insertions) to the previous
    /// sections gives the new ones, and every modification points at a changed entry.
    @Test func randomChangesApplyToTheOldSectionsToGiveTheNewOnes() throws {
        let db = try makeDatabase()
        var generator = SystemRandomNumberGenerator()
        try db.write { for id in 0..<30 { try db.add(entry(id, day: Int.random(in: 0..<5, using: &generator))) } }
        let sections = db.objects(DiaryEntry.self).sectioned(by: \.day)
        var shown: [(key: Int, ids: [Int])] = []
        var failures = 0
        let token = sections.observe { change in
            switch change {
            case .initial(let sections):
                shown = sections.map { ($0.key, $0.map(\.id)) }
            case .update(let sections, let deletions, let insertions, let modifications, let newSections, let goneSections):
                var next = shown
                for path in deletions.sorted(by: >) where !goneSections.contains(path.section) {
                    next[path.section].ids.remove(at: path.item)
                }
                for index in goneSections.reversed() { next.remove(at: index) }
                let now = sections.map { (key: $0.key, ids: $0.map(\.id)) }
                for index in newSections { next.insert((now[index].key, []), at: index) }
                for path in insertions.sorted() where !newSections.contains(path.section) {
                    next[path.section].ids.insert(now[path.section].ids[path.item], at: path.item)
                }
                for index in newSections { next[index] = now[index] }
                if next.map(\.key) != now.map(\.key) || next.map(\.ids) != now.map(\.ids) { failures += 1 }
                for path in modifications where !now[path.section].ids.indices.contains(path.item) { failures += 1 }
                shown = now
            }
        }
        for round in 0..<60 {
            try db.write {
                let all = db.objects(DiaryEntry.self).array()
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0:
                        try db.add(
                            entry(1000 + round * 10 + Int.random(in: 0..<10), day: Int.random(in: 0..<6)), update: .modified)
                    case 1: if let victim = all.randomElement(), !victim.isInvalidated { try db.delete(victim) }
                    default: if let target = all.randomElement(), !target.isInvalidated { target.day = Int.random(in: 0..<6) }
                    }
                }
            }
        }
        #expect(failures == 0)
        #expect(shown.map(\.key) == sections.allKeys)
        _ = token
    }
}
