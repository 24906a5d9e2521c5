import Foundation
import Testing
import Trove
import TroveTestSupport

/// Linked to by its primary key.
final class Maker: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted var name = ""
}

/// No primary key: linked to by its object key.
final class Sticker: Object {
    @Persisted var label = ""
}

final class Part: EmbeddedObject {
    @Persisted var label = ""
    @Persisted var weight: Double?
    @Persisted var notes = List<String>()
    @Persisted var maker: Maker?
}

/// A base class with a subclass: a link and a list declared with the base hold both.
class Author: Object {
    @Persisted(primaryKey: true) var handle = ""
}

final class Editor: Author {
    @Persisted var desk = ""
}

final class Article: Object {
    @Persisted(primaryKey: true) var slug = ""
    @Persisted var by: Author?
    @Persisted var reviewers: List<Author>
}

/// Every kind of property the file can hold.
final class Gadget: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var flag = false
    @Persisted var small: Int8 = 0
    @Persisted var medium: Int32 = 0
    @Persisted var ratio: Float = 0
    @Persisted var score = 0.0
    @Persisted var count: Int?
    @Persisted var memo: String?
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var blob = Data()
    @Persisted var maybeBlob: Data?
    @Persisted var uuid = UUID()
    @Persisted var oid = ObjectId()
    @Persisted var amount: Decimal128 = 0
    @Persisted var price: Decimal = 0
    @Persisted var anything: Mixed = .none
    @Persisted var tags = List<String>()
    @Persisted var numbers = MutableSet<Int>()
    @Persisted var ratings = Map<String, Double?>()
    @Persisted var dates = List<Date>()
    @Persisted var mixedList = List<Mixed>()
    @Persisted var maker: Maker?
    @Persisted var makers = List<Maker>()
    @Persisted var makerSet = MutableSet<Maker>()
    @Persisted var makerMap = Map<String, Maker?>()
    @Persisted var sticker: Sticker?
    /// May point at a gadget later in the file.
    @Persisted var twin: Gadget?
    @Persisted var related = List<Gadget>()
    @Persisted var part: Part?
    @Persisted var parts = List<Part>()
    @Persisted(originProperty: "twin") var twinOf: LinkingObjects<Gadget>
}

/// A mixed value holding nested collections.
final class NestedBag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: Mixed = .none
}

