import Dispatch
import Foundation
import Trove

extension RealmCollection {
    /// The values grouped into live sections by the key `block` gives each,
    /// sorted by value (Realm's `sectioned(by:ascending:)` on a collection of
    /// values); as in Realm, only a stored collection has them.
    ///
    /// ```swift
    /// let byParity = player.scores.sectioned(by: { $0 % 2 }, ascending: false)
    /// ```
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        guard let results = _valueResults(ascending: ascending) else {
            preconditionFailure(
                "TroveRealm: sectioned(by:ascending:) with a block sorts values, which only a stored \(Self.self) of values has; for objects, section by a key path or give sort descriptors"
            )
        }
        return results.sectioned(by: block, sortDescriptors: [])
    }
}

extension SectionedResults where Element: RealmCollectionValue {
    /// The Realm the sections read from.
    public var realm: Realm? { Realm(results.database) }

    /// Whether the sections belong to a frozen Realm.
    public var isFrozen: Bool { results.database.isFrozen }

    /// The sections as a frozen Realm holds them, fixed at the latest commit.
    ///
    /// ```swift
    /// let snapshot = byDay.freeze()
    /// ```
    public func freeze() -> SectionedResults { regrouping(results.freeze()) }

    /// A live copy of frozen sections, from a Realm of the current isolation.
    ///
    /// ```swift
    /// let live = snapshot.thaw()
    /// ```
    public func thaw() -> SectionedResults? { results.thaw().map(regrouping) }

    /// Observes the sections (Realm's `observe(keyPaths:on:)`): `.initial`,
    /// then the index paths and sections each commit changed. `keyPaths`
    /// names the properties whose changes count as modifications; with a
    /// `queue`, each change arrives there with the sections frozen.
    ///
    /// ```swift
    /// let token = byDay.observe(keyPaths: ["memo"]) { change in … }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        let hop = deliveryQueue(queue)
        let results = self.results
        return observe(
            through: { handler in
                guard let keyPaths else { return results.observe(handler) }
                do {
                    return try results.observe(properties: keyPaths, handler)
                } catch {
                    realmMisuse("Cannot observe \(keyPaths)", error)
                }
            },
            { change in deliver(hop == nil ? change : change.frozen(), on: hop, to: block) })
    }

}

extension SectionedResults where Element: Object {
    /// ``observe(keyPaths:on:_:)`` with the properties given as key paths.
    ///
    /// ```swift
    /// let token = byDay.observe(keyPaths: [\.memo]) { change in … }
    /// ```
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: propertyNames(keyPaths), on: queue, block)
    }
}

extension SectionedResultsChange {
    /// The change with its sections frozen, for delivery on another queue.
    fileprivate func frozen<Key, Element>() -> SectionedResultsChange
    where Collection == SectionedResults<Key, Element>, Element: RealmCollectionValue {
        switch self {
        case .initial(let sections): return .initial(sections.freeze())
        case .update(let sections, let deletions, let insertions, let modifications, let inserted, let deleted):
            return .update(
                sections.freeze(), deletions: deletions, insertions: insertions, modifications: modifications,
                sectionsToInsert: inserted, sectionsToDelete: deleted)
        }
    }
}

extension ResultsSection where Element: RealmCollectionValue {
    /// The Realm the section reads from.
    public var realm: Realm? { grouping.realm }

    /// Whether the section belongs to a frozen Realm.
    public var isFrozen: Bool { grouping.isFrozen }

    /// The section as a frozen Realm holds it.
    ///
    /// ```swift
    /// let today = byDay[0].freeze()
    /// ```
    public func freeze() -> ResultsSection { rebased(on: grouping.results.freeze()) }

    /// The live section of the same key, from a Realm of the current
    /// isolation: what it holds now (empty if its elements are all gone).
    ///
    /// ```swift
    /// let live = today.thaw()
    /// ```
    public func thaw() -> ResultsSection? {
        guard let live = grouping.results.thaw() else { return nil }
        // The live section of this key, with what was added to it since (empty when it emptied).
        let sections = grouping.regrouping(live)
        guard let index = sections.allKeys.firstIndex(of: key) else { return ResultsSection.empty(key, of: sections) }
        return sections[index]
    }

    /// Observes this section (Realm's `ResultsSection.observe`): `.initial`,
    /// then after each commit the changes of the sections that fall in it
    /// (index paths of this section, in the old sections for deletions and
    /// the new ones otherwise); the section's key stays, its members change.
    ///
    /// ```swift
    /// let token = byDay[0].observe { change in … }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        let key = self.key
        var oldIndex = grouping.allKeys.firstIndex(of: key)
        return grouping.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let sections):
                guard let index = sections.allKeys.firstIndex(of: key) else { return }
                oldIndex = index
                block(.initial(sections[index]))
            case .update(let sections, let deletions, let insertions, let modifications, let inserted, let deleted):
                let newIndex = sections.allKeys.firstIndex(of: key)
                defer { oldIndex = newIndex }
                switch (oldIndex, newIndex) {
                case (nil, nil): return
                case (let old?, nil):
                    // The section emptied: it is deleted, as Realm tells its observer.
                    block(
                        .update(
                            ResultsSection.empty(key, of: sections), deletions: [], insertions: [], modifications: [],
                            sectionsToInsert: [], sectionsToDelete: [old]))
                case (nil, let new?):
                    // The section is back: all its elements are inserted.
                    block(
                        .update(
                            sections[new], deletions: [],
                            insertions: sections[new].indices.map { IndexPath(item: $0, section: new) }, modifications: [],
                            sectionsToInsert: [new], sectionsToDelete: []))
                case (let old?, let new?):
                    let gone = deletions.filter { $0.section == old }
                    let added = insertions.filter { $0.section == new }
                    let changed = modifications.filter { $0.section == new }
                    guard !(gone.isEmpty && added.isEmpty && changed.isEmpty) else { return }
                    block(
                        .update(
                            sections[new], deletions: gone, insertions: added, modifications: changed,
                            sectionsToInsert: inserted.contains(new) ? [new] : [],
                            sectionsToDelete: deleted.contains(old) ? [old] : []))
                }
            }
        }
    }

}

extension ResultsSection where Element: Object {
    /// ``observe(keyPaths:on:_:)`` with the properties given as key paths.
    ///
    /// ```swift
    /// let token = byDay[0].observe(keyPaths: [\.memo]) { change in … }
    /// ```
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
        _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: propertyNames(keyPaths), on: queue, block)
    }
}
