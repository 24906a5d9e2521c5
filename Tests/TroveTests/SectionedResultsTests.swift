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
    @Test(arguments: [(30, 5), (400, 12)])
    func randomChangesApplyToTheOldSectionsToGiveTheNewOnes(entries: Int, days: Int) throws {
        let db = try makeDatabase()
        var generator = SystemRandomNumberGenerator()
        try db.write {
            for id in 0..<entries { try db.add(entry(id, day: Int.random(in: 0..<days, using: &generator))) }
        }
        let sections = db.objects(DiaryEntry.self).sectioned(by: \.day)
        var shown: [(key: Int, ids: [Int])] = []
        var changed: Set<Int> = []
        var failures = 0
        let token = sections.observe { change in
            switch change {
            case .initial(let sections):
                shown = sections.map { ($0.key, $0.map(\.id)) }
            case .update(let sections, let deletions, let insertions, let modifications, let newSections, let goneSections):
                let now = sections.map { (key: $0.key, ids: $0.map(\.id)) }
                let next = Self.apply(deletions, insertions, newSections, goneSections, to: shown, giving: now)
                if next.map(\.key) != now.map(\.key) || next.map(\.ids) != now.map(\.ids) { failures += 1 }
                // The sections the observer followed from the changes are the ones grouped afresh.
                let fresh = db.objects(DiaryEntry.self).sectioned(by: \.day).map { (key: $0.key, ids: $0.map(\.id)) }
                if fresh.map(\.key) != now.map(\.key) || fresh.map(\.ids) != now.map(\.ids) { failures += 1 }
                for path in modifications {
                    if !now.indices.contains(path.section) || !now[path.section].ids.indices.contains(path.item)
                        || !changed.contains(now[path.section].ids[path.item])
                    {
                        failures += 1
                    }
                }
                shown = now
            }
        }
        for round in 0..<60 {
            changed = []
            try db.write {
                let all = db.objects(DiaryEntry.self).array()
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0:
                        let id = 1000 + round * 10 + Int.random(in: 0..<10, using: &generator)
                        try db.add(entry(id, day: Int.random(in: 0...days, using: &generator)), update: .modified)
                        changed.insert(id)
                    case 1: if let victim = all.randomElement(using: &generator), !victim.isInvalidated { try db.delete(victim) }
                    default:
                        if let target = all.randomElement(using: &generator), !target.isInvalidated {
                            target.day = Int.random(in: 0...days, using: &generator)
                            changed.insert(target.id)
                        }
                    }
                }
            }
        }
        #expect(failures == 0)
        #expect(shown.map(\.key) == sections.allKeys)
        _ = token
    }

    /// Sections sorted by their key are runs of the results, and a commit
    /// edits them where it changed them: each kind of edit (into a section,
    /// at its start and end, a new section before, between and after the
    /// others, a section emptied) gives what grouping afresh gives, with
    /// changes that turn the old sections into the new ones, and computes
    /// the key of the inserted and changed entries only.
    @Test func sectionsThatAreRunsFollowEachEditFromItsChangesAlone() throws {
        let db = try makeDatabase()
        try db.write { for id in 0..<40 { try db.add(entry(id, day: 10 + id / 10)) } }  // days 10...13, ten each
        let calls = Counter()
        let byDay = db.objects(DiaryEntry.self).sectioned(
            by: { entry -> Int in
                calls.value += 1
                return entry.day
            }, sortDescriptors: [SortDescriptor(keyPath: "day"), SortDescriptor(keyPath: "id")])
        let watcher = SectionWatcher(byDay) {
            db.objects(DiaryEntry.self).sectioned(by: \.day).map { (key: $0.key, ids: $0.map(\.id)) }
        }
        #expect(calls.value == 40)
        var expectedCalls = 40
        var nextID = 100
        func commit(_ body: () throws -> Void, keys: Int) throws {
            watcher.changed = []
            try db.write { try body() }
            expectedCalls += keys
            #expect(calls.value == expectedCalls, "the key closure ran for more than the changed entries")
        }
        func add(day: Int) throws {
            try db.add(entry(nextID, day: day))
            watcher.changed.insert(nextID)
            nextID += 1
        }
        func edit(_ id: Int, day: Int? = nil, memo: String? = nil) {
            let object = db.object(ofType: DiaryEntry.self, forPrimaryKey: id)!
            if let day { object.day = day }
            if let memo { object.memo = memo }
            watcher.changed.insert(id)
        }
        try commit({ try add(day: 11) }, keys: 1)  // into a section (at its end: ids sort after)
        try commit({ try add(day: 9) }, keys: 1)  // a new first section
        try commit({ try add(day: 20) }, keys: 1)  // a new last section
        try commit(
            {
                try add(day: 12); try add(day: 15)
            }, keys: 2)  // into one section, a new one between two
        try commit(
            {
                edit(5, memo: "x"); edit(25, memo: "y")
            }, keys: 2)  // modified in place
        try commit({ edit(3, day: 12) }, keys: 1)  // moves to the start of another section
        try commit({ try db.delete(db.object(ofType: DiaryEntry.self, forPrimaryKey: 101)!) }, keys: 0)  // day 9 emptied
        try commit(
            {
                for id in 30..<40 { try db.delete(db.object(ofType: DiaryEntry.self, forPrimaryKey: id)!) }  // day 13 emptied
                try add(day: 14)  // and a new section where it was
            }, keys: 1)
        try commit(
            {
                try add(day: 10); try db.delete(db.object(ofType: DiaryEntry.self, forPrimaryKey: 0)!)
            }, keys: 1)
        #expect(watcher.problems.isEmpty, "\(watcher.problems)")
        #expect(byDay.allKeys == [10, 11, 12, 14, 15, 20])
        #expect(
            watcher.shown.map(\.ids)
                == [
                    [1, 2, 4, 5, 6, 7, 8, 9, 106], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100],
                    [3, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 103], [105], [104], [102],
                ])
    }

    /// An entry whose key changes while its place in the sort does not (the
    /// last of one day moved to the next, where it sorts first) moves to the
    /// section beside it, or to a new one there, still from the changes
    /// alone; a key that lands inside another section scatters the sections,
    /// and they are grouped again.
    @Test func aKeyChangedAtASectionsEdgeMovesTheEntryBeside() throws {
        let db = try makeDatabase()
        try db.write { for id in 0..<30 { try db.add(entry(id, day: 1 + id / 10)) } }
        let calls = Counter()
        let grouping = db.objects(DiaryEntry.self).sectioned(
            by: { entry -> Int in
                calls.value += 1
                return entry.day * 10 + (entry.memo == "x" ? 1 : 0)
            }, sortDescriptors: [SortDescriptor(keyPath: "day"), SortDescriptor(keyPath: "id")])
        let watcher = SectionWatcher(grouping)
        func edit(_ edits: [(id: Int, day: Int?, memo: String)]) throws {
            watcher.changed = Set(edits.map(\.id))
            try db.write {
                for (id, day, memo) in edits {
                    let object = db.object(ofType: DiaryEntry.self, forPrimaryKey: id)!
                    if let day { object.day = day }
                    object.memo = memo
                }
            }
        }
        func edit(_ id: Int, day: Int? = nil, memo: String) throws { try edit([(id, day, memo)]) }
        var expectedCalls = 30
        try edit(9, memo: "x")  // the last of 10 becomes 11: a new section after it
        expectedCalls += 1
        #expect(calls.value == expectedCalls)
        #expect(watcher.shown.map(\.key) == [10, 11, 20, 30] && watcher.shown[1].ids == [9])
        try edit(10, memo: "x")  // the first of 20 becomes 21: a new section before it
        expectedCalls += 1
        #expect(calls.value == expectedCalls)
        #expect(watcher.shown.map(\.key) == [10, 11, 21, 20, 30] && watcher.shown[2].ids == [10])
        try edit(10, memo: "")  // back: into the start of 20, and 21 empties
        expectedCalls += 1
        #expect(calls.value == expectedCalls)
        #expect(watcher.shown.map(\.key) == [10, 11, 20, 30] && watcher.shown[2].ids == Array(10..<20))
        try edit(9, day: 2, memo: "x")  // 9 sorts where it was, as 21: 11 empties, 21 comes back
        expectedCalls += 1
        #expect(calls.value == expectedCalls)
        #expect(
            watcher.shown.map(\.key) == [10, 21, 20, 30] && watcher.shown[1].ids == [9] && watcher.shown[0].ids == Array(0..<9))
        // In one commit: the first of 30 sorts last of day 2, where it was (into
        // the end of 20), and the next, now first of 30, gets a new section before it.
        try edit([(20, 2, ""), (21, nil, "x")])
        expectedCalls += 2
        #expect(calls.value == expectedCalls)
        #expect(
            watcher.shown.map(\.key) == [10, 21, 20, 31, 30] && watcher.shown[2].ids == Array(10...20)
                && watcher.shown[3].ids == [21])
        try edit(15, memo: "x")  // 21 again, inside 20: the sections scatter
        #expect(watcher.shown.map(\.key) == [10, 21, 20, 31, 30] && watcher.shown[1].ids == [9, 15])
        #expect(watcher.shown[2].ids == [10, 11, 12, 13, 14, 16, 17, 18, 19, 20])
        #expect(watcher.problems.isEmpty, "\(watcher.problems)")
        let fresh = db.objects(DiaryEntry.self).sectioned(
            by: { $0.day * 10 + ($0.memo == "x" ? 1 : 0) },
            sortDescriptors: [SortDescriptor(keyPath: "day"), SortDescriptor(keyPath: "id")])
        #expect(fresh.map(\.key) == watcher.shown.map(\.key) && fresh.map { $0.map(\.id) } == watcher.shown.map(\.ids))
    }

    /// Sections that start empty fill from one commit's insertions (several
    /// sections, several entries each), empty again, and fill again.
    @Test func sectionsFromNothingToNothingAndBack() throws {
        let db = try makeDatabase()
        let byDay = db.objects(DiaryEntry.self).sectioned(by: \.day)
        let watcher = SectionWatcher(byDay) {
            db.objects(DiaryEntry.self).sectioned(by: \.day).map { (key: $0.key, ids: $0.map(\.id)) }
        }
        #expect(watcher.shown.isEmpty)
        watcher.changed = [1, 2, 3, 4, 5]
        try db.write { try db.add([entry(1, day: 3), entry(2, day: 1), entry(3, day: 3), entry(4, day: 2), entry(5, day: 1)]) }
        #expect(watcher.shown.map(\.key) == [1, 2, 3] && watcher.shown.map(\.ids) == [[2, 5], [4], [1, 3]])
        try db.write { try db.delete(db.objects(DiaryEntry.self)) }
        #expect(watcher.shown.isEmpty && byDay.isEmpty)
        watcher.changed = [6, 7]
        try db.write { try db.add([entry(6, day: 2), entry(7, day: 2)]) }
        #expect(watcher.shown.map(\.key) == [2] && watcher.shown.map(\.ids) == [[6, 7]])
        #expect(watcher.problems.isEmpty, "\(watcher.problems)")
    }

    /// Applies a sectioned change to `shown`: deletions (old index paths)
    /// outside deleted sections, the deleted sections, the inserted sections
    /// (whole, from `now`), then insertions (new index paths) outside them.
    static func apply(
        _ deletions: [IndexPath], _ insertions: [IndexPath], _ newSections: IndexSet, _ goneSections: IndexSet,
        to shown: [(key: Int, ids: [Int])], giving now: [(key: Int, ids: [Int])]
    ) -> [(key: Int, ids: [Int])] {
        var next = shown
        for path in deletions.sorted(by: >) where !goneSections.contains(path.section) {
            guard next.indices.contains(path.section), next[path.section].ids.indices.contains(path.item) else { return [] }
            next[path.section].ids.remove(at: path.item)
        }
        for index in goneSections.reversed() where next.indices.contains(index) { next.remove(at: index) }
        for index in newSections where index <= next.count && now.indices.contains(index) {
            next.insert(now[index], at: index)
        }
        for path in insertions.sorted() where !newSections.contains(path.section) {
            guard next.indices.contains(path.section), path.item <= next[path.section].ids.count,
                now.indices.contains(path.section), now[path.section].ids.indices.contains(path.item)
            else { return [] }
            next[path.section].ids.insert(now[path.section].ids[path.item], at: path.item)
        }
        return next
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

/// Follows sectioned results as a table view would: applies each delivery's
/// changes to the sections it showed and notes what does not give the new
/// sections, a modification that is not a changed entry, and (with `fresh`)
/// sections that differ from a fresh grouping.
private final class SectionWatcher {
    var shown: [(key: Int, ids: [Int])] = []
    var problems: [String] = []
    /// The entries the commit being delivered changed.
    var changed: Set<Int> = []
    private var token: NotificationToken?

    init(_ sections: SectionedResults<Int, DiaryEntry>, fresh: (() -> [(key: Int, ids: [Int])])? = nil) {
        token = sections.observe { [unowned self] change in
            switch change {
            case .initial(let sections):
                shown = sections.map { ($0.key, $0.map(\.id)) }
            case .update(let sections, let deletions, let insertions, let modifications, let newSections, let goneSections):
                let now = sections.map { (key: $0.key, ids: $0.map(\.id)) }
                let applied = SectionedResultsTests.apply(
                    deletions, insertions, newSections, goneSections, to: shown, giving: now)
                if applied.map(\.key) != now.map(\.key) || applied.map(\.ids) != now.map(\.ids) {
                    problems.append("changes do not give \(now.map(\.key)) from \(shown.map(\.key))")
                }
                if let expected = fresh?(), expected.map(\.key) != now.map(\.key) || expected.map(\.ids) != now.map(\.ids) {
                    problems.append("sections \(now.map(\.ids)) are not \(expected.map(\.ids))")
                }
                for path in modifications where !changed.contains(now[path.section].ids[path.item]) {
                    problems.append("modification \(path) is not a changed entry")
                }
                shown = now
            }
        }
    }
}
