import Foundation
import Testing

@testable import Trove

/// A file whose types are stored one record per object is converted into
/// column clusters when opened with the cluster layout: in the transaction
/// that opens it, so a crash leaves the records, never half of each.
@Suite("Conversion to column clusters", .serialized)
struct ClusterConversionTests {
    static let count = 6_000

    /// A configuration that keeps the record layout (whatever `TROVE_LAYOUT` says).
    static func records(_ url: URL) -> Configuration {
        var configuration = Configuration(fileURL: url)
        configuration.storesNewTypesInClusters = false
        return configuration
    }

    static func seed(_ url: URL) throws {
        let db = try Database(configuration: records(url))
        try db.write {
            for id in 0..<count {
                let person = Person()
                person.id = id
                person.name = "사람 \(id)"
                person.age = id % 7 == 0 ? nil : id % 90
                person.city = ["Seoul", "Busan", "Jeju"][id % 3]
                person.score = Double(id) / 4
                try db.add(person)
            }
        }
    }

    static func state(_ db: Database) -> [String] {
        db.objects(Person.self).map { "\($0.id)|\($0.name)|\($0.age.map(String.init) ?? "nil")|\($0.city)|\($0.score)" }
    }

    /// The table Person's objects are in, once the handle uses the type (and converts it, if it does).
    static func layoutName(_ db: Database) throws -> String {
        _ = db.objects(Person.self).count
        return try db.tableInfo(named: "Person").store.table.name
    }

    @Test("every object, index and query survives the conversion; progress is reported; the format says clusters")
    func convertsOnOpen() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("rows.trove")
        try Self.seed(url)
        let before = try Database(configuration: Self.records(url))
        let expected = Self.state(before)
        #expect(try Self.layoutName(before) == "obj:Person")
        #expect(before.fileFormatVersion == 1)

        let reports = Locked<[(Int, Int)]>([])
        var configuration = Configuration(fileURL: url)
        configuration.storesNewTypesInClusters = true
        configuration.conversionProgress = { progress in
            #expect(progress.typeName == "Person")
            reports.withLock { $0.append((progress.converted, progress.total)) }
        }
        let after = try Database(configuration: configuration)
        #expect(try Self.layoutName(after) == "clu:Person")
        #expect(Self.state(after) == expected)
        #expect(after.fileFormatVersion == after.clustersFormat)
        #expect(try after.objects(Person.self).filter("city == 'Jeju'").count == Self.count / 3)
        #expect(after.object(ofType: Person.self, forPrimaryKey: 4_321)?.name == "사람 4321")
        #expect(try after.verify().isValid)
        let seen = reports.withLock { $0 }
        #expect(seen.first.map { $0 == (0, Self.count) } == true)
        #expect(seen.last.map { $0 == (Self.count, Self.count) } == true)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.0 <= $1.0 }, "progress only grows")

        // Writes after the conversion go to the clusters; a plain open reads them.
        try after.write {
            let person = Person()
            person.id = Self.count
            person.name = "new"
            try after.add(person)
        }
        let plain = try Database(configuration: Self.records(url))
        #expect(try Self.layoutName(plain) == "clu:Person")
        #expect(plain.objects(Person.self).count == Self.count + 1)
    }

    @Test("a kill at a random moment of the conversion leaves every record, converted or not")
    func killedConversion() async throws {
        var generator = SystemRandomNumberGenerator()
        let seedURL = makeTemporaryDirectory().appendingPathComponent("seed.trove")
        try Self.seed(seedURL)
        let expected = Self.state(try Database(configuration: Self.records(seedURL)))
        var converted = 0
        for round in 0..<8 {
            let url = seedURL.deletingLastPathComponent().appendingPathComponent("round-\(round).trove")
            try FileManager.default.copyItem(at: seedURL, to: url)
            // Counted from the start of the conversion, which takes some milliseconds here.
            let delay = Int.random(in: 0...50_000, using: &generator)
            setenv("TROVE_CONVERT_FILE", url.path, 1)
            setenv("TROVE_CONVERT_DELAY_US", String(delay), 1)
            await #expect(processExitsWith: .signal(SIGKILL)) {
                let path = String(cString: getenv("TROVE_CONVERT_FILE"))
                let delay = UInt32(String(cString: getenv("TROVE_CONVERT_DELAY_US")))!
                var configuration = Configuration(fileURL: URL(fileURLWithPath: path))
                configuration.storesNewTypesInClusters = true
                configuration.conversionProgress = { progress in
                    let converted = progress.converted
                    guard converted == 0 else { return }
                    Thread.detachNewThread {
                        usleep(delay)
                        kill(getpid(), SIGKILL)
                    }
                }
                // Opening with the type converts it.
                configuration.objectTypes = [Person.self]
                let db = try? Database(configuration: configuration)
                _ = db?.objects(Person.self).count
                // Converted before the kill: wait for it.
                kill(getpid(), SIGKILL)
                while true { usleep(1_000) }
            }
            let survivor = try Database(configuration: Self.records(url))
            if try Self.layoutName(survivor) == "clu:Person" { converted += 1 }
            #expect(Self.state(survivor) == expected, "round \(round), killed after \(delay) µs")
            #expect(try survivor.verify().isValid, "round \(round)")
            var configuration = Configuration(fileURL: url)
            configuration.storesNewTypesInClusters = true
            let finished = try Database(configuration: configuration)
            #expect(try Self.layoutName(finished) == "clu:Person")
            #expect(Self.state(finished) == expected, "round \(round), after converting again")
        }
        print("cluster conversion: \(converted) of 8 killed conversions had committed before the kill")
    }
}
