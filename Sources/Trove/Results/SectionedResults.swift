import Foundation

/// Live results grouped into sections by a key (Realm's `SectionedResults`):
/// a photo diary's entries by day, contacts by initial. Sections come in the
/// order of their first element in the results; each keeps the results'
/// order. Reading it after a commit shows the new grouping.
///
/// ```swift
/// let byDay = db.objects(PhotoData.self)
///     .sectioned(by: { Calendar.current.startOfDay(for: $0.dateAdded) },
///                sortDescriptors: [SortDescriptor(keyPath: "dateAdded", ascending: false)])
/// for day in byDay { print(day.key, day.count) }
/// let first = byDay[IndexPath(item: 0, section: 0)]
/// ```
public struct SectionedResults<Key: Hashable, Element>: RandomAccessCollection {
    /// The results the sections are made of, in their order.
    public let results: Results<Element>
    let sectionKey: (Element) -> Key
    private let cache = SectionCache<Key>()

    init(results: Results<Element>, sectionKey: @escaping (Element) -> Key) {
        self.results = results
        self.sectionKey = sectionKey
    }

    /// One section: its key and its elements' object keys, in the results' order.
    typealias Section = (key: Key, members: ResultKeys)

    /// The sections as they are now: each key with its elements' object keys.
    var sections: [Section] {
        let generation = results.database.generation
        if let cached = cache.sections, cache.generation == generation { return cached }
        let sections = group()
        cache.sections = sections
        cache.generation = generation
        return sections
    }

    /// Groups the results' elements by key, sections in order of first appearance.
    func group() -> [Section] {
        Self.sections(of: results.keys.array, keyedBy: results.map(sectionKey)).sections
    }

    /// The sections of `keys` (in order), each key's section being
    /// `sectionOf` at its position, and whether each section is one run of
    /// neighbours (as when the results are sorted by the section key).
    static func sections(of keys: [UInt64], keyedBy sectionOf: [Key]) -> (sections: [Section], runs: Bool) {
        var sections: [(key: Key, members: [UInt64])] = []
        var index: [Key: Int] = [:]
        var runs = true
        var position = 0
        while position < keys.count {
            // Sections are mostly runs of neighbours (the sort groups them): one lookup per run.
            let key = sectionOf[position]
            var end = position + 1
            while end < keys.count, sectionOf[end] == key { end += 1 }
            if let section = index[key] {
                sections[section].members += keys[position..<end]
                runs = false
            } else {
                index[key] = sections.count
                sections.append((key, Array(keys[position..<end])))
            }
            position = end
        }
        return (sections.map { ($0.key, ResultKeys($0.members)) }, runs)
    }

    /// The sections as the observer last saw them. When each section is one
    /// run of the results (they sort by the section key, as
    /// ``Results/sectioned(by:ascending:)`` does), a commit's changes edit
    /// the sections in place by position (``followRuns(_:to:deletions:insertions:modifications:)``);
    /// otherwise the observer keeps every position's object key and section
    /// key, edits those and groups them again.
    struct Tracked {
        var sections: [Section] = []
        /// Each position's object key and section key; empty when `runs`.
        var keys: [UInt64] = []
        var sectionOf: [Key] = []
        var runs = true

        init() {}

        init(keys: [UInt64], sectionOf: [Key]) {
            let grouped = SectionedResults.sections(of: keys, keyedBy: sectionOf)
            sections = grouped.sections
            runs = grouped.runs
            if !runs {
                self.keys = keys
                self.sectionOf = sectionOf
            }
        }
    }

    /// Every element's section key computed afresh.
    func track() -> Tracked {
        Tracked(keys: results.keys.array, sectionOf: results.map(sectionKey))
    }

    /// What turns the old sections into the new ones, as an observer receives it.
    struct Changes {
        var deletions: [IndexPath] = []
        var insertions: [IndexPath] = []
        var modifications: [IndexPath] = []
        var sectionsToInsert = IndexSet()
        var sectionsToDelete = IndexSet()
    }

