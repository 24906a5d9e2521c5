import Foundation
import Testing

@testable import Trove

/// Lists and dictionaries held in a mixed value, nested to any depth.
@Suite struct MixedCollectionTests {
    private func profile(_ medal: Medal) -> Mixed {
        .fromDictionary([
            "name": .string("Min"),
            "sizes": .fromArray([.int(12), .double(14.5), .none]),
            "deep": .fromArray([.fromDictionary(["medal": .object(medal), "when": .date(Date(timeIntervalSince1970: 5))])]),
        ])
    }

    @Test("nested lists and dictionaries are stored, read back after reopening, and found through an index")
    func storedAndReadBack() throws {
        let db = try makeDatabase()
        let setting = Setting(value: ["name": "profile"])
        setting.value = profile(Medal(value: ["label": "gold"]))
        // Unmanaged, the value reads as it was made.
        #expect(setting.value.dictionaryValue?["sizes"]?.listValue?[1] == .double(14.5))
        try db.write { try db.add(setting) }
        #expect(db.objects(Medal.self).count == 1)  // the medal inside the dictionary was added with it

        let reopened = try Database(configuration: db.configuration)
        let stored = try #require(reopened.object(ofType: Setting.self, forPrimaryKey: "profile"))
        let value = stored.value.dictionaryValue
        #expect(value?.keys == ["deep", "name", "sizes"])
        #expect(value?["name"] == .string("Min"))
        #expect(value?["sizes"]?.listValue?.array() == [.int(12), .double(14.5), .none])
        let deep = value?["deep"]?.listValue?[0].dictionaryValue
        #expect(deep?["medal"]?.object(Medal.self)?.label == "gold")
        #expect(deep?["when"] == .date(Date(timeIntervalSince1970: 5)))
        #expect(stored.value.listValue == nil && stored.value.intValue == nil)
        // The indexed property finds the object by its whole (equal) value, and by kind.
        let byKind = try reopened.objects(Setting.self).filter("value.@type == 'dictionary'")
        #expect(byKind.map(\.name) == ["profile"])
        expectValid(reopened)
    }

    @Test("a nested collection of a stored object is live: changes in a write reach the stored value at their path")
    func liveChanges() throws {
        let db = try makeDatabase()
        let setting = Setting(value: ["name": "s"])
        setting.value = profile(Medal(value: ["label": "gold"]))
        try db.write { try db.add(setting) }
        let sizes = try #require(setting.value.dictionaryValue?["sizes"]?.listValue)
        #expect(sizes.isManaged && sizes.database === db)
        try db.write {
            sizes.append(.int(16))
            sizes[0] = .string("small")
            sizes.remove(at: 2)  // the .none
            sizes.insert(.fromArray([.bool(true)]), at: 0)
            setting.value.dictionaryValue?["name"] = .string("Jun")
            setting.value.dictionaryValue?["deep"] = nil
            setting.value.dictionaryValue?["sizes"]?.listValue?[0].listValue?.append(.bool(false))
        }
        let reader = try Database(configuration: db.configuration)
        let value = try #require(reader.object(ofType: Setting.self, forPrimaryKey: "s")?.value.dictionaryValue)
        #expect(value.keys == ["name", "sizes"] && value["name"] == .string("Jun"))
        let list = try #require(value["sizes"]?.listValue)
        #expect(list.count == 4)
        #expect(list[0].listValue?.array() == [.bool(true), .bool(false)])
        #expect(Array(list.array()[1...]) == [.string("small"), .double(14.5), .int(16)])
        // Copying a nested list into the same value copies its elements (no shared state).
        try db.write { setting.value.dictionaryValue?["copy"] = .list(sizes) }
        try db.write { sizes.removeAll() }
        #expect(setting.value.dictionaryValue?["copy"]?.listValue?.count == 4 && sizes.isEmpty)
        expectValid(db)
    }

