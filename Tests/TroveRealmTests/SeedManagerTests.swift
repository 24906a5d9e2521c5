import Foundation
import Testing
import TroveRealm

// The seeds' Realm code, compiled against TroveRealm. What changed from the
// blog posts, and why:
// - `import RealmSwift` is `import TroveRealm`;
// - the models are declared with `@Persisted` (`@objc dynamic`, `@objcMembers`
//   and `RealmOptional` need the Objective-C runtime, which Linux lacks);
// - `UIImage` is `Data` (no UIKit on Linux; `NSPredicate(format:)` is as
//   written: TroveRealm's `NSPredicate` parses the format where Linux
//   Foundation cannot);
// - the managers are `@MainActor`: the test target is Swift 6, which refuses a
//   shared mutable singleton without an isolation (in the apps, the view
//   controllers calling them are on the main actor anyway).
// Every other line is the seed's.

// MARK: Seed 002: the photo diary's RealmManager

final class PhotoData: Object {
    @Persisted(primaryKey: true) var id = ""  // 기본키
    @Persisted var date = ""
    @Persisted var dateAdded = Date()  // 새로 추가한 속성
    @Persisted var image: Data? = nil
    @Persisted var memo = ""
}

@MainActor final class RealmManager {

    // Realm 데이터베이스 객체를 생성한다.
    let realm = try! Realm()

    // 싱글턴 객체로, RealmManager 클래스의 인스턴스를 반환한다.
    static let shared = RealmManager()

    // PhotoData 객체의 배열
    var photoList = [PhotoData]()

    // MARK: - Create

    func save(photoData: PhotoData, image: Data) {
        // 저장할 데이터 객체 생성
        let newData = PhotoData()
        newData.id = UUID().uuidString
        newData.date = photoData.date
        newData.memo = photoData.memo
        newData.image = image

        // Realm 데이터베이스에 데이터 저장
        try! realm.write {
            realm.add(newData)
        }
    }

    func getData(withId id: String) -> PhotoData? {
        // 기존 데이터 가져오기
        let existingData = realm.objects(PhotoData.self).filter { $0.id == id }.first
        return existingData
    }

    // MARK: - Read

    func fetchAll() -> Results<PhotoData> {
        let results = realm.objects(PhotoData.self).sorted(byKeyPath: "dateAdded", ascending: false)
        return results
    }

    func fetch(byDate date: String) -> PhotoData? {
        let predicate = NSPredicate(format: "date == %@", date)
        let results = realm.objects(PhotoData.self).filter(predicate)
        return results.first
    }

    // MARK: - Update

    func update(photoData: PhotoData, image: Data) {
        // 기존 데이터 업데이트
        guard let existingData = getData(withId: photoData.id) else {
            return
        }
        do {
            try realm.write {
                existingData.date = photoData.date
                existingData.memo = photoData.memo
                existingData.image = image
            }
        } catch {
            print("????")
        }

    }

    // MARK: - Delete

    func delete(photoData: PhotoData) {
        do {
            try realm.write {
                realm.delete(photoData)
            }
        } catch {
            print("Error deleting photoData: \(error)")

        }
    }

}

// MARK: Seed 000: a struct mapped to a Realm object through a protocol

final class RealmPerson: Object {
    @Persisted(primaryKey: true) var id: Int = 0
    @Persisted var firstName: String = ""
    @Persisted var lastName: String = ""
    @Persisted var gender: Int? = 0
    @Persisted var age: Int? = 0
    @Persisted var myImage: Data? = nil
}

public protocol Persistable {

    associatedtype ManagedObject: RealmSwift.Object

    // RealmObject -> Struct 변환
    init(managedObject: ManagedObject)

    // Struct -> RealmObject
    func managedObject() -> ManagedObject
}

struct Person {
    public let id: Int
    public let firstName: String
    public let lastName: String
    public let gender: Int?
    public let age: Int?
    public let myImage: Data?

    @MainActor public init(firstName: String, lastName: String, gender: Int?, age: Int?, myImage: Data? = nil) {
        self.id = PersonRealmManager().incrementID()
        self.firstName = firstName
        self.lastName = lastName
        self.gender = gender
        self.age = age
        self.myImage = myImage
    }
}

extension Person: Persistable {
    // RealmObject -> Struct
    public init(managedObject: RealmPerson) {
        self.id = managedObject.id
        self.firstName = managedObject.firstName
        self.lastName = managedObject.lastName
        self.gender = managedObject.gender
        self.age = managedObject.age
        self.myImage = managedObject.myImage
    }

    // Struct -> RealmObject
    public func managedObject() -> RealmPerson {
        let person = RealmPerson()
        person.id = self.id
        person.firstName = self.firstName
        person.lastName = self.lastName
        person.age = self.age
        person.gender = self.gender
        person.myImage = self.myImage
        return person
    }
}

public final class WriteTransaction {
    private let realm: Realm