    /// `tracked` (sections that are runs) edited by a results change
    /// (deletions in the old positions, insertions and modifications in the
    /// new), with what changed in the sections: each deletion and insertion
    /// finds its section among the runs' starts, and only the inserted and
    /// modified elements have their section key computed, so a delivery
    /// costs what the commit changed, not what the results hold. Nil when
    /// the change is large or leaves a section that is no longer one run
    /// (an element whose key changed in place, a key that appears away from
    /// its section): the caller groups every element again.
    func followRuns(
        _ tracked: Tracked, to results: Results<Element>, deletions: [Int], insertions: [Int], modifications: [Int]
    ) -> (tracked: Tracked, changes: Changes)? {
        let old = tracked.sections
        let oldCount = old.reduce(0) { $0 + $1.members.count }
        guard tracked.runs, deletions.count + insertions.count + modifications.count <= Swift.max(64, oldCount / 8) else {
            return nil
        }
        let now = results.keys
        var sections = old
        // Each section's identity: its old index, or `old.count` and up for a new one.
        var identities = Array(old.indices)
        var starts: [Int] = []
        starts.reserveCapacity(old.count)
        var total = 0
        for section in old {
            starts.append(total)
            total += section.members.count
        }
        let oldStarts = starts
        /// The section holding `position` (< the count): the last one starting at or before it.
        func section(at position: Int, _ starts: [Int]) -> Int { starts.partitioningIndex { $0 <= position } - 1 }
        func shift(after index: Int, by delta: Int) {
            for following in (index + 1)..<starts.count { starts[following] += delta }
        }
        func element(_ position: Int) -> Element { results.source.materialize(results.database, now[position]) }

        var changes = Changes()
        for position in deletions.sorted(by: >) {
            guard position < total else { return nil }
            let index = section(at: position, starts)
            changes.deletions.append(IndexPath(indexes: [index, position - starts[index]]))
            sections[index].members.remove(at: position - starts[index])
            shift(after: index, by: -1)
            total -= 1
        }
        // Insertions and modifications by final position: their items are taken at the end,
        // once elements that changed key at a section's edge have moved.
        var inserted: [(identity: Int, position: Int)] = []
        var keys: Set<Key>?  // every section's key, made when a new one may be needed
        var created = 0
        /// Whether a section (empty ones included) has `key`.
        func isPresent(_ key: Key) -> Bool {
            let present = keys ?? Set(sections.map(\.key))
            keys = present
            return present.contains(key)
        }
        /// An empty new section of `key` at `index`, starting at `start`.
        func addSection(_ key: Key, at index: Int, start: Int) {
            sections.insert((key, ResultKeys()), at: index)
            starts.insert(start, at: index)
            identities.insert(old.count + created, at: index)
            created += 1
            keys?.insert(key)
        }
        for position in insertions.sorted() {
            guard position <= total, position < now.count else { return nil }
            let key = sectionKey(element(position))
            var index: Int
            if sections.isEmpty {
                index = 0
                addSection(key, at: 0, start: position)
            } else {
                // The sections that can take it: the one around `position`, or at a
                // boundary the one ending there, empty ones there and the one starting there.
                let around = position < total ? section(at: position, starts) : sections.count - 1
                var candidate = around
                while candidate > 0, starts[candidate - 1] + sections[candidate - 1].members.count == position {
                    candidate -= 1
                }
                while candidate < around, sections[candidate].key != key { candidate += 1 }
                if sections[candidate].key == key {
                    index = candidate
                } else {
                    // A key of its own goes between two sections; inside one, or
                    // away from its own section, it would split a run.
                    let aroundStart = starts[around]
                    let aroundEnd = aroundStart + sections[around].members.count
                    guard aroundStart == position || aroundEnd == position, !isPresent(key) else { return nil }
                    index = aroundStart == position && aroundEnd > position ? around : around + 1
                    addSection(key, at: index, start: position)
                }
            }
            sections[index].members.insert(now[position], at: position - starts[index])
            shift(after: index, by: 1)
            total += 1
            inserted.append((identities[index], position))
        }
        guard total == now.count else { return nil }
        /// Moves the element at `position`, first or last of section `index`,
        /// whose key is now `key`, into the section on that side that has
        /// `key` (empty ones there included), or into a new section there;
        /// the section it went to, or nil when it is inside its section or
        /// `key` is elsewhere (either would split a run).
        func moveAtEdge(_ position: Int, from index: Int, to key: Key) -> Int? {
            var index = index
            let item = position - starts[index]
            let last = sections[index].members.count - 1
            if item == 0 {
                // The sections ending at `position`: the one before, and empty ones after it.
                var side = index
                while side > 0, starts[side - 1] + sections[side - 1].members.count == position { side -= 1 }
                var target = (side..<index).first { sections[$0].key == key }
                if target == nil, !isPresent(key) {
                    addSection(key, at: index, start: position)
                    target = index
                    index += 1
                }
                if let target {
                    let element = sections[index].members[0]
                    sections[index].members.remove(at: 0)
                    sections[target].members.insert(element, at: sections[target].members.count)
                    for following in (target + 1)...index { starts[following] = position + 1 }
                    return target
                }
            }
            if item == last {
                // The sections starting right after it: empty ones, and the one after them.
                var side = index
                while side + 1 < sections.count, starts[side + 1] == position + 1 { side += 1 }
                var target = ((index + 1)..<(side + 1)).first { sections[$0].key == key }
                if target == nil, !isPresent(key) {
                    addSection(key, at: index + 1, start: position + 1)
                    target = index + 1
                }
                if let target {
                    let element = sections[index].members[item]
                    sections[index].members.remove(at: item)
                    sections[target].members.insert(element, at: 0)
                    for following in (index + 1)...target { starts[following] = position }
                    return target
                }
            }
            return nil
        }
        let ascendingDeletions = deletions.sorted()
        var modified: [(identity: Int, position: Int, old: IndexPath)] = []
        for position in modifications.sorted() {
            guard position < total else { return nil }
            let index = section(at: position, starts)
            // Where it was: its rank among the elements neither inserted nor deleted.
            var oldPosition = position - insertions.count(where: { $0 < position })
            for deleted in ascendingDeletions where deleted <= oldPosition { oldPosition += 1 }
            let oldIndex = section(at: oldPosition, oldStarts)
            let was = IndexPath(indexes: [oldIndex, oldPosition - oldStarts[oldIndex]])
            let key = sectionKey(element(position))
            if sections[index].key == key {
                modified.append((identities[index], position, was))
            } else {
                // Its key changed and its place in the results did not: it moves to the section beside.
                guard let target = moveAtEdge(position, from: index, to: key) else { return nil }
                changes.deletions.append(was)
                inserted.append((identities[target], position))
            }
        }
        // Sections left empty go; the new ones are reported whole.
        var final: [Int: (index: Int, start: Int)] = [:]
        var kept: [Section] = []
        for (index, section) in sections.enumerated() {
            if section.members.isEmpty {
                if identities[index] < old.count { changes.sectionsToDelete.insert(identities[index]) }
                continue
            }
            final[identities[index]] = (kept.count, starts[index])
            if identities[index] >= old.count { changes.sectionsToInsert.insert(kept.count) }
            kept.append(section)
        }
        for (identity, position, was) in modified {
            guard let place = final[identity] else { return nil }
            if identity == was[0], position - place.start == was[1] {
                changes.modifications.append(IndexPath(indexes: [place.index, position - place.start]))
            } else {
                // Its place in its section moved: a deletion and an insertion, as realm-core reports it.
                changes.deletions.append(was)
                inserted.append((identity, position))
            }
        }
        changes.deletions = changes.deletions.filter { !changes.sectionsToDelete.contains($0[0]) }.sorted()
        changes.insertions = inserted.compactMap { identity, position in
            guard identity < old.count, let place = final[identity] else { return nil }
            return IndexPath(indexes: [place.index, position - place.start])
        }.sorted()
        changes.modifications.sort()
        var next = Tracked()
        next.sections = kept
        return (next, changes)
    }

