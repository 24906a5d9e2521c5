import Foundation
import Testing
import TroveRealm

enum QueryMood: String, PersistableEnum {
    case happy, calm, sad
}

enum QueryPriority: Int, PersistableEnum {
    case low, normal, high
}

final class QueryBag: Object {
    @Persisted var id = 0
    @Persisted var payload: AnyRealmValue
}

final class QueryPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var nickname: String?
    @Persisted var age = 0
    @Persisted var minimumAge = 0
    @Persisted var height = 0.0
    @Persisted var rating: Int?
    @Persisted var isMember = false
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var mood = QueryMood.calm
    @Persisted var priority: QueryPriority?
    @Persisted var uuid = UUID()
    @Persisted var objectId = ObjectId.generate()
    @Persisted var balance: Decimal128 = 0
    @Persisted var avatar = Data()
    @Persisted var partner: QueryPerson?
    @Persisted var dogs = List<QueryDog>()
    @Persisted var favorites = MutableSet<QueryDog>()
    @Persisted var scores = List<Int>()
    @Persisted var tags = MutableSet<String>()
    @Persisted var prices = Map<String, Int>()
    @Persisted var pets = Map<String, QueryDog>()
}

final class QueryDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var isGood = true
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<QueryPerson>
}

/// Five people with dogs, scores, tags and prices, small enough to check by hand:
///
/// | id | name   | age | min | rating | member | mood  | priority | dogs (age, good)      | scores      | prices          |
/// |----|--------|-----|-----|--------|--------|-------|----------|-----------------------|-------------|-----------------|
/// | 1  | Ann    | 30  | 18  | 4      | yes    | happy | high     | Rex 5 ✓, Bo 2 ✓       | 90, 80      | eur 10, usd 12  |
/// | 2  | Bob    | 17  | 18  | nil    | no     | calm  | nil      | Max 11 ✗              | 40          | eur 50          |
/// | 3  | Cécile | 45  | 50  | 2      | yes    | sad   | low      |                       |             |                 |
/// | 4  | Dan    | 65  | 18  | 5      | no     | happy | normal   | Rex 3 ✗, Fido 7 ✓     | 100, 60, 70 | gbp 8           |
/// | 5  | alice  | 8   | 3   | nil    | yes    | calm  | low      | Bo 1 ✓                | 55          | eur 5, usd 5    |
private struct People {
    let realm: Realm
    var all: Results<QueryPerson> { realm.objects(QueryPerson.self) }
    func person(_ id: Int) -> QueryPerson { realm.object(ofType: QueryPerson.self, forPrimaryKey: id)! }

    init(_ name: String = #function) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-realm-tests")
            .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        realm = try Realm(configuration: Realm.Configuration(fileURL: directory.appendingPathComponent("q.realm")))
        // Dogs in property order: name, age, isGood.
        let rows: [[String: Any]] = [
            [
                "name": "Ann", "nickname": "An", "age": 30, "minimumAge": 18, "height": 1.70, "rating": 4, "isMember": true,
                "mood": QueryMood.happy, "priority": QueryPriority.high, "dogs": [["Rex", 5, true], ["Bo", 2, true]],
                "scores": [90, 80], "tags": ["swift", "lmdb"], "prices": ["eur": 10, "usd": 12],
            ],
            [
                "name": "Bob", "age": 17, "minimumAge": 18, "height": 1.82, "isMember": false, "mood": QueryMood.calm,
                "dogs": [["Max", 11, false]], "scores": [40], "tags": ["go"], "prices": ["eur": 50],
            ],
            [
                "name": "Cécile", "nickname": "Ceci", "age": 45, "minimumAge": 50, "height": 1.60, "rating": 2,
                "isMember": true, "mood": QueryMood.sad, "priority": QueryPriority.low,
            ],
            [
                "name": "Dan", "nickname": "dan", "age": 65, "minimumAge": 18, "height": 1.75, "rating": 5, "isMember": false,
                "mood": QueryMood.happy, "priority": QueryPriority.normal, "dogs": [["Rex", 3, false], ["Fido", 7, true]],
                "scores": [100, 60, 70], "tags": ["swift"], "prices": ["gbp": 8],
            ],
            [
                "name": "alice", "nickname": "Al", "age": 8, "minimumAge": 3, "height": 1.20, "isMember": true,
                "mood": QueryMood.calm, "priority": QueryPriority.low, "dogs": [["Bo", 1, true]], "scores": [55],
                "tags": ["lmdb", "rust"], "prices": ["eur": 5, "usd": 5],
            ],
        ]
        try realm.write {
            for (index, row) in rows.enumerated() {
                let person = QueryPerson(value: row)
                person.id = index + 1
                // Born (2000 - age) years after 1970: the older, the later.
                person.born = Date(timeIntervalSince1970: Double(2000 - person.age) * 31_556_952)
                person.balance = Decimal128(index * 100)
                person.avatar = Data([UInt8(index), 0xFF])
                realm.add(person)
                // The first dog is also the favorite and the "best" pet.
                if let first = person.dogs.first {
                    person.favorites.insert(first)
                    person.pets["best"] = first
                }
            }
            let (ann, bob, cecile, dan) = (person(1), person(2), person(3), person(4))
            ann.partner = bob
            bob.partner = ann
            dan.partner = cecile
        }
    }

