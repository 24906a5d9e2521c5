import Foundation
import Testing
import TroveStorage

@testable import Trove

// Query conformance: a fixed dataset, a table of predicates each with its
// answer computed in plain Swift from the same source values, the same
// predicates on unindexed twins, malformed predicates with their error
// positions, and a seeded random differential test.
//
// The expected answers follow the semantics of Realm's query language, in Swift terms:
// - `==` and `!=` compare like Swift optionals: nil equals only nil, so
//   `optCode != 3` holds for a nil `optCode`; `<`, `<=`, `>`, `>=`, BETWEEN
//   and the string operators are false when the value is nil.
// - Strings compare by Unicode scalars without modifiers; `[c]` compares the
//   lowercased strings, `[d]` drops the combining marks of the canonical
//   decomposition, for all of Unicode. LIKE's `?` is one character, `*` any run.
// - A key path through a nil link (`owner.name == 'x'`) is false, whatever
//   the operator; `NOT` of it is true.
// - Lists: no quantifier means ANY; ALL and NONE hold for an empty list.
//   `@count` and `@sum` of an empty list are 0; `@min`, `@max` and `@avg`
//   are nil (nil values are skipped).

// MARK: - Source data

/// One owner of the fixture, as plain values.
struct SourceOwner {
    let id: Int
    let name: String
    let optAge: Int?
    let city: String
}

/// One part of the fixture, as plain values.
struct SourcePart {
    let id: Int
    let label: String
    let weight: Int
    let optWeight: Int?
    let price: Double
}

/// One ``ConformanceItem`` as plain values: the database is built from
/// these, and every expected answer is computed from these.
struct SourceRow {
    let id: Int
    let code: Int
    let optCode: Int?
    let int8: Int8
    let int16: Int16
    let int32: Int32
    let int64: Int64
    let optInt8: Int8?
    let optInt64: Int64?
    let double: Double
    let optDouble: Double?
    let float: Float
    let optFloat: Float?
    let bool: Bool
    let optBool: Bool?
    let name: String
    let optName: String?
    let date: Date
    let optDate: Date?
    let uuid: UUID
    let optUUID: UUID?
    let data: Data
    let optData: Data?
    let decimal: Decimal
    let optDecimal: Decimal?
    let mood: Mood
    let optMood: Mood?
    let priority: Priority
    let owner: SourceOwner?
    let parts: [SourcePart]
    let tags: [String]
    let numbers: [Int]
    let ratings: [Int?]
}

/// The seeded generator, with the picks the conformance runs make.
typealias SplitMix64 = SeededGenerator

extension SeededGenerator {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}

enum Fixture {
    static let base = Date(timeIntervalSince1970: 1_700_000_000)
    static let longA = String(repeating: "x", count: 600) + "a"
    static let longB = String(repeating: "x", count: 600) + "b"

    static let names: [String] = [
        "apple", "Apple", "APPLE", "banana", "Banana split", "cherry", "café", "Café", "CAFÉ", "cafe", "naïve", "Naive",
        "Ålesund", "alesund", "Straße", "Zoë", "zoe", "Élan", "élan", "résumé", "RESUME", "서울", "서귀포", "부산", "Αθήνα",
        "ΑΘΗΝΑ", "αθηνα", "Ñandú", "O'Brien", "a*b?c", "x", "", longA, longB,
    ]
    static let tags = ["red", "Red", "RED", "blue", "grün", "GRÜN", "grun", "été", "ete", "한국", "σοφία", "sale", "Sale", "new"]
    static let ownerNames = [
        "Ana", "ana", "Bo", "Björk", "bjork", "Chloé", "Dmitri", "Éric", "eric", "서연", "민준", "Ηρώ", "Zoë", "O'Neil", "Zed",
        "Åsa", "asa", "Łukasz", "Ngozi", "Ana María",
    ]
    static let cities = ["Oslo", "Seoul", "Lima", "Zürich", "São Paulo", "zurich"]
    static let labels = ["bolt", "Bolt", "nut", "washer", "gear", "écrou", "ECROU", "볼트", "λ-gear", "spring"]
    static let uuids: [UUID] = [
        "00000000-0000-4000-8000-000000000001", "11111111-1111-4111-8111-111111111111", "7F000000-0000-4000-8000-00000000007F",
        "80000000-0000-4000-8000-000000000080", "A1B2C3D4-E5F6-4A5B-8C7D-9E8F7A6B5C4D", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
    ].map { UUID(uuidString: $0)! }
    static let longData1 = Data(repeating: 7, count: 600) + Data([1])
    static let longData2 = Data(repeating: 7, count: 600) + Data([2])
    static let datas: [Data] = [
        Data(), Data([0]), Data([0, 1]), Data([1, 2, 3]), Data([255]), Data([0, 255, 1]), Data([1, 2]), Data([2, 1, 2]),
        longData1, longData2,
    ]
    static let decimals: [Decimal] = ["0", "0.1", "0.3", "0.30", "-2.5", "1.10", "100", "-0.001", "12345678901234567890.5"].map {
        Decimal(string: $0)!
    }
    static let specialDoubles: [Double] = [0, -0.0, .nan, .infinity, -.infinity, 1e10, -1e-10, 0.5, 1, -1.25]
    static let moods: [Mood] = [.happy, .calm, .sad]
    static let priorities: [Priority] = [.low, .normal, .high]

    static let owners: [SourceOwner] = ownerNames.enumerated().map { index, name in
        SourceOwner(
            id: index + 1, name: name, optAge: index % 4 == 3 ? nil : 18 + (index * 7) % 50, city: cities[index % cities.count])
    }

    static let parts: [SourcePart] = (0..<30).map { index in
        SourcePart(
            id: index + 1, label: labels[index % labels.count], weight: index % 7, optWeight: index % 4 == 0 ? nil : index % 5,
            price: Double(index) * 0.5 - 3)
    }

    static let rows: [SourceRow] = makeRows()

    private static func makeRows() -> [SourceRow] {
        var rng = SplitMix64(seed: 0x5EED_C0DE)
        var rows: [SourceRow] = []
        for index in 0..<300 {
            let code: Int
            switch index {
            case 0: code = Int.max
            case 1: code = Int.min
            case 2: code = Int.max - 1
            default: code = rng.int(-50...50)
            }
            let int8: Int8 = index % 50 == 5 ? -128 : (index % 50 == 6 ? 127 : Int8(truncatingIfNeeded: rng.next()))
            let int64: Int64 = index % 40 == 7 ? Int64.max : Int64(rng.int(-5_000_000_000...5_000_000_000))
            let double = index < specialDoubles.count ? specialDoubles[index] : Double(rng.int(-20...20)) * 0.25
            var parts: [SourcePart] = []
            for _ in 0..<rng.int(0...4) { parts.append(rng.pick(Fixture.parts)) }
            var tags: [String] = []
            for _ in 0..<rng.int(0...3) { tags.append(rng.pick(Fixture.tags)) }
            var numbers: [Int] = []
            for _ in 0..<rng.int(0...4) { numbers.append(rng.int(-5...5)) }
            var ratings: [Int?] = []
            for _ in 0..<rng.int(0...3) { ratings.append(rng.chance(25) ? nil : rng.int(1...5)) }
            rows.append(
                SourceRow(
                    id: index + 1,
                    code: code,
                    optCode: index % 7 == 3 ? nil : rng.int(-20...20),
                    int8: int8,
                    int16: Int16(rng.int(-300...300)),
                    int32: Int32(rng.int(-2_000_000...2_000_000)),
                    int64: int64,
                    optInt8: index % 5 == 1 ? nil : Int8(rng.int(-10...10)),
                    optInt64: index % 6 == 2 ? nil : Int64(rng.int(-2_000_000_000...2_000_000_000)),
                    double: double,
                    optDouble: index % 6 == 0 ? nil : Double(rng.int(-8...8)) * 0.5,
                    float: Float(rng.int(-8...8)) * 0.5,
                    optFloat: index % 4 == 0 ? nil : Float(rng.int(-4...4)) * 0.25,
                    bool: rng.chance(50),
                    optBool: index % 3 == 0 ? nil : rng.chance(50),
                    name: index < names.count ? names[index] : rng.pick(names),
                    optName: index % 5 == 2 ? nil : rng.pick(names),
                    date: base.addingTimeInterval(Double(rng.int(0...47)) * 3600),
                    optDate: index % 8 == 1 ? nil : base.addingTimeInterval(Double(rng.int(0...9)) * 86_400),
                    uuid: rng.pick(uuids),
                    optUUID: index % 4 == 1 ? nil : rng.pick(uuids),
                    data: index < datas.count ? datas[index] : rng.pick(datas),
                    optData: index % 5 == 3 ? nil : rng.pick(datas),
                    decimal: index < decimals.count ? decimals[index] : rng.pick(decimals),
                    optDecimal: index % 6 == 4 ? nil : rng.pick(decimals),
                    mood: rng.pick(moods),
                    optMood: index % 5 == 0 ? nil : rng.pick(moods),
                    priority: rng.pick(priorities),
                    owner: index % 9 == 4 ? nil : rng.pick(owners),
                    parts: parts,
                    tags: tags,
                    numbers: numbers,
                    ratings: ratings))
        }
        return rows
    }

    /// A database holding exactly ``rows``, ``owners`` and ``parts``.
    static func database(_ name: String = #function) throws -> Database {
        let db = try makeDatabase(name)
        try db.write {
            var ownerObjects: [Int: ConformanceOwner] = [:]
            for source in owners {
                let owner = ConformanceOwner()
                owner.id = source.id
                owner.name = source.name
                owner.optAge = source.optAge
                owner.city = source.city
                try db.add(owner)
                ownerObjects[source.id] = owner
            }
            var partObjects: [Int: ConformancePart] = [:]
            for source in parts {
                let part = ConformancePart()
                part.id = source.id
                part.label = source.label
                part.weight = source.weight
                part.optWeight = source.optWeight
                part.price = source.price
                try db.add(part)
                partObjects[source.id] = part
            }
            for row in rows {
                let item = ConformanceItem()
                item.id = row.id
                item.code = row.code
                item.codeCopy = row.code
                item.optCode = row.optCode
                item.optCodeCopy = row.optCode
                item.int16 = row.int16
                item.int16Copy = row.int16
                item.int8 = row.int8
                item.int32 = row.int32
                item.int64 = row.int64
                item.optInt8 = row.optInt8
                item.optInt64 = row.optInt64
                item.double = row.double
                item.doubleCopy = row.double
                item.optDouble = row.optDouble
                item.float = row.float
                item.optFloat = row.optFloat
                item.bool = row.bool
                item.boolCopy = row.bool
                item.optBool = row.optBool
                item.name = row.name
                item.nameCopy = row.name
                item.optName = row.optName
                item.optNameCopy = row.optName
                item.date = row.date
                item.dateCopy = row.date
                item.optDate = row.optDate
                item.uuid = row.uuid
                item.uuidCopy = row.uuid
                item.optUUID = row.optUUID
                item.data = row.data
                item.dataCopy = row.data
                item.optData = row.optData
                item.decimal = row.decimal
                item.optDecimal = row.optDecimal
                item.mood = row.mood
                item.optMood = row.optMood
                item.priority = row.priority
                item.owner = row.owner.map { ownerObjects[$0.id]! }
                item.parts.append(contentsOf: row.parts.map { partObjects[$0.id]! })
                item.tags.append(contentsOf: row.tags)
                item.numbers.append(contentsOf: row.numbers)
                item.ratings.append(contentsOf: row.ratings)
                try db.add(item)
            }
        }
        return db
    }

