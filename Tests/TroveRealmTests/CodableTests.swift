import Foundation
import Testing
import TroveRealm

/// Realm's Codable model shapes: `@Persisted` properties beside the legacy
/// `var` declarations (`RealmOptional`, `RealmProperty`, collections).
final class CodableLegacyObject: Object, Codable {
    @Persisted(primaryKey: true) var string = ""
    @Persisted var date = Date()
    @Persisted var decimal: Decimal128 = 0
    @Persisted var stringOpt: String?
    var intOpt = RealmOptional<Int>()
    var otherDouble = RealmProperty<Double?>()
    var otherEnum = RealmProperty<CodableLegacyEnum?>()
    var intList = List<Int>()
    var stringOptSet = MutableSet<String?>()
    var doubleMap = Map<String, Double>()
}

enum CodableLegacyEnum: Int, PersistableEnum, Codable {
    case one = 1, two = 2
}

/// Realm's generic helpers over `RealmOptional` name its element as a `RealmOptionalType`.
private func decodeOptional<T: RealmOptionalType & Codable>(_: T.Type, _ json: String) throws -> T? {
    try JSONDecoder().decode([RealmOptional<T>].self, from: Data(json.utf8)).first?.value
}

struct CodableTests {
    @Test func realmOptionalTypesDecode() throws {
        #expect(try decodeOptional(Int8.self, "[7]") == 7)
        #expect(try decodeOptional(Bool.self, "[null]") == nil)
        #expect(try decodeOptional(Double.self, "[2.5]") == 2.5)
    }

    private func realm() throws -> Realm {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-realm-codable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try Realm(configuration: Realm.Configuration(fileURL: directory.appendingPathComponent("default.realm")))
    }

    @Test func legacyDeclarationsDecodeStoreAndEncode() throws {
        let json = #"""
            {"string": "abc", "date": 2.5, "decimal": "1.5e2", "stringOpt": null,
             "intOpt": 123, "otherDouble": null, "otherEnum": 2,
             "intList": [1, 2], "stringOptSet": ["x", null], "doubleMap": {"k": 2.5}}
            """#
        let object = try JSONDecoder().decode(CodableLegacyObject.self, from: Data(json.utf8))
        #expect(object.intOpt.value == 123 && object.otherDouble.value == nil && object.otherEnum.value == .two)
        let realm = try realm()
        try realm.write { realm.add(object) }
        let stored = try #require(realm.object(ofType: CodableLegacyObject.self, forPrimaryKey: "abc"))
        #expect(stored.date == Date(timeIntervalSinceReferenceDate: 2.5))
        #expect(stored.decimal == Decimal128(150) && stored.stringOpt == nil)
        #expect(stored.intOpt.value == 123 && stored.otherDouble.value == nil && stored.otherEnum.value == .two)
        #expect(Array(stored.intList) == [1, 2] && stored.stringOptSet.count == 2 && stored.doubleMap["k"] == 2.5)
        // A managed RealmProperty encodes what it reads; the object's @Persisted properties cannot.
        #expect(String(decoding: try JSONEncoder().encode(stored.intOpt), as: UTF8.self) == "123")
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(stored) }
        let unmanaged = try JSONDecoder().decode(CodableLegacyObject.self, from: Data(json.utf8))
        let text = String(decoding: try JSONEncoder().encode(unmanaged), as: UTF8.self)
        #expect(text.contains(#""intOpt":123"#) && text.contains(#""intList":[1,2]"#) && text.contains(#""otherEnum":2"#))
    }
}