    /// `tracked` (sections scattered through the results) moved to `results`
    /// by a results change (deletions in the old positions, insertions and
    /// modifications in the new): the section key of each inserted or
    /// modified element is computed, the others keep theirs. Every element's
    /// is computed again when the change is large or does not lead to the
    /// results' keys.
    func follow(
        _ tracked: Tracked, to results: Results<Element>, deletions: [Int], insertions: [Int], modifications: [Int]
    ) -> Tracked {
        let now = results.keys.array
        guard !tracked.runs,
            deletions.count + insertions.count + modifications.count <= Swift.max(64, tracked.keys.count / 8)
        else {
            return Tracked(keys: now, sectionOf: results.map(sectionKey))
        }
        func element(_ position: Int) -> Element { results.source.materialize(results.database, now[position]) }
        var keys = tracked.keys
        var sectionOf = tracked.sectionOf
        for position in deletions.sorted(by: >) where position < keys.count {
            keys.remove(at: position)
            sectionOf.remove(at: position)
        }
        for position in insertions.sorted() {
            guard position <= keys.count, position < now.count else {
                return Tracked(keys: now, sectionOf: results.map(sectionKey))
            }
            keys.insert(now[position], at: position)
            sectionOf.insert(sectionKey(element(position)), at: position)
        }
        guard keys == now else { return Tracked(keys: now, sectionOf: results.map(sectionKey)) }
        for position in modifications where position < now.count { sectionOf[position] = sectionKey(element(position)) }
        return Tracked(keys: keys, sectionOf: sectionOf)
    }

