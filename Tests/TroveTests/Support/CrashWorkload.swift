import Foundation

@testable import Trove

/// Transaction `n` of the crash workload: add person n, change person n-1's
/// score and city (indexed), delete person n-4. After `count` committed
/// transactions the state is exactly ``expected(count:)``.
enum CrashWorkload {
    static func apply(_ n: Int, in db: Database, point: () -> Void) throws {
        try db.beginWrite()
        point()
        let person = Person()
        person.id = n
        person.name = "t\(n)"
        person.city = "c\(n % 3)"
        try db.add(person)
        point()
        if let previous = db.object(ofType: Person.self, forPrimaryKey: n - 1) {
            previous.score = Double(n)
            previous.city = "moved"
        }
        point()
        if let old = db.object(ofType: Person.self, forPrimaryKey: n - 4) { try db.delete(old) }
        point()
        try db.commitWrite()
        point()
    }

    /// Runs transactions `first`, `first + 1`, ... until the process is killed,
    /// appending each number to `journal` (synced) after its commit returned.
    static func runForever(_ db: Database, from first: Int = 1, journal: String, point: () -> Void) -> Never {
        _ = FileManager.default.createFile(atPath: journal, contents: nil)
        let handle = FileHandle(forWritingAtPath: journal)!
        for n in first... {
            try! apply(n, in: db, point: point)
            handle.write(Data("\(n)\n".utf8))
            try! handle.synchronize()
        }
        fatalError("unreachable")
    }

    static func expected(count: Int) -> [Int: String] {
        var state: [Int: String] = [:]
        for n in stride(from: 1, through: count, by: 1) {
            state[n] = "t\(n)|c\(n % 3)|0.0"
            if state[n - 1] != nil { state[n - 1] = "t\(n - 1)|moved|\(Double(n))" }
            state[n - 4] = nil
        }
        return state
    }

    static func state(_ db: Database) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, "\($0.name)|\($0.city)|\($0.score)") })
    }
}
