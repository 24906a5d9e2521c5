import Foundation
import Testing

@testable import Trove

final class Setting: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(indexed: true) var value: Mixed = .none
    @Persisted var history = List<Mixed>()
    @Persisted var options = MutableSet<Mixed>()
    @Persisted var byKey = Map<String, Mixed>()
}

final class Medal: Object {
    @Persisted var label = ""
}

/// Two classes stored under one name, as two modules' `Photo` would be.
final class HomonymA: Object {
    @Persisted var label = ""
    override class func _realmObjectName() -> String? { "Homonym" }
}

final class HomonymB: Object {
    @Persisted var label = ""
    override class func _realmObjectName() -> String? { "Homonym" }
}

final class HomonymHolder: Object {
    @Persisted var value: Mixed = .none
}

/// Mixed properties: any stored type per object, links to any object, in
/// collections, queried across types.
@Suite struct MixedTests {
    @Test("a mixed link reads as the class of the handle's configuration, when the process has two classes of that name")
    func mixedLinkReadsTheHandlesClass() throws {
        for round in 0..<8 {
            let writer = try makeDatabase("homonym\(round)") { $0.objectTypes = [HomonymHolder.self, HomonymA.self] }
            try writer.write {
                let target = HomonymA()
                target.label = "x"
                let holder = HomonymHolder()
                holder.value = .object(target)
                try writer.add(holder)
            }
            #expect(writer.objects(HomonymHolder.self).first?.value.object(HomonymA.self)?.label == "x")
            // Another handle on the file, configured with the other class: it reads its own class.
            var configuration = writer.configuration
            configuration.objectTypes = [HomonymHolder.self, HomonymB.self]
            let reader = try Database(configuration: configuration)
            let held = reader.objects(HomonymHolder.self).first?.value
            #expect(held?.object(HomonymB.self)?.label == "x", "round \(round)")
        }
    }

    private let values: [Mixed] = [
        .none, .int(3), .bool(true), .float(1.5), .double(2.25), .string("dark"), .data(Data([1, 2])),
        .date(Date(timeIntervalSinceReferenceDate: 12)), .objectId(try! ObjectId(string: "1234567890ab1234567890ab")),
        .decimal128(try! Decimal128(string: "1.10")), .uuid(UUID(uuidString: "137decc8-b300-4954-a233-f89909f4fd89")!),
    ]

    /// One Setting per value, named s0, s1, … in the order of `values`.
    private func addOnePerValue(_ db: Database) throws {
        for (index, value) in values.enumerated() {
            let setting = Setting()
            setting.name = "s\(index)"
            setting.value = value
            try db.add(setting)
        }
    }

    @Test("every kind of value round-trips through a property, a list, a set and a map, also after reopening")
    func roundTrips() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("mixed.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url))
            try db.write {
                try addOnePerValue(db)
                let all = Setting()
                all.name = "all"
                all.history.append(objectsIn: values)
                all.options.insert(objectsIn: values)
                for (index, value) in values.enumerated() { all.byKey["k\(index)"] = value }
                try db.add(all)
            }
            expectValid(db)
        }
        let db = try Database(configuration: Configuration(fileURL: url))
        for (index, value) in values.enumerated() {
            #expect(db.object(ofType: Setting.self, forPrimaryKey: "s\(index)")?.value == value)
        }
        let all = try #require(db.object(ofType: Setting.self, forPrimaryKey: "all"))
        #expect(Array(all.history) == values)
        #expect(Set(all.options) == Set(values))
        #expect(all.byKey["k5"] == .string("dark") && all.byKey["k0"] == Mixed.none)
    }

    @Test("a mixed value links to an object of any type; the link is added with it and reads as .none once deleted")
    func links() throws {
        let db = try makeDatabase()
        let badge = Medal()
        badge.label = "gold"
        try db.write {
            let setting = Setting()
            setting.name = "a"
            setting.value = .object(badge)
            try db.add(setting)
            let other = Setting()
            other.name = "b"
            try db.add(other)
            other.value = .object(Setting())  // unmanaged: added by the assignment
            other.history.append(.object(badge))
        }
        let a = try #require(db.object(ofType: Setting.self, forPrimaryKey: "a"))
        #expect(a.value.object(Medal.self)?.label == "gold")
        #expect(a.value.object(Setting.self) == nil)
        #expect(db.objects(Medal.self).count == 1)
        #expect(db.objects(Setting.self).count == 3)
        let b = try #require(db.object(ofType: Setting.self, forPrimaryKey: "b"))
        #expect(b.history.first?.object(Medal.self) == badge)
        try db.write { try db.delete(badge) }
        #expect(a.value == Mixed.none)
    }

    @Test("queries compare numbers across types, strings with strings, and never a Boolean with a number")
    func queries() throws {
        let db = try makeDatabase()
        try db.write { try addOnePerValue(db) }
        let settings = db.objects(Setting.self)
        func names(_ query: String, _ args: Any?...) throws -> [String] {
            try settings.filter(query, arguments: args).map(\.name).sorted()
        }
        #expect(try names("value == 3") == ["s1"])
        #expect(try names("value == 3.0") == ["s1"])
        #expect(try names("value > 2 AND value < 3") == ["s4"])
        #expect(try names("value < 2") == ["s3", "s9"])
        #expect(try names("value == 1") == [])
        #expect(try names("value == true") == ["s2"])
        #expect(try names("value == 'dark'") == ["s5"])
        #expect(try names("value BEGINSWITH 'da'") == ["s5"])
        #expect(try names("value == nil") == ["s0"])
        #expect(try names("value == %@", ObjectId("1234567890ab1234567890ab")) == ["s8"])
        #expect(try names("value == %@", try Decimal128(string: "1.1")) == ["s9"])
    }

    @Test("@type selects by the kind of value a mixed property holds, checked against each value's own kind")
    func typeOperator() throws {
        let db = try makeDatabase()
        try db.write { try addOnePerValue(db) }
        let settings = db.objects(Setting.self)
        func names(_ query: String) throws -> [String] { try settings.filter(query).map(\.name).sorted() }
        #expect(try names("value.@type == 'string'") == ["s5"])
        #expect(try names("value.@type == 'null'") == ["s0"])
        #expect(try names("value.@type IN {'int', 'bool'}") == ["s1", "s2"])
        #expect(try names("value.@type == 'numeric'") == ["s1", "s3", "s4", "s9"])  // int, float, double, decimal128
        #expect(try names("value.@type == 'binary'") == ["s6"] && names("value.@type == 'DATE'") == ["s7"])
        #expect(try names("value.@type != 'string'").count == values.count - 1)
        #expect(try names("value.@type == 'objectId' OR value.@type == 'uuid'") == ["s10", "s8"])
        #expect(throws: TroveError.self) { try settings.filter("value.@type == 'color'") }
        #expect(throws: TroveError.self) { try settings.filter("name.@type == 'string'") }
    }

    @Test("key-value access reads a mixed property as the value it holds, nil for .none, and sets it from a plain value")
    func keyValueAccess() throws {
        let setting = Setting()
        #expect(setting.value(forKey: "value") == nil)
        setting.setValue(3, forKey: "value")
        #expect(setting.value == .int(3))
        #expect(setting.value(forKey: "value") as? Int == 3)
        setting["value"] = "dark"
        #expect(setting["value"] as? String == "dark")
    }
}