/// A directory of its own for one test.
private func directory(_ name: String = #function) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
        .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A new file with the test's types registered and no objects.
private func emptyFile(_ url: URL) throws {
    _ = try Database(
        configuration: Configuration(fileURL: url, objectTypes: [Maker.self, Sticker.self, Part.self, Gadget.self]))
}

private let awkward = "He said \"hi\", then\nleft\ttwice\r\n\u{1}\u{1F}\\ — 트랜잭션 테스트 🎉"

/// Makers, stickers and gadgets with every kind of value, links forward and back.
private func source(_ url: URL, gadgets: Int = 6) throws {
    let db = try Database(fileURL: url)
    try db.write {
        let makers = try ["acme", "전자", "o\"dd, one"].map { code -> Maker in
            let maker = Maker()
            maker.code = code
            maker.name = "Maker \(code)"
            try db.add(maker)
            return maker
        }
        let stickers = try (1...3).map { index -> Sticker in
            let sticker = Sticker()
            sticker.label = "sticker \(index)"
            try db.add(sticker)
            return sticker
        }
        var added: [Gadget] = []
        for id in 1...gadgets {
            let gadget = Gadget()
            gadget.id = id
            gadget.name = id == 1 ? awkward : "gadget \(id)"
            gadget.flag = id % 2 == 0
            gadget.small = Int8(-100 + id)
            gadget.medium = Int32(id * 1_000_000)
            gadget.ratio = 1.1 * Float(id)
            gadget.score = id == 2 ? .infinity : 0.1 * Double(id)
            gadget.count = id % 3 == 0 ? nil : id * 7
            gadget.memo = id % 3 == 0 ? nil : id == 2 ? "" : id == 4 ? "nil" : awkward
            gadget.when =
                [
                    Date(), Date(timeIntervalSince1970: -1_234_567.891), .distantPast, .distantFuture,
                    Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSince1970: 1_700_000_000.123_456),
                ][(id - 1) % 6]
            gadget.blob = Data((0..<(id * 3)).map { UInt8(truncatingIfNeeded: $0 * 37) })
            gadget.maybeBlob = id % 2 == 0 ? nil : id == 1 ? Data() : Data([0, 1, 2])
            gadget.uuid = UUID()
            gadget.oid = ObjectId.generate()
            gadget.amount = try Decimal128(string: id == 1 ? "-1234567890.123456789" : "\(id).5E3")
            gadget.price = Decimal(string: "\(id * 1111).25")!
            gadget.anything =
                [
                    .string("rent"), .int(42), .double(2.5), .bool(true), .date(Date(timeIntervalSince1970: 1e9)),
                    .data(Data([9, 8, 7])), .uuid(UUID()), .objectId(.generate()), .decimal128(7), .float(1.5), .none,
                    .object(makers[1]), .string(""), .double(-.infinity),
                ][(id - 1) % 14]
            gadget.tags.append(objectsIn: id == 1 ? ["travel", "work", awkward, ""] : ["t\(id)"])
            gadget.numbers.insert(objectsIn: [id, id * 2, -id])
            gadget.ratings["four"] = Double(id) / 4
            gadget.ratings["none"] = nil
            gadget.ratings[awkward] = 1
            gadget.dates.append(objectsIn: [Date(), Date(timeIntervalSince1970: 0)])
            gadget.mixedList.append(objectsIn: [.int(id), .string("x"), .date(Date()), .object(makers[0]), .none])
            gadget.maker = id % 4 == 0 ? nil : makers[id % 3]
            gadget.makers.append(objectsIn: [makers[0], makers[2], makers[0]])
            gadget.makerSet.insert(objectsIn: [makers[1], makers[2]])
            gadget.makerMap["best"] = makers[2]
            gadget.makerMap["gone"] = nil
            gadget.sticker = stickers[id % 3]
            gadget.part =
                id % 2 == 0
                ? nil
                : {
                    let part = Part()
                    part.label = "part of \(id)"
                    part.weight = id == 1 ? nil : 2.5
                    part.notes.append(objectsIn: ["a", awkward])
                    part.maker = makers[1]
                    return part
                }()
            for index in 0..<2 {
                let part = Part()
                part.label = "\(id).\(index)"
                part.weight = Double(index)
                gadget.parts.append(part)
            }
            try db.add(gadget)
            added.append(gadget)
        }
        // Links to gadgets that come later in the export, and to themselves.
        for (index, gadget) in added.enumerated() {
            gadget.twin = added[(index + 2) % added.count]
            gadget.related.append(objectsIn: [added[(index + 1) % added.count], gadget])
        }
    }
}

/// A mixed value, with a link as its type and primary key (objects of two files never compare equal).
private func describe(_ value: Mixed) -> String {
    if case .object(let object) = value, let maker = object as? Maker { return "Maker#\(maker.code)" }
    return "\(value)"
}

