import Foundation
import Trove

enum Mood: String, PersistableEnum {
    case happy, calm, sad
}

enum Priority: Int, PersistableEnum {
    case low = 1, normal = 5, high = 9
}

/// One property of every stored type, and an optional of each.
final class AllTypes: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var uuid = UUID()
    @Persisted var decimal = Decimal(0)
    @Persisted var mood: Mood = .happy
    @Persisted var priority: Priority = .normal
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optUUID: UUID?
    @Persisted var optDecimal: Decimal?
    @Persisted var optMood: Mood?
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    var treats = 0  // not persisted
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var age: Int?
    @Persisted(indexed: true) var city = ""
    @Persisted var score = 0.0
}

final class Ticket: Object {
    @Persisted(primaryKey: true, autoIncrement: true) var id = 0
    @Persisted var title = ""
}

struct Contact: Persistable, Equatable {
    static var primaryKey: KeyPath<Contact, Int> { \.id }
    static let autoIncrementsPrimaryKey = true
    static let indexedProperties = ["lastName"]

    var id = 0
    var firstName: String
    var lastName: String
    var gender: Int?
    var age: Int?
    var photo: Data?
    var mood: Mood = .calm
    var birthday: Date?
}

/// The query conformance suite's main type: every stored type (and optionals),
/// indexed properties each with an unindexed twin holding the same value
/// (`code` and `codeCopy`), a to-one link, a list of objects and lists of values.
final class ConformanceItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var code = 0
    @Persisted var codeCopy = 0
    @Persisted(indexed: true) var optCode: Int?
    @Persisted var optCodeCopy: Int?
    @Persisted(indexed: true) var int16: Int16 = 0
    @Persisted var int16Copy: Int16 = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var optInt8: Int8?
    @Persisted var optInt64: Int64?
    @Persisted(indexed: true) var double = 0.0
    @Persisted var doubleCopy = 0.0
    @Persisted var optDouble: Double?
    @Persisted var float: Float = 0
    @Persisted var optFloat: Float?
    @Persisted(indexed: true) var bool = false
    @Persisted var boolCopy = false
    @Persisted var optBool: Bool?
    @Persisted(indexed: true) var name = ""
    @Persisted var nameCopy = ""
    @Persisted(indexed: true) var optName: String?
    @Persisted var optNameCopy: String?
    @Persisted(indexed: true) var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var dateCopy = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var optDate: Date?
    @Persisted(indexed: true) var uuid = UUID()
    @Persisted var uuidCopy = UUID()
    @Persisted var optUUID: UUID?
    @Persisted(indexed: true) var data = Data()
    @Persisted var dataCopy = Data()
    @Persisted var optData: Data?
    @Persisted var decimal = Decimal(0)
    @Persisted var optDecimal: Decimal?
    @Persisted var mood: Mood = .happy
    @Persisted var optMood: Mood?
    @Persisted var priority: Priority = .normal
    @Persisted var owner: ConformanceOwner?
    @Persisted var parts = List<ConformancePart>()
    @Persisted var tags = List<String>()
    @Persisted var numbers = List<Int>()
    @Persisted var ratings = List<Int?>()
}

/// The target of ``ConformanceItem/owner``.
final class ConformanceOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var optAge: Int?
    @Persisted var city = ""
}

/// The elements of ``ConformanceItem/parts``.
final class ConformancePart: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
    @Persisted var weight = 0
    @Persisted var optWeight: Int?
    @Persisted var price = 0.0
}
