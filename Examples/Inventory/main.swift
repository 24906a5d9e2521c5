// The inventory from the first seed document, on Trove: persons are plain
// Codable structs, stored without a mapping layer, with auto-increment ids
// and optional image data.
//
//     swift run Inventory [path/to/inventory.trove]

import Foundation
import Trove

struct Person: Persistable, Equatable {
    static var primaryKey: KeyPath<Person, Int> { \.id }
    static let autoIncrementsPrimaryKey = true
    static let indexedProperties = ["lastName"]

    var id = 0
    var firstName: String
    var lastName: String
    var gender: Int?
    var age: Int?
    var myImage: Data?
}

func run() throws {
    let path = CommandLine.arguments.dropFirst().first ?? ".trove-demo/inventory.trove"
    let url = URL(fileURLWithPath: path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let db = try Database(configuration: Configuration(fileURL: url, valueTypes: [Person.self]))
    print("Inventory on \(url.path)")

    // The seed's `realmManager.write { transaction in transaction.add(person) }`, minus the mapping code.
    let added = try db.write {
        [
            try db.add(Person(firstName: "트랜잭션", lastName: "테스트", gender: 0, age: 22, myImage: Data([0x89, 0x50, 0x4E, 0x47]))),
            try db.add(Person(firstName: "Ada", lastName: "Lovelace", gender: 1, age: 36)),
            try db.add(Person(firstName: "Alan", lastName: "Turing", age: nil)),
        ]
    }
    for person in added {
        print("- added #\(person.id): \(person.firstName) \(person.lastName), age \(person.age.map(String.init) ?? "unknown")")
    }

    // The seed's incrementID(): max(id) + 1, when you want it yourself.
    let nextID = (db.values(Person.self).max(of: \.id) ?? 0) + 1
    print("- next free id by max(of: \\.id) + 1: \(nextID)")

    let adults = try db.values(Person.self).filter("age > 20").sorted(by: \.age, ascending: false).array()
    print("- adults, oldest first: " + adults.map { "\($0.firstName) (\($0.age!))" }.joined(separator: ", "))

    var ada = try db.values(Person.self).filter("lastName == %@", "Lovelace").first!
    ada.age = 37
    try db.write { try db.add(ada, update: .modified) }
    print("- updated Ada: age \(db.value(ofType: Person.self, forPrimaryKey: ada.id)!.age!)")

    let withImage = try db.values(Person.self).filter("myImage != nil").count
    print("- persons with an image: \(withImage)")

    let alan = added[2]
    try db.write { try db.delete(alan) }
    print("- deleted #\(alan.id); \(db.values(Person.self).count) person(s) stored in total")
}

do {
    try run()
} catch {
    print("Inventory failed: \(error)")
    exit(1)
}