    /// The ids `where` matches, after checking that the equivalent query
    /// string matches the same ones; each test then says which those are.
    func ids(
        _ query: (Query<QueryPerson>) -> Query<Bool>, _ format: String, _ arguments: Any?...,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [Int] {
        let typed = all.where(query).map(\.id).sorted()
        let string = try all.filter(format, arguments: arguments).map(\.id).sorted()
        #expect(typed == string, "where { } and \"\(format)\" differ", sourceLocation: sourceLocation)
        return typed
    }
}

/// The query string a typed query becomes.
private func format(_ query: (Query<QueryPerson>) -> Query<Bool>, in people: People) -> String {
    var text = ""
    _ = people.all.where { root in
        let condition = query(root)
        text = condition._constructPredicate().0
        return condition
    }
    return text
}

@Suite("Typed queries: where { } and index(matching:)")
struct QueryBuilderTests {
    @Test("==, !=, <, <=, >, >= against values: the rows of the same query string")
    func comparisonsWithValues() throws {
        let people = try People()
        #expect(try people.ids({ $0.age > 18 }, "age > %@", 18) == [1, 3, 4])
        #expect(try people.ids({ $0.age >= 30 }, "age >= %@", 30) == [1, 3, 4])
        #expect(try people.ids({ $0.age < 30 }, "age < %@", 30) == [2, 5])
        #expect(try people.ids({ $0.age <= 17 }, "age <= %@", 17) == [2, 5])
        #expect(try people.ids({ $0.age == 45 }, "age == %@", 45) == [3])
        #expect(try people.ids({ $0.age != 45 }, "age != %@", 45) == [1, 2, 4, 5])
        #expect(try people.ids({ $0.name == "Ann" }, "name == %@", "Ann") == [1])
        #expect(try people.ids({ $0.name > "Bob" }, "name > %@", "Bob") == [3, 4, 5])
        #expect(try people.ids({ $0.height >= 1.75 }, "height >= %@", 1.75) == [2, 4])
        let cutoff = Date(timeIntervalSince1970: Double(2000 - 40) * 31_556_952)
        #expect(try people.ids({ $0.born < cutoff }, "born < %@", cutoff) == [3, 4])
        #expect(try people.ids({ $0.isMember == false }, "isMember == %@", false) == [2, 4])
    }