    @Test("a nested collection whose place is gone is invalidated, and a change to it fails the write with a message")
    func replacedPathIsInvalidated() throws {
        let db = try makeDatabase()
        let setting = Setting(value: ["name": "s", "value": Mixed.fromArray([.fromArray([.int(1)])])])
        try db.write { try db.add(setting) }
        let inner = try #require(setting.value.listValue?[0].listValue)
        #expect(!inner.isInvalidated && inner.array() == [.int(1)])
        try db.write { setting.value = .int(7) }
        #expect(inner.isInvalidated && inner.isEmpty)
        #expect(throws: TroveError.self) { try db.write { inner.append(.int(2)) } }
        #expect(setting.value == .int(7))
    }

    @Test("Object(value:) turns Swift arrays and dictionaries given for a mixed property into nested collections")
    func fromSwiftCollections() throws {
        let medal = Medal(value: ["label": "bronze"])
        let setting = Setting(value: ["name": "n", "value": ["a": [1, "two", ["x": medal]], "b": NSNull()] as [String: Any]])
        let a = try #require(setting.value.dictionaryValue?["a"]?.listValue)
        #expect(a[0] == .int(1) && a[1] == .string("two"))
        #expect(a[2].dictionaryValue?["x"]?.object(Medal.self) === medal)
        #expect(setting.value.dictionaryValue?["b"] == Mixed.none)
        let db = try makeDatabase()
        try db.write { try db.add(setting) }
        #expect(db.objects(Medal.self).first?.label == "bronze")
    }

    @Test("equality: unmanaged collections by their elements, stored ones by identity (object, property and path)")
    func equality() throws {
        let one = Mixed.fromDictionary(["k": .fromArray([.int(1)])])
        #expect(one == Mixed.fromDictionary(["k": .fromArray([.int(1)])]))
        #expect(one != Mixed.fromDictionary(["k": .fromArray([.int(2)])]))
        #expect(Mixed.fromArray([]) == Mixed.fromArray([]) && Mixed.fromArray([]) != Mixed.fromDictionary([:]))
        let db = try makeDatabase()
        let (a, b) = (Setting(value: ["name": "a", "value": one]), Setting(value: ["name": "b", "value": one]))
        try db.write { try db.add([a, b]) }
        #expect(a.value == a.value && a.value.dictionaryValue?["k"] == a.value.dictionaryValue?["k"])
        #expect(a.value != b.value)  // the same elements in two objects: two collections
        #expect(Set([a.value, a.value]).count == 1)
    }

    @Test("observing a nested list or dictionary reports its positions or keys; the owner reports its property")
    func notifications() throws {
        let db = try makeDatabase()
        let setting = Setting(
            value: [
                "name": "s", "value": Mixed.fromDictionary(["list": .fromArray([.int(1), .int(2), .int(3)]), "k": .int(0)]),
            ])
        try db.write { try db.add(setting) }
        let list = try #require(setting.value.dictionaryValue?["list"]?.listValue)
        let map = try #require(setting.value.dictionaryValue)
        var listChanges: [String] = []
        var mapChanges: [String] = []
        var objectChanges: [[String]] = []
        let tokens = [
            list.observe { change in
                if !change.isInitial { listChanges.append("d\(change.deletions) i\(change.insertions) m\(change.modifications)") }
            },
            map.observe { change in
                if !change.isInitial { mapChanges.append("d\(change.deletions) i\(change.insertions) m\(change.modifications)") }
            },
            setting.observe { change in
                if case .change(_, let properties) = change { objectChanges.append(properties.map(\.name)) }
            },
        ]
        try db.write { list.append(.int(4)) }
        try db.write { list[1] = .string("two") }
        try db.write { list.remove(at: 0) }
        try db.write { map["new"] = .bool(true) }
        try db.write { map["k"] = nil }
        #expect(listChanges == ["d[] i[3] m[]", "d[] i[] m[1]", "d[0] i[] m[]"])
        // Keys in order: k, list, new; each list change modifies "list" (index 0 while "k" is there).
        #expect(mapChanges == ["d[] i[] m[1]", "d[] i[] m[1]", "d[] i[] m[1]", "d[] i[2] m[]", "d[0] i[] m[]"])
        #expect(objectChanges == Array(repeating: ["value"], count: 5))
        tokens.forEach { $0.invalidate() }
    }