    internal init(realm: Realm) {
        self.realm = realm
    }

    // Add newObject
    public func add<T: Persistable>(_ value: T) {
        realm.add(value.managedObject())
    }
}

@MainActor final class PersonRealmManager {
    internal static func realm() -> Realm? {
        do {
            return try Realm()
        } catch {
            print(error.localizedDescription)
        }
        return nil
    }

    public func write(_ block: (WriteTransaction) throws -> Void)
        throws
    {
        guard let realm = PersonRealmManager.realm() else { return }

        let transaction = WriteTransaction(realm: realm)
        try realm.write {
            try block(transaction)
        }
    }

    func incrementID() -> Int {
        guard let realm = PersonRealmManager.realm() else { return 0 }
        return (realm.objects(RealmPerson.self).max(ofProperty: "id") as Int? ?? 0) + 1
    }
}

// MARK: The tests

@Suite("The seeds' Realm managers on TroveRealm", .serialized)
@MainActor struct SeedManagerTests {
    init() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-realm-tests")
            .appendingPathComponent("seeds-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        Realm.Configuration.defaultConfiguration = Realm.Configuration(
            fileURL: directory.appendingPathComponent("default.realm"))
    }

    @Test("the photo diary's manager saves, fetches, updates and deletes, as the seed's view controllers call it")
    func photoDiaryManager() throws {
        let manager = RealmManager()
        let draft = PhotoData()
        draft.date = "2024-05-01"
        draft.memo = "산책"
        manager.save(photoData: draft, image: Data([0xFF, 0xD8, 0xFF, 0xD9]))
        draft.date = "2024-05-02"
        draft.memo = "비"
        manager.save(photoData: draft, image: Data([0xFF, 0xD8]))
        #expect(manager.fetchAll().count == 2)
        #expect(manager.fetchAll().first?.memo == "비")  // the newest first
        let walk = try #require(manager.fetch(byDate: "2024-05-01"))
        #expect(walk.memo == "산책")
        #expect(manager.getData(withId: walk.id)?.image == Data([0xFF, 0xD8, 0xFF, 0xD9]))

        let edit = PhotoData()
        edit.id = walk.id
        edit.date = "2024-05-01"
        edit.memo = "공원 산책"
        manager.update(photoData: edit, image: Data([1]))
        #expect(manager.getData(withId: walk.id)?.memo == "공원 산책")
        manager.delete(photoData: walk)
        #expect(manager.fetchAll().map(\.memo) == ["비"])
        #expect(walk.isInvalidated)
        // Another Realm() on this actor is the same Realm: it sees every write at once.
        #expect(try Realm() == manager.realm)
        #expect(try Realm().objects(PhotoData.self).count == 1)
    }

    @Test("the diary's collection view grouped by day: sections by date, newest first, with section-aware changes")
    func photoDiaryByDay() throws {
        let manager = RealmManager()
        for (date, memo) in [("2024-05-01", "산책"), ("2024-05-02", "비"), ("2024-05-01", "공원")] {
            let photo = PhotoData()
            photo.date = date
            photo.memo = memo
            manager.save(photoData: photo, image: Data([1]))
        }
        let byDay = manager.realm.objects(PhotoData.self).sectioned(by: \.date, ascending: false)
        #expect(byDay.allKeys == ["2024-05-02", "2024-05-01"])
        #expect(byDay[1].count == 2 && byDay[IndexPath(item: 0, section: 0)].memo == "비")
        var changes: [(insertedSections: [Int], insertions: [IndexPath])] = []
        let token = byDay.observe { change in
            if case .update(_, _, let insertions, _, let sectionsToInsert, _) = change {
                changes.append((Array(sectionsToInsert), insertions))
            }
        }
        let photo = PhotoData()
        photo.date = "2024-05-03"
        photo.memo = "바다"
        manager.save(photoData: photo, image: Data([2]))
        #expect(changes.count == 1 && changes.first?.insertedSections == [0])
        #expect(byDay.allKeys.first == "2024-05-03")
        token.invalidate()
    }

    @Test("the struct-mapping manager adds persons in a write, with ids from max(ofProperty:) + 1")
    func structMappingManager() throws {
        let person = Person(firstName: "트랜잭션", lastName: "테스트", gender: 0, age: 22, myImage: Data([0x89, 0x50]))
        let realmManager = PersonRealmManager()
        try! realmManager.write { transaction in
            print(person)
            transaction.add(person)
        }
        let second = Person(firstName: "Ada", lastName: "Lovelace", gender: 1, age: nil)
        try realmManager.write { $0.add(second) }
        let stored = try Realm().objects(RealmPerson.self).sorted(byKeyPath: "id").map(Person.init(managedObject:))
        #expect(stored.map(\.id) == [1, 2])
        #expect(stored.map(\.firstName) == ["트랜잭션", "Ada"])
        #expect(stored.last?.age == nil)
    }
}