/// Checks that two gadgets (of two files) hold the same values.
private func expectSame(_ a: Gadget, _ b: Gadget, _ format: String) {
    let label = "\(format), gadget \(a.id)"
    #expect(a.id == b.id, "\(label)")
    #expect(a.name == b.name, "\(label)")
    #expect(a.flag == b.flag && a.small == b.small && a.medium == b.medium, "\(label)")
    #expect(a.ratio == b.ratio && a.score == b.score, "\(label): \(a.ratio) \(b.ratio) \(a.score) \(b.score)")
    #expect(a.count == b.count, "\(label)")
    #expect(a.memo == b.memo, "\(label): \(String(describing: a.memo)) \(String(describing: b.memo))")
    #expect(a.when == b.when, "\(label): \(a.when.timeIntervalSinceReferenceDate) \(b.when.timeIntervalSinceReferenceDate)")
    #expect(a.blob == b.blob && a.maybeBlob == b.maybeBlob, "\(label)")
    #expect(a.uuid == b.uuid && a.oid == b.oid, "\(label)")
    #expect(a.amount == b.amount && a.price == b.price, "\(label): \(a.amount) \(b.amount) \(a.price) \(b.price)")
    #expect(describe(a.anything) == describe(b.anything), "\(label): \(a.anything) \(b.anything)")
    #expect(Array(a.tags) == Array(b.tags), "\(label)")
    #expect(Set(a.numbers) == Set(b.numbers), "\(label)")
    #expect(
        Dictionary(uniqueKeysWithValues: a.ratings.map { ($0.key, $0.value) })
            == Dictionary(uniqueKeysWithValues: b.ratings.map { ($0.key, $0.value) }), "\(label)")
    #expect(Array(a.dates) == Array(b.dates), "\(label)")
    #expect(a.mixedList.map(describe) == b.mixedList.map(describe), "\(label)")
    #expect(a.maker?.code == b.maker?.code, "\(label)")
    #expect(a.makers.map(\.code) == b.makers.map(\.code), "\(label)")
    #expect(Set(a.makerSet.map(\.code)) == Set(b.makerSet.map(\.code)), "\(label)")
    #expect(
        Dictionary(uniqueKeysWithValues: a.makerMap.map { ($0.key, $0.value?.code) })
            == Dictionary(uniqueKeysWithValues: b.makerMap.map { ($0.key, $0.value?.code) }), "\(label)")
    #expect(a.sticker?.label == b.sticker?.label, "\(label)")
    #expect(a.twin?.id == b.twin?.id, "\(label)")
    #expect(a.related.map(\.id) == b.related.map(\.id), "\(label)")
    #expect(a.twinOf.map(\.id).sorted() == b.twinOf.map(\.id).sorted(), "\(label)")
    #expect(a.part?.label == b.part?.label && a.part?.weight == b.part?.weight, "\(label)")
    #expect(a.part.map { Array($0.notes) } == b.part.map { Array($0.notes) } && a.part?.maker?.code == b.part?.maker?.code)
    #expect(a.parts.map(\.label) == b.parts.map(\.label) && a.parts.map(\.weight) == b.parts.map(\.weight), "\(label)")
}

@Suite("trove export and import", .serialized)
struct ImportExportTests {
    @Test("export then import into a new file gives the same objects, every kind of property, in JSON, JSONL and CSV")
    func roundTripEveryKind() throws {
        let folder = try directory()
        let original = folder.appendingPathComponent("source.trove")
        try source(original)
        for format in ["json", "jsonl", "csv"] {
            let target = folder.appendingPathComponent("target-\(format).trove")
            try emptyFile(target)
            // The types linked to first: links are read as their primary keys.
            for type in ["Maker", "Sticker", "Gadget"] {
                let file = folder.appendingPathComponent("\(type).\(format)").path
                let exported = try trove("export", original.path, "--type", type, "--format", format, "-o", file)
                #expect(exported.status == 0, "\(format) \(type): \(exported.err)")
                let imported = try trove("import", target.path, "--type", type, file)
                #expect(imported.status == 0, "\(format) \(type): \(imported.err)")
                // Exported again, the new file reads the same.
                let again = try trove("export", target.path, "--type", type, "--format", format)
                #expect(again.out == (try String(contentsOfFile: file, encoding: .utf8)), "\(format) \(type) differs")
            }
            let verify = try trove("verify", target.path)
            #expect(verify.status == 0, "\(format): \(verify.out)")
            let before = try Database(fileURL: original).objects(Gadget.self).sorted(byKeyPath: "id")
            let after = try Database(fileURL: target).objects(Gadget.self).sorted(byKeyPath: "id")
            #expect(before.count == 6 && after.count == 6, "\(format)")
            for (a, b) in zip(before, after) { expectSame(a, b, format) }
            #expect(try Database(fileURL: target).objects(Part.self).count == 6 * 2 + 3, "\(format): embedded objects")
        }
        // Every type in one file: JSON only (import picks a type's array); JSON
        // lines or CSV of several types could not be told apart.
        let every = folder.appendingPathComponent("every.json").path
        #expect(try trove("export", original.path, "--format", "json", "-o", every).status == 0)
        let again = folder.appendingPathComponent("again.trove")
        try emptyFile(again)
        for type in ["Maker", "Sticker", "Gadget"] {
            let imported = try trove("import", again.path, "--type", type, every)
            #expect(imported.status == 0, "\(type): \(imported.err)")
        }
        #expect(try Database(fileURL: again).objects(Gadget.self).count == 6)
        for format in ["jsonl", "csv"] {
            let refused = try trove("export", original.path, "--format", format)
            #expect(refused.status == 2)
            #expect(refused.err.contains("add --type T"), "\(refused.err)")
        }
    }

