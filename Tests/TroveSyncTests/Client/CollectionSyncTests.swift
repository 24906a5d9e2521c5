import Foundation
import Testing
import Trove

@testable import TroveSync

final class SyncAlbum: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var tags = List<String>()
    @Persisted var labels = MutableSet<String>()
    @Persisted var counts = Map<String, Int>()
    @Persisted var folders = List<SyncFolder>()
    @Persisted var days = List<Date>()
}

/// Lists sync as one value; sets merge per member and maps per key.
@Suite("Lists, sets and maps syncing")
struct CollectionSyncTests {
    typealias Device = SyncClientTests.Device

    static func device(_ server: TestSyncServer, _ principal: String, directory: URL) throws -> Device {
        let url = directory.appendingPathComponent("\(principal)-\(UUID().uuidString).trove")
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SyncAlbum.self, SyncFolder.self]))
        let client = try SyncClient(
            database: db,
            configuration: .init(
                serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant(principal, "diary"),
                space: "diary", types: ["SyncAlbum", "SyncFolder"]))
        return Device(db: db, client: client)
    }

    /// Runs `body` with a server and devices of principals a and b syncing albums in space diary.
    static func withTwoDevices(_ body: (TestSyncServer, Device, Device) throws -> Void) throws {
        try SyncClientTests.withTwoDevices(making: { try device($0, $1, directory: $2) }, body)
    }

    /// The album as text: tags, labels, counts, folders, days.
    static func album(_ device: Device, _ id: String = "album") -> String {
        guard let album = device.db.object(ofType: SyncAlbum.self, forPrimaryKey: id) else { return "none" }
        let counts = album.counts.keys.sorted().map { "\($0)=\(album.counts[$0].map(String.init) ?? "nil")" }
        return [
            album.tags.joined(separator: ","), album.labels.sorted().joined(separator: ","), counts.joined(separator: ","),
            album.folders.map(\.name).joined(separator: ","),
            album.days.map { String($0.timeIntervalSinceReferenceDate) }.joined(separator: ","),
        ].joined(separator: " | ")
    }

    static func edit(_ device: Device, _ change: (SyncAlbum) throws -> Void) throws {
        try device.db.write { try change(device.db.object(ofType: SyncAlbum.self, forPrimaryKey: "album")!) }
    }

    @Test("a list, a set, a map and a list of links arrive whole, exact and in order")
    func collectionsArrive() throws {
        try Self.withTwoDevices { server, a, b in
            let day = Date(timeIntervalSinceReferenceDate: 786_543_210.123_456_789)  // finer than microseconds
            try a.db.write {
                let first = SyncFolder()
                first.name = "여행"
                let second = SyncFolder()
                second.name = "가족"
                let album = SyncAlbum()
                album.id = "album"
                album.tags.append(objectsIn: ["b", "a", "b", "it's \"q\""])
                album.labels.insert(objectsIn: ["p", "q"])
                album.counts["one"] = 1
                album.counts["min"] = Int.min
                album.folders.append(objectsIn: [second, first, second])
                album.days.append(day)
                try a.db.add(album)
            }
            let pushed = try a.client.sync()
            #expect(pushed.rejected.isEmpty, "\(pushed)")
            try b.client.sync()
            let expected = "b,a,b,it's \"q\" | p,q | min=\(Int.min),one=1 | 가족,여행,가족 | \(day.timeIntervalSinceReferenceDate)"
            #expect(Self.album(a) == expected)
            #expect(Self.album(b) == expected)
            #expect(b.client.pendingChanges == 0)
            #expect(try b.client.sync().pushed == 0, "what was applied is not sent back")
            // The backend sees JSON: a list as an array, a set as an array of members, a map as an object.
            let row = try #require(
                try server.owner.query(
                    "SELECT tags::text, labels::text, counts::text, folders::text FROM trove_data.\"SyncAlbum\""
                )
                .first)
            #expect(row[0] == #"["b", "a", "b", "it's \"q\""]"#)
            #expect(row[1] == #"["p", "q"]"#)
            #expect(row[2] == #"{"min": "\#(Int.min)", "one": "1"}"#)
            #expect(row[3] == #"["가족", "여행", "가족"]"#)
        }
    }

    @Test("concurrent edits: set members and map keys merge one by one; a list takes the later whole value")
    func concurrentEditsMerge() throws {
        try Self.withTwoDevices { server, a, b in
            try a.db.write {
                let album = SyncAlbum()
                album.id = "album"
                album.tags.append(objectsIn: ["x", "y"])
                album.labels.insert(objectsIn: ["p", "q"])
                album.counts["k1"] = 1
                try a.db.add(album)
            }
            try a.client.sync()
            try b.client.sync()
            // Offline on both.
            try Self.edit(a) {
                $0.labels.insert("r")
                $0.labels.remove("p")
                $0.counts["k2"] = 2
                $0.tags.append("from a")
            }
            Thread.sleep(forTimeInterval: 0.005)
            try Self.edit(b) {
                $0.labels.insert("s")
                $0.counts["k1"] = 10
                $0.tags.removeAll()
                $0.tags.append("from b")
            }
            for _ in 0..<2 {
                try a.client.sync()
                try b.client.sync()
            }
            let expected = "from b | q,r,s | k1=10,k2=2 |  | "
            #expect(Self.album(a) == expected)
            #expect(Self.album(b) == expected)

            // A member removed on one device, then removed and added again on the other: the later write wins. (Within
            // one write, a removal and an addition of the same member cancel out: changes are recorded as states.)
            try Self.edit(a) { $0.labels.remove("q") }
            Thread.sleep(forTimeInterval: 0.005)
            try Self.edit(b) { $0.labels.remove("q") }
            try Self.edit(b) { $0.labels.insert("q") }
            for _ in 0..<2 {
                try a.client.sync()
                try b.client.sync()
            }
            #expect(Self.album(a) == expected && Self.album(b) == expected)
        }
    }

    @Test("a backend's UPDATE of a set and a map reaches the devices as per-member changes")
    func backendWritesCollections() throws {
        let server = try TestSyncServer()
        defer { server.stop() }
        let directory = try SyncClientTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = try Self.device(server, "a", directory: directory)
        try a.db.write {
            let album = SyncAlbum()
            album.id = "album"
            album.labels.insert(objectsIn: ["p", "q"])
            album.counts["k1"] = 1
            try a.db.add(album)
        }
        try a.client.sync()
        // Offline, the device adds a member the backend does not know of.
        try Self.edit(a) { $0.labels.insert("mine") }
        try server.owner.query(
            #"UPDATE trove_data."SyncAlbum" SET labels = '["q", "t"]', counts = '{"k1": 5, "k3": 3}', tags = '["s"]'"#)
        for _ in 0..<2 { try a.client.sync() }
        #expect(Self.album(a) == "s | mine,q,t | k1=5,k3=3 |  | ")
        let row = try #require(try server.owner.query("SELECT labels::text, counts::text FROM trove_data.\"SyncAlbum\"").first)
        #expect(row[0] == #"["mine", "q", "t"]"#)
        #expect(row[1] == #"{"k1": "5", "k3": "3"}"#)
    }
}