    @Test("Comparing two properties of the same object, strings with options too")
    func comparisonsWithProperties() throws {
        let people = try People()
        #expect(try people.ids({ $0.age > $0.minimumAge }, "age > minimumAge") == [1, 4, 5])
        #expect(try people.ids({ $0.age <= $0.minimumAge }, "age <= minimumAge") == [2, 3])
        #expect(try people.ids({ $0.age == $0.minimumAge }, "age == minimumAge") == [])
        #expect(try people.ids({ $0.age != $0.minimumAge }, "age != minimumAge") == [1, 2, 3, 4, 5])
        #expect(
            try people.ids(
                { $0.name.starts(with: $0.nickname, options: .caseInsensitive) }, "name BEGINSWITH[c] nickname") == [1, 4, 5])
        #expect(
            try people.ids(
                { $0.name.starts(with: $0.nickname, options: [.caseInsensitive, .diacriticInsensitive]) },
                "name BEGINSWITH[cd] nickname") == [1, 3, 4, 5])
        #expect(try people.ids({ $0.nickname.equals($0.name, options: .caseInsensitive) }, "nickname ==[c] name") == [4])
    }

    @Test("&&, || and ! compose, nested; a Bool property is a condition by itself")
    func logic() throws {
        let people = try People()
        #expect(try people.ids({ $0.age > 18 && $0.isMember }, "age > %@ AND isMember == true", 18) == [1, 3])
        #expect(try people.ids({ $0.age < 10 || $0.age > 60 }, "age < %@ OR age > %@", 10, 60) == [4, 5])
        #expect(try people.ids({ !$0.isMember }, "isMember == false") == [2, 4])
        #expect(try people.ids({ $0.isMember }, "isMember == true") == [1, 3, 5])
        #expect(try people.ids({ !($0.age > 18 || $0.name == "Bob") }, "NOT (age > %@ OR name == %@)", 18, "Bob") == [5])
        #expect(
            try people.ids(
                { ($0.age > 18 && !$0.isMember) || ($0.age < 18 && $0.isMember) },
                "(age > 18 AND isMember == false) OR (age < 18 AND isMember == true)") == [4, 5])
        // && binds tighter than ||, as in Swift.
        #expect(
            try people.ids({ $0.age < 10 || $0.age > 60 && $0.isMember }, "age < 10 OR (age > 60 AND isMember == true)") == [5])
    }

    @Test("String operators and StringOptions")
    func strings() throws {
        let people = try People()
        #expect(try people.ids({ $0.name.starts(with: "A") }, "name BEGINSWITH %@", "A") == [1])
        #expect(try people.ids({ $0.name.starts(with: "a", options: .caseInsensitive) }, "name BEGINSWITH[c] %@", "a") == [1, 5])
        #expect(try people.ids({ $0.name.contains("ec") }, "name CONTAINS %@", "ec") == [])
        #expect(
            try people.ids(
                { $0.name.contains("EC", options: [.caseInsensitive, .diacriticInsensitive]) }, "name CONTAINS[cd] %@", "EC")
                == [3])
        #expect(try people.ids({ $0.name.contains("éc", options: .caseInsensitive) }, "name CONTAINS[c] %@", "éc") == [3])
        #expect(try people.ids({ $0.name.ends(with: "E", options: .caseInsensitive) }, "name ENDSWITH[c] %@", "E") == [3, 5])
        #expect(try people.ids({ $0.name.ends(with: "n") }, "name ENDSWITH %@", "n") == [1, 4])
        #expect(try people.ids({ $0.name.like("?o*") }, "name LIKE %@", "?o*") == [2])
        #expect(try people.ids({ $0.name.like("a*", caseInsensitive: true) }, "name LIKE[c] %@", "a*") == [1, 5])
        #expect(try people.ids({ $0.name.equals("ANN", options: .caseInsensitive) }, "name ==[c] %@", "ANN") == [1])
        #expect(
            try people.ids({ $0.name.notEquals("ann", options: .caseInsensitive) }, "name !=[c] %@", "ann") == [2, 3, 4, 5])
        #expect(
            try people.ids(
                { $0.name.equals("cecile", options: [.caseInsensitive, .diacriticInsensitive]) }, "name ==[cd] 'cecile'")
                == [3])
        #expect(try people.ids({ !$0.name.contains("n") }, "NOT name CONTAINS 'n'") == [2, 3, 5])
        // An optional string: nil matches none of them.
        #expect(
            try people.ids({ $0.nickname.starts(with: "a", options: .caseInsensitive) }, "nickname BEGINSWITH[c] 'a'") == [1, 5])
        // Data has the substring operators too.
        #expect(try people.ids({ $0.avatar.starts(with: Data([2])) }, "avatar BEGINSWITH %@", Data([2])) == [3])
    }

    @Test("in(_:) and ranges: IN, BETWEEN for a closed range, >= and < for a half-open one")
    func setsAndRanges() throws {
        let people = try People()
        #expect(try people.ids({ $0.age.in([17, 45, 99]) }, "age IN %@", [17, 45, 99]) == [2, 3])
        #expect(try people.ids({ $0.name.in(["Ann", "alice"]) }, "name IN {'Ann', 'alice'}") == [1, 5])
        #expect(try people.ids({ $0.mood.in([.sad, .calm]) }, "mood IN {'sad', 'calm'}") == [2, 3, 5])
        #expect(try people.ids({ !$0.age.in([17, 45]) }, "NOT age IN {17, 45}") == [1, 4, 5])
        #expect(try people.ids({ $0.age.in([Int]()) }, "age IN {}") == [])
        #expect(try people.ids({ $0.age.contains(17...45) }, "age BETWEEN {17, 45}") == [1, 2, 3])
        #expect(try people.ids({ $0.age.contains(17..<45) }, "age >= 17 AND age < 45") == [1, 2])
        #expect(try people.ids({ $0.rating.contains(2...4) }, "rating BETWEEN {2, 4}") == [1, 3])
        #expect(try people.ids({ $0.rating.contains(4..<10) }, "rating >= 4 AND rating < 10") == [1, 4])
        #expect(try people.ids({ $0.height.contains(1.6...1.75) }, "height BETWEEN {1.6, 1.75}") == [1, 3, 4])
    }

    @Test("nil, optionals, enums and their raw values")
    func optionalsAndEnums() throws {
        let people = try People()
        #expect(try people.ids({ $0.nickname == nil }, "nickname == nil") == [2])
        #expect(try people.ids({ $0.nickname != nil }, "nickname != nil") == [1, 3, 4, 5])
        #expect(try people.ids({ $0.rating == nil }, "rating == %@", nil) == [2, 5])
        #expect(try people.ids({ $0.rating > 3 }, "rating > 3") == [1, 4])
        #expect(try people.ids({ $0.partner == nil }, "partner == nil") == [3, 5])
        #expect(try people.ids({ $0.mood == .happy }, "mood == %@", QueryMood.happy) == [1, 4])
        #expect(try people.ids({ $0.mood != .happy }, "mood != 'happy'") == [2, 3, 5])
        #expect(try people.ids({ $0.mood.rawValue.starts(with: "ha") }, "mood BEGINSWITH 'ha'") == [1, 4])
        #expect(try people.ids({ $0.priority == nil }, "priority == nil") == [2])
        #expect(try people.ids({ $0.priority == .low }, "priority == 0") == [3, 5])
        #expect(try people.ids({ $0.priority > .low }, "priority > 0") == [1, 4])
        #expect(try people.ids({ $0.priority.rawValue >= 1 }, "priority >= 1") == [1, 4])
    }

    @Test("UUID, ObjectId, Decimal128 and Date values")
    func storedTypes() throws {
        let people = try People()
        let dan = people.person(4)
        #expect(try people.ids({ $0.uuid == dan.uuid }, "uuid == %@", dan.uuid) == [4])
        #expect(try people.ids({ $0.objectId == dan.objectId }, "objectId == %@", dan.objectId) == [4])
        #expect(
            try people.ids(
                { $0.objectId.in([dan.objectId, people.person(1).objectId]) }, "objectId IN %@",
                [dan.objectId, people.person(1).objectId]) == [1, 4])
        #expect(try people.ids({ $0.balance > Decimal128(150) }, "balance > %@", Decimal128(150)) == [3, 4, 5])
        #expect(
            try people.ids({ $0.balance.contains(Decimal128(100)...Decimal128(200)) }, "balance BETWEEN {100, 200}") == [2, 3])
        #expect(try people.ids({ $0.born == dan.born }, "born == %@", dan.born) == [4])
    }

    @Test("Key paths through links, optional links and links of links; a link equal to an object")
    func links() throws {
        let people = try People()
        #expect(try people.ids({ $0.partner.name == "Bob" }, "partner.name == 'Bob'") == [1])
        #expect(try people.ids({ $0.partner.age > 40 }, "partner.age > 40") == [4])
        #expect(try people.ids({ $0.partner.partner.name == "Ann" }, "partner.partner.name == 'Ann'") == [1])
        #expect(
            try people.ids({ $0.partner.name.starts(with: "c", options: .caseInsensitive) }, "partner.name BEGINSWITH[c] 'c'")
                == [4])
        #expect(try people.ids({ !($0.partner.age > 40) }, "NOT partner.age > 40") == [1, 2, 3, 5])
        let bob = people.person(2)
        #expect(try people.ids({ $0.partner == bob }, "partner == %@", bob) == [1])
        #expect(try people.ids({ $0.partner != bob }, "partner != %@", bob) == [2, 3, 4, 5])
        #expect(try people.ids({ $0.partner.in([bob, people.person(3)]) }, "partner IN %@", [bob, people.person(3)]) == [1, 4])
        // From the dogs' side: linking objects, one by one.
        let dogs = people.realm.objects(QueryDog.self)
        #expect(dogs.where { $0.owners.name == "Dan" }.map(\.name).sorted() == ["Fido", "Rex"])
        #expect(dogs.where { $0.owners.name == "Dan" }.count == dogs.filter("ANY owners.name == 'Dan'").count)
        #expect(dogs.where { $0.owners.count == 0 }.count == 0)
        #expect(dogs.where { $0.owners.age.max > 60 }.map(\.name).sorted() == ["Fido", "Rex"])
    }

    @Test("A key path through a list of objects compares each one (ANY), negated it is NONE")
    func anyOverLists() throws {
        let people = try People()
        #expect(try people.ids({ $0.dogs.name == "Rex" }, "ANY dogs.name == 'Rex'") == [1, 4])
        #expect(try people.ids({ $0.dogs.age > 6 }, "ANY dogs.age > 6") == [2, 4])
        #expect(try people.ids({ !($0.dogs.name == "Rex") }, "NONE dogs.name == 'Rex'") == [2, 3, 5])
        #expect(try people.ids({ $0.dogs.isGood }, "ANY dogs.isGood == true") == [1, 4, 5])
        #expect(try people.ids({ !$0.dogs.isGood }, "ANY dogs.isGood == false") == [2, 4])
        #expect(try people.ids({ $0.dogs.name.in(["Bo", "Max"]) }, "ANY dogs.name IN {'Bo', 'Max'}") == [1, 2, 5])
        #expect(
            try people.ids({ $0.dogs.name.starts(with: "f", options: .caseInsensitive) }, "ANY dogs.name BEGINSWITH[c] 'f'") == [
                4
            ])
        #expect(try people.ids({ $0.dogs.age.contains(6...20) }, "ANY dogs.age BETWEEN {6, 20}") == [2, 4])
        // A half-open range holds for one dog, as BETWEEN does: Ann's dogs are 5 and 2.
        #expect(
            try people.ids({ $0.dogs.age.contains(3..<5) }, "SUBQUERY(dogs, $d, $d.age >= 3 AND $d.age < 5).@count > 0") == [4])
        #expect(try people.ids({ $0.dogs.age >= 3 && $0.dogs.age < 5 }, "ANY dogs.age >= 3 AND ANY dogs.age < 5") == [1, 4])
        #expect(
            try people.ids(
                { ($0.dogs.age.contains(2..<6) && $0.dogs.isGood).count == 2 },
                "SUBQUERY(dogs, $d, $d.age >= 2 AND $d.age < 6 AND $d.isGood == true).@count == 2") == [1])
        #expect(try people.ids({ $0.favorites.name == "Rex" }, "ANY favorites.name == 'Rex'") == [1, 4])
        #expect(try people.ids({ $0.partner.dogs.name == "Max" }, "ANY partner.dogs.name == 'Max'") == [1])
        // Two conditions on the list may hold for different dogs; see the subquery test for one dog.
        #expect(
            try people.ids({ $0.dogs.name == "Rex" && $0.dogs.isGood }, "ANY dogs.name == 'Rex' AND ANY dogs.isGood == true") == [
                1, 4,
            ])
        let fido = people.person(4).dogs[1]
        #expect(try people.ids({ $0.dogs.contains(fido) }, "%@ IN dogs", fido) == [4])
        #expect(try people.ids({ $0.dogs == fido }, "ANY dogs == %@", fido) == [4])
        #expect(
            try people.ids(
                { $0.dogs.containsAny(in: [fido, people.person(2).dogs[0]]) }, "ANY dogs IN %@", [fido, people.person(2).dogs[0]])
                == [2, 4])
    }

    @Test("Lists and sets of values: contains, containsAny, comparisons with ANY element")
    func collectionsOfValues() throws {
        let people = try People()
        #expect(try people.ids({ $0.scores == 100 }, "ANY scores == 100") == [4])
        #expect(try people.ids({ $0.scores > 85 }, "ANY scores > 85") == [1, 4])
        #expect(try people.ids({ $0.scores <= 40 }, "ANY scores <= 40") == [2])
        #expect(try people.ids({ $0.scores.contains(40) }, "40 IN scores") == [2])
        #expect(try people.ids({ $0.scores.containsAny(in: [55, 60]) }, "ANY scores IN {55, 60}") == [4, 5])
        #expect(try people.ids({ $0.tags.contains("swift") }, "'swift' IN tags") == [1, 4])
        #expect(try people.ids({ !$0.tags.contains("swift") }, "NOT 'swift' IN tags") == [2, 3, 5])
        #expect(try people.ids({ $0.tags.containsAny(in: ["go", "rust"]) }, "ANY tags IN %@", ["go", "rust"]) == [2, 5])
        #expect(try people.ids({ $0.tags != "swift" }, "ANY tags != 'swift'") == [1, 2, 5])
    }

    @Test("count, min, max, sum and avg of collections and of a property of their objects")
    func aggregates() throws {
        let people = try People()
        #expect(try people.ids({ $0.dogs.count == 2 }, "dogs.@count == 2") == [1, 4])
        #expect(try people.ids({ $0.dogs.count == 0 }, "dogs.@count == 0") == [3])
        #expect(try people.ids({ $0.scores.count > 1 }, "scores.@count > 1") == [1, 4])
        #expect(try people.ids({ $0.tags.count >= 2 }, "tags.@count >= 2") == [1, 5])
        #expect(try people.ids({ $0.scores.avg > 75 }, "scores.@avg > 75") == [1, 4])
        #expect(try people.ids({ $0.scores.max >= 100 }, "scores.@max >= 100") == [4])
        #expect(try people.ids({ $0.scores.min < 50 }, "scores.@min < 50") == [2])
        #expect(try people.ids({ $0.scores.sum > 150 }, "scores.@sum > 150") == [1, 4])
        #expect(try people.ids({ $0.dogs.age.avg > 4 }, "dogs.@avg.age > 4") == [2, 4])
        #expect(try people.ids({ $0.dogs.age.max > 6 }, "dogs.@max.age > 6") == [2, 4])
        #expect(try people.ids({ $0.dogs.age.sum == 10 }, "dogs.@sum.age == 10") == [4])
        #expect(try people.ids({ $0.dogs.age.min == 2 }, "dogs.@min.age == 2") == [1])
        #expect(try people.ids({ $0.partner.dogs.age.sum > 5 }, "partner.dogs.@sum.age > 5") == [1, 2])
        // Every element in range; an empty list is not.
        #expect(try people.ids({ $0.scores.contains(50...100) }, "scores.@min >= 50 AND scores.@max <= 100") == [1, 4, 5])
        #expect(try people.ids({ $0.scores.contains(50..<100) }, "scores.@min >= 50 AND scores.@max < 100") == [1, 5])
    }

    @Test("Maps: subscript, keys, values, contains, containsAny, count and aggregates")
    func maps() throws {
        let people = try People()
        #expect(try people.ids({ $0.prices["eur"] == 10 }, "prices['eur'] == 10") == [1])
        #expect(try people.ids({ $0.prices["eur"] > 8 }, "prices['eur'] > 8") == [1, 2])
        #expect(try people.ids({ $0.prices.keys == "usd" }, "ANY prices.@allKeys == 'usd'") == [1, 5])
        #expect(
            try people.ids(
                { $0.prices.keys.starts(with: "U", options: .caseInsensitive) }, "ANY prices.@allKeys BEGINSWITH[c] 'U'")
                == [1, 5])
        #expect(try people.ids({ $0.prices.keys.in(["gbp", "jpy"]) }, "ANY prices.@allKeys IN {'gbp', 'jpy'}") == [4])
        #expect(try people.ids({ $0.prices.values > 20 }, "ANY prices.@allValues > 20") == [2])
        #expect(try people.ids({ $0.prices.contains(5) }, "5 IN prices") == [5])
        #expect(try people.ids({ $0.prices.containsAny(in: [8, 50]) }, "ANY prices IN {8, 50}") == [2, 4])
        #expect(try people.ids({ $0.prices.count == 2 }, "prices.@count == 2") == [1, 5])
        #expect(try people.ids({ $0.prices.sum > 20 }, "prices.@sum > 20") == [1, 2])
        #expect(try people.ids({ $0.prices.max < 10 }, "prices.@max < 10") == [4, 5])
        #expect(try people.ids({ $0.prices.values.avg > 10 }, "prices.@avg > 10") == [1, 2])
        #expect(try people.ids({ $0.prices.contains(5...12) }, "prices.@min >= 5 AND prices.@max <= 12") == [1, 4, 5])
        // A map of objects: its values' properties, one by one.
        #expect(try people.ids({ $0.pets.values.name == "Rex" }, "ANY pets.name == 'Rex'") == [1, 4])
        let danRex = people.person(4).dogs[0]
        #expect(try people.ids({ $0.pets["best"] == danRex }, "pets['best'] == %@", danRex) == [4])
    }

    @Test("(condition).count is a SUBQUERY: the conditions hold for the same element")
    func subqueries() throws {
        let people = try People()
        #expect(
            try people.ids(
                { ($0.dogs.name == "Rex" && $0.dogs.isGood).count > 0 },
                "SUBQUERY(dogs, $d, $d.name == 'Rex' AND $d.isGood == true).@count > 0") == [1])
        #expect(try people.ids({ ($0.dogs.age > 1).count == 2 }, "SUBQUERY(dogs, $d, $d.age > 1).@count == 2") == [1, 4])
        #expect(try people.ids({ ($0.dogs.age > 1).count == 0 }, "SUBQUERY(dogs, $d, $d.age > 1).@count == 0") == [3, 5])
        #expect(try people.ids({ ($0.scores > 65).count >= 2 }, "SUBQUERY(scores, $s, $s > 65).@count >= 2") == [1, 4])
        #expect(
            try people.ids(
                { ($0.dogs.age > $0.dogs.age).count > 0 || ($0.favorites.isGood).count == 1 },
                "SUBQUERY(dogs, $d, $d.age > $d.age).@count > 0 OR SUBQUERY(favorites, $f, $f.isGood == true).@count == 1")
                == [1, 5])
        #expect(
            try people.ids(
                { $0.age > 20 && !(($0.dogs.name.starts(with: "R") || $0.dogs.age < 2).count > 0) },
                "age > 20 AND NOT SUBQUERY(dogs, $d, $d.name BEGINSWITH 'R' OR $d.age < 2).@count > 0") == [3])
        // Two subqueries get their own variables.
        let format = format({ ($0.dogs.age > 5).count > 0 && ($0.favorites.age < 5).count > 0 }, in: people)
        #expect(
            format
                == "((SUBQUERY(dogs, $col1, ($col1.age > %@)).@count > %@) && (SUBQUERY(favorites, $col2, ($col2.age < %@)).@count > %@))"
        )
    }

    @Test("The query strings it writes: ANY, @aggregates, map keys, BETWEEN, NOT")
    func writtenQueries() throws {
        let people = try People()
        #expect(format({ $0.age > 18 && $0.name.starts(with: "A") }, in: people) == "((age > %@) && (name BEGINSWITH %@))")
        #expect(format({ $0.dogs.name == "Rex" }, in: people) == "(ANY dogs.name == %@)")
        #expect(format({ $0.dogs.age.avg > 4 }, in: people) == "(dogs.@avg.age > %@)")
        #expect(format({ $0.scores.count > 1 }, in: people) == "(scores.@count > %@)")
        #expect(format({ $0.prices["eur"] > 8 }, in: people) == "(prices[%@] > %@)")  // the key is an argument, as Realm writes it
        #expect(
            format({ $0.prices.keys.starts(with: "u", options: [.caseInsensitive, .diacriticInsensitive]) }, in: people)
                == "(ANY prices.@allKeys BEGINSWITH[cd] %@)")
        #expect(format({ $0.rating.contains(2...4) }, in: people) == "(rating BETWEEN {%@, %@})")
        // Realm's own forms: a Bool property without parentheses, NOT inside a comparison's.
        #expect(format({ !$0.isMember || !($0.age < 3) }, in: people) == "(isMember == false || (NOT age < %@))")
        #expect(format({ $0.age == 0 && $0.isMember }, in: people) == "((age == %@) && isMember == true)")
        #expect(format({ !($0.age == 0 || $0.isMember) }, in: people) == "NOT ((age == %@) || isMember == true)")
        #expect(
            people.all.where { !$0.isMember || !($0.age < 3) }.count
                == people.all.filter { !$0.isMember || !($0.age < 3) }.count)
        #expect(format({ $0.tags.contains("go") }, in: people) == "(%@ IN tags)")
        var arguments: [Any] = []
        _ = people.all.where {
            let condition = $0.age.in([1, 2]) || $0.nickname == nil
            arguments = condition._constructPredicate().1
            return condition
        }
        #expect(arguments.count == 2 && arguments[1] is NSNull)
        #expect((arguments[0] as? [Any?])?.compactMap { $0 as? Int } == [1, 2])
        // Built without a Realm, as Realm's test hook builds it.
        let (format, values) = (Query<QueryPerson>._constructForTesting().age > 18)._constructPredicate()
        #expect(format == "(age > %@)" && values.first as? Int == 18)
        // As Realm's tests compare them: through NSPredicate, lists of values included.
        let (inFormat, inValues) = Query<QueryPerson>._constructForTesting().age.in([1, 2])._constructPredicate()
        #expect(
            NSPredicate(format: inFormat, argumentArray: inValues)
                == NSPredicate(format: "(age IN %@)", argumentArray: [[1, 2]]))
        #expect(
            NSPredicate(format: inFormat, argumentArray: inValues)
                != NSPredicate(format: "(age IN %@)", argumentArray: [[1, 3]]))
    }

    @Test("where on Results, List, MutableSet, LinkingObjects, AnyRealmCollection and any RealmCollection; index(matching:)")
    func collections() throws {
        let people = try People()
        let ann = people.person(1)
        #expect(ann.dogs.where { $0.age > 3 }.map(\.name) == ["Rex"])
        #expect(ann.favorites.where { $0.name == "Rex" }.count == 1)
        #expect(ann.dogs[0].owners.where { $0.isMember }.map(\.name) == ["Ann"])
        #expect(AnyRealmCollection(people.all).where { $0.age > 40 }.map(\.id).sorted() == [3, 4])
        func members<C: RealmCollection>(_ collection: C) -> Int where C.Element == QueryPerson {
            collection.where { $0.isMember }.count
        }
        #expect(members(people.all) == 3)
        #expect(members(people.all.where { $0.age > 18 }) == 2)
        // A where on a where, sorted afterwards, stays live.
        let adults = people.all.where { $0.age >= 18 }.where { $0.name != "Dan" }.sorted(byKeyPath: "age", ascending: false)
        #expect(adults.map(\.name) == ["Cécile", "Ann"])
        try people.realm.write { people.person(2).age = 70 }
        #expect(adults.map(\.name) == ["Bob", "Cécile", "Ann"])
        // index(matching:) gives positions in the collection's order.
        let dan = people.person(4)
        #expect(dan.dogs.index(matching: { $0.isGood }) == 1)
        #expect(dan.dogs.index(matching: { $0.age > 100 }) == nil)
        #expect(people.all.sorted(byKeyPath: "age").index(matching: { $0.name.starts(with: "C") }) == 2)
        #expect(AnyRealmCollection(dan.dogs).index(matching: { $0.name == "Fido" }) == 1)
    }

    @Test("where uses the index the equivalent query string uses")
    func usesIndexes() throws {
        let people = try People()
        let typed = people.all.where { $0.name == "Ann" }.explain()
        #expect(typed == people.all.filter("name == %@", "Ann").explain())
        #expect(typed.contains("index on name"))
        let prefix = people.all.where { $0.name.starts(with: "A") && $0.age > 3 }.explain()
        #expect(prefix == people.all.filter("name BEGINSWITH %@ AND age > %@", "A", 3).explain())
        #expect(prefix.contains("index on name"))
        // The same query without the indexed property scans.
        #expect(!people.all.where { $0.age > 3 }.explain().contains("index"))
    }

    @Test("a comparison with an unmanaged object matches nothing (its != everything), as in Realm")
    func unmanagedObjectArgument() throws {
        let people = try People()
        let stranger = QueryPerson()
        #expect(people.all.where { $0.partner == stranger }.isEmpty)
        #expect(people.all.where { $0.partner != stranger }.count == people.all.count)
        #expect(people.all.where { $0.partner.in([stranger]) }.isEmpty)
        let withPartner = people.all.filter("partner != nil")
        if let partner = withPartner.first?.partner {
            #expect(people.all.where { $0.partner.in([stranger, partner]) }.count >= 1)
        }
    }

    @Test("A query Trove cannot run traps with the reason, as Realm raises")
    func misuse() async throws {
        let acrossLinks = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let people = try People()
            _ = people.all.where { $0.partner.age > $0.age }.count
        }
        #expect(String(decoding: try #require(acrossLinks).standardErrorContent, as: UTF8.self).contains("partner.age and age"))
        let noCollection = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let people = try People()
            _ = people.all.where { ($0.age > 3).count > 0 }.count
        }
        #expect(
            String(decoding: try #require(noCollection).standardErrorContent, as: UTF8.self).contains(
                "goes through no collection"))
        let afterSubscript = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let people = try People()
            _ = people.all.where { $0.pets["best"].age > 4 }.count
        }
        #expect(
            String(decoding: try #require(afterSubscript).standardErrorContent, as: UTF8.self).contains(
                "a subscript ends a key path"))
    }
}

