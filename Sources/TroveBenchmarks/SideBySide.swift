import Foundation
import Trove

/// The person of BENCHMARKS.md's "realm-core side by side" workload.
final class SidePerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
}

/// Trove's half of BENCHMARKS.md's "realm-core side by side" workload: the
/// same nine operations a realm-core program runs on the same data, each
/// timed alone on a fresh file (durable commits), printing one line per
/// operation with its median time and its answer, which must equal the
/// other engine's. `trove-bench --side-by-side [--op N] [--runs K]`; under
/// callgrind, `--toggle-collect='*measuredSection*'` counts the timed parts.
enum SideBySideBenchmark {
    static let count = 100_000
    static let singleCommits = 1_000

    struct Person {
        var id: Int
        var name: String
        var age: Int
        var score: Double
        var active: Bool
    }

    /// The workload's stream: a 64-bit LCG seeded 42, each draw `s >> 33` after a step.
    struct Stream {
        var state: UInt64 = 42
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }

        mutating func person(_ id: Int) -> Person {
            let length = 8 + Int(next() % 9)
            var letters: [UInt8] = []
            for _ in 0..<length { letters.append(UInt8(ascii: "a") + UInt8(next() % 26)) }
            let age = Int(next() % 100)
            let score = Double(next() % 1_000_000) / 64
            let active = next() % 2 == 1
            return Person(id: id, name: String(decoding: letters, as: UTF8.self), age: age, score: score, active: active)
        }
    }

    /// Everything the operations use, drawn in the workload's order.
    struct Workload {
        var people: [Person] = []
        var lookups: [Int] = []
        var inserts: [Person] = []
        var updates: [Int] = []

        init() {
            var stream = Stream()
            people = (1...SideBySideBenchmark.count).map { stream.person($0) }
            lookups = (0..<SideBySideBenchmark.count).map { _ in Int(stream.next() % UInt64(SideBySideBenchmark.count)) + 1 }
            inserts = (1...SideBySideBenchmark.singleCommits).map { stream.person(SideBySideBenchmark.count + $0) }
            updates = (0..<SideBySideBenchmark.singleCommits).map { _ in
                Int(stream.next() % UInt64(SideBySideBenchmark.count)) + 1
            }
        }
    }

    static func run(_ arguments: [String]) throws {
        var operations = ["1", "2", "3", "4", "5a", "5b", "6", "7", "8", "9"]
        var runs = 5
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--op":
                guard let value = iterator.next() else { throw BenchmarkFailure(description: "--op needs 1-9, 5a or 5b") }
                operations = value.split(separator: ",").map(String.init)
            case "--runs":
                guard let value = iterator.next().flatMap(Int.init), value > 0 else {
                    throw BenchmarkFailure(description: "--runs needs a positive number")
                }
                runs = value
            default: throw BenchmarkFailure(description: "unknown side-by-side option \(argument)")
            }
        }
        let data = Workload()
        for operation in operations {
            var seconds: [Double] = []
            var answer = ""
            var commits: [Double] = []
            for _ in 0..<runs {
                let directory = makeScratchDirectory("side-by-side")
                defer { try? FileManager.default.removeItem(at: directory) }
                let result = try self.operation(operation, data, directory)
                seconds.append(result.seconds)
                answer = result.answer
                commits += result.commits
            }
            var line = "op=\(operation) seconds_median=\(String(format: "%.6f", median(seconds))) runs=\(runs) answer=\(answer)"
            if !commits.isEmpty { line += String(format: " commit_p50_ms=%.3f", median(commits) * 1_000) }
            print(line)
        }
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    private static func open(_ directory: URL) throws -> Database {
        try Database(
            configuration: Configuration(
                fileURL: directory.appendingPathComponent("side.trove"), objectTypes: [SidePerson.self], durability: .full))
    }

    private static func make(_ person: Person) -> SidePerson {
        let object = SidePerson()
        object.id = person.id
        object.name = person.name
        object.age = person.age
        object.score = person.score
        object.active = person.active
        return object
    }

    private static func insertAll(_ db: Database, _ data: Workload) throws {
        try db.write { for person in data.people { try db.add(make(person)) } }
    }

    /// One run of `operation` on a fresh file in `directory`: its timed seconds, its answer, and per-commit seconds (8, 9).
    private static func operation(_ operation: String, _ data: Workload, _ directory: URL) throws -> (
        seconds: Double, answer: String, commits: [Double]
    ) {
        let db = try open(directory)
        if operation == "1" {
            let seconds = try measure { try insertAll(db, data) }
            return (seconds, "count=\(db.objects(SidePerson.self).count)", [])
        }
        try insertAll(db, data)
        switch operation {
        case "2":
            var people: [Person] = []
            let seconds = measure {
                people.reserveCapacity(count)
                for object in db.objects(SidePerson.self) {
                    people.append(
                        Person(id: object.id, name: object.name, age: object.age, score: object.score, active: object.active))
                }
            }
            var checksum: Int64 = 0
            var scores = 0.0
            for person in people {
                checksum &+= Int64(person.id * 31 + person.age * 7 + (person.active ? 1 : 0) + person.name.utf8.count)
                scores += person.score
            }
            return (seconds, "count=\(people.count) checksum=\(checksum) scores=\(String(format: "%.6f", scores))", [])
        case "3":
            var found = (count: 0, sum: 0.0)
            let seconds = try measure {
                let range = try db.objects(SidePerson.self).filter("age >= 30 AND age < 40")
                found = (range.count, range.sum(of: \.score))
            }
            return (seconds, "count=\(found.count) sum=\(String(format: "%.6f", found.sum))", [])
        case "4":
            var first: [Person] = []
            let seconds = try measure {
                let sorted = try db.objects(SidePerson.self).filter("age >= 30 AND age < 40").sorted(
                    by: \.score, ascending: false)
                for object in sorted.prefix(100) {
                    first.append(
                        Person(id: object.id, name: object.name, age: object.age, score: object.score, active: object.active))
                }
            }
            return (seconds, "first=\(first.count) sum=\(String(format: "%.6f", first.reduce(0) { $0 + $1.score }))", [])
        case "5a", "5b":
            let seconds = try measure {
                try db.write {
                    if operation == "5a" {
                        try db.objects(SidePerson.self).update(\.score) { $0 + 1 }
                    } else {
                        for object in db.objects(SidePerson.self) { object.score += 1 }
                    }
                }
            }
            return (seconds, "scores=\(String(format: "%.6f", db.objects(SidePerson.self).sum(of: \.score)))", [])
        case "6":
            var length = 0
            let seconds = measure {
                for id in data.lookups { length += db.object(ofType: SidePerson.self, forPrimaryKey: id)?.name.utf8.count ?? 0 }
            }
            return (seconds, "length=\(length)", [])
        case "7":
            let seconds = try measure { try db.write { try db.delete(db.objects(SidePerson.self)) } }
            return (seconds, "count=\(db.objects(SidePerson.self).count)", [])
        case "8":
            var commits: [Double] = []
            for person in data.inserts {
                let object = make(person)
                commits.append(try measure { try db.write { try db.add(object) } })
            }
            return (commits.reduce(0, +), "count=\(db.objects(SidePerson.self).count)", commits)
        case "9":
            var commits: [Double] = []
            for id in data.updates {
                commits.append(
                    try measure {
                        try db.write {
                            guard let object = db.object(ofType: SidePerson.self, forPrimaryKey: id) else {
                                throw BenchmarkFailure(description: "Trove: person \(id) missing")
                            }
                            object.age = (object.age + 1) % 100
                        }
                    })
            }
            return (commits.reduce(0, +), "ages=\(db.objects(SidePerson.self).sum(of: \.age))", commits)
        default:
            throw BenchmarkFailure(description: "no side-by-side operation \(operation): 1-9, 5a or 5b")
        }
    }
}
