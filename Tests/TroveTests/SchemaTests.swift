import Foundation
import Testing

@testable import Trove

/// The same stored type name as `Dog`, with a changed property type.
final class DogV2: Object {
    @Persisted var name = ""
    @Persisted var age = ""  // was Int
}

@Suite("Schema")
struct SchemaTests {
    private func file(_ name: String = #function) -> URL {
        makeTemporaryDirectory(name).appendingPathComponent("schema.trove")
    }

    @Test("types are registered on first use and their schema stored in the file")
    func registration() throws {
        let url = file()
        let db = try Database(fileURL: url)
        try db.write {
            try db.add(Dog())
            try db.add(Contact(firstName: "a", lastName: "b"))
        }
        let transaction = db.readTransaction()
        #expect(try Catalog.storedTypeNames(in: transaction).sorted() == ["Contact", "Dog"])
        let stored = try #require(try Catalog.storedSchema("Dog", in: transaction))
        #expect(stored.properties.map(\.name) == ["name", "age"])
    }

    @Test("a changed property type fails with migrationRequired naming the property and both types")
    func mismatch() throws {
        let url = file()
        do {
            let db = try Database(fileURL: url)
            try db.write { try db.add(Dog()) }
        }
        // Simulate the model changing: store DogV2's schema under the name Dog.
        let db = try Database(fileURL: url)
        var schema = ModelInfo.of(DogV2.self).schema
        schema.name = "Dog"
        let error = expectTroveError(.migrationRequired) { _ = try db.register(schema) }
        #expect(error?.message.contains("Dog.age") == true)
        #expect(error?.message.contains("Int") == true)
        #expect(error?.message.contains("String") == true)
    }

    @Test("listing a mismatched type in objectTypes makes opening the file throw")
    func mismatchAtOpen() throws {
        let url = file()
        do {
            let db = try Database(fileURL: url)
            var schema = ModelInfo.of(DogV2.self).schema
            schema.name = "Person"
            _ = try db.register(schema)
        }
        expectTroveError(.migrationRequired) {
            try Database(configuration: Configuration(fileURL: url, objectTypes: [Person.self]))
        }
    }

    @Test("a property removed from the model is a mismatch, not silent data loss")
    func removedProperty() throws {
        let url = file()
        let db = try Database(fileURL: url)
        var wide = ModelInfo.of(Dog.self).schema
        wide.properties.append(PropertySchema(name: "owner", type: .string))
        _ = try db.register(wide)
        let error = expectTroveError(.migrationRequired) { try db.write { try db.add(Dog()) } }
        #expect(error?.message.contains("Dog.owner") == true)
    }

    @Test("a new property is added on open; old objects read its default")
    func additiveProperty() throws {
        let url = file()
        do {
            let db = try Database(fileURL: url)
            var narrow = ModelInfo.of(Dog.self).schema
            narrow.properties.removeLast()  // a Dog without `age`
            let table = try db.register(narrow)
            try db.write {
                _ = try db.storeRecord([.string("Old")], in: table, policy: .error, db.writeState!)
            }
        }
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [Dog.self]))
        let dogs = db.objects(Dog.self)
        #expect(dogs.count == 1)
        #expect(dogs.first?.name == "Old")
        #expect(dogs.first?.age == 0)
        try db.write { dogs.first!.age = 5 }
        #expect(try db.objects(Dog.self).filter("age == 5").count == 1)
    }

    @Test("an index added to a stored type is built from the objects already there")
    func addedIndex() throws {
        let url = file()
        do {
            let db = try Database(fileURL: url)
            var plain = ModelInfo.of(Person.self).schema
            for index in plain.properties.indices where !plain.properties[index].isPrimaryKey {
                plain.properties[index].isIndexed = false
            }
            let table = try db.register(plain)
            try db.write {
                for id in 1...20 {
                    _ = try db.storeRecord(
                        [.int(Int64(id)), .string("N\(id % 3)"), .null, .string("C"), .double(0)], in: table, policy: .error,
                        db.writeState!)
                }
            }
        }
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [Person.self]))
        let binding = try db.objectBinding(for: Person.self)
        #expect(binding.table.indexes.count == 2)
        #expect(try db.objects(Person.self).filter("name == 'N1'").count == 7)
        expectValid(db)
    }

    @Test("a file that is not a Trove database is refused with corruptFile, and left untouched")
    func notATroveFile() throws {
        let url = file()
        try Data("just some text, not a database\n".utf8).write(to: url)
        let before = try Data(contentsOf: url)
        let error = expectTroveError(.corruptFile) { try Database(fileURL: url) }
        #expect(error?.message.contains(url.lastPathComponent) == true)
        #expect(try Data(contentsOf: url) == before)
    }
}
