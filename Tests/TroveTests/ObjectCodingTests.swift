import Foundation
import Testing

@testable import Trove

enum CodedMood: String, PersistableEnum, Codable {
    case happy, sad
}

final class CodedTag: Object, Codable {
    @Persisted(primaryKey: true) var name = ""
}

final class CodedSpot: EmbeddedObject, Codable {
    @Persisted var label = ""
    @Persisted var floor: Int?
}

/// A model declared `Codable` as Realm apps declare theirs: Swift synthesizes the coding.
final class CodedEntry: Object, Codable {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var count = 0
    @Persisted var small: Int8 = 0
    @Persisted var ratio: Float = 0
    @Persisted var score = 0.0
    @Persisted var done = false
    @Persisted var when = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var image = Data()
    @Persisted var amount: Decimal128 = 0
    @Persisted var oid = ObjectId()
    @Persisted var uuid = UUID()
    @Persisted var memo: String?
    @Persisted var rating: Double?
    @Persisted var mood: CodedMood = .happy
    @Persisted var words = List<String>()
    @Persisted var maybeNumbers = List<Int?>()
    @Persisted var numbers = MutableSet<Int>()
    @Persisted var weights = Map<String, Double?>()
    @Persisted var mainTag: CodedTag?
    @Persisted var tags = List<CodedTag>()
    @Persisted var spot: CodedSpot?
    @Persisted var spots = List<CodedSpot>()
}

/// Codable model classes: decoded from JSON into unmanaged objects that are
/// then added, and encoded back while unmanaged (as Realm does).
@Suite struct ObjectCodingTests {
    static let json = #"""
        {
            "id": "e1", "count": 42, "small": -7, "ratio": 2.5, "score": 0.125, "done": true,
            "when": 1000.5, "image": "AAH+", "amount": "1.5e2", "oid": "1234567890abcdef12345678",
            "uuid": "00000000-0000-4000-8000-000000000001", "memo": "산책", "mood": "sad",
            "words": ["a", "", "단어"], "maybeNumbers": [1, null, 3], "numbers": [3, 1, 3],
            "weights": {"x": 1.5, "y": null},
            "mainTag": {"name": "red"}, "tags": [{"name": "blue"}, {"name": "green"}],
            "spot": {"label": "desk", "floor": 3}, "spots": [{"label": "door"}]
        }
        """#

    @Test("a Codable model decodes from JSON into an unmanaged object, and adds with every value")
    func decodeAndAdd() throws {
        let entry = try JSONDecoder().decode(CodedEntry.self, from: Data(Self.json.utf8))
        #expect(!entry.isManaged)
        let db = try makeDatabase()
        try db.write { try db.add(entry) }
        let stored = try #require(db.object(ofType: CodedEntry.self, forPrimaryKey: "e1"))
        #expect(stored.count == 42 && stored.small == -7 && stored.ratio == 2.5 && stored.score == 0.125 && stored.done)
        #expect(stored.when == Date(timeIntervalSinceReferenceDate: 1000.5))
        #expect(stored.image == Data([0, 1, 0xFE]))
        let amount = try Decimal128(string: "150")
        let oid = try ObjectId(string: "1234567890abcdef12345678")
        #expect(stored.amount == amount && stored.oid == oid)
        #expect(stored.uuid == UUID(uuidString: "00000000-0000-4000-8000-000000000001"))
        #expect(stored.memo == "산책" && stored.rating == nil && stored.mood == .sad)
        #expect(Array(stored.words) == ["a", "", "단어"] && Array(stored.maybeNumbers) == [1, nil, 3])
        #expect(Set(stored.numbers) == [1, 3])
        #expect(stored.weights["x"] == .some(1.5) && stored.weights["y"] == .some(nil) && stored.weights.count == 2)
        #expect(stored.mainTag?.name == "red" && stored.tags.map(\.name) == ["blue", "green"])
        #expect(db.objects(CodedTag.self).count == 3)
        #expect(stored.spot?.label == "desk" && stored.spot?.floor == 3)
        #expect(stored.spots.map(\.label) == ["door"] && stored.spots.first?.floor == nil)
        expectValid(db)
    }

    @Test("an optional property missing from the input is nil; a missing non-optional one is an error naming it")
    func missingKeys() throws {
        let tag = try JSONDecoder().decode(CodedSpot.self, from: Data(#"{"label": "hall"}"#.utf8))
        #expect(tag.label == "hall" && tag.floor == nil)
        #expect {
            try JSONDecoder().decode(CodedSpot.self, from: Data(#"{"floor": 2}"#.utf8))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "label"
        }
    }

    @Test("an unmanaged object encodes and decodes back to the same values; a managed one is refused, its copy encodes")
    func encodeRoundTrip() throws {
        let entry = try JSONDecoder().decode(CodedEntry.self, from: Data(Self.json.utf8))
        let encoded = try JSONEncoder().encode(entry)
        let again = try JSONDecoder().decode(CodedEntry.self, from: encoded)
        #expect(again.id == "e1" && again.amount == entry.amount && again.oid == entry.oid && again.when == entry.when)
        #expect(Array(again.maybeNumbers) == [1, nil, 3] && Set(again.numbers) == [1, 3] && again.weights.count == 2)
        #expect(again.tags.map(\.name) == ["blue", "green"] && again.spot?.floor == 3 && again.mood == .sad)

        let db = try makeDatabase()
        try db.write { try db.add(entry) }
        #expect {
            try JSONEncoder().encode(entry)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.debugDescription.contains("Only unmanaged objects can be encoded")
        }
        // An unmanaged copy encodes (its links still name the managed objects, as Realm's copy does).
        let copy = CodedTag(value: try #require(entry.mainTag))
        let tag = try JSONDecoder().decode(CodedTag.self, from: try JSONEncoder().encode(copy))
        #expect(tag.name == "red")
        // A managed collection encodes as it reads.
        let words = try JSONDecoder().decode([String].self, from: try JSONEncoder().encode(entry.words))
        #expect(words == ["a", "", "단어"])
    }
}
