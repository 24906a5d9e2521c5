/// Turns two versions of an ordered key list into the changes that turn one
/// into the other, in the form collection views apply: deletions are indices
/// in the old list, insertions and modifications indices in the new one.
/// Applying the deletions (from the highest index down) and then the
/// insertions (from the lowest up) to the old list gives the new one.
struct ChangeSet: Equatable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// `changed(key)` says whether an object present in both versions was modified.
    static func between(_ old: [UInt64], _ new: [UInt64], changed: (UInt64) throws -> Bool) rethrows -> ChangeSet {
        var oldIndex: [UInt64: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, key) in old.enumerated() where oldIndex[key] == nil { oldIndex[key] = index }
        var newIndex: [UInt64: Int] = [:]
        newIndex.reserveCapacity(new.count)
        for (index, key) in new.enumerated() where newIndex[key] == nil { newIndex[key] = index }
        // Objects in both, in new order, with their old positions: the longest
        // increasing run of old positions stays; every other one moved.
        var common: [(newPosition: Int, oldPosition: Int)] = []
        for (position, key) in new.enumerated() {
            if let before = oldIndex[key], newIndex[key] == position { common.append((position, before)) }
        }
        let kept = longestIncreasing(common.map(\.oldPosition))
        var stays = Set<Int>()  // old positions that stay
        for index in kept { stays.insert(common[index].oldPosition) }
        var changes = ChangeSet()
        for (position, key) in old.enumerated() where !stays.contains(position) || oldIndex[key] != position {
            changes.deletions.append(position)
        }
        for (position, key) in new.enumerated() {
            if let before = oldIndex[key], stays.contains(before), newIndex[key] == position, oldIndex[key] == before {
                if try changed(key) { changes.modifications.append(position) }
            } else {
                changes.insertions.append(position)
            }
        }
        return changes
    }

    /// Indices into `values` of one longest strictly increasing subsequence (patience sorting).
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // index into values of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.append(cursor)
            cursor = previous[cursor]
        }
        return result.reversed()
    }
}