    /// Indexed properties and their unindexed twins.
    static let twins = [
        "code": "codeCopy", "optCode": "optCodeCopy", "int16": "int16Copy", "double": "doubleCopy", "bool": "boolCopy",
        "name": "nameCopy", "optName": "optNameCopy", "date": "dateCopy", "uuid": "uuidCopy", "data": "dataCopy",
    ]

    /// `format` with every indexed property (a whole key path, outside string
    /// literals) replaced by its unindexed twin; nil when it names none.
    static func unindexed(_ format: String) -> String? {
        let characters = Array(format)
        var result = ""
        var replaced = false
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "'" || character == "\"" {
                result.append(character)
                index += 1
                while index < characters.count {
                    let inner = characters[index]
                    result.append(inner)
                    index += 1
                    if inner == "\\", index < characters.count {
                        result.append(characters[index])
                        index += 1
                    } else if inner == character {
                        break
                    }
                }
                continue
            }
            if character.isLetter || character == "_" {
                var end = index
                while end < characters.count,
                    characters[end].isLetter || characters[end].isNumber || "_.@".contains(characters[end])
                {
                    end += 1
                }
                let word = String(characters[index..<end])
                let previous = index > 0 ? characters[index - 1] : " "
                if previous != "%", let twin = twins[word] {
                    result += twin
                    replaced = true
                } else {
                    result += word
                }
                index = end
                continue
            }
            result.append(character)
            index += 1
        }
        return replaced ? result : nil
    }
}

// MARK: - Expected semantics, in plain Swift

enum Oracle {
    enum Op { case eq, ne, lt, le, gt, ge }
    enum TextOp { case beginsWith, endsWith, contains, like, matches }

    /// `==`/`!=` as Swift optionals compare; the orderings are false with a nil.
    static func cmp<T: Comparable>(_ a: T?, _ op: Op, _ b: T?) -> Bool {
        switch op {
        case .eq: return a == b
        case .ne: return a != b
        default:
            guard let a, let b else { return false }
            switch op {
            case .lt: return a < b
            case .le: return a <= b
            case .gt: return a > b
            default: return a >= b
            }
        }
    }

    static func between<T: Comparable>(_ a: T?, _ low: T, _ high: T) -> Bool { cmp(a, .ge, low) && cmp(a, .le, high) }

    static func opposite(_ op: Op) -> Op {
        switch op {
        case .lt: return .gt
        case .le: return .ge
        case .gt: return .lt
        case .ge: return .le
        default: return op
        }
    }

