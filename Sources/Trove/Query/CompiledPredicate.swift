import Foundation
import TroveStorage

/// Turns a bound predicate into one closure per node, with fast paths for
/// the comparisons scans spend their time on (numbers and strings against a
/// constant), so a scan does not rebuild a ``StoredValue`` per record.
extension BoundPredicate {
    func compile(_ layout: RecordLayout, _ transaction: Transaction) -> (RecordReader) -> Bool {
        switch self {
        case .constant(let value):
            return { _ in value }
        case .and(let parts):
            if let bounds = IntegerBounds(parts, layout) { return bounds.test() }
            let compiled = parts.map { $0.compile(layout, transaction) }
            if compiled.count == 2 {
                let (first, second) = (compiled[0], compiled[1])
                return { first($0) && second($0) }
            }
            return { reader in compiled.allSatisfy { $0(reader) } }
        case .or(let parts):
            let compiled = parts.map { $0.compile(layout, transaction) }
            return { reader in compiled.contains { $0(reader) } }
        case .not(let inner):
            let compiled = inner.compile(layout, transaction)
            return { !compiled($0) }
        case .compare(let column, .matches, .string(let pattern), let options):
            // Compile the expression once for the whole scan.
            // Checked when the query was made (BoundPredicate): the expression compiles.
            let diacritics = options.intersection(.diacriticInsensitive)
            let folded = diacritics.isEmpty ? pattern : ValueComparison.fold(pattern, diacritics)
            guard let regex = ValueComparison.regex(folded, options) else { return { _ in false } }
            return { reader in
                guard case .string(let text) = reader.value(at: column) else { return false }
                return regex.matches(diacritics.isEmpty ? text : ValueComparison.fold(text, diacritics))
            }
        case .compare(let column, let op, .string(let constant), let options) where layout.types[column] == .string:
            if let onBytes = BoundPredicate.stringComparison(column, op, constant, options) { return onBytes }
            return { ValueComparison.test($0.value(at: column), op, .string(constant), options) }
        case .compare(let column, let op, let value, let options):
            if let bounds = IntegerBounds([self], layout) { return bounds.test() }
            if options.isEmpty, let fast = BoundPredicate.fastComparison(column, op, value, layout) { return fast }
            return { ValueComparison.test($0.value(at: column), op, value, options) }
        case .objectKeys:
            return { _ in true }
        case .linked(let column, let target, let inner):
            let compiled = inner.compile(target.layout, transaction)
            return { reader in
                guard case .int(let key) = reader.value(at: column) else { return false }
                return BoundPredicate.withRecord(UInt64(bitPattern: key), of: target, transaction) { compiled($0) } ?? false
            }
        case .collection(let path, let quantifier, let inner):
            let elementLayout = path.owner.elementLayouts[path.column]
            let compiled = inner.compile(path.target?.layout ?? elementLayout!, transaction)
            let subclasses = path.subclassTests.map { ($0.table, $0.test.compile($0.table.layout, transaction)) }
            return { reader in
                quantifier.combine { test in
                    path.forEachElement(of: reader.objectKey, transaction) { element in
                        test(path.matches(element, compiled, elementLayout: elementLayout, transaction, subclasses: subclasses))
                    }
                }
            }
        case .mapKeys(let path, let quantifier, let op, let values, let options):
            return { reader in
                quantifier.combine { test in
                    path.forEachMapKey(of: reader.objectKey, transaction) { key in
                        let actual = StoredValue.string(key)
                        switch op {
                        case .in: return test(values.contains { ValueComparison.test(actual, .equal, $0, options) })
                        case .between:
                            return test(
                                ValueComparison.test(actual, .greaterOrEqual, values[0], options)
                                    && ValueComparison.test(actual, .lessOrEqual, values[1], options))
                        default: return test(ValueComparison.test(actual, op, values[0], options))
                        }
                    }
                }
            }
        case .mapEntry(let path, let key, let op, let value, let options):
            return { reader in
                ValueComparison.test(path.mapValue(of: reader.objectKey, key: key, transaction) ?? .null, op, value, options)
            }
        case .collectionCount(let path, let filter, let op, let value):
            let elementLayout = path.owner.elementLayouts[path.column]
            let matches = filter?.compile(path.target?.layout ?? elementLayout!, transaction)
            let subclasses = path.subclassTests.map { ($0.table, $0.test.compile($0.table.layout, transaction)) }
            return { reader in
                var count = 0
                path.forEachElement(of: reader.objectKey, transaction) { element in
                    guard let matches else {
                        count += 1
                        return true
                    }
                    if path.matches(element, matches, elementLayout: elementLayout, transaction, subclasses: subclasses) {
                        count += 1
                    }
                    return true
                }
                return ValueComparison.test(.int(Int64(count)), op, value, [])
            }
        case .collectionAggregate(let path, let kind, let column, let op, let value):
            return { reader in
                // The aggregate of nothing (nil) equals only nil, as any nil does.
                ValueComparison.test(path.aggregate(kind, of: column, for: reader.objectKey, transaction), op, value, [])
            }
        case .compareList(let column, .in, let values, let options) where options.isEmpty && values.count > 4:
            if let lookup = BoundPredicate.setLookup(column, values, layout) { return lookup }
            return { self.evaluate($0) }
        case .compareList, .compareColumns:
            if let bounds = IntegerBounds([self], layout) { return bounds.test() }
            return { self.evaluate($0) }
        case .mixedType, .mixedPath:
            return { self.evaluate($0) }
        case .objectKeyIs(let key):
            return { $0.objectKey == key }
        case .geoWithin(let typeColumn, let path, let region):
            let elementLayout = path.owner.elementLayouts[path.column]!
            return { reader in
                guard case .string(let type) = reader.value(at: typeColumn), type.lowercased() == "point" else { return false }
                var coordinates: [Double] = []
                path.forEachElement(of: reader.objectKey, transaction) { element in
                    guard case .record(let bytes) = element else { return false }
                    guard case .double(let value) = RecordReader(bytes, layout: elementLayout).value(at: 0) else { return false }
                    coordinates.append(value)
                    return coordinates.count < 2
                }
                return coordinates.count == 2 && region.contains(latitude: coordinates[1], longitude: coordinates[0])
            }
        case .fullText(let column, let index, let objects, let query):
            // Unresolved only where a query cannot throw (a delivery): a failed read traps, as other reads there do.
            let matches: FullTextIndex.Matches
            do {
                matches = try FullTextIndex.search(query, in: index, objects: objects, transaction)
            } catch {
                fatalError("Trove: cannot read the full-text index \(index.name) during a query: \(error)")
            }
            let keys = matches.keys
            if matches.needsRecheck {
                return { BoundPredicate.contains(keys, $0.objectKey) && BoundPredicate.text(at: column, of: $0, matches: query) }
            }
            return { BoundPredicate.contains(keys, $0.objectKey) }
        case .fullTextKeys(let column, let keys, let recheck):
            if let recheck {
                return {
                    BoundPredicate.contains(keys, $0.objectKey) && BoundPredicate.text(at: column, of: $0, matches: recheck)
                }
            }
            return { BoundPredicate.contains(keys, $0.objectKey) }
        }
    }

