import Foundation
import Testing

@testable import Trove

@Suite("Persistable structs")
struct PersistableTests {
    @Test("the schema comes from the Codable shape, optionals and enums included")
    func schema() throws {
        let schema = try ValueModel.schema(of: Contact.self)
        #expect(schema.name == "Contact")
        #expect(schema.properties.map(\.name) == ["id", "firstName", "lastName", "gender", "age", "photo", "mood", "birthday"])
        #expect(schema.primaryKey?.name == "id")
        #expect(schema["id"]?.isAutoIncrement == true)
        #expect(schema["lastName"]?.isIndexed == true)
        #expect(schema["age"]?.isOptional == true)
        #expect(schema["age"]?.type == .int)
        #expect(schema["firstName"]?.isOptional == false)
        #expect(schema["photo"]?.type == .data)
        #expect(schema["mood"]?.type == .string)
        #expect(schema["birthday"]?.type == .date)
        #expect(schema["birthday"]?.isOptional == true)
    }

    @Test("values are stored and read back with auto-increment ids, no mapping layer")
    func crud() throws {
        let db = try makeDatabase()
        let saved = try db.write {
            [
                try db.add(Contact(firstName: "트랜잭션", lastName: "테스트", gender: 0, age: 22, photo: Data([1, 2, 3]))),
                try db.add(Contact(firstName: "Ada", lastName: "Lovelace", gender: 1, age: 36, mood: .happy)),
                try db.add(Contact(firstName: "Alan", lastName: "Turing", birthday: Date(timeIntervalSince1970: -1_821_000_000))),
            ]
        }
        #expect(saved.map(\.id) == [1, 2, 3])
        let all = db.values(Contact.self)
        #expect(all.count == 3)
        #expect(Array(all) == saved)
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 1)?.photo == Data([1, 2, 3]))
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 3)?.age == nil)

        let adults = try db.values(Contact.self).filter("age > 20").sorted(by: \.age, ascending: false).array()
        #expect(adults.map(\.firstName) == ["Ada", "트랜잭션"])
        #expect(try db.values(Contact.self).filter("lastName == %@", "Turing").first?.id == 3)
        #expect(try db.values(Contact.self).filter("mood == %@", Mood.happy).count == 1)
        #expect(db.values(Contact.self).max(of: \.id) == 3)

        var ada = saved[1]
        ada.age = 37
        try db.write { try db.add(ada, update: .modified) }
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 2)?.age == 37)
        #expect(db.values(Contact.self).count == 3)

        try db.write { try db.delete(saved[2]) }
        #expect(db.values(Contact.self).count == 2)
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 3) == nil)
        let next = try db.write { try db.add(Contact(firstName: "New", lastName: "One")) }
        #expect(next.id == 4)  // ids are not reused
        expectValid(db)
    }

    /// Coding keys renamed, and read in another order than they were declared.
    struct Renamed: Persistable, Equatable {
        static var primaryKey: KeyPath<Renamed, Int> { \.id }
        var id = 0
        var fullName = ""
        var nickname: String?
        var score = 0.0

        enum CodingKeys: String, CodingKey {
            case id
            case fullName = "name"
            case nickname, score
        }

        init(id: Int, fullName: String, nickname: String?, score: Double) {
            self.id = id
            self.fullName = fullName
            self.nickname = nickname
            self.score = score
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            score = try container.decode(Double.self, forKey: .score)
            nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
            id = try container.decode(Int.self, forKey: .id)
            fullName = try container.decode(String.self, forKey: .fullName)
            // A key read again, out of turn.
            if try container.decode(Double.self, forKey: .score) != score { throw CancellationError() }
        }
    }

    @Test("values read straight from their records: renamed coding keys, keys read out of order, nil and every type")
    func readsFromRecords() throws {
        let db = try makeDatabase()
        let renamed = [
            Renamed(id: 1, fullName: "김하늘", nickname: nil, score: 1.5),
            Renamed(id: 2, fullName: "Ada", nickname: "countess", score: -2),
        ]
        let birthday = Date(timeIntervalSince1970: 1_000_000)
        let contacts = [
            Contact(id: 1, firstName: "A", lastName: "B", gender: nil, age: 40, photo: Data(), mood: .happy, birthday: birthday),
            Contact(id: 2, firstName: String(repeating: "긴이름", count: 20), lastName: "", photo: Data([0, 255])),
        ]
        try db.write {
            for value in renamed { try db.add(value) }
            for value in contacts { try db.add(value) }
        }
        // The schema follows the order init(from:) reads the keys in.
        #expect(try ValueModel.schema(of: Renamed.self).properties.map(\.name) == ["score", "nickname", "id", "name"])
        #expect(Array(db.values(Renamed.self)) == renamed)
        #expect(db.value(ofType: Renamed.self, forPrimaryKey: 2) == renamed[1])
        #expect(try db.values(Renamed.self).filter("name == %@", "Ada").array() == [renamed[1]])
        #expect(Array(db.values(Contact.self)) == contacts)
        #expect(Array(db.values(Contact.self).sorted(by: \.id, ascending: false)) == contacts.reversed())
    }

    /// One stored type, `Book`, before and after a property was added.
    enum FirstVersion {
        struct Book: Persistable {
            static var primaryKey: KeyPath<Book, Int> { \.id }
            var id = 0
            var title = ""
        }
    }
    enum SecondVersion {
        struct Book: Persistable, Equatable {
            static var primaryKey: KeyPath<Book, Int> { \.id }
            var id = 0
            var title = ""
            var pages = 0
            var note: String?
        }
    }

    @Test("a value stored before a property was added reads the property's default")
    func readsOlderRecords() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("values.trove")
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.add(FirstVersion.Book(id: 7, title: "old")) }
        }
        let db = try Database(fileURL: url)
        #expect(Array(db.values(SecondVersion.Book.self)) == [SecondVersion.Book(id: 7, title: "old", pages: 0, note: nil)])
        try db.write { try db.add(SecondVersion.Book(id: 8, title: "new", pages: 3, note: "n")) }
        #expect(db.values(SecondVersion.Book.self).map(\.pages) == [0, 3])
        #expect(db.value(ofType: SecondVersion.Book.self, forPrimaryKey: 7)?.note == nil)
    }

    @Test("a duplicate primary key in a struct throws primaryKeyExists")
    func duplicate() throws {
        let db = try makeDatabase()
        try db.write {
            try db.add(Contact(id: 5, firstName: "A", lastName: "B"))
            expectTroveError(.primaryKeyExists) { try db.add(Contact(id: 5, firstName: "C", lastName: "D")) }
        }
        #expect(db.value(ofType: Contact.self, forPrimaryKey: 5)?.firstName == "A")
    }

    @Test("a struct with a property Trove cannot store is rejected with its name")
    func unsupportedProperty() throws {
        struct Bad: Persistable {
            static var primaryKey: KeyPath<Bad, Int> { \.id }
            var id = 0
            var tags: [String] = []
        }
        let db = try makeDatabase()
        let error = expectTroveError(.invalidModel) { try db.write { try db.add(Bad()) } }
        #expect(error?.message.contains("tags") == true)
    }

    /// Every stored type a struct field can have, each also optional.
    struct EveryType: Persistable, Equatable {
        static var primaryKey: KeyPath<EveryType, String> { \.name }
        var name = ""
        var flag = false
        var small: Int8 = 0
        var medium: Int16 = 0
        var large: Int32 = 0
        var number = 0
        var ratio: Float = 0
        var amount = 0.0
        var bytes = Data()
        var when = Date(timeIntervalSince1970: 0)
        var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var mood = Mood.calm
        var optionalFlag: Bool?
        var optionalNumber: Int?
        var optionalSmall: Int16?
        var optionalAmount: Double?
        var optionalText: String?
        var optionalBytes: Data?
        var optionalWhen: Date?
        var optionalUUID: UUID?
        var optionalMood: Mood?
        var price = Decimal(0)
        var objectId = ObjectId(bytes: [UInt8](repeating: 1, count: 12))
        var amount128 = Decimal128(0)
        var optionalPrice: Decimal?
        var optionalObjectId: ObjectId?
        var optionalAmount128: Decimal128?
        var total: Int64 = 0
    }

    @Test("a plain struct is read and written field by field, with what Codable would give, nil included")
    func fieldByField() throws {
        let schema = try ValueModel.schema(of: EveryType.self)
        #expect(StructFields.of(EveryType.self, schema: schema) != nil)
        #expect(StructFields.of(Contact.self, schema: try ValueModel.schema(of: Contact.self)) != nil)
        let full = EveryType(
            name: "가득", flag: true, small: -8, medium: 300, large: -70_000, number: .min, ratio: 1.25, amount: -0.5,
            bytes: Data([0, 1, 255]), when: Date(timeIntervalSince1970: 1_700_000_000.5), uuid: UUID(), mood: .happy,
            optionalFlag: false, optionalNumber: .max, optionalSmall: -2, optionalAmount: 3, optionalText: "",
            optionalBytes: Data(), optionalWhen: Date(timeIntervalSince1970: -1), optionalUUID: UUID(), optionalMood: .calm,
            price: Decimal(string: "12.345")!, objectId: ObjectId(), amount128: Decimal128(-99), optionalPrice: 0.5,
            optionalObjectId: ObjectId(), optionalAmount128: Decimal128(1), total: .min + 1)
        let empty = EveryType(name: "")
        let db = try makeDatabase()
        try db.write {
            try db.add(full)
            try db.add(empty)
        }
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: "가득") == full)
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: "") == empty)
        // Whole values read by a scan (each plain field loaded from its slot as its Swift type).
        #expect(db.values(EveryType.self).array().sorted { $0.name < $1.name } == [empty, full])
        #expect(try db.values(EveryType.self).filter("optionalNumber == nil").array() == [empty])
        #expect(try db.values(EveryType.self).filter("small < 0 AND optionalMood == %@", Mood.calm).array() == [full])
        // What Codable stores is what the fields store: the same value reads back through either.
        let stored = try StoredValueEncoder.encode(full)
        #expect(try StoredValueDecoder.decode(EveryType.self, from: stored) == full)
        var changed = full
        changed.optionalText = nil
        changed.number = 42
        try db.write { try db.add(changed, update: .modified) }
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: "가득") == changed)
        expectValid(db)
    }

    /// Decoding changes what was stored: the values must go through `init(from:)`.
    /// A varied `EveryType` value (nils on odd ids, long and empty strings and data).
    private func varied(_ id: Int) -> EveryType {
        var value = EveryType(name: "값 \(id) " + String(repeating: "z", count: id % 30))
        value.flag = id % 3 == 0
        value.small = Int8(truncatingIfNeeded: id)
        value.medium = Int16(truncatingIfNeeded: id * 7)
        value.large = Int32(truncatingIfNeeded: id * 70_001)
        value.number = id * 1_000_003
        value.ratio = Float(id) / 4
        value.amount = Double(id) * -0.125
        value.bytes = Data((0..<(id % 19)).map { UInt8(truncatingIfNeeded: $0 &+ id) })
        value.when = Date(timeIntervalSinceReferenceDate: Double(id) * 60)
        value.mood = id % 2 == 0 ? .happy : .calm
        value.total = Int64(id) << 40
        if id % 2 == 0 {
            value.optionalNumber = -id
            value.optionalText = id % 4 == 0 ? "" : "opt \(id)"
            value.optionalBytes = Data([UInt8(truncatingIfNeeded: id)])
            value.optionalMood = .calm
        }
        return value
    }

    @Test("values read their clusters' columns in place: several clusters, changed and appended slots, inside a write too")
    func readsClustersInPlace() throws {
        var configuration = Configuration(
            fileURL: makeTemporaryDirectory().appendingPathComponent("values.trove"), valueTypes: [EveryType.self])
        configuration.storesNewTypesInClusters = true
        let db = try Database(configuration: configuration)
        try db.write { for id in 1...1_500 { try db.add(varied(id)) } }
        // One value per transaction: each append and change lands in a patch of its cluster's columns.
        var expected = (1...1_520).map(varied)
        for id in 1_501...1_520 { try db.write { try db.add(varied(id)) } }
        for id in [3, 700, 1_505] {
            expected[id - 1].number = -id
            expected[id - 1].optionalText = nil
            expected[id - 1].bytes = Data(repeating: 9, count: 40)
            try db.write { try db.add(expected[id - 1], update: .modified) }
        }
        let byName = { (values: [EveryType]) in values.sorted { $0.name < $1.name } }
        #expect(byName(db.values(EveryType.self).array()) == byName(expected))
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: expected[699].name) == expected[699])
        #expect(
            try db.values(EveryType.self).filter("number < 0").array().map(\.name).sorted()
                == [3, 700, 1_505].map { expected[$0 - 1].name }.sorted())
        // Inside a write the values read the write's clusters, changes not yet committed included.
        try db.beginWrite()
        var changed = expected[10]
        changed.optionalText = "in the write"
        try db.add(changed, update: .modified)
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: changed.name) == changed)
        #expect(byName(db.values(EveryType.self).array()) == byName(expected.map { $0.name == changed.name ? changed : $0 }))
        db.cancelWrite()
        #expect(db.value(ofType: EveryType.self, forPrimaryKey: expected[10].name) == expected[10])
        expectValid(db)
    }

    struct Normalized: Persistable, Equatable {
        static var primaryKey: KeyPath<Normalized, Int> { \.id }
        var id = 0
        var tag = ""

        init(id: Int, tag: String) {
            self.id = id
            self.tag = tag
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            tag = try container.decode(String.self, forKey: .tag).uppercased()
        }
    }

    /// Decoding replaces only an empty value.
    struct Defaulted: Persistable, Equatable {
        static var primaryKey: KeyPath<Defaulted, Int> { \.id }
        var id = 0
        var title = ""

        init(id: Int, title: String) {
            self.id = id
            self.title = title
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            let title = try container.decode(String.self, forKey: .title)
            self.title = title.isEmpty ? "untitled" : title
        }
    }

    /// A field Codable leaves out (not in the coding keys), filled by the initializer.
    struct Partly: Persistable, Equatable {
        static var primaryKey: KeyPath<Partly, Int> { \.id }
        var id = 0
        var text = ""
        var cached = 7

        enum CodingKeys: String, CodingKey { case id, text }
    }

    @Test("custom decoding, fields left out of the coding keys and renamed keys keep the Codable path")
    func codablePathKept() throws {
        #expect(StructFields.of(Normalized.self, schema: try ValueModel.schema(of: Normalized.self)) == nil)
        #expect(StructFields.of(Defaulted.self, schema: try ValueModel.schema(of: Defaulted.self)) == nil)
        #expect(StructFields.of(Partly.self, schema: try ValueModel.schema(of: Partly.self)) == nil)
        #expect(StructFields.of(Renamed.self, schema: try ValueModel.schema(of: Renamed.self)) == nil)
        let db = try makeDatabase()
        try db.write {
            try db.add(Normalized(id: 1, tag: "mixed Case"))
            try db.add(Partly(id: 1, text: "t", cached: 99))
            try db.add(Defaulted(id: 1, title: ""))
            try db.add(Defaulted(id: 2, title: "named"))
        }
        #expect(Array(db.values(Defaulted.self)) == [Defaulted(id: 1, title: "untitled"), Defaulted(id: 2, title: "named")])
        #expect(db.value(ofType: Normalized.self, forPrimaryKey: 1) == Normalized(id: 1, tag: "MIXED CASE"))
        #expect(Array(db.values(Partly.self)) == [Partly(id: 1, text: "t", cached: 7)])
    }
}