    @Test("schema --swift prints a class hierarchy as one (bases open, subclasses with what they add) and embedded types as such")
    func swiftSchemaKeepsHierarchies() throws {
        let file = try directory().appendingPathComponent("models.trove")
        _ = try Database(
            configuration: Configuration(
                fileURL: file,
                objectTypes: [Maker.self, Sticker.self, Part.self, Gadget.self, Author.self, Editor.self, Article.self]))
        let swift = try trove("schema", file.path, "--swift")
        #expect(swift.status == 0, "\(swift.err)")
        let text = swift.out
        #expect(text.contains("class Author: Object {\n    @Persisted(primaryKey: true) var handle: String\n}"), "\(text)")
        #expect(!text.contains("final class Author"))
        #expect(text.contains("final class Editor: Author {\n    @Persisted var desk: String\n}"), "\(text)")
        #expect(text.contains("final class Part: EmbeddedObject {"))
        #expect(text.contains("final class Gadget: Object {"))
        let author = try #require(text.range(of: "class Author: Object"))
        let editor = try #require(text.range(of: "class Editor: Author"))
        #expect(author.lowerBound < editor.lowerBound, "a base comes before its subclass")
    }

    @Test("links declared with a base class export a subclass object with its type, and import it back, in JSONL and CSV")
    func subclassLinksRoundTrip() throws {
        let folder = try directory()
        let original = folder.appendingPathComponent("articles.trove")
        do {
            let db = try Database(fileURL: original)
            try db.write {
                let ann = Author()
                ann.handle = "ann"
                let ed = Editor()
                ed.handle = "ed"
                ed.desk = "news"
                for (slug, by) in [("a", ann), ("b", ed)] {
                    let article = Article()
                    article.slug = slug
                    article.by = by
                    article.reviewers.append(objectsIn: [ed, ann])
                    try db.add(article, update: .modified)
                }
            }
        }
        for format in ["jsonl", "csv"] {
            let target = folder.appendingPathComponent("target-\(format).trove")
            _ = try Database(
                configuration: Configuration(fileURL: target, objectTypes: [Author.self, Editor.self, Article.self]))
            for type in ["Author", "Editor", "Article"] {
                let file = folder.appendingPathComponent("\(type).\(format)").path
                let exported = try trove("export", original.path, "--type", type, "--format", format, "-o", file)
                #expect(exported.status == 0, "\(format) \(type): \(exported.err)")
                if type == "Article" {
                    let text = try String(contentsOfFile: file, encoding: .utf8)
                    #expect(text.contains("Editor"), "\(format): the subclass is named: \(text)")
                }
                let imported = try trove("import", target.path, "--type", type, file)
                #expect(imported.status == 0, "\(format) \(type): \(imported.err)")
            }
            let db = try Database(fileURL: target)
            let articles = db.objects(Article.self).sorted(by: \.slug)
            #expect(articles.map { $0.by.map { String(describing: type(of: $0)) } } == ["Author", "Editor"], "\(format)")
            #expect((articles.last?.by as? Editor)?.desk == "news", "\(format)")
            #expect(articles.first?.reviewers.map(\.handle) == ["ed", "ann"], "\(format)")
            #expect(articles.first?.reviewers.first is Editor, "\(format)")
            #expect(try trove("verify", target.path).status == 0)
        }
    }