    /// IN over a long list of integers, strings or UUIDs: one hash lookup a
    /// row instead of a comparison with each value (equal as `==` compares them).
    private static func setLookup(_ column: Int, _ values: [StoredValue], _ layout: RecordLayout)
        -> ((RecordReader) -> Bool)?
    {
        if layout.types[column].isInteger {
            var integers = Set<Int64>()
            for value in values {
                guard case .int(let integer) = value else { return nil }
                integers.insert(integer)
            }
            return { reader in reader.int(at: column).map { integers.contains($0) } ?? false }
        }
        var strings = Set<String>()
        var uuids = Set<UUID>()
        for value in values {
            switch value {
            case .string(let string): strings.insert(string)
            case .uuid(let uuid): uuids.insert(uuid)
            default: return nil
            }
        }
        guard strings.isEmpty || uuids.isEmpty else { return nil }
        return { reader in
            switch reader.value(at: column) {
            case .string(let string): strings.contains(string)
            case .uuid(let uuid): uuids.contains(uuid)
            default: false
            }
        }
    }

    /// A comparison of a String column with a constant, on the stored UTF-8
    /// bytes: without options, `==` and the orderings compare bytes (code
    /// points), as ``ValueComparison`` does; the string operators, and `==`
    /// and `!=` under options, go through a ``StringMatcher``.
    private static func stringComparison(_ column: Int, _ op: ComparisonOperator, _ constant: String, _ options: StringOptions)
        -> ((RecordReader) -> Bool)?
    {
        // nil compares with nothing: only != holds for it.
        let whenNull = op == .notEqual
        // Records older than the column read its default value.
        let fallback = { (reader: RecordReader) in ValueComparison.test(reader.value(at: column), op, .string(constant), options)
        }
        if options.isEmpty, let test = byteOrderTest(op) {
            let constantBytes = Array(constant.utf8)
            return { reader in
                guard reader.columns > column else { return fallback(reader) }
                guard let text = reader.heapBytes(at: column) else { return whenNull }
                return constantBytes.withUnsafeBytes { test(compareBytes(text, $0)) }
            }
        }
        guard let matcher = StringMatcher(op, constant, options) else { return nil }
        return { reader in
            guard reader.columns > column else { return fallback(reader) }
            guard let text = reader.heapBytes(at: column) else { return whenNull }
            return matcher.matches(text)
        }
    }

    /// What an order (below zero: before) must be for `op` to hold.
    private static func byteOrderTest(_ op: ComparisonOperator) -> ((Int) -> Bool)? {
        switch op {
        case .equal: return { $0 == 0 }
        case .notEqual: return { $0 != 0 }
        case .less: return { $0 < 0 }
        case .lessOrEqual: return { $0 <= 0 }
        case .greater: return { $0 > 0 }
        case .greaterOrEqual: return { $0 >= 0 }
        default: return nil
        }
    }

