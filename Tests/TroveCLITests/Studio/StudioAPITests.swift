import Foundation
import Testing
import Trove
import TroveSync

#if canImport(Glibc)
    import Glibc
#endif

final class StudioPhoto: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted(indexed: true) var memo = ""
    @Persisted var mood = "happy"
    @Persisted var taken = Date(timeIntervalSince1970: 1_714_521_600)
    @Persisted var image: Data?
    @Persisted var rating: Int?
    @Persisted var tags = MutableSet<String>()
    @Persisted(originProperty: "photos") var albums: LinkingObjects<StudioAlbum>
}

final class StudioAlbum: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var cover: StudioPhoto?
    @Persisted var photos = List<StudioPhoto>()
    @Persisted var captions = Map<String, String>()
    @Persisted var picks = Map<String, StudioPhoto?>()
}

/// A pin to any object, held in mixed values.
final class StudioPin: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var target: Mixed = .none
    @Persisted var history = List<Mixed>()
}

/// A note, and the app's next version of it (stored under the same name) with one more property.
final class StudioNote: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var text = ""
}

enum StudioNextVersion {
    final class StudioNote: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var text = ""
        @Persisted var place = ""
    }
}

/// A 1×1 PNG.
let studioPNG = Data(
    base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")!

/// A photo diary of `count` photos (memos in Korean; every third without a
/// rating; the first with an image) and an album of the first three, photo-0 its cover.
func studioFile(_ count: Int = 30, name: String = #function) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
        .appendingPathComponent("studio-\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent("photos.trove")
    let db = try Database(fileURL: url)
    try db.write {
        var photos: [StudioPhoto] = []
        for index in 0..<count {
            let photo = StudioPhoto()
            photo.id = "photo-\(index)"
            photo.memo = index % 2 == 0 ? "비 오는 날 \(index)" : "sunny walk \(index)"
            photo.mood = ["happy", "calm", "sad"][index % 3]
            photo.taken = Date(timeIntervalSince1970: 1_714_521_600 + Double(index) * 86_400)
            photo.rating = index % 3 == 0 ? nil : index % 5
            photo.image = index == 0 ? studioPNG : nil
            photo.tags.insert(objectsIn: index % 2 == 0 ? ["rain", "home"] : ["sun"])
            try db.add(photo)
            photos.append(photo)
        }
        let album = StudioAlbum()
        album.name = "봄"
        album.cover = photos.first
        album.photos.append(objectsIn: photos.prefix(3))
        album.captions["first"] = "첫 사진"
        album.picks["best"] = photos.last
        album.picks["none"] = .some(nil)
        try db.add(album)
    }
    return url
}

/// The file as the test process sees it now (the studio writes from another process).
func openStudioFile(_ url: URL) throws -> Database {
    try Database(fileURL: url)
}

@Suite("trove studio: the JSON API", .serialized)
struct StudioAPITests {
    @Test("every request needs the token: without it or with a wrong one, 401 and nothing else")
    func token() throws {
        let server = try StudioServer(file: try studioFile().path)
        for path in ["/", "/studio.js", "/api/types", "/api/types/StudioPhoto/objects", "/api/openapi.json", "/api/events"] {
            let reply = try server.request("GET", path, authorized: false)
            #expect(reply.status == 401, "\(path)")
            #expect(!reply.text.contains("photo-"), "\(path)")
            #expect(reply.errorKind == "unauthorized")
        }
        // The token with its first digit changed.
        let altered = (server.token.first == "0" ? "1" : "0") + server.token.dropFirst()
        let wrong = try server.request("GET", "/api/types", authorized: false, headers: ["X-Trove-Token": altered])
        #expect(wrong.status == 401)
        let deleted = try server.request("DELETE", "/api/types/StudioPhoto/objects/1", authorized: false)
        #expect(deleted.status == 401)
        // The token in the address, and as a bearer token, are accepted too.
        #expect(try server.request("GET", "/api/types?token=\(server.token)", authorized: false).status == 200)
        #expect(
            try server.request("GET", "/api/types", authorized: false, headers: ["Authorization": "Bearer \(server.token)"])
                .status == 200)
        // A request naming another host (DNS rebinding) is refused even with the token.
        #expect(try server.request("GET", "/api/types", headers: ["Host": "evil.example:80"]).status == 421)
        #expect(server.stop() == 0)
    }

    @Test(
        "idle connections without the token neither block the studio nor stay; a request without the token is refused before its body"
    )
    func idleAndTokenlessConnectionsCannotBlockIt() throws {
        let server = try StudioServer(file: try studioFile().path)
        // More idle connections than the studio once allowed in all (64); each sends nothing.
        var idle: [Int32] = []
        defer { for socket in idle { close(socket) } }
        for _ in 0..<100 { idle.append(try PlainHTTP.connect(port: server.port)) }
        let started = Date()
        #expect(try server.get("/api/types").status == 200)
        // Served while the idle connections stay open: none was closed to make room for it. (Unless the
        // machine was so slow that the idle timeout had already come: then no conclusion can be drawn.)
        if Date().timeIntervalSince(started) < 8 {
            let open = idle.filter { socket in
                var byte: UInt8 = 0
                return recv(socket, &byte, 1, Int32(MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
            #expect(open.count == idle.count)
        }
        // A request head without the token, announcing a big body: refused before any of it is sent.
        let socket = try PlainHTTP.connect(port: server.port)
        defer { close(socket) }
        PlainHTTP.send(
            Data(
                "POST /api/types/StudioPhoto/objects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n"
                    .utf8), to: socket)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let early = try PlainHTTP.parse(try PlainHTTP.receiveAll(socket))
        #expect(early.status == 401)
        #expect(early.errorKind == "unauthorized")
        // Connections that never sent a request are closed after the short idle timeout (10 s).
        var closed = 0
        for socket in idle.prefix(5) {
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            if recv(socket, &byte, 1, 0) == 0 { closed += 1 }
        }
        #expect(closed == 5)
        #expect(Date().timeIntervalSince(started) < 60, "closed by the studio's short idle timeout, not a long one")
        #expect(try server.get("/api/types").status == 200)
        #expect(server.stop() == 0)
    }

    @Test("a 20 MB string is cut in pages of objects, with its length; the object's own endpoint has it whole")
    func longStringsAreCutInPages() throws {
        let url = try studioFile()
        let long = String(repeating: "비", count: 2_000_000) + String(repeating: "x", count: 14_000_000)  // 20 MB of UTF-8
        do {
            let db = try Database(fileURL: url)
            try db.write { db.object(ofType: StudioPhoto.self, forPrimaryKey: "photo-1")!.mood = long }
        }
        let server = try StudioServer(file: url.path)
        let page = try server.get("/api/types/StudioPhoto/objects?limit=100")
        #expect(page.status == 200)
        #expect(page.body.count < 200_000, "a page of 30 photos took \(page.body.count) bytes")
        let rows = try #require(page.json["objects"] as? [[String: Any]])
        let moodColumn = 2
        let row = try #require(rows.first { ($0["values"] as? [Any])?.first as? String == "photo-1" })
        let cut = try #require((row["values"] as? [Any])?[moodColumn] as? [String: Any])
        #expect(cut["$string"] as? Int == 16_000_000)
        #expect((cut["text"] as? String).map { $0.count == 1_000 && $0.allSatisfy { $0 == "비" } } == true)
        #expect((rows[0]["values"] as? [Any])?[moodColumn] as? String == "happy")  // short strings as they are
        let key = try #require(row["key"] as? String)
        let whole = try server.get("/api/types/StudioPhoto/objects/\(key)")
        #expect(whole.status == 200)
        let values = try #require(whole.json["values"] as? [Any])
        #expect((values[moodColumn] as? String)?.utf8.count == 20_000_000)
        let text = try server.get("/api/types/StudioPhoto/objects/\(key)/mood/data")
        #expect(text.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(text.body.count == 20_000_000)
        #expect(server.stop() == 0)
    }

    @Test("the page, its script and the OpenAPI document come from inside the binary; nothing else is served")
    func assets() throws {
        let server = try StudioServer(file: try studioFile().path)
        let page = try server.get("/?token=\(server.token)")
        #expect(page.status == 200)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.text.contains("studio.js?token=\(server.token)"))
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(try server.get("/studio.js").text.contains("EventSource"))
        let openAPI = try server.get("/api/openapi.json")
        #expect((openAPI.json["openapi"] as? String)?.hasPrefix("3.") == true)
        for path in ["/../../etc/passwd", "/etc/passwd", "/Package.swift", "/studio.js/../../x", "/api/../Package.swift"] {
            let reply = try server.get(path)
            #expect(reply.status == 404, "\(path)")
            #expect(!reply.text.contains("root:"), "\(path)")
        }
    }

    @Test("types with counts, the schema with links, and the file's info")
    func typesAndSchema() throws {
        let server = try StudioServer(file: try studioFile(12).path)
        let types = try server.get("/api/types").json["types"] as? [[String: Any]] ?? []
        let counts = Dictionary(uniqueKeysWithValues: types.map { ($0["name"] as! String, $0["count"] as! Int) })
        #expect(counts == ["StudioPhoto": 12, "StudioAlbum": 1])
        let schema = try server.get("/api/schema").json["types"] as? [[String: Any]] ?? []
        let album = schema.first { $0["name"] as? String == "StudioAlbum" }
        let properties = album?["properties"] as? [[String: Any]] ?? []
        let photos = properties.first { $0["name"] as? String == "photos" }
        #expect(photos?["collection"] as? String == "list")
        #expect(photos?["objectType"] as? String == "StudioPhoto")
        #expect(album?["primaryKey"] as? String == "name")
        let info = try server.get("/api/info").json
        #expect(info["readOnly"] as? Bool == false)
        #expect((info["file"] as? String)?.hasSuffix("photos.trove") == true)
        #expect(info["sync"] is NSNull)
    }

    @Test("a file that syncs shows where it stands; the studio's writes to its synced types are refused, saying why")
    func syncStatus() throws {
        let url = try studioFile(0).deletingLastPathComponent().appendingPathComponent("notes.trove")
        do {
            let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [StudioNote.self]))
            // No server is needed to record changes: they wait for a sync.
            let client = try SyncClient(
                database: db,
                configuration: .init(
                    serverURL: "postgresql://device@127.0.0.1:1/none", token: "\(UUID().uuidString).secret", space: "diary",
                    types: ["StudioNote"]))
            try db.write {
                for id in ["a", "b"] {
                    let note = StudioNote()
                    note.id = id
                    try db.add(note)
                }
            }
            #expect(client.pendingChanges == 2)
        }
        let server = try StudioServer(file: url.path)
        let sync = try #require(try server.get("/api/info").json["sync"] as? [String: Any])
        #expect(sync["space"] as? String == "diary")
        #expect(sync["types"] as? [String] == ["StudioNote"])
        #expect(sync["pendingChanges"] as? Int == 2)
        let refused = try server.send("POST", "/api/types/StudioNote/objects", json: #"{"id": "c", "text": "by hand"}"#)
        #expect(refused.status >= 400 && refused.text.contains("SyncClient"), "\(refused.status) \(refused.text)")
    }

    @Test("objects a page at a time, filtered by a Realm predicate and sorted")
    func objects() throws {
        let server = try StudioServer(file: try studioFile(30).path)
        let page = try server.get("/api/types/StudioPhoto/objects?offset=10&limit=5").json
        #expect(page["total"] as? Int == 30)
        #expect((page["objects"] as? [Any])?.count == 5)
        // Korean in the predicate and the values.
        let rainy = try server.get(
            "/api/types/StudioPhoto/objects?filter=\(percent("memo BEGINSWITH '비 오는'"))&sort=rating&ascending=false&limit=100"
        ).json
        #expect(rainy["total"] as? Int == 15)
        let objects = rainy["objects"] as? [[String: Any]] ?? []
        let values = objects.map { $0["values"] as? [Any] ?? [] }
        #expect(values.allSatisfy { ($0[1] as? String)?.hasPrefix("비 오는 날") == true })
        let ratings = values.map { $0[5] as? Int }
        #expect(ratings == ratings.sorted { ($0 ?? Int.min) > ($1 ?? Int.min) })
        // Dates, data and links come tagged.
        let first = try server.get("/api/types/StudioPhoto/objects?filter=\(percent("id == 'photo-0'"))").json
        let firstValues = (first["objects"] as? [[String: Any]])?.first?["values"] as? [Any] ?? []
        #expect((firstValues[3] as? [String: Any])?["$date"] as? String == "2024-05-01T00:00:00.000Z")
        #expect((firstValues[4] as? [String: Any])?["image"] as? String == "image/png")
        #expect((firstValues[6] as? [String: Any])?["$count"] as? Int == 2)
        #expect((firstValues[7] as? [String: Any])?["$count"] as? Int == 1)
        let albums = try server.get("/api/types/StudioAlbum/objects").json["objects"] as? [[String: Any]] ?? []
        let cover = (albums.first?["values"] as? [Any])?[1] as? [String: Any]
        #expect(cover?["$link"] as? String == "StudioPhoto")
        #expect(cover?["label"] as? String == "photo-0")
        // Past the end: an empty page with the total.
        let past = try server.get("/api/types/StudioPhoto/objects?offset=1000").json
        #expect((past["objects"] as? [Any])?.isEmpty == true)
        #expect(past["total"] as? Int == 30)
    }

    @Test("a link a mixed value holds is labelled by its target's primary key, as a link property's is")
    func mixedLinksAreLabelled() throws {
        let url = try studioFile(3)
        do {
            let db = try Database(fileURL: url)
            try db.write {
                let pin = StudioPin()
                pin.id = "pin"
                pin.target = .object(db.object(ofType: StudioPhoto.self, forPrimaryKey: "photo-2")!)
                pin.history.append(objectsIn: [.object(db.object(ofType: StudioPhoto.self, forPrimaryKey: "photo-1")!), .int(7)])
                try db.add(pin)
            }
        }
        let server = try StudioServer(file: url.path)
        let pins = try server.get("/api/types/StudioPin/objects").json["objects"] as? [[String: Any]] ?? []
        let target = (pins.first?["values"] as? [Any])?[1] as? [String: Any]
        #expect(target?["$link"] as? String == "StudioPhoto")
        #expect(target?["label"] as? String == "photo-2", "\(pins)")
        let pinKey = pins.first?["key"] as? String ?? ""
        let history = try server.get("/api/types/StudioPin/objects/\(pinKey)/history").json
        let entries = history["entries"] as? [[String: Any]] ?? []
        #expect((entries.first?["value"] as? [String: Any])?["label"] as? String == "photo-1", "\(history)")
        #expect(entries.last?["value"] as? Int == 7)
    }

    @Test("a bad predicate, type, sort, key or argument is a 4xx that says what is wrong and where")
    func badRequests() throws {
        let server = try StudioServer(file: try studioFile(5).path)
        let predicate = try server.get("/api/types/StudioPhoto/objects?filter=\(percent("memo CONTAINZ 'x'"))")
        #expect(predicate.status == 400)
        #expect(predicate.errorKind == "invalidQuery")
        #expect((predicate.json["error"] as? [String: Any])?["position"] as? Int == 5)
        let type = try server.get("/api/types/StudioPhot/objects")
        #expect(type.status == 404)
        #expect(type.errorMessage?.contains("did you mean 'StudioPhoto'") == true)
        let sort = try server.get("/api/types/StudioPhoto/objects?sort=nope")
        #expect(sort.status == 400)
        #expect(sort.errorMessage?.contains("no property named 'nope'") == true)
        #expect(try server.get("/api/types/StudioPhoto/objects?sort=tags").status == 400)
        #expect(try server.get("/api/types/StudioPhoto/objects?limit=-1").status == 400)
        #expect(try server.get("/api/types/StudioPhoto/objects?ascending=maybe").status == 400)
        #expect(try server.get("/api/types/StudioPhoto/objects/abc").status == 400)
        #expect(try server.get("/api/types/StudioPhoto/objects/999999").status == 404)
        #expect(try server.get("/api/types/StudioPhoto/nothing").status == 404)
        #expect(try server.request("PUT", "/api/types").status == 405)
        // Still serving after all that.
        #expect(try server.get("/api/types").status == 200)
    }

    @Test(
        "a write that fills the disk is a 507 that writes nothing, and the studio goes on serving",
        .enabled(if: geteuid() == 0, "mounting a small file system needs root (CI runs as root)"))
    func aFullDiskIs507() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-cli-tests")
            .appendingPathComponent("studio-fulldisk-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(
            try run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=3m", "tmpfs", directory.path]).status == 0)
        defer { _ = try? run(URL(fileURLWithPath: "/bin/umount"), ["-l", directory.path]) }
        let url = directory.appendingPathComponent("photos.trove")
        try FileManager.default.copyItem(at: try studioFile(5), to: url)
        let server = try StudioServer(file: url.path)
        var statuses: [Int] = []
        for index in 0..<12 {
            let memo = String(repeating: "가", count: 250_000)  // 750 KB a photo
            let reply = try server.send(
                "POST", "/api/types/StudioPhoto/objects", json: #"{"id": "big-\#(index)", "memo": "\#(memo)"}"#)
            statuses.append(reply.status)
            if reply.status != 201 {
                #expect(reply.errorKind == "diskFull", "\(reply.text.prefix(300))")
                break
            }
        }
        #expect(statuses.last == 507, "\(statuses)")
        let added = statuses.filter { $0 == 201 }.count
        let page = try server.get("/api/types/StudioPhoto/objects?limit=100")
        #expect(page.status == 200)
        #expect(page.json["total"] as? Int == 5 + added)
        #expect(server.stop() == 0)
    }

    @Test("create, update and delete write through one transaction each; a bad value is a 400 and writes nothing")
    func writes() throws {
        let url = try studioFile(5)
        let server = try StudioServer(file: url.path)
        let created = try server.send(
            "POST", "/api/types/StudioPhoto/objects",
            json: #"{"id": "new", "memo": "새 사진", "taken": "2024-06-01T09:30:00Z", "rating": 4, "tags": ["a", "b"]}"#)
        #expect(created.status == 201)
        let key = created.json["key"] as? String ?? ""
        var db = try openStudioFile(url)
        let added = db.object(ofType: StudioPhoto.self, forPrimaryKey: "new")
        #expect(added?.memo == "새 사진")
        #expect(added?.rating == 4)
        #expect(added?.tags.count == 2)

        // Bad input: nothing is written.
        let bad: [(String, String, String, Int)] = [
            ("POST", "/api/types/StudioPhoto/objects", #"{"id": "x", "rating": "four"}"#, 400),
            ("POST", "/api/types/StudioPhoto/objects", #"{"id": "new"}"#, 409),
            ("POST", "/api/types/StudioPhoto/objects", #"{"id": "y", "nope": 1}"#, 400),
            ("POST", "/api/types/StudioPhoto/objects", #"{"id": "#, 400),
            ("POST", "/api/types/StudioPhoto/objects", #"[1, 2]"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"property": "taken", "value": "yesterday"}"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"property": "memo", "value": null}"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"property": "id", "value": "other"}"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"property": "tags", "value": ["x"]}"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"property": "nope", "value": 1}"#, 400),
            ("PATCH", "/api/types/StudioPhoto/objects/\(key)", #"{"memo": "no property given"}"#, 400),
            ("PATCH", "/api/types/StudioAlbum/objects/1", #"{"property": "cover", "value": "photo-missing"}"#, 400),
        ]
        for (method, path, body, status) in bad {
            let reply = try server.send(method, path, json: body)
            #expect(reply.status == status, "\(method) \(path) \(body): \(reply.text)")
            #expect(reply.errorMessage?.isEmpty == false, "\(body)")
        }
        db = try openStudioFile(url)
        #expect(db.objects(StudioPhoto.self).count == 6)
        #expect(db.object(ofType: StudioPhoto.self, forPrimaryKey: "new")?.memo == "새 사진")

        // Updates: a value, nil for an optional, a link by the target's primary key.
        #expect(
            try server.send("PATCH", "/api/types/StudioPhoto/objects/\(key)", json: #"{"property": "memo", "value": "고친 메모"}"#)
                .status == 200)
        #expect(
            try server.send("PATCH", "/api/types/StudioPhoto/objects/\(key)", json: #"{"property": "rating", "value": null}"#)
                .status == 200)
        let albumKey =
            (try server.get("/api/types/StudioAlbum/objects").json["objects"] as? [[String: Any]])?.first?["key"] as? String ?? ""
        let relinked = try server.send(
            "PATCH", "/api/types/StudioAlbum/objects/\(albumKey)", json: #"{"property": "cover", "value": "new"}"#)
        #expect(relinked.status == 200)
        #expect(((relinked.json["values"] as? [Any])?[1] as? [String: Any])?["label"] as? String == "new")
        db = try openStudioFile(url)
        let updated = db.object(ofType: StudioPhoto.self, forPrimaryKey: "new")
        #expect(updated?.memo == "고친 메모")
        #expect(updated?.rating == nil)
        #expect(db.object(ofType: StudioAlbum.self, forPrimaryKey: "봄")?.cover?.id == "new")

        // Delete, then it is gone.
        #expect(try server.request("DELETE", "/api/types/StudioPhoto/objects/\(key)").status == 200)
        #expect(try server.request("DELETE", "/api/types/StudioPhoto/objects/\(key)").status == 404)
        db = try openStudioFile(url)
        #expect(db.object(ofType: StudioPhoto.self, forPrimaryKey: "new") == nil)
        #expect(db.objects(StudioPhoto.self).count == 5)
    }

    @Test("a body over 1 MiB is refused with 413, and nothing is written")
    func hugeBody() throws {
        let url = try studioFile(3)
        let server = try StudioServer(file: url.path)
        let memo = String(repeating: "가", count: 600_000)  // 1.8 MB of UTF-8
        let reply = try server.send("POST", "/api/types/StudioPhoto/objects", json: #"{"id": "big", "memo": "\#(memo)"}"#)
        #expect(reply.status == 413)
        #expect(try openStudioFile(url).objects(StudioPhoto.self).count == 3)
        #expect(try server.get("/api/types").status == 200)
    }

    @Test("links, lists, sets, maps and linking objects of one object, and a data property's bytes")
    func relations() throws {
        let server = try StudioServer(file: try studioFile(5).path)
        let album = (try server.get("/api/types/StudioAlbum/objects").json["objects"] as? [[String: Any]])?.first
        let albumKey = album?["key"] as? String ?? ""
        let photos = try server.get("/api/types/StudioAlbum/objects/\(albumKey)/photos").json
        #expect(photos["kind"] as? String == "list")
        #expect(photos["type"] as? String == "StudioPhoto")
        #expect(photos["total"] as? Int == 3)
        let ids = (photos["objects"] as? [[String: Any]])?.map { ($0["values"] as? [Any])?[0] as? String }
        #expect(ids == ["photo-0", "photo-1", "photo-2"])
        let cover = try server.get("/api/types/StudioAlbum/objects/\(albumKey)/cover").json
        #expect(cover["kind"] as? String == "link")
        let coverObject = (cover["objects"] as? [[String: Any]])?.first
        #expect((coverObject?["values"] as? [Any])?[0] as? String == "photo-0")
        let captions = try server.get("/api/types/StudioAlbum/objects/\(albumKey)/captions").json
        #expect(captions["kind"] as? String == "map")
        #expect(((captions["entries"] as? [[String: Any]])?.first?["value"]) as? String == "첫 사진")
        let picks = try server.get("/api/types/StudioAlbum/objects/\(albumKey)/picks").json
        #expect(picks["kind"] as? String == "map")
        let pickEntries = picks["entries"] as? [[String: Any]] ?? []
        #expect(pickEntries.map { $0["key"] as? String } == ["best", "none"])
        #expect((pickEntries.first?["value"] as? [String: Any])?["label"] as? String == "photo-4")
        #expect(pickEntries.last?["value"] is NSNull)
        let photoKey = coverObject?["key"] as? String ?? ""
        let albums = try server.get("/api/types/StudioPhoto/objects/\(photoKey)/albums").json
        #expect(albums["kind"] as? String == "linkingObjects")
        #expect(albums["total"] as? Int == 1)
        let tags = try server.get("/api/types/StudioPhoto/objects/\(photoKey)/tags").json
        #expect((tags["entries"] as? [[String: Any]])?.compactMap { $0["value"] as? String }.sorted() == ["home", "rain"])
        let image = try server.get("/api/types/StudioPhoto/objects/\(photoKey)/image/data")
        #expect(image.status == 200)
        #expect(image.headers["content-type"] == "image/png")
        #expect(image.body == studioPNG)
        #expect(try server.get("/api/types/StudioPhoto/objects/\(photoKey)/memo").status == 400)
    }

    @Test("charts: counts per value of a string, a histogram of a number; verify and export")
    func chartsVerifyExport() throws {
        let server = try StudioServer(file: try studioFile(30).path)
        let moods = try server.get("/api/types/StudioPhoto/chart/mood").json
        #expect(moods["kind"] as? String == "counts")
        let counts = (moods["values"] as? [[String: Any]])?.map { "\($0["value"]!)=\($0["count"]!)" }.sorted()
        #expect(counts == ["calm=10", "happy=10", "sad=10"])
        // Integers of a few values (a rating, an enum's raw value): a bar per value, in order.
        let ratings = try server.get("/api/types/StudioPhoto/chart/rating?filter=\(percent("mood != 'sad'"))").json
        #expect(ratings["kind"] as? String == "counts")
        #expect(ratings["nulls"] as? Int == 10)
        let values = (ratings["values"] as? [[String: Any]])?.compactMap { $0["value"] as? String }
        #expect(values == values?.sorted { Int($0)! < Int($1)! })
        #expect((ratings["values"] as? [[String: Any]])?.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 10)
        // Dates: a histogram of 20 equal ranges.
        let taken = try server.get("/api/types/StudioPhoto/chart/taken").json
        #expect(taken["kind"] as? String == "histogram")
        let buckets = taken["buckets"] as? [[String: Any]] ?? []
        #expect(buckets.count == 20)
        #expect(buckets.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 30)
        #expect(buckets.first?["from"] as? Double == 1_714_521_600)
        let report = try server.get("/api/verify").json
        #expect(report["valid"] as? Bool == true)
        #expect(report["objects"] as? Int == 31)
        let csv = try server.get("/api/types/StudioPhoto/export?format=csv")
        #expect(csv.headers["content-type"]?.hasPrefix("text/csv") == true)
        #expect(csv.text.split(whereSeparator: \.isNewline).count == 31)
        #expect(csv.text.contains("비 오는 날 0"))
        #expect(try server.get("/api/types/StudioPhoto/export?format=xml").status == 400)
    }

    @Test("--read-only: the file opens read-only, the info says so, and every write is a 403 that writes nothing")
    func readOnly() throws {
        let url = try studioFile(4)
        let server = try StudioServer(file: url.path, "--read-only")
        #expect(try server.get("/api/info").json["readOnly"] as? Bool == true)
        #expect(try server.send("POST", "/api/types/StudioPhoto/objects", json: #"{"id": "x"}"#).status == 403)
        #expect(
            try server.send("PATCH", "/api/types/StudioPhoto/objects/1", json: #"{"property": "memo", "value": "x"}"#).status
                == 403)
        #expect(try server.request("DELETE", "/api/types/StudioPhoto/objects/1").status == 403)
        let db = try openStudioFile(url)
        #expect(db.objects(StudioPhoto.self).count == 4)
        #expect(try db.objects(StudioPhoto.self).filter("memo == 'x'").isEmpty)
    }

    @Test("requests in parallel while another process writes: every answer is whole, and the events tell of each commit")
    func concurrentWrites() throws {
        let url = try studioFile(10)
        let server = try StudioServer(file: url.path)
        let events = try server.openEvents()
        defer { close(events) }
        #expect(server.read(events, until: "event: hello", seconds: 30).contains("event: hello"))
        let writer = Thread {
            guard let db = try? Database(fileURL: url) else { return }
            for index in 0..<40 {
                try? db.write {
                    let photo = StudioPhoto()
                    photo.id = "written-\(index)"
                    photo.memo = "다른 프로세스 \(index)"
                    try db.add(photo)
                }
                usleep(5_000)
            }
        }
        writer.start()
        let failures = Locked<[String]>([])
        let totals = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<10 {
                do {
                    let path =
                        round % 2 == 0
                        ? "/api/types/StudioPhoto/objects?filter=\(percent("memo CONTAINS '프로세스'"))&limit=1000"
                        : "/api/types"
                    let reply = try server.get(path)
                    if reply.status != 200 { failures.withLock { $0.append("\(worker): \(reply.status) \(reply.text)") } }
                    if round % 2 == 0 {
                        let total = reply.json["total"] as? Int ?? -1
                        let objects = (reply.json["objects"] as? [Any])?.count ?? -2
                        if total != objects { failures.withLock { $0.append("total \(total) but \(objects) objects") } }
                        totals.withLock { $0.append(total) }
                    }
                } catch {
                    failures.withLock { $0.append("\(worker): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(totals.withLock { $0.allSatisfy { (0...40).contains($0) } })
        let seen = server.read(events, until: "event: commit", seconds: 30)
        #expect(seen.contains("event: commit"))
        while writer.isExecuting { usleep(10_000) }
        // After the last commit, the server reads all of them.
        var final = 0
        for _ in 0..<50 {
            final = try server.get("/api/types/StudioPhoto/objects?limit=0").json["total"] as? Int ?? 0
            if final == 50 { break }
            usleep(20_000)
        }
        #expect(final == 50)
        #expect(server.stop() == 0)
    }

    @Test("the app adds a property while the studio is open: the schema, the grid and edits follow")
    func schemaChangeByAnotherProcess() throws {
        let url = try studioFile(1)
        do {
            let db = try Database(fileURL: url)
            try db.write {
                for id in ["a", "b"] {
                    let note = StudioNote()
                    note.id = id
                    note.text = "메모 \(id)"
                    try db.add(note)
                }
            }
        }
        let server = try StudioServer(file: url.path)
        #expect(try server.get("/api/types/StudioNote/objects").json["total"] as? Int == 2)
        var configuration = Configuration(fileURL: url)
        configuration.objectTypes = [StudioNextVersion.StudioNote.self]
        let app = try Database(configuration: configuration)
        try app.write {
            let note = StudioNextVersion.StudioNote()
            note.id = "in-seoul"
            note.place = "서울"
            try app.add(note)
        }
        let schema = try server.get("/api/schema").json["types"] as? [[String: Any]] ?? []
        let properties = (schema.first { $0["name"] as? String == "StudioNote" }?["properties"] as? [[String: Any]])?
            .compactMap { $0["name"] as? String }
        #expect(properties == ["id", "text", "place"])
        let page = try server.get("/api/types/StudioNote/objects?filter=\(percent("place == '서울'"))").json
        let found = (page["objects"] as? [[String: Any]])?.first
        #expect((found?["values"] as? [Any])?.last as? String == "서울")
        let key = found?["key"] as? String ?? ""
        let edited = try server.send(
            "PATCH", "/api/types/StudioNote/objects/\(key)", json: #"{"property": "place", "value": "부산"}"#)
        #expect(edited.status == 200)
        app.refresh()
        #expect(app.object(ofType: StudioNextVersion.StudioNote.self, forPrimaryKey: "in-seoul")?.place == "부산")
        // Objects stored before the change read the new property's default.
        let old = try server.get("/api/types/StudioNote/objects?filter=\(percent("id == 'a'"))").json
        #expect((((old["objects"] as? [[String: Any]])?.first)?["values"] as? [Any])?.last as? String == "")
    }
}

/// `text` percent-encoded for a query argument.
func percent(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}

/// A value behind a lock, for tests that gather results from threads.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