    @Test("damaged nested bytes read as a damaged value, not a crash; nesting deeper than the limit is refused")
    func damageAndDepth() throws {
        let value = StoredValue.dictionary(["a": .list([.int(1), .string("x"), .null])])
        let bytes = MixedEncoding.encode(value)
        #expect(bytes.count == MixedEncoding.encodedSize(of: value))
        #expect(bytes.withUnsafeBytes { MixedEncoding.decode($0) } == value)
        for cut in 1..<bytes.count {
            #expect(bytes.prefix(cut).withUnsafeBytes { MixedEncoding.decode($0) } == nil, "cut at \(cut)")
        }
        var huge = bytes
        huge.replaceSubrange(1..<5, with: [0xff, 0xff, 0xff, 0x7f])  // a count far beyond the bytes
        #expect(huge.withUnsafeBytes { MixedEncoding.decode($0) } == nil)

        var deep = Mixed.int(0)
        for _ in 0...MixedEncoding.maxDepth { deep = .fromArray([deep]) }
        let db = try makeDatabase()
        #expect(throws: TroveError.self) { try db.write { try db.add(Setting(value: ["name": "deep", "value": deep])) } }
        #expect(db.objects(Setting.self).isEmpty)
    }

    @Test("queries reach into nested collections by index, key and *, literally or as arguments")
    func pathQueries() throws {
        let db = try makeDatabase()
        try db.write {
            try db.add(
                Setting(value: [
                    "name": "a",
                    "value": Mixed.fromDictionary(["sizes": .fromArray([.int(12), .double(14.5)]), "theme": .string("dark")]),
                ]))
            try db.add(
                Setting(value: ["name": "b", "value": Mixed.fromArray([.fromArray([.string("x"), .int(99)]), .float(2)])]))
            try db.add(Setting(value: ["name": "c", "value": Mixed.int(7)]))
        }
        func names(_ query: String, _ arguments: Any?...) throws -> [String] {
            try db.objects(Setting.self).filter(query, arguments: arguments).map(\.name).sorted()
        }
        #expect(try names("value['theme'] == 'dark'") == ["a"])
        #expect(try names("value['sizes'][1] > 14") == ["a"])
        #expect(try names("value[0][1] == 99") == ["b"])
        #expect(try names("value[0][5] == 99").isEmpty)  // past the end: no match
        #expect(try names("value['missing'] == nil") == ["a"])  // a missing key is nil
        #expect(try names("value[*] == 2.0") == ["b"])  // some element
        #expect(try names("value[*][*] == 'x'") == ["b"])
        #expect(try names("value[%@][%@] == %@", "sizes", 0, 12) == ["a"])
        #expect(try names("value[%@][%K] == %@", 0, "#any", "x") == ["b"])
        #expect(try names("value[%@] == %@", "#any", 2.0).isEmpty)  // with %@, "#any" is a key
        #expect(try names("value[0][1] IN {1, 99}") == ["b"])
        #expect(try names("value['sizes'][0] >= nil").isEmpty)
        expectTroveError(.invalidQuery) { try db.objects(Setting.self).filter("history[0] == 1") }  // a list property
        expectTroveError(.invalidQuery) { try db.objects(Setting.self).filter("byKey[0] == 1") }  // a map takes a key
        expectTroveError(.invalidQuery) { try db.objects(Setting.self).filter("value[%@] == 1", 2.5) }
        expectTroveError(.invalidQuery) { try db.objects(Setting.self).filter("value[x] == 1") }
    }
}
