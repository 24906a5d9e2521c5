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
                // The sections the observer followed from the changes are the ones grouped afresh.
                let fresh = db.objects(DiaryEntry.self).sectioned(by: \.day).map { (key: $0.key, ids: $0.map(\.id)) }
                if fresh.map(\.key) != now.map(\.key) || fresh.map(\.ids) != now.map(\.ids) { failures += 1 }
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

    /// Sections that are not runs of the sort (keyed by the id's remainder,
    /// sorted by memo) follow random commits too.
    @Test func sectionsScatteredThroughTheSortFollowRandomCommits() throws {
        let db = try makeDatabase()
        var generator = SystemRandomNumberGenerator()
        try db.write {
            for id in 0..<200 { try db.add(entry(id, day: 0, "m\(Int.random(in: 0..<50, using: &generator))")) }
        }
        func grouping() -> SectionedResults<Int, DiaryEntry> {
            db.objects(DiaryEntry.self).sectioned(
                by: { $0.id % 3 + ($0.memo < "m2" ? 10 : 0) }, sortDescriptors: [SortDescriptor(keyPath: "memo")])
        }
        let sections = grouping()
        var mismatches = 0
        var deliveries = 0
        let token = sections.observe { change in
            guard case .update(let sections, _, _, _, _, _) = change else { return }
            deliveries += 1
            let fresh = grouping()
            if sections.map(\.key) != fresh.map(\.key) || sections.map({ $0.map(\.id) }) != fresh.map({ $0.map(\.id) }) {
                mismatches += 1
            }
        }
        var nextID = 200
        for _ in 0..<50 {
            try db.write {
                let all = db.objects(DiaryEntry.self).array()
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0:
                        try db.add(entry(nextID, day: 0, "m\(Int.random(in: 0..<50, using: &generator))"))
                        nextID += 1
                    case 1: if let victim = all.randomElement(using: &generator), !victim.isInvalidated { try db.delete(victim) }
                    default:
                        if let target = all.randomElement(using: &generator), !target.isInvalidated {
                            target.memo = "m\(Int.random(in: 0..<50, using: &generator))"
                        }
                    }
                }
            }
        }
        #expect(deliveries > 40)
        #expect(mismatches == 0)
        _ = token
    }

    /// A commit computes the section key of what it inserted or changed, not
    /// of every element (an app's key closure may format dates or read links).
    @Test func aCommitComputesTheSectionKeysOfTheChangedElementsOnly() throws {
        let db = try makeDatabase()
        try db.write { for id in 0..<500 { try db.add(entry(id, day: id / 50)) } }
        let calls = Counter()
        let byDay = db.objects(DiaryEntry.self).sectioned(
            by: { entry -> Int in
                calls.value += 1
                return entry.day
            }, sortDescriptors: [SortDescriptor(keyPath: "day")])
        var updates = 0
        let token = byDay.observe { change in
            if case .update(let sections, _, _, _, _, _) = change {
                updates += 1
                _ = sections.map(\.count)  // reading the sections in the callback computes nothing again
            }
        }
        #expect(calls.value == 500)
        try db.write {
            db.object(ofType: DiaryEntry.self, forPrimaryKey: 7)!.day = 9
            try db.add(entry(900, day: 3))
        }
        #expect(updates == 1)
        #expect(calls.value <= 500 + 4)
        #expect(byDay.map(\.count) == [49, 50, 50, 51, 50, 50, 50, 50, 50, 51])
        #expect(byDay[9].map(\.id).first == 7)
        _ = token
    }
}

/// A count a closure can raise.
private final class Counter: @unchecked Sendable {
    var value = 0
}