    private static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(a.count, b.count)
        let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return Int(order) }
        return a.count - b.count
    }

    private static func fastComparison(_ column: Int, _ op: ComparisonOperator, _ value: StoredValue, _ layout: RecordLayout)
        -> ((RecordReader) -> Bool)?
    {
        let type = layout.types[column]
        // nil equals nothing but nil: only != holds for a missing value.
        let whenNull = op == .notEqual
        switch (value, type.isInteger) {
        case (.int(let constant), true):
            guard let test = comparison(op, constant) else { return nil }
            return { reader in reader.int(at: column).map(test) ?? whenNull }
        case (.double(let constant), false) where type == .double:
            guard let test = comparison(op, constant) else { return nil }
            return { reader in
                if case .double(let actual) = reader.value(at: column) { return test(actual) }
                return whenNull
            }
        default:
            return nil
        }
    }

    /// `actual <op> constant` as a closure, for the ordering operators.
    private static func comparison<T: Comparable>(_ op: ComparisonOperator, _ constant: T) -> ((T) -> Bool)? {
        switch op {
        case .equal: return { $0 == constant }
        case .notEqual: return { $0 != constant }
        case .less: return { $0 < constant }
        case .lessOrEqual: return { $0 <= constant }
        case .greater: return { $0 > constant }
        case .greaterOrEqual: return { $0 >= constant }
        default: return nil
        }
    }
}

extension CollectionPath {
    /// Whether one element passes a compiled test: the element record of a
    /// collection of values, or the record of the object it stands for.
    func matches(
        _ element: Element, _ test: (RecordReader) -> Bool, elementLayout: RecordLayout?, _ transaction: Transaction,
        subclasses: [(TableInfo, (RecordReader) -> Bool)] = []
    ) -> Bool {
        switch element {
        case .record(let bytes):
            let elementReader = RecordReader(bytes, layout: elementLayout!)
            guard let target else { return test(elementReader) }
            guard case .int(let key) = elementReader.value(at: 0) else { return false }
            if let matched = BoundPredicate.withRecord(UInt64(bitPattern: key), of: target, transaction, test) { return matched }
            for (table, subclassTest) in subclasses {
                if let matched = BoundPredicate.withRecord(UInt64(bitPattern: key), of: table, transaction, subclassTest) {
                    return matched
                }
            }
            return false
        case .object(let key):
            return BoundPredicate.withRecord(key, of: target!, transaction, test) ?? false
        }
    }
}

extension QueryExpression.Quantifier {
    /// Combines the tests of a collection's elements: `visit` calls `test`
    /// with each element's result and stops when it returns false.
    func combine(_ visit: (_ test: (Bool) -> Bool) -> Void) -> Bool {
        var sawMatch = false
        var sawMiss = false
        visit { matched in
            if matched { sawMatch = true } else { sawMiss = true }
            return self == .all ? !sawMiss : !sawMatch  // go on while the answer is open
        }
        switch self {
        case .any: return sawMatch
        case .all: return !sawMiss
        case .none: return !sawMatch
        }
    }
}

extension CollectionPath {
    /// Visits the keys of `owner`'s map until `visit` returns false.
    func forEachMapKey(of ownerKey: UInt64, _ transaction: Transaction, _ visit: (String) -> Bool) {
        guard let map = self.owner.collections[column], transaction.canSee(map) else { return }
        let prefix = Database.ownerPrefix(ownerKey)
        do {
            try transaction.withCursor(on: map) { cursor in
                var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                let keysInEntries = self.owner.tokenizesEntries(column)
                while let current = entry, current.key.count >= 8, current.key.starts(with: prefix) {
                    // With key tokens, the entry holds its key.
                    let key =
                        keysInEntries
                        ? TableInfo.mapEntry(current.value).map { String(decoding: $0.key, as: UTF8.self) } ?? ""
                        : String(decoding: current.key.dropFirst(8), as: UTF8.self)
                    if !visit(key) { return }
                    entry = try cursor.next()
                }
            }
        } catch {
            fatalError("Trove: cannot read \(owner.name).\(owner.schema.properties[column].name) during a query: \(error)")
        }
    }

    /// The value under `key` in `owner`'s map; nil when absent.
    func mapValue(of ownerKey: UInt64, key: String, _ transaction: Transaction) -> StoredValue? {
        guard let map = self.owner.collections[column], let layout = self.owner.elementLayouts[column],
            transaction.canSee(map)
        else { return nil }
        let bytes = Database.storedEntryKey(Array(key.utf8), owner: ownerKey, column: column, table: self.owner)
        do {
            return try bytes.withUnsafeBytes { k in
                try transaction.withValue(in: map, key: k) {
                    $0.map { RecordReader(self.owner.elementRecord($0, column: column), layout: layout).value(at: 0) }
                }
            }
        } catch {
            fatalError("Trove: cannot read \(owner.name).\(owner.schema.properties[column].name) during a query: \(error)")
        }
    }
}