@Suite("Typed queries into a mixed value's nested collections")
struct MixedPathQueryTests {
    @Test("$0.payload[0], [\"key\"] and .any reach into nested collections, written as Realm writes them")
    func nestedPaths() throws {
        let realm = try makeRealm(objectTypes: [QueryBag.self])
        try realm.write {
            realm.add(
                QueryBag(value: ["id": 1, "payload": AnyRealmValue.fromArray([.fromDictionary(["k": .int(5)]), .bool(true)])]))
            realm.add(
                QueryBag(value: ["id": 2, "payload": AnyRealmValue.fromDictionary(["k": .fromArray([.int(5), .int(6)])])]))
        }
        let bags = realm.objects(QueryBag.self)
        func ids(_ query: (Query<QueryBag>) -> Query<Bool>) -> [Int] { bags.where(query).map(\.id).sorted() }
        #expect(ids { $0.payload[0]["k"] == .int(5) } == [1])
        #expect(ids { $0.payload["k"][1] > .int(5) } == [2])
        #expect(ids { $0.payload["k"].any == .int(6) } == [2])
        #expect(ids { $0.payload.any == .bool(true) } == [1])
        var text = ""
        _ = bags.where { root in
            let condition = root.payload[0]["k"].any == .int(5)
            let (format, arguments) = condition._constructPredicate()
            text = format + " " + arguments.map { "\($0)" }.joined(separator: ",")
            return condition
        }
        #expect(text == "(payload[%@][%@][%K] == %@) 0,k,#any,5")
    }
}