final class SyncPlace: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var visited: Date?
    @Persisted var rating = 0.0
}

final class SyncTrip: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var place: SyncPlace?
    @Persisted var extra: Mixed = .none
    @Persisted var stops = List<SyncPlace>()
}

/// An embedded object syncs as one value, inside its owner; so does a mixed value.
@Suite("Embedded objects and mixed values syncing")
struct EmbeddedSyncTests {
    typealias Device = SyncClientTests.Device

    static func device(_ server: TestSyncServer, _ principal: String, directory: URL) throws -> Device {
        let url = directory.appendingPathComponent("\(principal)-\(UUID().uuidString).trove")
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [SyncTrip.self, SyncPlace.self]))
        let client = try SyncClient(
            database: db,
            configuration: .init(
                serverURL: server.postgres.url("sync_device", database: "sync"), token: try server.grant(principal, "diary"),
                space: "diary", types: ["SyncTrip"]))
        return Device(db: db, client: client)
    }

    static func withTwoDevices(_ body: (TestSyncServer, Device, Device) throws -> Void) throws {
        try SyncClientTests.withTwoDevices(making: { try device($0, $1, directory: $2) }, body)
    }

    static func place(_ device: Device) -> String {
        guard let trip = device.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip") else { return "no trip" }
        guard let place = trip.place else { return "no place" }
        return "\(place.city) \(place.visited.map { String($0.timeIntervalSinceReferenceDate) } ?? "-") \(place.rating)"
    }

    @Test("an embedded object arrives whole; an edit of one of its values, and its removal, reach the other device")
    func embeddedObjects() throws {
        try Self.withTwoDevices { server, a, b in
            let visited = Date(timeIntervalSinceReferenceDate: 786_543_210.123_456_789)
            try a.db.write {
                let trip = SyncTrip()
                trip.id = "trip"
                let place = SyncPlace()
                place.city = "서울"
                place.visited = visited
                place.rating = -0.5
                trip.place = place
                try a.db.add(trip)
            }
            #expect(try a.client.sync().rejected.isEmpty)
            try b.client.sync()
            #expect(Self.place(b) == "서울 \(visited.timeIntervalSinceReferenceDate) -0.5")
            let row = try #require(try server.owner.query("SELECT place->>'city' FROM trove_data.\"SyncTrip\"").first)
            #expect(row[0] == "서울", "the backend reads it as JSON")

            // One value of the embedded object changes: the owner's change is sent.
            try b.db.write { b.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!.place!.city = "부산" }
            #expect(b.client.pendingChanges == 1)
            try b.client.sync()
            try a.client.sync()
            #expect(Self.place(a) == "부산 \(visited.timeIntervalSinceReferenceDate) -0.5")
            #expect(try a.client.sync().pushed == 0, "what was applied is not sent back")

            try a.db.write { a.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!.place = nil }
            try a.client.sync()
            try b.client.sync()
            #expect(Self.place(b) == "no place")
        }
    }

    @Test("a mixed value arrives with its type and its exact value; a link in one is refused at the write")
    func mixedValues() throws {
        try Self.withTwoDevices { server, a, b in
            let when = Date(timeIntervalSinceReferenceDate: 786_543_210.123_456_789)
            let values: [Mixed] = [.double(-0.0), .int(Int.min), .string("일기 \"quoted\""), .date(when), .bool(false), .none]
            try a.db.write {
                let trip = SyncTrip()
                trip.id = "trip"
                try a.db.add(trip)
            }
            for value in values {
                try a.db.write { a.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!.extra = value }
                #expect(try a.client.sync().rejected.isEmpty)
                try b.client.sync()
                let arrived = try #require(b.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")).extra
                #expect(arrived == value, "\(value) arrived as \(arrived)")
                if case .double(let d) = arrived { #expect(d.sign == .minus) }
            }
            let row = try #require(try server.owner.query("SELECT extra IS NULL FROM trove_data.\"SyncTrip\"").first)
            #expect(row[0] == "t")
            let refused = #expect(throws: TroveError.self) {
                try a.db.write {
                    let trip = a.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!
                    trip.extra = .object(trip)
                }
            }
            #expect(refused?.message.contains("link to an object") == true, "\(refused?.message ?? "")")
        }
    }

    @Test("a list of embedded objects syncs as one value; an edit inside one of them is a change of the owner")
    func listsOfEmbeddedObjects() throws {
        try Self.withTwoDevices { server, a, b in
            func stops(_ device: Device) -> [String] {
                device.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")?.stops.map { "\($0.city):\($0.rating)" } ?? []
            }
            try a.db.write {
                let trip = SyncTrip()
                trip.id = "trip"
                for (city, rating) in [("부산", 4.5), ("대구", 3.0), ("부산", 5.0)] {
                    let stop = SyncPlace()
                    stop.city = city
                    stop.rating = rating
                    trip.stops.append(stop)
                }
                try a.db.add(trip)
            }
            #expect(try a.client.sync().rejected.isEmpty)
            try b.client.sync()
            #expect(stops(b) == ["부산:4.5", "대구:3.0", "부산:5.0"])
            let row = try #require(
                try server.owner.query("SELECT jsonb_array_length(stops), stops->1->>'city' FROM trove_data.\"SyncTrip\"").first)
            #expect(row == ["3", "대구"], "the backend reads an array of objects")

            try b.db.write { b.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!.stops[1].city = "광주" }
            #expect(b.client.pendingChanges == 1)
            try b.client.sync()
            try a.client.sync()
            #expect(stops(a) == ["부산:4.5", "광주:3.0", "부산:5.0"])
            #expect(try a.client.sync().pushed == 0, "what was applied is not sent back")

            try a.db.write { a.db.object(ofType: SyncTrip.self, forPrimaryKey: "trip")!.stops.removeAll() }
            try a.client.sync()
            try b.client.sync()
            #expect(stops(b).isEmpty)
        }
    }
}
