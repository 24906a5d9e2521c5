import Foundation
import Testing

@testable import Trove

final class Profile: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var tags = MutableSet<String>()
    @Persisted var luckyNumbers = MutableSet<Int>()
    @Persisted var links = Map<String, String>()
    @Persisted var scores = Map<String, Double?>()
    @Persisted var friends = MutableSet<Badge>()
    @Persisted var badges = Map<String, Badge>()
}

final class Badge: Object {
    @Persisted var title = ""
}

final class Shelf: Object {
    @Persisted var slots = Map<String, Badge?>()
}

final class EveryTypeCollections: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools = List<Bool>()
    @Persisted var int8s = List<Int8>()
    @Persisted var int16s = MutableSet<Int16>()
    @Persisted var int32s = List<Int32?>()
    @Persisted var floats = List<Float>()
    @Persisted var doubles = Map<String, Double>()
    @Persisted var datas = List<Data?>()
    @Persisted var dates = MutableSet<Date>()
    @Persisted var uuids = List<UUID>()
    @Persisted var decimals = Map<String, Decimal?>()
    @Persisted var moods = List<Mood>()
}

@Suite struct SetAndMapTests {
    private func badge(_ title: String) -> Badge {
        let badge = Badge()
        badge.title = title
        return badge
    }

