import Foundation
import Testing
import Trove

/// Has a primary key; linked to from pets, whose copies link back.
final class Keeper: Object {
    @Persisted(primaryKey: true) var id = ObjectId()
    @Persisted var name = ""
    @Persisted var pets = List<Pet>()
    @Persisted var favorite: Pet?
}

/// No primary key, in a cycle of links: named in the export by its content.
final class Pet: Object {
    @Persisted var name = ""
    @Persisted var keeper: Keeper?
    @Persisted var buddy: Pet?
    @Persisted var photo: Data?
    @Persisted(originProperty: "pets") var keptBy: LinkingObjects<Keeper>
}

enum DiaryMood: String, PersistableEnum {
    case happy, sad
}

/// The photo diary seed's model.
final class DiaryEntry: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted(indexed: true) var date = ""
    @Persisted var dateAdded = Date()
    @Persisted var image: Data?
    @Persisted(indexed: .fullText) var memo = ""
    @Persisted var mood: DiaryMood = .happy
}

/// `trove import --format realm-studio` on exports written as each Realm
/// Studio version writes them (`Fixtures/realm-studio/make-fixtures.py`).
struct RealmStudioImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/realm-studio")

    /// A new file with every type of the fixtures, as the app would make it.
    private func appFile(_ name: String = #function) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-studio-import")
            .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("app.trove")
        _ = try Database(configuration: configuration(url))
        return url
    }

    private func configuration(_ url: URL) -> Configuration {
        Configuration(
            fileURL: url,
            objectTypes: [Maker.self, Sticker.self, Part.self, Gadget.self, Keeper.self, Pet.self, DiaryEntry.self])
    }

    private func importing(_ fixture: String, into url: URL) throws -> (status: Int32, out: String, err: String) {
        try trove("import", url.path, Self.fixtures.appendingPathComponent(fixture).path, "--format", "realm-studio")
    }

    /// A moment as realm-js writes it (ISO 8601 with milliseconds): whole
    /// seconds since 1970 and milliseconds, counted from 2001 as `Date` is.
    private func date(_ text: String) -> Date {
        let moments: [String: (seconds: Int, milliseconds: Int)] = [
            "2024-05-01T09:30:15.250Z": (1_714_555_815, 250), "1999-12-31T23:59:59.999Z": (946_684_799, 999),
            "2024-05-01T21:04:05.120Z": (1_714_597_445, 120), "2020-01-01T00:00:00.000Z": (1_577_836_800, 0),
            "1969-07-20T20:17:40.000Z": (-14_182_940, 0),
        ]
        let moment = moments[text]!
        return Date(timeIntervalSinceReferenceDate: Double(moment.seconds - 978_307_200) + Double(moment.milliseconds) / 1000)
    }

    /// Studio 13's Flatted export: every property type, links into and out
    /// of embedded objects, in mixed values and collections, and cycles —
    /// within a type and across types, through objects without a primary key.
    @Test func studio13() throws {
        let url = try appFile()
        let result = try importing("studio13.json", into: url)
        #expect(result.status == 0, "\(result.err)")
        #expect(
            result.out.contains(
                "imported 15 objects into \(url.path) (Maker 3, Sticker 2, Gadget 3, Keeper 2, Pet 3, DiaryEntry 2)"))
        // Studio's JSON has no bytes of binary data: each such value is said, by property.
        #expect(result.out.contains("note: Gadget.blob: 3 values of binary data written by Realm Studio as {}"))
        #expect(result.out.contains("note: Gadget.maybeBlob: 1 value of binary data"))
        #expect(result.out.contains("note: Pet.photo: 1 value"))
        #expect(result.out.contains("note: DiaryEntry.image: 1 value"))

        let db = try Database(configuration: configuration(url))
        let gadgets = db.objects(Gadget.self).sorted(by: \.id)
        #expect(gadgets.map(\.id) == [1, 2, 3])
        let (one, two, three) = (gadgets[0], gadgets[1], gadgets[2])
        #expect(one.name == "He said \"hi\", then\nleft\ttwice — 트랜잭션 테스트 🎉")
        #expect(one.memo == one.name)
        #expect(one.flag && !two.flag)
        #expect(one.small == -99 && three.medium == -7 && one.medium == 1_000_000)
        #expect(one.ratio == Float(1.1) && three.ratio == -2.5)
        #expect(one.score == 0.1 && three.score == -0.001)
        #expect(one.count == 7 && two.count == nil && three.count == 0)
        #expect(two.memo == nil && three.memo == "")
        #expect(one.when == date("2024-05-01T09:30:15.250Z"))
        #expect(three.when == date("1999-12-31T23:59:59.999Z"))
        #expect(one.blob == Data() && one.maybeBlob == nil && two.maybeBlob == nil)
        #expect(one.uuid == UUID(uuidString: "5f0c8c6e-2b6a-4a4e-9d55-0c3d5b7e1a01"))
        #expect(one.oid == (try ObjectId(string: "65a1f0c2e4b0a1b2c3d4e5f6")))
        let (twelveFifty, thousandth) = (try Decimal128(string: "12.50"), try Decimal128(string: "-0.001"))
        #expect(one.amount == twelveFifty && two.amount == thousandth)
        #expect(one.price == 0)  // not in Realm's file: the default
        #expect(Array(one.tags) == ["red", "", "파랑"] && Array(three.tags) == ["solo"])
        #expect(Set(one.numbers) == [1, 2, 3])
        #expect(one.ratings["x"] == .some(1.5) && one.ratings["y"] == .some(nil) && one.ratings.count == 2)
        #expect(Array(one.dates) == [date("2020-01-01T00:00:00.000Z"), date("1969-07-20T20:17:40.000Z")])

        // Links by primary key, in lists, sets and maps.
        #expect(one.maker?.code == "acme" && two.maker == nil && three.maker?.code == "o\"dd, one")
        #expect(one.makers.map(\.code) == ["acme", "전자"] && three.makers.map(\.code) == ["o\"dd, one", "o\"dd, one"])
        #expect(Set(one.makerSet.map(\.code)) == ["acme", "o\"dd, one"])
        #expect(one.makerMap["a"]??.code == "acme" && one.makerMap.keys.sorted() == ["a", "none"])
        #expect(one.makerMap["none"] == .some(nil))
        #expect(db.objects(Maker.self).count == 3)  // linked many times, stored once
        // Links to objects without a primary key, named by their content.
        #expect(one.sticker?.label == "sticker 1" && two.sticker?.label == "sticker 2" && three.sticker == nil)
        #expect(db.objects(Sticker.self).count == 2)
        // A cycle within a type: 1 ↔ 2, and 3 to itself.
        #expect(one.twin == two && two.twin == one && three.twin == nil)
        #expect(Array(one.related) == [two, three] && Array(three.related) == [three, one])
        #expect(Array(two.twinOf) == [one])
        // Embedded objects, with links inside them.
        #expect(one.part?.label == "bolt" && one.part?.weight == 0.5 && Array(one.part!.notes) == ["zinc", "M4"])
        #expect(one.part?.maker?.code == "전자")
        #expect(one.parts.map(\.label) == ["nut", "washer"] && one.parts[0].weight == nil)
        #expect(one.parts[0].maker?.code == "acme" && one.parts[1].maker == nil && two.part == nil)
        // Mixed values, holding links too.
        #expect(one.anything.object(Maker.self)?.code == "acme")
        #expect(two.anything == .string("text") && three.anything == .int(42))
        let mixed = Array(one.mixedList)
        #expect(mixed.count == 8)
        #expect(mixed[0] == .int(1) && mixed[1] == .string("two") && mixed[2] == .double(2.5) && mixed[3] == .bool(true))
        let threeQuarters = try Decimal128(string: "3.25")
        #expect(mixed[4] == .none && mixed[5] == .decimal128(threeQuarters))
        #expect(mixed[6].object(Sticker.self)?.label == "sticker 2" && mixed[7].object(Gadget.self) == three)

        // Across types, through objects without a primary key: keeper ↔ pets, buddies in a cycle.
        let ann = try #require(db.object(ofType: Keeper.self, forPrimaryKey: try ObjectId(string: "65b000000000000000000001")))
        let bo = try #require(db.object(ofType: Keeper.self, forPrimaryKey: try ObjectId(string: "65b000000000000000000002")))
        #expect(ann.pets.map(\.name) == ["Mochi", "Bori"] && bo.pets.map(\.name) == ["Nabi"])
        #expect(ann.favorite == ann.pets[1] && bo.favorite == nil)
        let (mochi, bori, nabi) = (ann.pets[0], ann.pets[1], bo.pets[0])
        #expect(mochi.keeper == ann && bori.keeper == ann && nabi.keeper == bo)
        #expect(mochi.buddy == bori && bori.buddy == mochi && nabi.buddy == nabi)
        #expect(Array(mochi.keptBy) == [ann])
        #expect(db.objects(Pet.self).count == 3)

        // The seed's diary, its memo searchable by a word inside a word.
        let entries = db.objects(DiaryEntry.self).sorted(by: \.id)
        #expect(entries.map(\.mood) == [.happy, .sad])
        #expect(entries[0].dateAdded == date("2024-05-01T21:04:05.120Z") && entries[1].image == nil)
        let found = try db.objects(DiaryEntry.self).filter("memo CONTAINS '바다'").map(\.id)
        #expect(found == ["2024-05-01-1"])
        #expect(try db.verify().problems.isEmpty)
    }

    /// Studio 10 to 12 (plain JSON, links as copies, binary data as base64)
    /// and Studio 3.6 to 9 (links as primary keys): the same objects.
    @Test func earlierStudios() throws {
        let url = try appFile()
        let result = try importing("studio10.json", into: url)
        #expect(result.status == 0, "\(result.err)")
        #expect(!result.out.contains("note:"))
        let db = try Database(configuration: configuration(url))
        let one = try #require(db.object(ofType: Gadget.self, forPrimaryKey: 1))
        #expect(one.blob == Data([0, 1, 0xFE]) && one.sticker?.label == "sticker 1" && one.twin?.id == 2)
        #expect(one.part?.maker?.code == "전자" && one.mixedList[6].object(Sticker.self)?.label == "sticker 2")
        #expect(db.objects(Sticker.self).count == 2 && db.objects(Maker.self).count == 3)
        let ann = try #require(db.objects(Keeper.self).filter("name == 'Ann'").first)
        #expect(ann.pets.map(\.name) == ["Mochi", "Bori"] && ann.favorite?.name == "Bori")
        #expect(ann.pets[0].photo == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(
            db.objects(DiaryEntry.self).sorted(by: \.id).first?.image == Data([0xFF, 0xD8, 0xFF, 0xE0, 0x4A, 0x46, 0x49, 0x46]))

        let older = try appFile("older")
        let result3 = try importing("studio3.json", into: older)
        #expect(result3.status == 0, "\(result3.err)")
        #expect(result3.out.contains("imported 12 objects"))
        let db3 = try Database(configuration: configuration(older))
        let keepers = db3.objects(Keeper.self).sorted(by: \.name)
        #expect(keepers.map(\.name) == ["Ann", "Bo"])
        #expect(keepers[0].pets.map(\.name) == ["Mochi", "Bori"] && keepers[0].favorite == keepers[0].pets[1])
        #expect(keepers[0].pets[0].keeper == keepers[0] && keepers[1].pets[0].keeper == keepers[1])
        #expect(db3.objects(Pet.self).count == 3)
    }

    /// Importing twice fails on the first stored primary key and writes
    /// nothing; with --update it replaces the objects, links made again.
    @Test func again() throws {
        let url = try appFile()
        #expect(try importing("studio13.json", into: url).status == 0)
        let twice = try importing("studio13.json", into: url)
        #expect(twice.status == 1)
        #expect(twice.err.contains("Maker[0]: a Maker with this primary key is already stored (add --update to overwrite it)"))
        #expect(twice.err.contains("nothing was written to \(url.path)"))
        let updated = try trove(
            "import", url.path, Self.fixtures.appendingPathComponent("studio13.json").path, "--format", "realm-studio", "--update"
        )
        #expect(updated.status == 0, "\(updated.err)")
        let db = try Database(configuration: configuration(url))
        #expect(db.objects(Gadget.self).count == 3 && db.objects(Maker.self).count == 3)
        let one = try #require(db.object(ofType: Gadget.self, forPrimaryKey: 1))
        #expect(one.makers.map(\.code) == ["acme", "전자"] && one.twin?.twin == one)
        // Objects without a primary key cannot be matched to stored ones: they are added again.
        #expect(db.objects(Pet.self).count == 6)
    }

    /// Exports the file cannot take: each refused with what and where, nothing written.
    @Test func refused() throws {
        let url = try appFile()
        let directory = url.deletingLastPathComponent()
        func attempt(_ json: String) throws -> (status: Int32, out: String, err: String) {
            let input = directory.appendingPathComponent("export-\(UUID().uuidString.prefix(6)).json")
            try Data(json.utf8).write(to: input)
            return try trove("import", url.path, input.path, "--format", "realm-studio")
        }
        let unknownType = try attempt(#"{"Maker": [], "Robot": [{"name": "R2"}], "Droid": [{"x": 1}]}"#)
        #expect(unknownType.status == 1)
        #expect(
            unknownType.err.contains(
                "has no type for the export's Robot (1 object), Droid (1 object): declare them in the app's models"))

        let unknownProperty = try attempt(#"{"Maker": [{"code": "a", "name": "A", "founded": 1999}]}"#)
        #expect(
            unknownProperty.err.contains("Maker[0]: the export has a property 'founded' that Maker in \(url.path) does not have"))

        let badValues = try attempt(
            #"{"Maker": [{"code": "a", "name": 5}], "Gadget": [{"id": 1, "when": "yesterday"}, {"id": 2, "maker": "nobody"}]}"#)
        #expect(badValues.status == 1)
        #expect(badValues.err.contains("Gadget[0]:") && badValues.err.contains("when"))
        #expect(badValues.err.contains("Maker[0]:") && badValues.err.contains("name"))
        #expect(badValues.err.contains("2 objects could not be imported; nothing was written"))

        let missingTarget = try attempt(#"{"Gadget": [{"id": 2, "maker": {"code": "zz", "name": "Z"}}]}"#)
        #expect(missingTarget.err.contains("Gadget[0].maker links to a Maker that is not among the export's Maker objects"))

        let marked = try attempt(#"{"Maker": [{"$refId": "Maker#1", "code": "a", "name": "A"}]}"#)
        #expect(marked.err.contains("marks repeated objects with $refId"))
        #expect(marked.err.contains("Realm Studio 13 or later"))

        let cut = try attempt(#"[{"Maker": "1"}, ["2"]]"#)
        #expect(cut.err.contains("refers to element 2, which it does not have (it has 2)"))

        let broken = try attempt("{\"Maker\": [\n{\"code\": \"a\",\n\"name\": }]}")
        #expect(broken.err.contains("line 3: not valid JSON"))

        let embedded = try attempt(#"{"Part": [{"label": "loose"}]}"#)
        #expect(embedded.err.contains("embeds Part in Gadget.part"))

        let db = try Database(configuration: configuration(url))
        #expect(db.objects(Maker.self).isEmpty && db.objects(Gadget.self).isEmpty)
    }
}