    /// Makes `sections` the ones read until the handle's state moves (the observer computed them).
    func keep(_ sections: [Section]) {
        cache.sections = sections
        cache.generation = results.database.generation
    }

    /// The position of the first section: 0.
    public var startIndex: Int { 0 }
    /// One past the last section: the number of sections.
    public var endIndex: Int { sections.count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, Element> {
        let section = sections[position]
        return ResultsSection(key: section.key, members: section.members, results: results, grouping: self)
    }

    /// The element at `indexPath` (`section`, then `item` in it).
    public subscript(indexPath: IndexPath) -> Element {
        self[indexPath[0]][indexPath[1]]
    }

    /// The keys of the sections, in order.
    public var allKeys: [Key] { sections.map(\.key) }

    /// Observes the sections: `.initial`, then after each commit that changes
    /// them the elements deleted (index paths in the old sections), inserted
    /// and modified (in the new ones), and the sections deleted and inserted.
    /// An element whose key changed moves: deleted from its old section,
    /// inserted into its new one.
    ///
    /// A commit computes the section key of the elements it inserted or
    /// modified, not of every element (a key read through a link follows
    /// the element's own changes); a change of more than an eighth of the
    /// elements computes them all again.
    ///
    /// ```swift
    /// let token = byDay.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications, let newSections, let goneSections) = change {
    ///         collectionView.performBatchUpdates { … }
    ///     }
    /// }
    /// ```
    ///
    /// As with Realm, the change has no error case. If the results can no
    /// longer be read (the file was damaged under a running app), observation
    /// stops and `onError` receives the error; without `onError` it is
    /// written to standard error.
    public func observe(
        onError: ((any Error) -> Void)? = nil, _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        observe(through: { results.observe($0) }, onError: onError, block)
    }

    /// ``observe(onError:_:)`` with the results' changes coming from `subscribe`
    /// (which may observe only some properties).
    package func observe(
        through subscribe: (@escaping (ResultsChange<Element>) -> Void) -> NotificationToken,
        onError: ((any Error) -> Void)? = nil,
        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        var tracked = Tracked()
        return subscribe { change in
            switch change {
            case .initial:
                tracked = track()
                keep(tracked.sections)
                block(.initial(self))
            case .update(let results, let deleted, let inserted, let modifications):
                let update: Changes
                if let followed = followRuns(
                    tracked, to: results, deletions: deleted, insertions: inserted, modifications: modifications)
                {
                    tracked = followed.tracked
                    update = followed.changes
                } else {
                    let previous = tracked.sections
                    tracked = follow(tracked, to: results, deletions: deleted, insertions: inserted, modifications: modifications)
                    let keys = results.keys
                    let modified = Set(modifications.compactMap { $0 < keys.count ? keys[$0] : nil })
                    let touched =
                        tracked.runs
                        ? nil : Set(modifications.compactMap { $0 < tracked.sectionOf.count ? tracked.sectionOf[$0] : nil })
                    update = SectionedResults.difference(
                        from: previous, to: tracked.sections, modified: modified, touched: touched)
                }
                keep(tracked.sections)
                block(
                    .update(
                        self, deletions: update.deletions, insertions: update.insertions,
                        modifications: update.modifications, sectionsToInsert: update.sectionsToInsert,
                        sectionsToDelete: update.sectionsToDelete))
            case .error(let error):
                if let onError {
                    onError(error)
                } else {
                    FileHandle.standardError.write(
                        Data("Trove: observation of sectioned \(Element.self) results stopped: \(error)\n".utf8))
                }
            }
        }
    }

    /// The same grouping of other results (the same query on another handle: frozen, thawed).
    package func regrouping(_ other: Results<Element>) -> SectionedResults {
        SectionedResults(results: other, sectionKey: sectionKey)
    }

    /// What turns the old sections into the new ones, compared section by
    /// section; `touched` names the sections that hold a modified element
    /// (nil: any may), the others are skipped when their members are the same.
    static func difference(
        from old: [Section], to new: [Section], modified: Set<UInt64>, touched: Set<Key>? = nil
    ) -> Changes {
        let oldIndex = Dictionary(old.enumerated().map { ($0.element.key, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let newIndex = Dictionary(new.enumerated().map { ($0.element.key, $0.offset) }, uniquingKeysWith: { first, _ in first })
        var deletions: [IndexPath] = []
        var insertions: [IndexPath] = []
        var modifications: [IndexPath] = []
        let sectionsToDelete = IndexSet(old.indices.filter { newIndex[old[$0].key] == nil })
        let sectionsToInsert = IndexSet(new.indices.filter { oldIndex[new[$0].key] == nil })
        for (newSection, section) in new.enumerated() {
            guard let oldSection = oldIndex[section.key] else { continue }
            let before = old[oldSection].members.array
            let members = section.members.array
            // Unchanged members and no modified one: nothing to compare.
            if let touched, !touched.contains(section.key), before == members { continue }
            let changes = ChangeSet.between(before, members) { modified.contains($0) }
            deletions += changes.deletions.map { IndexPath(indexes: [oldSection, $0]) }
            insertions += changes.insertions.map { IndexPath(indexes: [newSection, $0]) }
            // A modified element whose position in its section changed moved
            // (its own change may have moved it): a deletion and an insertion, as realm-core reports it.
            for position in changes.modifications {
                if let was = before.firstIndex(of: members[position]), was != position {
                    deletions.append(IndexPath(indexes: [oldSection, was]))
                    insertions.append(IndexPath(indexes: [newSection, position]))
                } else {
                    modifications.append(IndexPath(indexes: [newSection, position]))
                }
            }
        }
        deletions.sort()
        insertions.sort()
        return Changes(
            deletions: deletions, insertions: insertions, modifications: modifications, sectionsToInsert: sectionsToInsert,
            sectionsToDelete: sectionsToDelete)
    }
}

/// The grouping a ``SectionedResults`` last computed, and for which state of its handle.
final class SectionCache<Key: Hashable> {
    var generation: UInt64?
    var sections: [(key: Key, members: ResultKeys)]?
}

/// One section of a ``SectionedResults`` (Realm's `ResultsSection`): its key
/// and its elements, in the results' order.
///
/// ```swift
/// for day in byDay { print(day.key, day.map(\.memo)) }
/// ```
public struct ResultsSection<Key: Hashable, Element>: RandomAccessCollection {
    /// The key every element of the section has.
    public let key: Key
    let members: ResultKeys
    let results: Results<Element>
    /// The sectioned results the section was read from.
    package let grouping: SectionedResults<Key, Element>

    /// The position of the first element: 0.
    public var startIndex: Int { 0 }
    /// One past the last element: the section's count.
    public var endIndex: Int { members.count }

    /// The element at `position`.
    public subscript(position: Int) -> Element {
        results.source.materialize(results.database, members[position])
    }

    /// A section of `grouping` that has no elements (any more): what an
    /// observer of a section that emptied is handed.
    package static func empty(_ key: Key, of grouping: SectionedResults<Key, Element>) -> ResultsSection {
        ResultsSection(key: key, members: ResultKeys(), results: grouping.results, grouping: grouping)
    }

    /// The same section read from other results (the same query on another
    /// handle: frozen, thawed).
    package func rebased(on other: Results<Element>) -> ResultsSection {
        ResultsSection(key: key, members: members, results: other, grouping: grouping.regrouping(other))
    }
}

/// What a ``SectionedResults`` observer receives (Realm's `SectionedResultsChange`).
public enum SectionedResultsChange<Collection> {
    /// The sections when observation starts.
    case initial(Collection)
    /// The sections after a commit: elements deleted (index paths in the old
    /// sections), inserted and modified (in the new ones), and the sections
    /// inserted (new indices) and deleted (old indices).
    case update(
        Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
        sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

extension Results {
    /// The results grouped by a property, sorted by it (Realm's `sectioned(by:ascending:)`).
    ///
    /// ```swift
    /// let byMood = db.objects(PhotoData.self).sectioned(by: \.mood)
    /// ```
    public func sectioned<Key: _TroveStorable & Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        SectionedResults(results: sorted(by: keyPath, ascending: ascending)) { $0[keyPath: keyPath] }
    }

    /// The results sorted by `sortDescriptors` and grouped by the key `block`
    /// gives each element (Realm's `sectioned(by:sortDescriptors:)`); sort so
    /// that elements of a section are adjacent (by the property the key comes
    /// from), or sections collect elements from wherever they are.
    ///
    /// ```swift
    /// let byInitial = db.objects(Contact.self)
    ///     .sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
    /// ```
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        SectionedResults(results: sortDescriptors.isEmpty ? self : sorted(by: sortDescriptors), sectionKey: block)
    }
}

#if !canImport(Darwin)
    // UIKit and AppKit give index paths sections and items; Linux's Foundation does not.
    extension IndexPath {
        /// The index path of `item` in `section`.
        ///
        /// ```swift
        /// let first = byDay[IndexPath(item: 0, section: 0)]
        /// ```
        public init(item: Int, section: Int) { self.init(indexes: [section, item]) }

        /// The section: the first index.
        public var section: Int { self[0] }

        /// The item in the section: the second index.
        public var item: Int { self[1] }
    }
#endif

extension SectionedResults: Equatable {
    /// The same sectioned results: made by one `sectioned` call (copies
    /// share it); two calls make two, as in Realm.
    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs.cache === rhs.cache }
}

extension ResultsSection: Equatable {
    /// The section of one key, read from the same sectioned results.
    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool {
        lhs.key == rhs.key && lhs.grouping == rhs.grouping
    }
}