    @Test func aSetKeepsDistinctValuesInValueOrderAndPersists() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        profile.tags.insert("sea")
        profile.tags.insert("sea")
        #expect(profile.tags.count == 1)  // unmanaged sets are sets too
        try db.write { try db.add(profile) }
        try db.write {
            profile.tags.formUnion(["beach", "sea", "sun"])
            profile.luckyNumbers.formUnion([7, -3, 7, 42])
        }
        #expect(profile.tags.array() == ["beach", "sea", "sun"])
        #expect(profile.luckyNumbers.array() == [-3, 7, 42])
        #expect(profile.tags.contains("sun"))
        #expect(!profile.tags.contains("snow"))
        try db.write {
            profile.tags.remove("sea")
            profile.tags.remove("not there")
            profile.luckyNumbers.formIntersection([7, 42, 100])
        }
        #expect(profile.tags.array() == ["beach", "sun"])
        #expect(profile.luckyNumbers.array() == [7, 42])
        #expect(profile.tags.isSubset(of: ["beach", "sun", "x"]))
        #expect(profile.tags.intersects(["sun"]))
        try db.write { profile.tags.subtract(["beach"]) }
        let reopened = try Database(configuration: db.configuration)
        #expect(reopened.object(ofType: Profile.self, forPrimaryKey: "p")!.tags.array() == ["sun"])
        expectValid(db)
    }

    @Test func longStringsThatShareAPrefixStayDistinctMembers() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        try db.write { try db.add(profile) }
        let prefix = String(repeating: "x", count: 600)
        try db.write {
            profile.tags.insert(prefix + "a")
            profile.tags.insert(prefix + "b")
            profile.tags.insert(prefix + "a")
        }
        #expect(profile.tags.count == 2)
        #expect(profile.tags.contains(prefix + "b"))
        #expect(!profile.tags.contains(prefix + "c"))
        try db.write { profile.tags.remove(prefix + "a") }
        #expect(profile.tags.array() == [prefix + "b"])
        expectValid(db)
    }

    @Test func aMapGetsSetsRemovesAndPersists() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        profile.links["blog"] = "https://a.example"
        try db.write { try db.add(profile) }
        #expect(profile.links["blog"] == "https://a.example")
        try db.write {
            profile.links["code"] = "https://c.example"
            profile.links["blog"] = "https://b.example"
            profile.scores["math"] = 9.5
            profile.scores["art"] = .some(nil)  // a stored nil, not a removal
        }
        #expect(profile.links.keys == ["blog", "code"])
        #expect(profile.links.values == ["https://b.example", "https://c.example"])
        #expect(profile.scores.count == 2)
        #expect(profile.scores["art"] == .some(nil))
        #expect(profile.scores["none"] == nil)
        try db.write {
            #expect(profile.links.removeValue(forKey: "code") == "https://c.example")
            profile.scores["math"] = nil
        }
        #expect(profile.links.count == 1)
        #expect(profile.scores.keys == ["art"])
        let reopened = try Database(configuration: db.configuration)
        #expect(reopened.object(ofType: Profile.self, forPrimaryKey: "p")!.links["blog"] == "https://b.example")
        expectValid(db)
    }

    @Test func aTooLongMapKeyIsAClearErrorAndTheWriteFailsWhole() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        try db.write { try db.add(profile) }
        let error = expectTroveError(.invalidValue) {
            try db.write { profile.links[String(repeating: "k", count: 500)] = "v" }
        }
        #expect(error?.message.contains("at most 400") == true)
        #expect(profile.links.isEmpty)
    }

    @Test func setsAndMapsOfObjectsLoseADeletedObjectAndAnswerQueries() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        let gold = badge("gold")
        profile.friends.formUnion([gold, badge("silver")])
        profile.badges["first"] = gold
        profile.badges["second"] = badge("bronze")
        try db.write { try db.add(profile) }
        #expect(db.objects(Badge.self).count == 3)
        #expect(profile.friends.count == 2)
        #expect(profile.friends.contains(gold))
        #expect(try profile.friends.filter("title BEGINSWITH 's'").map(\.title) == ["silver"])
        #expect(profile.badges["first"]?.title == "gold")
        try db.write { try db.delete(gold) }
        #expect(profile.friends.map(\.title) == ["silver"])
        #expect(profile.badges.keys == ["second"])
        expectValid(db)
        try db.write { try db.delete(profile) }  // nullify: the badges stay
        #expect(db.objects(Badge.self).count == 2)
        expectValid(db)
    }

    @Test func aMapWhoseValuesCanBeNilKeepsTheKeyOfADeletedObject() throws {
        let db = try makeDatabase()
        let shelf = Shelf()
        let gold = badge("gold")
        shelf.slots["top"] = gold
        shelf.slots["bottom"] = badge("bronze")
        try db.write { try db.add(shelf) }
        var changes: [CollectionChangeSet] = []
        let token = shelf.slots.observe { changes.append($0) }
        try db.write { try db.delete(gold) }
        #expect(shelf.slots.keys.sorted() == ["bottom", "top"])
        #expect(shelf.slots["top"] == .some(nil))
        #expect(shelf.slots["bottom"]??.title == "bronze")
        #expect(changes.last?.modifications == [shelf.slots.keys.firstIndex(of: "top")!])
        #expect(changes.last?.deletions == [])
        expectValid(db)
        _ = token
    }

    @Test func queriesReachMapKeysValuesAndSubscripts() throws {
        let db = try makeDatabase(#function + UUID().uuidString)
        try db.write {
            for (name, scores) in [("ann", ["math": 9.0, "art.history": 4.0]), ("bo", ["math": 3.0]), ("cy", [:])] {
                let profile = Profile()
                profile.name = name
                for (key, value) in scores { profile.scores[key] = value }
                try db.add(profile)
            }
        }
        let profiles = db.objects(Profile.self)
        func names(_ query: String, _ arguments: Any?...) throws -> [String] {
            try profiles.filter(query, arguments: arguments).map(\.name)
        }
        #expect(try names("scores['math'] > 5") == ["ann"])
        #expect(try names("scores['art.history'] == 4") == ["ann"])  // a key with a dot
        #expect(try names("scores['math'] == nil") == ["cy"])  // an absent key is nil
        #expect(try names("scores[%@] > %@", "art.history", 3) == ["ann"])  // the key as an argument
        #expect(try names("scores[%@] < %@ AND name != %@", "math", 5, "cy") == ["bo"])
        #expect(
            expectTroveError(.invalidQuery) { try profiles.filter("scores[%@] > 1", 7) }?.message.contains("takes one key")
                == true)
        #expect(try names("ANY scores.@allKeys BEGINSWITH 'art'") == ["ann"])
        #expect(try names("scores.@allKeys == 'math'") == ["ann", "bo"])
        #expect(try names("NONE scores.@allKeys IN {'math', 'gym'}") == ["cy"])
        #expect(try names("ALL scores.@allKeys == 'math'") == ["bo", "cy"])
        #expect(try names("ANY scores.@allValues < 4") == ["bo"])
        #expect(try names("scores.@count == 0") == ["cy"])
        #expect(try names("SUBQUERY(scores, $s, $s > 3).@count == 2") == ["ann"])
        let notMap = expectTroveError(.invalidQuery) { try profiles.filter("name['x'] == 'y'") }
        #expect(notMap?.message.contains("not a Map") == true)
        expectTroveError(.invalidQuery) { try profiles.filter("tags.@allKeys == 'x'") }
        expectTroveError(.invalidQuery) { try profiles.filter("scores.@allKeys == 3") }
    }

    @Test func aRolledBackSetOrMapChangeIsUndone() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        profile.tags.insert("a")
        profile.links["k"] = "v"
        try db.write { try db.add(profile) }
        try db.beginWrite()
        profile.tags.removeAll()
        profile.links["k"] = "changed"
        profile.badges["new"] = badge("new")
        db.cancelWrite()
        #expect(profile.tags.array() == ["a"])
        #expect(profile.links["k"] == "v")
        #expect(profile.badges.isEmpty)
        #expect(db.objects(Badge.self).isEmpty)
        expectValid(db)
    }

    @Test func everyStoredTypeGoesInEveryKindOfCollectionAndSurvivesReopen() throws {
        let db = try makeDatabase()
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_234_567)
        let object = EveryTypeCollections()
        object.id = 1
        try db.write { try db.add(object) }
        try db.write {
            object.bools.append(contentsOf: [true, false])
            object.int8s.append(-128)
            object.int16s.formUnion([300, -300, 300])
            object.int32s.append(contentsOf: [nil, 70_000])
            object.floats.append(1.5)
            object.doubles["pi"] = 3.14159
            object.datas.append(contentsOf: [Data([1, 2, 3]), nil])
            object.dates.insert(date)
            object.uuids.append(uuid)
            object.decimals["price"] = Decimal(string: "19.99")
            object.decimals["none"] = .some(nil)
            object.moods.append(contentsOf: [.sad, .happy])
        }
        let reopened = try Database(configuration: db.configuration)
        let stored = try #require(reopened.object(ofType: EveryTypeCollections.self, forPrimaryKey: 1))
        #expect(Array(stored.bools) == [true, false])
        #expect(Array(stored.int8s) == [-128])
        #expect(stored.int16s.array() == [-300, 300])
        #expect(Array(stored.int32s) == [nil, 70_000])
        #expect(Array(stored.floats) == [1.5])
        #expect(stored.doubles["pi"] == 3.14159)
        #expect(Array(stored.datas) == [Data([1, 2, 3]), nil])
        #expect(stored.dates.contains(date))
        #expect(Array(stored.uuids) == [uuid])
        #expect(stored.decimals["price"] == Decimal(string: "19.99"))
        #expect(stored.decimals["none"] == .some(nil))
        #expect(Array(stored.moods) == [.sad, .happy])
        expectValid(reopened)
    }

    @Test func randomSetAndMapChangesMatchSwiftCollectionsAndPersist() throws {
        let db = try makeDatabase()
        let profile = Profile()
        profile.name = "p"
        try db.write { try db.add(profile) }
        var set = Set<Int>()
        var map: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<300 {
            let value = Int.random(in: 0..<40, using: &generator)
            let key = "k\(Int.random(in: 0..<30, using: &generator))"
            try db.write {
                switch Int.random(in: 0..<6, using: &generator) {
                case 0, 1:
                    profile.luckyNumbers.insert(value)
                    set.insert(value)
                    profile.links[key] = "v\(step)"
                    map[key] = "v\(step)"
                case 2:
                    profile.luckyNumbers.remove(value)
                    set.remove(value)
                    profile.links[key] = nil
                    map[key] = nil
                case 3:
                    let other = Set((0..<10).map { _ in Int.random(in: 0..<40, using: &generator) })
                    profile.luckyNumbers.formIntersection(other.union(set.prefix(20)))
                    set.formIntersection(other.union(set.prefix(20)))
                case 4 where step % 40 == 0:
                    profile.luckyNumbers.removeAll()
                    set.removeAll()
                    profile.links.removeAll()
                    map.removeAll()
                default:
                    profile.luckyNumbers.subtract([value, value + 1])
                    set.subtract([value, value + 1])
                    #expect(profile.links.removeValue(forKey: key) == map.removeValue(forKey: key))
                }
            }
            #expect(profile.luckyNumbers.array() == set.sorted())
            #expect(profile.links.keys == map.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
        let reopened = try #require(
            try Database(configuration: db.configuration).object(ofType: Profile.self, forPrimaryKey: "p"))
        #expect(reopened.luckyNumbers.array() == set.sorted())
        #expect(Dictionary(uniqueKeysWithValues: reopened.links.entries().map { ($0.key, $0.value) }) == map)
        expectValid(db)
    }
}