    /// Lowercasing for `[c]`; the canonical decomposition without its nonspacing marks for `[d]`.
    static func fold(_ text: String, _ modifiers: String) -> String {
        var folded = text
        if modifiers.contains("d") {
            let kept = folded.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
                $0.properties.generalCategory != .nonspacingMark
            }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: kept)
            folded = String(scalars).precomposedStringWithCanonicalMapping
        }
        if modifiers.contains("c") { folded = folded.lowercased() }
        return folded
    }

    /// String equality (scalar by scalar without modifiers, else on the folded
    /// characters) and ordering by Unicode scalar values.
    static func text(_ a: String?, _ op: Op, _ b: String?, _ modifiers: String = "") -> Bool {
        switch op {
        case .eq, .ne:
            let equal: Bool
            if let a, let b {
                equal =
                    modifiers.isEmpty
                    ? a.unicodeScalars.elementsEqual(b.unicodeScalars) : Array(fold(a, modifiers)) == Array(fold(b, modifiers))
            } else {
                equal = a == nil && b == nil
            }
            return op == .eq ? equal : !equal
        default:
            guard let a, let b else { return false }
            let less = a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
            let same = a.unicodeScalars.elementsEqual(b.unicodeScalars)
            switch op {
            case .lt: return less
            case .le: return less || same
            case .gt: return !less && !same
            default: return !less
            }
        }
    }

    static func textIn(_ a: String?, _ list: [String?], _ modifiers: String = "") -> Bool {
        list.contains { text(a, .eq, $0, modifiers) }
    }

    /// The string operators, on characters of the folded strings.
    static func string(_ value: String?, _ op: TextOp, _ pattern: String, _ modifiers: String = "") -> Bool {
        guard let value else { return false }
        if op == .matches { return matches(value, pattern, modifiers) }
        let v = Array(fold(value, modifiers))
        let p = Array(fold(pattern, modifiers))
        switch op {
        case .beginsWith: return v.starts(with: p)
        case .endsWith: return v.reversed().starts(with: p.reversed())
        case .contains: return contains(v, p)
        default: return like(v, p)
        }
    }

    static func contains<E: Equatable>(_ value: [E], _ pattern: [E]) -> Bool {
        if pattern.isEmpty { return true }
        guard value.count >= pattern.count else { return false }
        for start in 0...(value.count - pattern.count) where Array(value[start..<(start + pattern.count)]) == pattern {
            return true
        }
        return false
    }

    /// LIKE by dynamic programming: `?` is one character, `*` any run.
    static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        func closeOverStars(_ states: inout [Bool]) {
            for index in 0..<pattern.count where states[index] && pattern[index] == "*" { states[index + 1] = true }
        }
        var states = [Bool](repeating: false, count: pattern.count + 1)
        states[0] = true
        closeOverStars(&states)
        for character in text {
            var next = [Bool](repeating: false, count: pattern.count + 1)
            for index in 0..<pattern.count where states[index] {
                if pattern[index] == "*" {
                    next[index] = true
                } else if pattern[index] == "?" || pattern[index] == character {
                    next[index + 1] = true
                }
            }
            closeOverStars(&next)
            states = next
        }
        return states[pattern.count]
    }

    /// MATCHES with Swift's own regular expressions, anchored at both ends.
    static func matches(_ value: String, _ pattern: String, _ modifiers: String) -> Bool {
        let folding = modifiers.contains("d") ? "d" : ""
        guard var regex = try? Regex(fold(pattern, folding)) else { return false }
        if modifiers.contains("c") { regex = regex.ignoresCase() }
        return fold(value, folding).wholeMatch(of: regex) != nil
    }

    static func bytes(_ value: Data?, _ op: TextOp, _ pattern: Data) -> Bool {
        guard let value else { return false }
        let v = [UInt8](value)
        let p = [UInt8](pattern)
        switch op {
        case .beginsWith: return v.starts(with: p)
        case .endsWith: return v.reversed().starts(with: p.reversed())
        default: return contains(v, p)
        }
    }

    /// UUIDs order by their 16 bytes.
    static func uuidLess(_ a: UUID, _ b: UUID) -> Bool {
        withUnsafeBytes(of: a.uuid) { x in withUnsafeBytes(of: b.uuid) { y in x.lexicographicallyPrecedes(y) } }
    }

    static func weightSum(_ row: SourceRow) -> Int { row.parts.reduce(0) { $0 + $1.weight } }

    static func average(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    static func minLabel(_ row: SourceRow) -> String? {
        row.parts.map(\.label).min { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }

    static func maxLabel(_ row: SourceRow) -> String? {
        row.parts.map(\.label).max { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }
}

extension SourceRow {
    /// A test through the to-one link: false when the link is nil.
    func owner(_ test: (SourceOwner) -> Bool) -> Bool { owner.map(test) ?? false }
}

// MARK: - Known Trove bugs

// MARK: - The table

/// One predicate, its arguments and its answer in Swift.
struct PredicateCase {
    let format: String
    let arguments: [Any?]
    let expected: (SourceRow) -> Bool
    let sourceLocation: SourceLocation
}

struct CaseTable {
    var cases: [PredicateCase] = []

    mutating func add(
        _ format: String, _ arguments: Any?...,
        sourceLocation: SourceLocation = #_sourceLocation, _ expected: @escaping (SourceRow) -> Bool
    ) {
        cases.append(
            PredicateCase(
                format: format, arguments: arguments, expected: expected,
                sourceLocation: sourceLocation))
    }
}

extension CaseTable {
    static func all() -> CaseTable {
        var t = CaseTable()
        let F = Fixture.self
        typealias O = Oracle

        // Int, with the indexed `code` (twin: codeCopy).
        t.add("code == 7") { $0.code == 7 }
        t.add("code = -7") { $0.code == -7 }
        t.add("code != 7") { $0.code != 7 }
        t.add("code <> 7") { $0.code != 7 }
        t.add("code < -30") { $0.code < -30 }
        t.add("code <= -30") { $0.code <= -30 }
        t.add("code > 40") { $0.code > 40 }
        t.add("code >= 40") { $0.code >= 40 }
        t.add("code =< 0") { $0.code <= 0 }
        t.add("code => 0") { $0.code >= 0 }
        t.add("code BETWEEN {-5, 5}") { (-5...5).contains($0.code) }
        t.add("code BETWEEN {5, -5}") { _ in false }
        t.add("code IN {1, 2, 3, 99}") { [1, 2, 3, 99].contains($0.code) }
        t.add("code IN %@", [4, -4, 44]) { [4, -4, 44].contains($0.code) }
        t.add("code IN %@", [Int]()) { _ in false }
        t.add("code == 2.5") { _ in false }
        t.add("code < 2.5") { $0.code <= 2 }
        t.add("code >= 2.5") { $0.code >= 3 }
        t.add("code == 3.0") { $0.code == 3 }
        t.add("code IN {2.5, 3.0}") { $0.code == 3 }
        t.add("code > 9223372036854775806") { $0.code == Int.max }
        t.add("code >= 9223372036854775806") { $0.code >= Int.max - 1 }
        t.add("code == -9223372036854775808") { $0.code == Int.min }
        t.add("code == %@", Int8(7)) { $0.code == 7 }
        t.add("code == %@", Int64(-7)) { $0.code == -7 }
        t.add("7 == code") { $0.code == 7 }
        t.add("40 < code") { $0.code > 40 }
        t.add("-3 >= code") { $0.code <= -3 }
        t.add("code == $0", 12) { $0.code == 12 }
        t.add("code > $0 AND code < $1", -3, 3) { $0.code > -3 && $0.code < 3 }
        t.add("code == $0 OR int16 == $0", 12) { $0.code == 12 || $0.int16 == 12 }
        t.add("%K == %@", "code", 7) { $0.code == 7 }
        t.add("%K BETWEEN %@", "code", [10, 20]) { (10...20).contains($0.code) }
        t.add("code == %@", nil as Int?) { _ in false }
        t.add("code != nil") { _ in true }

        // The integer primary key, answered from the objects table itself.
        t.add("id == 5") { $0.id == 5 }
        t.add("id != 150") { $0.id != 150 }
        t.add("id > 290") { $0.id > 290 }
        t.add("id >= 299") { $0.id >= 299 }
        t.add("id < 3") { $0.id < 3 }
        t.add("id <= 0") { _ in false }
        t.add("id BETWEEN {100, 110}") { (100...110).contains($0.id) }
        t.add("id BETWEEN {110, 100}") { _ in false }
        t.add("id IN {1, 300, 301, -1, 1}") { $0.id == 1 || $0.id == 300 }
        t.add("id == 2.5") { _ in false }
        t.add("id > 2.5") { $0.id > 2 }
        t.add("id IN {2.5, 3}") { $0.id == 3 }
        t.add("id > 9223372036854775807") { _ in false }
        t.add("id < -9223372036854775808") { _ in false }
        t.add("id >= -5") { _ in true }
        t.add("id > 100 AND id < 103") { $0.id == 101 || $0.id == 102 }
        t.add("code IN {7, 7, 8}") { $0.code == 7 || $0.code == 8 }

        // Int8, Int16 (indexed, twin int16Copy), Int32, Int64 and optionals.
        t.add("int8 == -128") { $0.int8 == -128 }
        t.add("int8 == 127") { $0.int8 == 127 }
        t.add("int8 < 0") { $0.int8 < 0 }
        t.add("int8 >= 100") { $0.int8 >= 100 }
        t.add("int8 == 128") { _ in false }
        t.add("int8 IN {-128, 127, 0}") { [-128, 127, 0].contains($0.int8) }
        t.add("int16 == %@", Int16(100)) { $0.int16 == 100 }
        t.add("int16 < -250") { $0.int16 < -250 }
        t.add("int16 BETWEEN {-10, 10}") { (-10...10).contains($0.int16) }
        t.add("int16 > 290") { $0.int16 > 290 }
        t.add("int16 IN %@", [Int16(0), Int16(1), Int16(-1)]) { [0, 1, -1].contains($0.int16) }
        t.add("int32 >= 1000000") { $0.int32 >= 1_000_000 }
        t.add("int32 BETWEEN {-50000, 50000}") { (-50_000...50_000).contains($0.int32) }
        t.add("int64 > 4000000000") { $0.int64 > 4_000_000_000 }
        t.add("int64 < -4000000000") { $0.int64 < -4_000_000_000 }
        t.add("int64 == 9223372036854775807") { $0.int64 == Int64.max }
        t.add("int64 == %@", Int64.max) { $0.int64 == Int64.max }
        t.add("optInt8 == nil") { $0.optInt8 == nil }
        t.add("optInt8 > 5") { O.cmp($0.optInt8, .gt, 5) }
        t.add("optInt8 != 0") { $0.optInt8 != 0 }
        t.add("optInt64 == nil") { $0.optInt64 == nil }
        t.add("optInt64 <= -1000000000") { O.cmp($0.optInt64, .le, -1_000_000_000) }

        // Optional Int, indexed (twin optCodeCopy).
        t.add("optCode == nil") { $0.optCode == nil }
        t.add("optCode = NULL") { $0.optCode == nil }
        t.add("optCode != nil") { $0.optCode != nil }
        t.add("optCode == %@", nil as Int?) { $0.optCode == nil }
        t.add("nil == optCode") { $0.optCode == nil }
        t.add("optCode == 3") { $0.optCode == 3 }
        t.add("optCode != 3") { $0.optCode != 3 }
        t.add("optCode > 0") { O.cmp($0.optCode, .gt, 0) }
        t.add("optCode <= -15") { O.cmp($0.optCode, .le, -15) }
        t.add("optCode BETWEEN {-2, 2}") { O.between($0.optCode, -2, 2) }
        t.add("optCode IN {1, nil}") { $0.optCode == 1 || $0.optCode == nil }
        t.add("optCode IN %@", [5, nil] as [Int?]) { $0.optCode == 5 || $0.optCode == nil }
        t.add("NOT optCode > 0") { !O.cmp($0.optCode, .gt, 0) }

        // Double, indexed (twin doubleCopy), with ±0, ±infinity and NaN in the data.
        t.add("double == 0") { $0.double == 0 }
        t.add("double == -0.0") { $0.double == 0 }
        t.add("double < 0") { $0.double < 0 }
        t.add("double <= 0") { $0.double <= 0 }
        t.add("double > 0") { $0.double > 0 }
        t.add("double >= 0.5") { $0.double >= 0.5 }
        t.add("double != 0.5") { $0.double != 0.5 }
        t.add("double BETWEEN {-1.25, 2.5}") { $0.double >= -1.25 && $0.double <= 2.5 }
        t.add("double == %@", Double.infinity) { $0.double == .infinity }
        t.add("double < %@", -Double.infinity) { _ in false }
        t.add("double <= %@", Double.infinity) { $0.double <= .infinity }
        t.add("double > 1e9") { $0.double > 1e9 }
        t.add("double > -1e-9 AND double < 1e-9") { $0.double > -1e-9 && $0.double < 1e-9 }
        t.add("double IN {0.5, 1.25, -2}") { [0.5, 1.25, -2].contains($0.double) }
        t.add("double == 1") { $0.double == 1 }
        t.add("optDouble == nil") { $0.optDouble == nil }
        t.add("optDouble > 1.0") { O.cmp($0.optDouble, .gt, 1) }
        t.add("optDouble != 1.5") { $0.optDouble != 1.5 }
        t.add("optDouble BETWEEN {-1, 1}") { O.between($0.optDouble, -1, 1) }

        // Float.
        t.add("float == 1.5") { $0.float == 1.5 }
        t.add("float < 0") { $0.float < 0 }
        t.add("float >= 2") { $0.float >= 2 }
        t.add("float BETWEEN {0.5, 1.5}") { $0.float >= 0.5 && $0.float <= 1.5 }
        t.add("float IN {0.5, -0.5}") { $0.float == 0.5 || $0.float == -0.5 }
        t.add("float == %@", Float(1.5)) { $0.float == 1.5 }
        t.add("optFloat == nil") { $0.optFloat == nil }
        t.add("optFloat < 0.5") { O.cmp($0.optFloat, .lt, 0.5) }
        t.add("optFloat != 0.25") { $0.optFloat != 0.25 }

        // Bool, indexed (twin boolCopy).
        t.add("bool == true") { $0.bool }
        t.add("bool == false") { !$0.bool }
        t.add("bool == YES") { $0.bool }
        t.add("bool = NO") { !$0.bool }
        t.add("bool != true") { !$0.bool }
        t.add("bool == 1") { $0.bool }
        t.add("bool == 0") { !$0.bool }
        t.add("bool == %@", true) { $0.bool }
        t.add("bool == TRUE") { $0.bool }
        t.add("optBool == nil") { $0.optBool == nil }
        t.add("optBool == true") { $0.optBool == true }
        t.add("optBool != true") { $0.optBool != true }
        t.add("optBool == false") { $0.optBool == false }

        // String equality and ordering, indexed (twin nameCopy).
        t.add("name == 'café'") { O.text($0.name, .eq, "café") }
        t.add("name == \"café\"") { O.text($0.name, .eq, "café") }
        t.add("name ==[c] 'CAFÉ'") { O.text($0.name, .eq, "CAFÉ", "c") }
        t.add("name ==[d] 'cafe'") { O.text($0.name, .eq, "cafe", "d") }
        t.add("name ==[cd] 'CAFE'") { O.text($0.name, .eq, "CAFE", "cd") }
        t.add("name != 'café'") { O.text($0.name, .ne, "café") }
        t.add("name !=[c] 'café'") { O.text($0.name, .ne, "café", "c") }
        t.add("name !=[cd] 'cafe'") { O.text($0.name, .ne, "cafe", "cd") }
        t.add("name !=[d] 'cafe'") { O.text($0.name, .ne, "cafe", "d") }
        t.add("name == '서울'") { O.text($0.name, .eq, "서울") }
        t.add("name ==[c] 'αθήνα'") { O.text($0.name, .eq, "αθήνα", "c") }
        t.add("name ==[cd] 'αθηνα'") { O.text($0.name, .eq, "αθηνα", "cd") }
        t.add("name ==[cd] 'nandu'") { O.text($0.name, .eq, "nandu", "cd") }
        t.add("name ==[c] 'straße'") { O.text($0.name, .eq, "straße", "c") }
        t.add("name ==[c] 'RÉSUMÉ'") { O.text($0.name, .eq, "RÉSUMÉ", "c") }
        t.add("name ==[cd] 'RESUME'") { O.text($0.name, .eq, "RESUME", "cd") }
        t.add("name == 'O\\'Brien'") { $0.name == "O'Brien" }
        t.add("name == \"O'Brien\"") { $0.name == "O'Brien" }
        t.add("name == %@", "O'Brien") { $0.name == "O'Brien" }
        t.add("name == ''") { $0.name.isEmpty }
        t.add("name < 'b'") { O.text($0.name, .lt, "b") }
        t.add("name >= 'z'") { O.text($0.name, .ge, "z") }
        t.add("name > 'Ω'") { O.text($0.name, .gt, "Ω") }
        t.add("name <= 'Apple'") { O.text($0.name, .le, "Apple") }
        t.add("name BETWEEN {'a', 'c'}") { O.text($0.name, .ge, "a") && O.text($0.name, .le, "c") }
        t.add("name IN {'café', '서울', 'nothing'}") { O.textIn($0.name, ["café", "서울", "nothing"]) }
        t.add("name IN[c] {'CAFÉ', 'ZOE'}") { O.textIn($0.name, ["CAFÉ", "ZOE"], "c") }
        t.add("name IN[cd] {'zoe'}") { O.textIn($0.name, ["zoe"], "cd") }
        t.add("name IN[d] {'zoe', 'elan'}") { O.textIn($0.name, ["zoe", "elan"], "d") }
        t.add("name IN %@", ["apple", "Αθήνα"]) { O.textIn($0.name, ["apple", "Αθήνα"]) }
        t.add("name == %@", F.longA) { $0.name == F.longA }
        t.add("name != %@", F.longA) { $0.name != F.longA }
        t.add("name > %@", F.longA) { O.text($0.name, .gt, F.longA) }
        t.add("name >= %@", F.longA) { O.text($0.name, .ge, F.longA) }
        t.add("name < %@", F.longB) { O.text($0.name, .lt, F.longB) }
        t.add("name BEGINSWITH %@", String(repeating: "x", count: 600)) { $0.name.hasPrefix(String(repeating: "x", count: 600)) }

        // BEGINSWITH, ENDSWITH, CONTAINS, LIKE and MATCHES with [c], [d], [cd].
        t.add("name BEGINSWITH 'ca'") { O.string($0.name, .beginsWith, "ca") }
        t.add("name BEGINSWITH[c] 'CA'") { O.string($0.name, .beginsWith, "CA", "c") }
        t.add("name BEGINSWITH[d] 'Ale'") { O.string($0.name, .beginsWith, "Ale", "d") }
        t.add("name BEGINSWITH[cd] 'ale'") { O.string($0.name, .beginsWith, "ale", "cd") }
        t.add("name BEGINSWITH '서'") { O.string($0.name, .beginsWith, "서") }
        t.add("name BEGINSWITH ''") { O.string($0.name, .beginsWith, "") }
        t.add("name BEGINSWITH 'Banana split and more'") { _ in false }
        t.add("name ENDSWITH 'und'") { O.string($0.name, .endsWith, "und") }
        t.add("name ENDSWITH[c] 'UND'") { O.string($0.name, .endsWith, "UND", "c") }
        t.add("name ENDSWITH[d] 'e'") { O.string($0.name, .endsWith, "e", "d") }
        t.add("name ENDSWITH[cd] 'E'") { O.string($0.name, .endsWith, "E", "cd") }
        t.add("name ENDSWITH 'α'") { O.string($0.name, .endsWith, "α") }
        t.add("name ENDSWITH 'ße'") { O.string($0.name, .endsWith, "ße") }
        t.add("name CONTAINS 'ß'") { O.string($0.name, .contains, "ß") }
        t.add("name CONTAINS 'ï'") { O.string($0.name, .contains, "ï") }
        t.add("name CONTAINS[d] 'i'") { O.string($0.name, .contains, "i", "d") }
        t.add("name CONTAINS[c] 'AN'") { O.string($0.name, .contains, "AN", "c") }
        t.add("name CONTAINS[cd] 'E'") { O.string($0.name, .contains, "E", "cd") }
        t.add("name CONTAINS[c] 'θή'") { O.string($0.name, .contains, "θή", "c") }
        t.add("name CONTAINS[cd] 'ΘΗ'") { O.string($0.name, .contains, "ΘΗ", "cd") }
        t.add("name CONTAINS '*'") { O.string($0.name, .contains, "*") }
        t.add("name CONTAINS '귀'") { O.string($0.name, .contains, "귀") }
        t.add("name CONTAINS 'xxxxxxxxxxb'") { O.string($0.name, .contains, "xxxxxxxxxxb") }
        t.add("name CONTAINS ''") { O.string($0.name, .contains, "") }
        t.add("name LIKE 'caf?'") { O.string($0.name, .like, "caf?") }
        t.add("name LIKE '*und'") { O.string($0.name, .like, "*und") }
        t.add("name LIKE 'a*'") { O.string($0.name, .like, "a*") }
        t.add("name LIKE[c] 'A*'") { O.string($0.name, .like, "A*", "c") }
        t.add("name LIKE[d] 'cafe'") { O.string($0.name, .like, "cafe", "d") }
        t.add("name LIKE[cd] 'CAF?'") { O.string($0.name, .like, "CAF?", "cd") }
        t.add("name LIKE '?????'") { O.string($0.name, .like, "?????") }
        t.add("name LIKE '*'") { O.string($0.name, .like, "*") }
        t.add("name LIKE ''") { O.string($0.name, .like, "") }
        t.add("name LIKE '?'") { O.string($0.name, .like, "?") }
        t.add("name LIKE '서?'") { O.string($0.name, .like, "서?") }
        t.add("name LIKE[d] '서?'") { O.string($0.name, .like, "서?", "d") }
        t.add("name LIKE[c] 'stra?e'") { O.string($0.name, .like, "stra?e", "c") }
        t.add("name LIKE 'a*b?c'") { O.string($0.name, .like, "a*b?c") }
        t.add("name LIKE '*a*a*'") { O.string($0.name, .like, "*a*a*") }
        t.add("name LIKE[c] '*X?'") { O.string($0.name, .like, "*X?", "c") }
        t.add("name MATCHES 'ca.*'") { O.string($0.name, .matches, "ca.*") }
        t.add("name MATCHES '[a-c].*'") { O.string($0.name, .matches, "[a-c].*") }
        t.add("name MATCHES[c] 'CAF.'") { O.string($0.name, .matches, "CAF.", "c") }
        t.add("name MATCHES '.{5}'") { O.string($0.name, .matches, ".{5}") }
        t.add("name MATCHES '서.*'") { O.string($0.name, .matches, "서.*") }
        t.add("name MATCHES 'x+[ab]'") { O.string($0.name, .matches, "x+[ab]") }
        t.add("name MATCHES %@", #"a\*b\?c"#) { O.string($0.name, .matches, #"a\*b\?c"#) }
        t.add("name MATCHES[d] 'cafe'") { O.string($0.name, .matches, "cafe", "d") }
        t.add("name MATCHES[cd] 'ALESUND'") { O.string($0.name, .matches, "ALESUND", "cd") }

        // Optional String, indexed (twin optNameCopy).
        t.add("optName == nil") { $0.optName == nil }
        t.add("optName != nil") { $0.optName != nil }
        t.add("optName == 'café'") { O.text($0.optName, .eq, "café") }
        t.add("optName != 'café'") { O.text($0.optName, .ne, "café") }
        t.add("optName ==[cd] 'CAFE'") { O.text($0.optName, .eq, "CAFE", "cd") }
        t.add("optName BEGINSWITH 'c'") { O.string($0.optName, .beginsWith, "c") }
        t.add("NOT optName BEGINSWITH 'c'") { !O.string($0.optName, .beginsWith, "c") }
        t.add("optName CONTAINS[c] 'a'") { O.string($0.optName, .contains, "a", "c") }
        t.add("optName ENDSWITH[d] 'e'") { O.string($0.optName, .endsWith, "e", "d") }
        t.add("optName LIKE '*e'") { O.string($0.optName, .like, "*e") }
        t.add("optName IN {'café', nil}") { O.textIn($0.optName, ["café", nil]) }
        t.add("optName < 'b'") { O.text($0.optName, .lt, "b") }
        t.add("optName == ''") { $0.optName == "" }
        t.add("optName != ''") { $0.optName != "" }

        // Comparisons between two properties.
        t.add("name == nameCopy") { _ in true }
        t.add("code == codeCopy") { _ in true }
        t.add("optName == optNameCopy") { _ in true }
        t.add("optCode < code") { O.cmp($0.optCode, .lt, $0.code) }
        t.add("name ==[c] optName") { O.text($0.name, .eq, $0.optName, "c") }
        t.add("int16 > code") { Int($0.int16) > $0.code }

        // Date, indexed (twin dateCopy).
        let hour = { (hours: Double) in F.base.addingTimeInterval(hours * 3600) }
        t.add("date == %@", hour(5)) { $0.date == hour(5) }
        t.add("date != %@", hour(5)) { $0.date != hour(5) }
        t.add("date > %@", hour(40)) { $0.date > hour(40) }
        t.add("date <= %@", hour(3)) { $0.date <= hour(3) }
        t.add("date BETWEEN %@", [hour(10), hour(12)]) { $0.date >= hour(10) && $0.date <= hour(12) }
        t.add("date BETWEEN {%@, %@}", hour(20), hour(20.5)) { $0.date >= hour(20) && $0.date <= hour(20.5) }
        t.add("date IN %@", [hour(1), hour(2)]) { [hour(1), hour(2)].contains($0.date) }
        t.add("optDate == nil") { $0.optDate == nil }
        t.add("optDate < %@", hour(48)) { O.cmp($0.optDate, .lt, hour(48)) }
        t.add("optDate != %@", F.base) { $0.optDate != F.base }

        // UUID, indexed (twin uuidCopy).
        t.add("uuid == %@", F.uuids[2]) { $0.uuid == F.uuids[2] }
        t.add("uuid != %@", F.uuids[2]) { $0.uuid != F.uuids[2] }
        t.add("uuid == '\(F.uuids[3].uuidString)'") { $0.uuid == F.uuids[3] }
        t.add("uuid == '\(F.uuids[4].uuidString.lowercased())'") { $0.uuid == F.uuids[4] }
        t.add("uuid IN %@", [F.uuids[0], F.uuids[1]]) { $0.uuid == F.uuids[0] || $0.uuid == F.uuids[1] }
        t.add("uuid > %@", F.uuids[2]) { O.uuidLess(F.uuids[2], $0.uuid) }
        t.add("optUUID == nil") { $0.optUUID == nil }
        t.add("optUUID == %@", F.uuids[4]) { $0.optUUID == F.uuids[4] }
        t.add("optUUID != %@", F.uuids[4]) { $0.optUUID != F.uuids[4] }

        // Data, indexed (twin dataCopy).
        t.add("data == %@", Data([1, 2, 3])) { $0.data == Data([1, 2, 3]) }
        t.add("data != %@", Data([1, 2, 3])) { $0.data != Data([1, 2, 3]) }
        t.add("data == %@", Data()) { $0.data.isEmpty }
        t.add("data == %@", F.longData1) { $0.data == F.longData1 }
        t.add("data BEGINSWITH %@", Data([0])) { O.bytes($0.data, .beginsWith, Data([0])) }
        t.add("data BEGINSWITH %@", Data(repeating: 7, count: 600)) {
            O.bytes($0.data, .beginsWith, Data(repeating: 7, count: 600))
        }
        t.add("data ENDSWITH %@", Data([1])) { O.bytes($0.data, .endsWith, Data([1])) }
        t.add("data CONTAINS %@", Data([255])) { O.bytes($0.data, .contains, Data([255])) }
        t.add("data CONTAINS %@", Data([2, 1])) { O.bytes($0.data, .contains, Data([2, 1])) }
        t.add("data CONTAINS %@", Data()) { O.bytes($0.data, .contains, Data()) }
        t.add("optData == nil") { $0.optData == nil }
        t.add("optData BEGINSWITH %@", Data([1])) { O.bytes($0.optData, .beginsWith, Data([1])) }
        t.add("optData != %@", Data([0])) { $0.optData != Data([0]) }

        // Decimal.
        let decimal = { (text: String) in Decimal(string: text)! }
        t.add("decimal == %@", decimal("0.3")) { $0.decimal == decimal("0.3") }
        t.add("decimal == 0.3") { $0.decimal == decimal("0.3") }
        t.add("decimal > 1") { $0.decimal > 1 }
        t.add("decimal < %@", Decimal(-1)) { $0.decimal < -1 }
        t.add("decimal BETWEEN {0, 1}") { $0.decimal >= 0 && $0.decimal <= 1 }
        t.add("decimal != 0") { $0.decimal != 0 }
        t.add("decimal IN {0.1, 100}") { $0.decimal == decimal("0.1") || $0.decimal == 100 }
        t.add("decimal > %@", decimal("12345678901234567890.4")) { $0.decimal > decimal("12345678901234567890.4") }
        t.add("decimal > 12345678901234567890.4") { $0.decimal > decimal("12345678901234567890.4") }
        t.add("optDecimal == nil") { $0.optDecimal == nil }
        t.add("optDecimal >= 0") { O.cmp($0.optDecimal, .ge, 0) }
        t.add("optDecimal != 0.1") { $0.optDecimal != decimal("0.1") }

        // Enums: a String one and an Int one.
        t.add("mood == %@", Mood.sad) { $0.mood == .sad }
        t.add("mood == 'calm'") { $0.mood == .calm }
        t.add("mood != %@", Mood.happy) { $0.mood != .happy }
        t.add("mood IN %@", [Mood.happy, Mood.calm]) { $0.mood != .sad }
        t.add("mood IN {'sad'}") { $0.mood == .sad }
        t.add("optMood == nil") { $0.optMood == nil }
        t.add("optMood == %@", Mood.sad) { $0.optMood == .sad }
        t.add("optMood != %@", Mood.sad) { $0.optMood != .sad }
        t.add("priority == %@", Priority.high) { $0.priority == .high }
        t.add("priority > 1") { $0.priority.rawValue > 1 }
        t.add("priority IN {1, 9}") { $0.priority != .normal }
        t.add("priority BETWEEN {2, 9}") { $0.priority != .low }

        // Through the to-one link.
        t.add("owner == nil") { $0.owner == nil }
        t.add("owner != nil") { $0.owner != nil }
        t.add("owner.name == 'Ana'") { $0.owner { $0.name == "Ana" } }
        t.add("owner.name != 'Ana'") { $0.owner { $0.name != "Ana" } }
        t.add("NOT owner.name == 'Ana'") { !$0.owner { $0.name == "Ana" } }
        t.add("owner.name ==[c] 'ana'") { $0.owner { O.text($0.name, .eq, "ana", "c") } }
        t.add("owner.name BEGINSWITH[cd] 'e'") { $0.owner { O.string($0.name, .beginsWith, "e", "cd") } }
        t.add("owner.name == %@", "서연") { $0.owner { $0.name == "서연" } }
        t.add("owner.name LIKE 'B*'") { $0.owner { O.string($0.name, .like, "B*") } }
        t.add("owner.name CONTAINS[d] 'o'") { $0.owner { O.string($0.name, .contains, "o", "d") } }
        t.add("owner.name == nil") { $0.owner { _ in false } }
        t.add("owner.optAge > 40") { $0.owner { O.cmp($0.optAge, .gt, 40) } }
        t.add("owner.optAge == nil") { $0.owner { $0.optAge == nil } }
        t.add("owner.optAge != nil") { $0.owner { $0.optAge != nil } }
        t.add("owner.optAge BETWEEN {20, 30}") { $0.owner { O.between($0.optAge, 20, 30) } }
        t.add("owner.city IN {'Oslo', 'Zürich'}") { $0.owner { ["Oslo", "Zürich"].contains($0.city) } }
        t.add("owner.city ==[cd] 'ZURICH'") { $0.owner { O.text($0.city, .eq, "ZURICH", "cd") } }
        t.add("owner.id == 3") { $0.owner { $0.id == 3 } }
        t.add("%K == %@", "owner.name", "Bo") { $0.owner { $0.name == "Bo" } }

        // Through a list of objects: ANY, SOME, ALL, NONE and the implicit ANY.
        t.add("ANY parts.label == 'bolt'") { $0.parts.contains { $0.label == "bolt" } }
        t.add("SOME parts.weight > 5") { $0.parts.contains { $0.weight > 5 } }
        t.add("parts.weight > 5") { $0.parts.contains { $0.weight > 5 } }
        t.add("ALL parts.weight > 2") { $0.parts.allSatisfy { $0.weight > 2 } }
        t.add("ALL parts.weight >= 0") { _ in true }
        t.add("NONE parts.label BEGINSWITH 'b'") { !$0.parts.contains { O.string($0.label, .beginsWith, "b") } }
        t.add("NONE parts.weight == 0") { !$0.parts.contains { $0.weight == 0 } }
        t.add("ANY parts.optWeight == nil") { $0.parts.contains { $0.optWeight == nil } }
        t.add("ALL parts.optWeight != nil") { $0.parts.allSatisfy { $0.optWeight != nil } }
        t.add("ANY parts.price BETWEEN {0, 1}") { $0.parts.contains { $0.price >= 0 && $0.price <= 1 } }
        t.add("ANY parts.label IN {'nut', 'gear'}") { $0.parts.contains { ["nut", "gear"].contains($0.label) } }
        t.add("NOT ANY parts.weight > 5") { !$0.parts.contains { $0.weight > 5 } }
        t.add("ANY parts.label ==[cd] 'ECROU'") { $0.parts.contains { O.text($0.label, .eq, "ECROU", "cd") } }
        t.add("ANY parts.label LIKE '?olt'") { $0.parts.contains { O.string($0.label, .like, "?olt") } }
        t.add("ANY parts.price < 0") { $0.parts.contains { $0.price < 0 } }
        t.add("ANY parts.id == 3") { $0.parts.contains { $0.id == 3 } }
        t.add("ALL parts.label ==[c] 'bolt'") { $0.parts.allSatisfy { $0.label.lowercased() == "bolt" } }

        // @count, @sum, @avg, @min and @max.
        t.add("parts.@count == 0") { $0.parts.isEmpty }
        t.add("parts.@count > 2") { $0.parts.count > 2 }
        t.add("parts.@count != 1") { $0.parts.count != 1 }
        t.add("parts.@count <= 1") { $0.parts.count <= 1 }
        t.add("parts.@count == %@", 2) { $0.parts.count == 2 }
        t.add("parts.@sum.weight > 10") { O.weightSum($0) > 10 }
        t.add("parts.@sum.weight == 0") { O.weightSum($0) == 0 }
        t.add("parts.@sum.price < 0") { $0.parts.reduce(0) { $0 + $1.price } < 0 }
        t.add("parts.@avg.price < 2") { O.cmp(O.average($0.parts.map(\.price)), .lt, 2) }
        t.add("parts.@avg.weight >= 3") { O.cmp(O.average($0.parts.map { Double($0.weight) }), .ge, 3) }
        t.add("parts.@min.weight == 0") { $0.parts.map(\.weight).min() == 0 }
        t.add("parts.@min.weight > 3") { O.cmp($0.parts.map(\.weight).min(), .gt, 3) }
        t.add("parts.@max.price >= 9") { O.cmp($0.parts.map(\.price).max(), .ge, 9) }
        t.add("parts.@max.weight == nil") { $0.parts.isEmpty }
        t.add("parts.@max.weight != nil") { !$0.parts.isEmpty }
        t.add("parts.@max.label == 'washer'") { O.maxLabel($0) == "washer" }
        t.add("parts.@min.label == 'Bolt'") { O.minLabel($0) == "Bolt" }
        t.add("parts.@sum.optWeight > 3") { $0.parts.compactMap(\.optWeight).reduce(0, +) > 3 }
        t.add("parts.@avg.optWeight > 2") { O.cmp(O.average($0.parts.compactMap(\.optWeight).map(Double.init)), .gt, 2) }
        t.add("parts.@avg.optWeight != 2") { O.average($0.parts.compactMap(\.optWeight).map(Double.init)) != 2 }

        // Through lists of values.
        t.add("tags == 'red'") { $0.tags.contains("red") }
        t.add("ANY tags ==[c] 'red'") { $0.tags.contains { O.text($0, .eq, "red", "c") } }
        t.add("ANY tags ==[cd] 'GRUN'") { $0.tags.contains { O.text($0, .eq, "GRUN", "cd") } }
        t.add("ALL tags BEGINSWITH 'r'") { $0.tags.allSatisfy { $0.hasPrefix("r") } }
        t.add("NONE tags == 'red'") { !$0.tags.contains("red") }
        t.add("ANY tags CONTAINS 'ü'") { $0.tags.contains { O.string($0, .contains, "ü") } }
        t.add("ANY tags IN {'blue', '한국'}") { $0.tags.contains { ["blue", "한국"].contains($0) } }
        t.add("ANY tags LIKE[c] '?ale'") { $0.tags.contains { O.string($0, .like, "?ale", "c") } }
        t.add("ANY tags != 'red'") { $0.tags.contains { $0 != "red" } }
        t.add("ANY tags ENDSWITH[d] 'ia'") { $0.tags.contains { O.string($0, .endsWith, "ia", "d") } }
        t.add("tags.@count == 0") { $0.tags.isEmpty }
        t.add("tags.@count >= 2") { $0.tags.count >= 2 }
        t.add("numbers > 3") { $0.numbers.contains { $0 > 3 } }
        t.add("ALL numbers >= 0") { $0.numbers.allSatisfy { $0 >= 0 } }
        t.add("NONE numbers == 0") { !$0.numbers.contains(0) }
        t.add("ANY numbers BETWEEN {1, 2}") { $0.numbers.contains { (1...2).contains($0) } }
        t.add("ANY numbers IN %@", [5, -5]) { $0.numbers.contains { $0 == 5 || $0 == -5 } }
        t.add("numbers.@count > 3") { $0.numbers.count > 3 }
        t.add("numbers.@sum > 5") { $0.numbers.reduce(0, +) > 5 }
        t.add("numbers.@max == 5") { $0.numbers.max() == 5 }
        t.add("numbers.@min < -3") { O.cmp($0.numbers.min(), .lt, -3) }
        t.add("numbers.@avg > 0") { O.cmp(O.average($0.numbers.map(Double.init)), .gt, 0) }
        t.add("ANY ratings == nil") { $0.ratings.contains(nil) }
        t.add("ALL ratings != nil") { !$0.ratings.contains(nil) }
        t.add("NONE ratings == nil") { !$0.ratings.contains(nil) }
        t.add("ANY ratings >= 4") { $0.ratings.contains { O.cmp($0, .ge, 4) } }
        t.add("ratings.@count == 2") { $0.ratings.count == 2 }

        // AND, OR, NOT and nesting.
        t.add("TRUEPREDICATE") { _ in true }
        t.add("FALSEPREDICATE") { _ in false }
        t.add("NOT TRUEPREDICATE") { _ in false }
        t.add("TRUEPREDICATE AND code > 0") { $0.code > 0 }
        t.add("FALSEPREDICATE OR code > 0") { $0.code > 0 }
        t.add("code > 0 AND (name BEGINSWITH 'c' OR optCode == nil)") {
            $0.code > 0 && (O.string($0.name, .beginsWith, "c") || $0.optCode == nil)
        }
        t.add("NOT (code > 0 OR bool == true)") { !($0.code > 0 || $0.bool) }
        t.add("!(code > 0) && bool == true || optCode == 3") { (!($0.code > 0) && $0.bool) || $0.optCode == 3 }
        t.add("code > 0 OR bool == true AND optCode == nil") { $0.code > 0 || ($0.bool && $0.optCode == nil) }
        t.add("code > 0 or bool == true and optCode == nil") { $0.code > 0 || ($0.bool && $0.optCode == nil) }
        t.add("NOT NOT code == 1") { $0.code == 1 }
        t.add("NOT code > 0 AND NOT bool == true") { !($0.code > 0) && !$0.bool }
        t.add("((code > 10 OR code < -10) AND (double > 0 OR optDouble == nil)) OR NOT (owner != nil AND owner.optAge > 30)") {
            (($0.code > 10 || $0.code < -10) && ($0.double > 0 || $0.optDouble == nil))
                || !($0.owner != nil && $0.owner { O.cmp($0.optAge, .gt, 30) })
        }
        t.add("owner.name BEGINSWITH 'A' AND ANY parts.weight > 3") {
            $0.owner { $0.name.hasPrefix("A") } && $0.parts.contains { $0.weight > 3 }
        }
        t.add("(ANY tags == 'red' OR ANY numbers == 0) AND NOT parts.@count == 0") {
            ($0.tags.contains("red") || $0.numbers.contains(0)) && !$0.parts.isEmpty
        }
        t.add("code > 0 && code < 10 && bool == false") { $0.code > 0 && $0.code < 10 && !$0.bool }
        t.add("name == 'café' OR name == 'cafe' OR name == 'CAFÉ'") { ["café", "cafe", "CAFÉ"].contains($0.name) }
        t.add("NOT (NOT (code > 5 AND NOT (optCode == nil OR optCode > 0)))") {
            $0.code > 5 && !($0.optCode == nil || O.cmp($0.optCode, .gt, 0))
        }
        t.add("code == 7 AND name == 'café'") { $0.code == 7 && $0.name == "café" }
        t.add("code IN {1, 2, 3} AND optCode IN {1, 2, 3}") { (1...3).contains($0.code) && O.between($0.optCode, 1, 3) }
        t.add("name == 'apple' AND code > 0") { $0.name == "apple" && $0.code > 0 }
        t.add("double > 0 AND double < 5") { $0.double > 0 && $0.double < 5 }

        // Every ordering operator, BETWEEN and IN on every ordered type (and its
        // optional), against %@ constants of the column's own Swift type taken
        // from its values: the 10%, 25%, 33%, 50%, 67% and 75% quantiles.
        func orderings<T: Comparable>(
            _ name: String, _ values: [T?], sourceLocation: SourceLocation = #_sourceLocation,
            _ get: @escaping (SourceRow) -> T?
        ) {
            let sorted = values.compactMap { $0 }.sorted()
            let k = sorted[sorted.count / 2]
            let low = sorted[sorted.count / 4]
            let high = sorted[sorted.count * 3 / 4]
            let list = [sorted[sorted.count / 10], sorted[sorted.count / 3], sorted[sorted.count * 2 / 3]]
            for (text, op) in [("==", O.Op.eq), ("!=", .ne), ("<", .lt), ("<=", .le), (">", .gt), (">=", .ge)] {
                t.add("\(name) \(text) %@", k, sourceLocation: sourceLocation) {
                    O.cmp(get($0), op, k)
                }
            }
            t.add("\(name) BETWEEN %@", [low, high], sourceLocation: sourceLocation) { O.between(get($0), low, high) }
            t.add("\(name) IN %@", list, sourceLocation: sourceLocation) { row in list.contains { O.cmp(get(row), .eq, $0) } }
        }
        let rows = F.rows
        orderings("code", rows.map(\.code)) { $0.code }
        orderings("optCode", rows.map(\.optCode)) { $0.optCode }
        orderings("int8", rows.map(\.int8)) { $0.int8 }
        orderings("optInt8", rows.map(\.optInt8)) { $0.optInt8 }
        orderings("int16", rows.map(\.int16)) { $0.int16 }
        orderings("int32", rows.map(\.int32)) { $0.int32 }
        orderings("int64", rows.map(\.int64)) { $0.int64 }
        orderings("optInt64", rows.map(\.optInt64)) { $0.optInt64 }
        orderings("priority", rows.map(\.priority.rawValue)) { $0.priority.rawValue }
        orderings("double", rows.map(\.double).filter(\.isFinite)) { $0.double }
        orderings("optDouble", rows.map(\.optDouble)) { $0.optDouble }
        orderings("float", rows.map(\.float)) { $0.float }
        orderings("optFloat", rows.map(\.optFloat)) { $0.optFloat }
        orderings("date", rows.map(\.date)) { $0.date }
        orderings("optDate", rows.map(\.optDate)) { $0.optDate }
        orderings("decimal", rows.map(\.decimal)) { $0.decimal }
        orderings("optDecimal", rows.map(\.optDecimal)) { $0.optDecimal }

        // Several arguments of several kinds.
        t.add("code > %@ AND name BEGINSWITH[c] %@", 10, "a") { $0.code > 10 && O.string($0.name, .beginsWith, "a", "c") }
        t.add("date > %@ AND uuid IN %@ AND data != %@", hour(24), Array(F.uuids.prefix(3)), Data()) {
            $0.date > hour(24) && F.uuids.prefix(3).contains($0.uuid) && !$0.data.isEmpty
        }
        t.add("%K ==[cd] %@ OR %K ==[cd] %@", "name", "CAFE", "optName", "CAFE") {
            O.text($0.name, .eq, "CAFE", "cd") || O.text($0.optName, .eq, "CAFE", "cd")
        }
        return t
    }
}

// MARK: - Errors

/// A malformed predicate and the 0-based position (in characters) of the offending token.
struct ErrorCase {
    let format: String
    let arguments: [Any?]
    let position: Int
    let sourceLocation: SourceLocation

    init(
        _ format: String, _ arguments: Any?..., at position: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.format = format
        self.arguments = arguments
        self.position = position
        self.sourceLocation = sourceLocation
    }
}

// MARK: - Random predicates

/// Builds random predicates from a small grammar, each with its meaning in Swift.
struct RandomPredicates {
    typealias Test = (SourceRow) -> Bool
    var rng: SplitMix64
    private(set) var arguments: [Any?] = []

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// A key path, and how a row reaches its values: one value for a
    /// property, none through a nil link, the elements of a list.
    struct Subject<Value> {
        let path: String
        let isList: Bool
        let values: (SourceRow) -> [Value]
    }

    static func property<Value>(_ path: String, _ get: @escaping (SourceRow) -> Value) -> Subject<Value> {
        Subject(path: path, isList: false, values: { [get($0)] })
    }

    static func linked<Value>(_ path: String, _ get: @escaping (SourceOwner) -> Value) -> Subject<Value> {
        Subject(path: path, isList: false, values: { row in row.owner.map { [get($0)] } ?? [] })
    }

    static func list<Value>(_ path: String, _ get: @escaping (SourceRow) -> [Value]) -> Subject<Value> {
        Subject(path: path, isList: true, values: get)
    }

    static var integers: [(subject: Subject<Int?>, range: ClosedRange<Int>)] {
        [
            (property("code") { $0.code }, -55...55), (property("codeCopy") { $0.code }, -55...55),
            (property("int8") { Int($0.int8) }, -130...130), (property("int16") { Int($0.int16) }, -310...310),
            (property("int16Copy") { Int($0.int16) }, -310...310), (property("optCode") { $0.optCode }, -22...22),
            (property("optCodeCopy") { $0.optCode }, -22...22), (property("optInt8") { $0.optInt8.map(Int.init) }, -12...12),
            (property("priority") { $0.priority.rawValue }, 0...10), (linked("owner.optAge") { $0.optAge }, 15...70),
            (list("parts.weight") { $0.parts.map(\.weight) }, -1...7),
            (list("parts.optWeight") { $0.parts.map(\.optWeight) }, -1...5),
            (list("numbers") { $0.numbers }, -6...6), (list("ratings") { $0.ratings }, 0...6),
        ]
    }

    static var doubles: [Subject<Double?>] {
        [
            property("double") { $0.double }, property("doubleCopy") { $0.double }, property("float") { Double($0.float) },
            property("optDouble") { $0.optDouble }, property("optFloat") { $0.optFloat.map(Double.init) },
            list("parts.price") { $0.parts.map(\.price) },
        ]
    }

    static var strings: [(subject: Subject<String?>, pool: [String])] {
        [
            (property("name") { $0.name }, Fixture.names), (property("nameCopy") { $0.name }, Fixture.names),
            (property("optName") { $0.optName }, Fixture.names), (property("optNameCopy") { $0.optName }, Fixture.names),
            (linked("owner.name") { $0.name }, Fixture.ownerNames), (linked("owner.city") { $0.city }, Fixture.cities),
            (list("tags") { $0.tags }, Fixture.tags), (list("parts.label") { $0.parts.map(\.label) }, Fixture.labels),
        ]
    }

    static var booleans: [Subject<Bool?>] {
        [
            property("bool") { $0.bool }, property("boolCopy") { $0.bool }, property("optBool") { $0.optBool },
        ]
    }

    static var dates: [Subject<Date?>] {
        [
            property("date") { $0.date }, property("dateCopy") { $0.date }, property("optDate") { $0.optDate },
        ]
    }

    /// A random predicate of at most `depth` levels of AND, OR and NOT, and its meaning.
    mutating func predicate(depth: Int) -> (format: String, test: Test) {
        if depth == 0 || rng.chance(30) { return leaf() }
        switch rng.int(0...4) {
        case 0:
            let (inner, test) = predicate(depth: depth - 1)
            let not = rng.pick(["NOT ", "!", "not "])
            return ("\(not)(\(inner))", { !test($0) })
        case 1, 2:
            var parts: [(format: String, test: Test)] = []
            for _ in 0..<rng.int(2...3) { parts.append(predicate(depth: depth - 1)) }
            let word = rng.pick([" AND ", " && ", " and "])
            let tests = parts.map(\.test)
            return (parts.map { "(\($0.format))" }.joined(separator: word), { row in tests.allSatisfy { $0(row) } })
        default:
            var parts: [(format: String, test: Test)] = []
            for _ in 0..<rng.int(2...3) { parts.append(predicate(depth: depth - 1)) }
            let word = rng.pick([" OR ", " || ", " or "])
            let tests = parts.map(\.test)
            return (parts.map { "(\($0.format))" }.joined(separator: word), { row in tests.contains { $0(row) } })
        }
    }

    private mutating func leaf() -> (format: String, test: Test) {
        switch rng.int(0...9) {
        case 0, 1, 2: return integerLeaf()
        case 3, 4: return doubleLeaf()
        case 5, 6, 7: return stringLeaf()
        case 8: return rng.chance(50) ? boolLeaf() : dateLeaf()
        default: return aggregateLeaf()
        }
    }

    /// The quantifier before a list's key path and how it combines the elements.
    private mutating func quantified<Value>(_ subject: Subject<Value>, _ test: @escaping (Value) -> Bool) -> (
        prefix: String, test: Test
    ) {
        guard subject.isList else { return ("", { subject.values($0).contains(where: test) }) }
        switch rng.int(0...4) {
        case 0: return ("", { subject.values($0).contains(where: test) })
        case 1: return ("ANY ", { subject.values($0).contains(where: test) })
        case 2: return ("SOME ", { subject.values($0).contains(where: test) })
        case 3: return ("ALL ", { subject.values($0).allSatisfy(test) })
        default: return ("NONE ", { !subject.values($0).contains(where: test) })
        }
    }

    private static let operators: [(text: String, op: Oracle.Op)] = [
        ("==", .eq), ("!=", .ne), ("<", .lt), ("<=", .le), (">", .gt), (">=", .ge), ("=", .eq), ("<>", .ne),
    ]

    /// A constant as a literal or as a `%@` argument.
    private mutating func constant(_ literal: String, _ value: Any?) -> String {
        if rng.chance(50) { return literal }
        arguments.append(value)
        return "%@"
    }

    private mutating func integerLeaf() -> (format: String, test: Test) {
        let (subject, range) = rng.pick(Self.integers)
        var k = rng.int(range)
        if !subject.isList, rng.chance(40), let value = subject.values(rng.pick(Fixture.rows)).first ?? nil { k = value }
        switch rng.int(0...9) {
        case 0:
            let low = rng.int(range)
            let high = rng.int(range)
            let list = rng.chance(50) ? "{\(low), \(high)}" : constant("{\(low), \(high)}", [low, high])
            let (prefix, test) = quantified(subject) { Oracle.between($0, low, high) }
            return ("\(prefix)\(subject.path) BETWEEN \(list)", test)
        case 1:
            var values: [Int?] = (0..<rng.int(1...4)).map { _ in rng.int(range) }
            if rng.chance(30) { values.append(nil) }
            let literal = "{" + values.map { $0.map(String.init) ?? "nil" }.joined(separator: ", ") + "}"
            let (prefix, test) = quantified(subject) { value in values.contains { $0 == value } }
            return ("\(prefix)\(subject.path) IN \(constant(literal, values))", test)
        case 2:
            let (text, op) = rng.pick([("==", Oracle.Op.eq), ("!=", .ne)])
            let (prefix, test) = quantified(subject) { Oracle.cmp($0, op, nil) }
            return ("\(prefix)\(subject.path) \(text) \(rng.pick(["nil", "NULL"]))", test)
        default:
            let (text, op) = rng.pick(Self.operators)
            let (prefix, test) = quantified(subject) { Oracle.cmp($0, op, k) }
            if prefix.isEmpty, !subject.isList, rng.chance(20) {
                // The constant on the left: `5 < code` is `code > 5`.
                let mirrored = Self.operators.first { $0.op == Oracle.opposite(op) }!.text
                return ("\(constant(String(k), k)) \(mirrored) \(subject.path)", test)
            }
            return ("\(prefix)\(subject.path) \(text) \(constant(String(k), k))", test)
        }
    }

    private mutating func doubleLeaf() -> (format: String, test: Test) {
        let subject = rng.pick(Self.doubles)
        var k = Double(rng.int(-24...24)) * 0.25
        if rng.chance(40), let value = subject.values(rng.pick(Fixture.rows)).first ?? nil, value.isFinite { k = value }
        if rng.chance(20) {
            let low = Double(rng.int(-24...24)) * 0.25
            let high = low + Double(rng.int(0...12)) * 0.25
            let (prefix, test) = quantified(subject) { Oracle.between($0, low, high) }
            return ("\(prefix)\(subject.path) BETWEEN {\(low), \(high)}", test)
        }
        let (text, op) = rng.pick(Self.operators)
        let (prefix, test) = quantified(subject) { Oracle.cmp($0, op, k) }
        return ("\(prefix)\(subject.path) \(text) \(constant(String(k), k))", test)
    }

    /// A string literal in the query syntax.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// A constant derived from `source`: folded or recased to suit the
    /// modifiers, so that the modifiers matter.
    private mutating func adapt(_ source: String, _ modifiers: String) -> String {
        var text = source
        if modifiers.contains("d"), rng.chance(50) { text = Oracle.fold(text, "d") }
        if modifiers.contains("c") {
            text = String(
                text.map { character -> String in
                    guard character != "ß", rng.chance(50) else { return String(character) }
                    let flipped = character.isUppercase ? character.lowercased() : character.uppercased()
                    return flipped.count == 1 ? flipped : String(character)
                }.joined())
        }
        return text
    }

    private mutating func slice(_ text: String) -> String {
        let characters = Array(text)
        let start = rng.int(0...characters.count)
        let end = rng.int(start...min(characters.count, start + 6))
        return String(characters[start..<end])
    }

    private mutating func stringLeaf() -> (format: String, test: Test) {
        let (subject, pool) = rng.pick(Self.strings)
        let modifiers = rng.pick(["", "", "c", "d", "cd"])
        let flag = modifiers.isEmpty ? "" : "[\(modifiers)]"
        var source = rng.pick(pool)
        if !subject.isList, rng.chance(50), let value = subject.values(rng.pick(Fixture.rows)).first ?? nil { source = value }
        switch rng.int(0...9) {
        case 0, 1:
            let (text, op) = rng.pick([("==", Oracle.Op.eq), ("!=", .ne)])
            if subject.path.hasPrefix("opt"), rng.chance(20) {
                let (prefix, test) = quantified(subject) { Oracle.text($0, op, nil) }
                return ("\(prefix)\(subject.path) \(text) nil", test)
            }
            let k = adapt(source, modifiers)
            let (prefix, test) = quantified(subject) { Oracle.text($0, op, k, modifiers) }
            return ("\(prefix)\(subject.path) \(text)\(flag) \(constant(Self.quoted(k), k))", test)
        case 2:
            let characters = Array(source)
            let k = adapt(String(characters.prefix(rng.int(0...characters.count))), modifiers)
            let (prefix, test) = quantified(subject) { Oracle.string($0, .beginsWith, k, modifiers) }
            return ("\(prefix)\(subject.path) BEGINSWITH\(flag) \(constant(Self.quoted(k), k))", test)
        case 3:
            let characters = Array(source)
            let k = adapt(String(characters.suffix(rng.int(0...characters.count))), modifiers)
            let (prefix, test) = quantified(subject) { Oracle.string($0, .endsWith, k, modifiers) }
            return ("\(prefix)\(subject.path) ENDSWITH\(flag) \(constant(Self.quoted(k), k))", test)
        case 4, 5:
            let k = adapt(slice(source), modifiers)
            let (prefix, test) = quantified(subject) { Oracle.string($0, .contains, k, modifiers) }
            return ("\(prefix)\(subject.path) CONTAINS\(flag) \(constant(Self.quoted(k), k))", test)
        case 6, 7:
            var pattern = ""
            for character in adapt(source, modifiers) {
                switch rng.int(0...9) {
                case 0, 1: pattern.append("?")
                case 2: if !pattern.hasSuffix("*") { pattern.append("*") }
                case 3:
                    pattern.append("*")
                    pattern.append(character)
                default: pattern.append(character)
                }
            }
            let k = pattern
            let (prefix, test) = quantified(subject) { Oracle.string($0, .like, k, modifiers) }
            return ("\(prefix)\(subject.path) LIKE\(flag) \(constant(Self.quoted(k), k))", test)
        case 8:
            let values = (0..<rng.int(1...3)).map { _ in adapt(rng.pick(pool), modifiers) }
            let literal = "{" + values.map(Self.quoted).joined(separator: ", ") + "}"
            let (prefix, test) = quantified(subject) { Oracle.textIn($0, values, modifiers) }
            return ("\(prefix)\(subject.path) IN\(flag) \(constant(literal, values))", test)
        default:
            let (text, op) = rng.pick(Array(Self.operators.filter { $0.op != .eq && $0.op != .ne }))
            let k = source
            let (prefix, test) = quantified(subject) { Oracle.text($0, op, k) }
            return ("\(prefix)\(subject.path) \(text) \(constant(Self.quoted(k), k))", test)
        }
    }

    private mutating func boolLeaf() -> (format: String, test: Test) {
        let subject = rng.pick(Self.booleans)
        let (text, op) = rng.pick([("==", Oracle.Op.eq), ("!=", .ne)])
        let choice = rng.int(0...(subject.path == "optBool" ? 2 : 1))
        let value: Bool? = choice == 2 ? nil : choice == 1
        let literal = value.map { $0 ? rng.pick(["true", "YES", "TRUE"]) : rng.pick(["false", "NO", "FALSE"]) } ?? "nil"
        let (_, test) = quantified(subject) { op == .eq ? $0 == value : $0 != value }
        return ("\(subject.path) \(text) \(literal)", test)
    }

    private mutating func dateLeaf() -> (format: String, test: Test) {
        let subject = rng.pick(Self.dates)
        let k = rng.pick(Fixture.rows).date.addingTimeInterval(Double(rng.int(-1...1)) * 1800)
        if rng.chance(20) {
            let high = k.addingTimeInterval(Double(rng.int(0...10)) * 3600)
            arguments.append([k, high])
            let (_, test) = quantified(subject) { Oracle.between($0, k, high) }
            return ("\(subject.path) BETWEEN %@", test)
        }
        let (text, op) = rng.pick(Self.operators)
        arguments.append(k)
        let (_, test) = quantified(subject) { Oracle.cmp($0, op, k) }
        return ("\(subject.path) \(text) %@", test)
    }

    private mutating func aggregateLeaf() -> (format: String, test: Test) {
        let (text, op) = rng.pick(Self.operators)
        switch rng.int(0...5) {
        case 0:
            let (path, count): (String, (SourceRow) -> Int) = rng.pick([
                ("parts", { $0.parts.count }), ("tags", { $0.tags.count }), ("numbers", { $0.numbers.count }),
                ("ratings", { $0.ratings.count }),
            ])
            let k = rng.int(0...5)
            return ("\(path).@count \(text) \(k)", { Oracle.cmp(count($0), op, k) })
        case 1:
            let k = rng.int(0...20)
            return ("parts.@sum.weight \(text) \(k)", { Oracle.cmp(Oracle.weightSum($0), op, k) })
        case 2:
            let k = Double(rng.int(-12...24)) * 0.5
            return ("parts.@avg.price \(text) \(k)", { Oracle.cmp(Oracle.average($0.parts.map(\.price)), op, k) })
        case 3:
            let k = rng.int(0...6)
            return ("parts.@min.weight \(text) \(k)", { Oracle.cmp($0.parts.map(\.weight).min(), op, k) })
        case 4:
            let k = rng.int(0...6)
            return ("parts.@max.optWeight \(text) \(k)", { Oracle.cmp($0.parts.compactMap(\.optWeight).max(), op, k) })
        default:
            return rng.chance(50) ? ("owner == nil", { $0.owner == nil }) : ("owner != nil", { $0.owner != nil })
        }
    }

    /// The next predicate, with the arguments its `%@`s take.
    mutating func next() -> (format: String, arguments: [Any?], test: Test) {
        arguments = []
        let (format, test) = predicate(depth: 3)
        return (format, arguments, test)
    }
}

// MARK: - The suite

@Suite("Query conformance")
struct QueryConformanceTests {
    private static func ids(_ db: Database, _ format: String, _ arguments: [Any?]) throws -> Set<Int> {
        Set(try db.objects(ConformanceItem.self).filter(format, arguments: arguments).map(\.id))
    }

    private static func expectedIDs(_ test: (SourceRow) -> Bool) -> Set<Int> {
        Set(Fixture.rows.filter(test).map(\.id))
    }

    private static func describe(_ format: String, _ arguments: [Any?]) -> String {
        arguments.isEmpty
            ? format : "\(format) with [\(arguments.map { String(describing: $0 ?? "nil") }.joined(separator: ", "))]"
    }

    private static func difference(_ expected: Set<Int>, _ actual: Set<Int>) -> String {
        "expected \(expected.count) ids, got \(actual.count); missing \(expected.subtracting(actual).sorted()), unexpected \(actual.subtracting(expected).sorted())"
    }

    @Test("the fixture holds every row and the table has enough cases")
    func fixture() throws {
        let db = try Fixture.database()
        #expect(db.objects(ConformanceItem.self).count == Fixture.rows.count)
        #expect(db.objects(ConformanceOwner.self).count == Fixture.owners.count)
        #expect(db.objects(ConformancePart.self).count == Fixture.parts.count)
        let cases = CaseTable.all().cases
        #expect(cases.count >= 150)
        // Most cases must tell rows apart: neither none nor all of them.
        let discriminating = cases.filter { (1..<Fixture.rows.count).contains(Self.expectedIDs($0.expected).count) }
        #expect(
            discriminating.count * 10 >= cases.count * 8, "only \(discriminating.count) of \(cases.count) cases select some rows")
    }

    @Test("every predicate of the table selects the rows Swift selects")
    func table() throws {
        let db = try Fixture.database()
        for entry in CaseTable.all().cases {
            let expected = Self.expectedIDs(entry.expected)
            do {
                let actual = try Self.ids(db, entry.format, entry.arguments)
                #expect(
                    actual == expected,
                    "\(Self.describe(entry.format, entry.arguments)): \(Self.difference(expected, actual))",
                    sourceLocation: entry.sourceLocation)
            } catch {
                Issue.record(
                    "\(Self.describe(entry.format, entry.arguments)) threw \(error)", sourceLocation: entry.sourceLocation)
            }
        }
    }

    @Test("indexed properties and their unindexed twins give the same answers")
    func indexedAndUnindexedAgree() throws {
        let db = try Fixture.database()
        var compared = 0
        for entry in CaseTable.all().cases {
            var arguments = entry.arguments
            var twin = Fixture.unindexed(entry.format)
            if entry.format.contains("%K") {
                arguments = arguments.map { argument in (argument as? String).flatMap { Fixture.twins[$0] } ?? argument }
                if twin == nil, !zip(arguments, entry.arguments).allSatisfy({ ($0 as? String) == ($1 as? String) }) {
                    twin = entry.format
                }
            }
            guard let twin else { continue }
            compared += 1
            let expected = Self.expectedIDs(entry.expected)
            let indexed = try? Self.ids(db, entry.format, entry.arguments)
            let unindexed: Set<Int>
            do {
                unindexed = try Self.ids(db, twin, arguments)
            } catch {
                Issue.record("\(Self.describe(twin, arguments)) threw \(error)", sourceLocation: entry.sourceLocation)
                continue
            }
            #expect(
                indexed == unindexed,
                "\(Self.describe(entry.format, entry.arguments)) (indexed) vs \(twin): \(Self.difference(unindexed, indexed ?? []))",
                sourceLocation: entry.sourceLocation)
            #expect(
                unindexed == expected, "\(Self.describe(twin, arguments)): \(Self.difference(expected, unindexed))",
                sourceLocation: entry.sourceLocation)
            // `count` alone (an indexed equality counts the index's entries without listing them).
            let counted = try? db.objects(ConformanceItem.self).filter(entry.format, arguments: entry.arguments).count
            #expect(
                counted == expected.count, "\(Self.describe(entry.format, entry.arguments)): count \(counted ?? -1)",
                sourceLocation: entry.sourceLocation)
        }
        #expect(compared >= 100, "only \(compared) cases have an indexed twin")
    }

    static var errorCases: [ErrorCase] {
        [
            ErrorCase("code >", at: 6),  // the end: a value is missing
            ErrorCase("code 3", at: 5),  // no operator
            ErrorCase("(code > 3", at: 9),  // ')' missing at the end
            ErrorCase("name == 'open", at: 8),  // unterminated string
            ErrorCase("code ># 3", at: 6),  // '#'
            ErrorCase("", at: 0),  // nothing at all
            ErrorCase("code > 3 AND", at: 12),  // nothing after AND
            ErrorCase("code > 1 OR", at: 11),  // nothing after OR
            ErrorCase("NOT", at: 3),  // nothing after NOT
            ErrorCase("naem == 'x'", at: 0),  // unknown property
            ErrorCase("bool == true AND code == 'x'", at: 17),  // a String for an Int
            ErrorCase("bool == true AND code == %@", "x", at: 17),  // a String argument for an Int
            ErrorCase("name BEGINSWITH[x] 'a'", at: 15),  // unknown modifier
            ErrorCase("name BEGINSWITH[c 'a'", at: 15),  // unclosed '['
            ErrorCase("name ==[c]", at: 10),  // no value after the modifier
            ErrorCase("code > %@", at: 9),  // an argument missing
            ErrorCase("code > 3", 4, at: 8),  // an argument too many
            ErrorCase("code > %x", at: 7),  // not a placeholder
            ErrorCase("code > $", at: 7),  // '$' without a number
            ErrorCase("code > 0 OR %K == 1", 42, at: 12),  // %K needs a String
            ErrorCase("id > 0 AND code IN 3", at: 11),  // IN without a list
            ErrorCase("NOT code BETWEEN {1, 2, 3}", at: 4),  // BETWEEN with three values
            ErrorCase("code BETWEEN {1}", at: 0),  // BETWEEN with one value
            ErrorCase("id == 1 OR code == {1, 2}", at: 11),  // a list after ==
            ErrorCase("code IN {1, {2}}", at: 12),  // a list in a list
            ErrorCase("code IN {1 2}", at: 11),  // no ',' in a list
            ErrorCase("code IN {1, 2", at: 13),  // unclosed list
            ErrorCase("bool == true AND optCode BEGINSWITH nil", at: 17),  // nil with a string operator
            ErrorCase("code > 1 AND name MATCHES '('", at: 13),  // a bad regular expression
            ErrorCase("code > 3 )", at: 9),  // ')' without '('
            ErrorCase("name == 'a' [c]", at: 12),  // a modifier after a complete predicate
            ErrorCase("code == 3 code", at: 10),  // a name after a complete predicate
            ErrorCase("id > 1 AND owner.nmae == 'x'", at: 11),  // unknown property of the link's target
            ErrorCase("id == 1 AND owner.name.first == 'x'", at: 12),  // a String has no properties
            ErrorCase("id > 1 OR tags.@sum > 1", at: 10),  // @sum of strings
            ErrorCase("parts.@count == 'many'", at: 0),  // @count with a String
            ErrorCase("'x' == 'y'", at: 0),  // no property
            ErrorCase("code BEGINSWITH 'x'", at: 0),  // a string operator on an Int
            ErrorCase("uuid == 'not-a-uuid'", at: 0),  // not a UUID
            ErrorCase("name == 'Straße' AND cod == 1", at: 21),  // positions count characters
            ErrorCase("name == '서울' AND code >", at: 23),  // the end, in characters
            ErrorCase("code > 3 AND AND code < 5", at: 13),  // the second AND
        ]
    }

    @Test("malformed predicates throw invalidQuery at the offending token")
    func errors() throws {
        let db = try Fixture.database()
        let items = db.objects(ConformanceItem.self)
        for entry in Self.errorCases {
            do {
                let count = try items.filter(entry.format, arguments: entry.arguments).count
                Issue.record(
                    "\(Self.describe(entry.format, entry.arguments)) did not throw (\(count) results)",
                    sourceLocation: entry.sourceLocation)
            } catch let error as TroveError {
                #expect(error.kind == .invalidQuery, "\(entry.format): \(error)", sourceLocation: entry.sourceLocation)
                #expect(
                    error.position == entry.position, "\(entry.format): \(error.message)",
                    sourceLocation: entry.sourceLocation)
            } catch {
                Issue.record("\(entry.format) threw \(error)", sourceLocation: entry.sourceLocation)
            }
        }
    }

    @Test("random predicates select the rows Swift selects")
    func randomPredicates() throws {
        let db = try Fixture.database()
        var generator = RandomPredicates(seed: 0xC0FF_EE00_2024)
        var discriminating = 0
        let count = 500
        for number in 0..<count {
            let (format, arguments, test) = generator.next()
            let expected = Self.expectedIDs(test)
            if (1..<Fixture.rows.count).contains(expected.count) { discriminating += 1 }
            do {
                let actual = try Self.ids(db, format, arguments)
                #expect(
                    actual == expected,
                    "random #\(number): \(Self.describe(format, arguments)): \(Self.difference(expected, actual))")
            } catch {
                Issue.record("random #\(number): \(Self.describe(format, arguments)) threw \(error)")
            }
        }
        // The generator must make predicates that tell rows apart.
        #expect(discriminating * 2 >= count, "only \(discriminating) of \(count) random predicates select some rows")
    }
}
