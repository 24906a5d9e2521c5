import Foundation
import Testing

@testable import Trove

/// `Results.array()`: every element, in the results' order, read in batches
/// as iteration reads them.
@Suite("Results as an array")
struct ResultsArrayTests {
    @Test("array() holds every match in order across batches, as iteration does, with each object's values")
    func objectsInOrder() throws {
        let db = try makeDatabase()
        try addAllTypes(1...300, to: db) { object in
            object.int = object.id * 3
            object.string = "s\(object.id)"
        }
        let results = try db.objects(AllTypes.self).filter("int > 30").sorted(by: \.int, ascending: false)
        let array = results.array()
        #expect(array.count == 290)
        #expect(array.map(\.id) == Array((11...300).reversed()))
        #expect(array.map(\.id) == results.map(\.id))
        #expect(array.allSatisfy { $0.string == "s\($0.id)" && $0.int == $0.id * 3 })
        #expect(try db.objects(AllTypes.self).filter("int < 0").array().isEmpty)
    }

    @Test("inside a write, array() reads what the write changed and leaves out what it deleted")
    func insideAWrite() throws {
        let db = try makeDatabase()
        try addAllTypes(1...200, to: db)
        try db.write {
            for object in db.objects(AllTypes.self) where object.id % 2 == 0 { object.string = "even \(object.id)" }
            try db.delete(db.objects(AllTypes.self).filter("id > 150"))
            let array = db.objects(AllTypes.self).array()
            #expect(array.map(\.id) == Array(1...150))
            #expect(array.allSatisfy { $0.string == ($0.id % 2 == 0 ? "even \($0.id)" : "s\($0.id)") })
        }
    }

    @Test("values of a Persistable struct as an array, in order, as iteration reads them")
    func values() throws {
        let db = try makeDatabase()
        try db.write {
            for index in 0..<150 {
                try db.add(Contact(firstName: "f\(index)", lastName: "l\(index % 7)", age: index))
            }
        }
        let results = try db.values(Contact.self).filter("age >= 5").sorted(by: \.age, ascending: false)
        let array = results.array()
        #expect(array.count == 145)
        #expect(array == Array(results))
        #expect(array.map(\.age) == (5..<150).reversed().map { $0 })
        #expect(array.allSatisfy { $0.firstName == "f\($0.age!)" && $0.lastName == "l\($0.age! % 7)" })
    }
}