    @Test("strings keep quotes, line breaks, control characters and Korean text, escaped as JSON needs")
    func escaping() throws {
        let folder = try directory()
        let file = folder.appendingPathComponent("source.trove")
        try source(file, gadgets: 1)
        let line = try trove("export", file.path, "--type", "Gadget", "--format", "jsonl").out
        #expect(line.contains(#""name":"He said \"hi\", then\nleft\ttwice\r\n\u0001\u001f\\ — 트랜잭션 테스트 🎉""#), "\(line)")
        #expect(line.split(separator: "\n").count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["name"] as? String == awkward)
        #expect(object["maker"] as? String == "전자")
        #expect((object["makers"] as? [String]) == ["acme", "o\"dd, one", "acme"])
        #expect((object["part"] as? [String: Any])?["label"] as? String == "part of 1")
        #expect(object["twinOf"] == nil, "linking objects are computed, not exported")
        #expect((object["anything"] as? String) == "rent")
    }

    @Test("a bad row in the middle fails with its line and property, and nothing is written")
    func badRowWritesNothing() throws {
        let folder = try directory()
        let target = folder.appendingPathComponent("target.trove")
        try emptyFile(target)
        let rows = (1...5).map { id in
            id == 3 ? #"{"id": 3, "name": "three", "tags": ["a", 7]}"# : #"{"id": \#(id), "name": "n\#(id)", "tags": ["a"]}"#
        }
        let jsonl = folder.appendingPathComponent("rows.jsonl").path
        try rows.joined(separator: "\n").write(toFile: jsonl, atomically: true, encoding: .utf8)
        let json = folder.appendingPathComponent("rows.json").path
        try ("[\n" + rows.joined(separator: ",\n") + "\n]\n").write(toFile: json, atomically: true, encoding: .utf8)
        let csv = folder.appendingPathComponent("rows.csv").path
        try "id,name,tags\r\n1,n1,\"[\"\"a\"\"]\"\r\n2,n2,[]\r\n3,three,\"[\"\"a\"\", 7]\"\r\n4,n4,[]\r\n"
            .write(toFile: csv, atomically: true, encoding: .utf8)
        for (file, line) in [(jsonl, 3), (json, 4), (csv, 4)] {
            let result = try trove("import", target.path, "--type", "Gadget", file)
            #expect(result.status == 1, "\(file)")
            #expect(
                result.err.contains("line \(line): 7 is not a value of type List<String> (property tags, element 2)"),
                "\(result.err)")
            #expect(result.err.contains("nothing was written"), "\(result.err)")
            #expect(try Database(fileURL: target).objects(Gadget.self).isEmpty, "\(file)")
        }
        // A link to an object the file does not have names the line and the property.
        try #"{"id": 1, "maker": "nobody"}"#.write(toFile: jsonl, atomically: true, encoding: .utf8)
        let dangling = try trove("import", target.path, "--type", "Gadget", jsonl)
        #expect(dangling.status == 1)
        #expect(
            dangling.err.contains(
                "line 1: Gadget.maker links to a Maker with primary key code = \"nobody\", which is not stored"),
            "\(dangling.err)")
        // A link given as a key of the wrong type says which key it needs.
        try #"{"id": 1, "maker": 5}"#.write(toFile: jsonl, atomically: true, encoding: .utf8)
        let wrongKey = try trove("import", target.path, "--type", "Gadget", jsonl)
        #expect(
            wrongKey.err.contains("line 1: 5 is not a value of type String (property maker, a link to a Maker by its code)"),
            "\(wrongKey.err)")
        // So does a link to a gadget that no row of the input has.
        try #"{"id": 1, "twin": 2}"#.write(toFile: jsonl, atomically: true, encoding: .utf8)
        let missing = try trove("import", target.path, "--type", "Gadget", jsonl)
        #expect(
            missing.err.contains(
                "line 1: Gadget.twin links to a Gadget with primary key id = 2, which is not stored nor imported"),
            "\(missing.err)")
        #expect(try Database(fileURL: target).objects(Gadget.self).isEmpty)
        // Broken JSON inside an array stops at its line.
        try "[\n{\"id\": 1},\n{\"id\": 2,,}\n]".write(toFile: json, atomically: true, encoding: .utf8)
        let broken = try trove("import", target.path, "--type", "Gadget", json)
        #expect(broken.status == 1)
        #expect(broken.err.contains("line 3: not valid JSON"), "\(broken.err)")
        // Even with --skip-bad: what follows cannot be read, so the import fails and writes nothing.
        let skipping = try trove("import", target.path, "--type", "Gadget", json, "--skip-bad")
        #expect(skipping.status == 1)
        #expect(skipping.err.contains("the input cannot be read past line 3"), "\(skipping.err)")
        #expect(try Database(fileURL: target).objects(Gadget.self).isEmpty)
    }

    @Test("invalid UTF-8 in a string, a name twice in a JSON object and a CSV column named twice are refused with their line")
    func malformedTextIsRefusedNotRepaired() throws {
        let folder = try directory()
        let target = folder.appendingPathComponent("target.trove")
        try emptyFile(target)
        let bad: [UInt8] = [0xC3, 0x28]  // a lead byte whose continuation is missing
        func write(_ parts: [[UInt8]], _ name: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try Data(parts.joined()).write(to: URL(fileURLWithPath: path))
            return path
        }
        let good = Array(#"{"id": 1, "name": "fine"}"#.utf8) + [0x0A]
        let jsonl = try write([good, Array(#"{"id": 2, "name": "caf"#.utf8), bad, Array("\"}\n".utf8)], "utf8.jsonl")
        let json = try write(
            [
                Array("[\n".utf8), good.dropLast() + Array(",\n".utf8), Array(#"{"id": 2, "memo": ""#.utf8), bad,
                Array("\"}\n]".utf8),
            ],
            "utf8.json")
        let csv = try write([Array("id,name\n1,fine\n2,caf".utf8), bad, Array("\n".utf8)], "utf8.csv")
        for (file, line) in [(jsonl, 2), (json, 3), (csv, 3)] {
            let result = try trove("import", target.path, "--type", "Gadget", file)
            #expect(result.status == 1, "\(file)")
            #expect(result.err.contains("line \(line)"), "\(result.err)")
            #expect(result.err.contains("not valid UTF-8"), "\(result.err)")
            #expect(try Database(fileURL: target).objects(Gadget.self).isEmpty, "\(file)")
        }
        // A name given twice: refused, neither value taken.
        let twice = try write([good, Array(#"{"id": 2, "name": "a", "name": "b"}"#.utf8)], "twice.jsonl")
        let duplicate = try trove("import", target.path, "--type", "Gadget", twice)
        #expect(duplicate.status == 1)
        #expect(duplicate.err.contains("line 2"), "\(duplicate.err)")
        #expect(duplicate.err.contains("\"name\" appears twice"), "\(duplicate.err)")
        let many = (1...40).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
        let wide = try write([Array("{\(many), \"k7\": 0}\n".utf8)], "wide.jsonl")
        #expect(try trove("import", target.path, "--type", "Gadget", wide).err.contains("\"k7\" appears twice"))
        let header = try write([Array("id,name,name\n1,a,b\n".utf8)], "twice.csv")
        let columns = try trove("import", target.path, "--type", "Gadget", header)
        #expect(columns.status == 1)
        #expect(columns.err.contains("names 'name' twice, in columns 2 and 3"), "\(columns.err)")
        #expect(try Database(fileURL: target).objects(Gadget.self).isEmpty)
    }

    @Test("--batch N commits every N rows: the batches before a bad row stay, nothing after it is written")
    func batches() throws {
        let folder = try directory()
        let target = folder.appendingPathComponent("target.trove")
        try emptyFile(target)
        let input = folder.appendingPathComponent("rows.jsonl").path
        // Row 2 links to row 3, within its batch; row 7 is bad.
        let rows = (1...10).map { id in
            id == 7 ? #"{"id": 7, "count": "seven"}"# : id == 2 ? #"{"id": 2, "twin": 3}"# : #"{"id": \#(id)}"#
        }
        try rows.joined(separator: "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let stopped = try trove("import", target.path, "--type", "Gadget", input, "--batch", "3")
        #expect(stopped.status == 1)
        #expect(stopped.err.contains("line 7: 'seven' is not a value of type Int? (property count)"), "\(stopped.err)")
        #expect(
            stopped.err.contains("the 6 Gadget objects of the 2 batches before line 7 were committed and stay"), "\(stopped.err)")
        let db = try Database(fileURL: target)
        #expect(db.objects(Gadget.self).map(\.id).sorted() == [1, 2, 3, 4, 5, 6])
        #expect(db.object(ofType: Gadget.self, forPrimaryKey: 2)?.twin?.id == 3)

        let skipped = try trove("import", target.path, "--type", "Gadget", input, "--batch", "3", "--skip-bad", "--update")
        #expect(skipped.status == 0, "\(skipped.err)")
        #expect(skipped.out.contains("imported 9 Gadget objects") && skipped.out.contains("in 3 transactions"), "\(skipped.out)")
        #expect(skipped.err.contains("skipped line 7:"))
        // The rows gave no date: each object got the type's stored default, and the tool says so.
        #expect(
            skipped.out.contains("note: 9 rows had no when: each got 1970-01-01T00:00:00.000Z; give the column a value per row"),
            "\(skipped.out)")
        db.refresh()
        #expect(db.objects(Gadget.self).count == 9)
        #expect(try trove("verify", target.path).status == 0)
    }

    @Test("Ctrl-C stops an import at its next row: the batches committed stay, and the tool says so and how to go on")
    func interruptedImport() throws {
        let folder = try directory()
        let target = folder.appendingPathComponent("target.trove")
        try emptyFile(target)
        let input = try ChildProcess.makePipe()
        let errPath = folder.appendingPathComponent("import.err").path
        let process = try ChildProcess(
            try built("trove").path,
            ["import", target.path, "--type", "Gadget", "-", "--format", "jsonl", "--batch", "2"],
            stdin: .descriptor(input.read), stderr: .file(errPath))
        close(input.read)
        func row(_ id: Int) {
            let line = Array("{\"id\": \(id), \"when\": \"2024-05-01T09:30:00Z\"}\n".utf8)
            _ = line.withUnsafeBytes { write(input.write, $0.baseAddress, $0.count) }
        }
        for id in 1...5 { row(id) }
        // Rows 1–4 are two committed batches; row 5 waits in the open one.
        let db = try Database(fileURL: target)
        let deadline = Date().addingTimeInterval(60)
        while db.objects(Gadget.self).count < 4, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            db.refresh()
        }
        process.send(SIGINT)
        Thread.sleep(forTimeInterval: 0.2)
        row(6)
        close(input.write)
        let ending = process.wait()
        let message = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        #expect(ending == .exited(130), "\(message)")
        #expect(
            message.contains(
                "trove: interrupted at line 6; the 4 Gadget objects of the 2 batches before line 5 were committed and stay; nothing from line 5 on was written"
            ), "\(message)")
        #expect(message.contains("To go on, import again with --update"))
        db.refresh()
        #expect(db.objects(Gadget.self).map(\.id).sorted() == [1, 2, 3, 4])
        #expect(try trove("verify", target.path).status == 0)
    }

    @Test("with --update, an imported row replaces the stored object, collections and links included")
    func updateReplaces() throws {
        let folder = try directory()
        let file = folder.appendingPathComponent("source.trove")
        try source(file, gadgets: 3)
        let input = folder.appendingPathComponent("rows.jsonl").path
        try #"{"id": 2, "name": "renamed", "tags": ["only"], "parts": [{"label": "new"}], "twin": 2}"#
            .write(toFile: input, atomically: true, encoding: .utf8)
        #expect(try trove("import", file.path, "--type", "Gadget", input).err.contains("already stored"))
        let updated = try trove("import", file.path, "--type", "Gadget", input, "--update")
        #expect(updated.status == 0, "\(updated.err)")
        let db = try Database(fileURL: file)
        let gadget = try #require(db.object(ofType: Gadget.self, forPrimaryKey: 2))
        #expect(gadget.name == "renamed" && Array(gadget.tags) == ["only"] && gadget.parts.map(\.label) == ["new"])
        #expect(gadget.twin?.id == 2 && gadget.makers.isEmpty)
        #expect(try trove("verify", file.path).status == 0)
    }

    @Test("importing an embedded type on its own is refused: its objects come inside their owners")
    func embeddedTypeRefused() throws {
        let folder = try directory()
        let file = folder.appendingPathComponent("source.trove")
        try source(file, gadgets: 1)
        let input = folder.appendingPathComponent("parts.jsonl").path
        try #"{"label": "loose"}"#.write(toFile: input, atomically: true, encoding: .utf8)
        let refused = try trove("import", file.path, "--type", "Part", input)
        #expect(refused.status == 1)
        #expect(refused.err.contains("Part is an embedded object type"), "\(refused.err)")
        // Without --type, export leaves embedded types to their owners.
        let all = try trove("export", file.path, "--format", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(all.out.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["Maker", "Sticker", "Gadget"])
        // And import reads one type's array out of such an export.
        let target = folder.appendingPathComponent("target.trove")
        try emptyFile(target)
        let everything = folder.appendingPathComponent("all.json").path
        try all.out.write(toFile: everything, atomically: true, encoding: .utf8)
        #expect(try trove("import", target.path, "--type", "Maker", everything).out.contains("imported 3 Maker objects"))
    }

    @Test(
        "lists and dictionaries nested in a mixed value export as JSON arrays and objects and import back; a link inside one is refused"
    )
    func nestedMixedCollections() throws {
        let folder = try directory()
        let original = folder.appendingPathComponent("bags.trove")
        let values: [Mixed] = [
            .fromArray([
                .int(1), .string("a"), .none,
                .fromDictionary(["k": .double(2.5), "date": .date(Date(timeIntervalSince1970: 9))]),
            ]),
            .fromDictionary(["$oid": .string("not a tag"), "nested": .fromArray([])]),  // a key that looks like a tag
            .fromDictionary(["$link": .string("Maker"), "key": .string("acme")]),  // looks like a link
            .fromDictionary([:]),
        ]
        do {
            let db = try Database(configuration: Configuration(fileURL: original, objectTypes: [NestedBag.self]))
            try db.write {
                for (index, value) in values.enumerated() { try db.add(NestedBag(value: ["id": index, "value": value])) }
            }
        }
        for format in ["json", "jsonl", "csv"] {
            let file = folder.appendingPathComponent("bags.\(format)").path
            let exported = try trove("export", original.path, "--type", "NestedBag", "--format", format, "-o", file)
            #expect(exported.status == 0, "\(format): \(exported.err)")
            let target = folder.appendingPathComponent("target-\(format).trove")
            _ = try Database(configuration: Configuration(fileURL: target, objectTypes: [NestedBag.self]))
            let imported = try trove("import", target.path, "--type", "NestedBag", file)
            #expect(imported.status == 0, "\(format): \(imported.err)")
            let db = try Database(configuration: Configuration(fileURL: target, objectTypes: [NestedBag.self]))
            for (index, value) in values.enumerated() {
                let read = db.object(ofType: NestedBag.self, forPrimaryKey: index)?.value
                #expect(read?._troveStored == value._troveStored, "\(format) \(index): \(String(describing: read))")
            }
        }
        // A link inside a nested collection has no portable form yet: export says so.
        let linked = folder.appendingPathComponent("linked.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: linked, objectTypes: [NestedBag.self, Maker.self]))
            try db.write {
                try db.add(NestedBag(value: ["id": 1, "value": Mixed.fromArray([.object(Maker(value: ["code": "m"]))])]))
            }
        }
        let refused = try trove("export", linked.path, "--type", "NestedBag", "--format", "json")
        #expect(refused.status != 0 && refused.err.contains("holds a link"), "\(refused.err)")
    }
}
