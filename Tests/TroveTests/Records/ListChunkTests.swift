import Foundation
import Testing
import TroveStorage

@testable import Trove

/// Lists stored as chunks of elements (``ListChunk``): long lists edited
/// anywhere, objects deleted out of the lists that hold them, files from
/// before chunks, and damaged chunks.
@Suite struct ListChunkTests {
    /// A tag of a size that varies with `n`; every 97th is larger than a chunk on its own.
    private static func tag(_ n: Int) -> String {
        n % 97 == 0
            ? String(repeating: "x", count: ListChunk.softLimit + 500) + "\(n)"
            : "tag \(n) " + String(repeating: "·", count: n % 40)
    }

    @Test("elements cut into chunks under the size limit (a large one alone) read back in order; damaged bytes are named")
    func chunksRoundTrip() throws {
        var elements = ListElements()
        for n in 0..<500 { Array(Self.tag(n).utf8).withUnsafeBytes { elements.append($0) } }
        let chunks = elements.chunks()
        #expect(chunks.count > 1)
        var read: [String] = []
        for (index, chunk) in chunks.enumerated() {
            #expect(chunk.start == read.count)
            try chunk.bytes.withUnsafeBytes { bytes in
                let chunk = try #require(ListChunk(bytes))
                #expect(bytes.count <= ListChunk.softLimit || chunk.count == 1, "chunk \(index) is \(bytes.count) bytes")
                for element in 0..<chunk.count { read.append(String(decoding: chunk.record(at: element), as: UTF8.self)) }
            }
        }
        #expect(read == (0..<500).map(Self.tag))
        var damaged = chunks[0].bytes
        damaged[4] = 0xFF  // the first element's end, past the chunk
        #expect(damaged.withUnsafeBytes { ListChunk.problem(in: $0) } == "has element 0 outside the chunk")
        #expect([UInt8]([0, 0, 0, 0]).withUnsafeBytes { ListChunk.problem(in: $0) } == "is a chunk of no elements")
        #expect([UInt8]([9, 0, 0, 0, 1]).withUnsafeBytes { ListChunk.problem(in: $0) } == "says it holds 9 elements in 5 bytes")
    }

    @Test("a list of many chunks, edited anywhere — insert, remove, move, replace, append — reads as an array edited alike")
    func aLongListMatchesAnArray() throws {
        let db = try makeDatabase()
        let playlist = Playlist()
        playlist.name = "model"
        try db.write { try db.add(playlist) }
        var model = (0..<2_000).map(Self.tag)
        try db.write { playlist.tags.append(contentsOf: model) }
        var random = SeededGenerator(seed: 7)
        for step in 0..<300 {
            let n = 2_000 + step
            try db.write {
                let position = Int.random(in: 0..<model.count, using: &random)
                switch step % 5 {
                case 0:
                    playlist.tags.insert(Self.tag(n), at: position)
                    model.insert(Self.tag(n), at: position)
                case 1:
                    playlist.tags.remove(at: position)
                    model.remove(at: position)
                case 2:
                    let destination = Int.random(in: 0..<model.count, using: &random)
                    playlist.tags.move(from: position, to: destination)
                    model.insert(model.remove(at: position), at: destination)
                case 3:
                    playlist.tags[position] = Self.tag(n)
                    model[position] = Self.tag(n)
                default:
                    playlist.tags.append(Self.tag(n))
                    model.append(Self.tag(n))
                }
            }
            if step % 60 == 0 { #expect(playlist.tags.array() == model, "after step \(step)") }
        }
        #expect(playlist.tags.count == model.count)
        #expect(playlist.tags.array() == model)
        for position in stride(from: 0, to: model.count, by: 37) { #expect(playlist.tags[position] == model[position]) }
        // Queries read the chunks too.
        #expect(try db.objects(Playlist.self).filter("ANY tags == %@", model[model.count / 2]).count == 1)
        #expect(try db.objects(Playlist.self).filter("tags.@count == %@", model.count).count == 1)
        expectValid(db)
        try db.write { playlist.tags.removeAll() }
        #expect(playlist.tags.isEmpty)
        try db.write { playlist.tags.append("again") }
        #expect(playlist.tags.array() == ["again"])
        expectValid(db)
    }

    @Test("deleting a song that many long playlists hold, some more than once, takes out every occurrence and nothing else")
    func deletingAnObjectManyListsHold() throws {
        let db = try makeDatabase()
        var songs: [Song] = []
        var playlists: [Playlist] = []
        try db.write {
            for n in 0..<40 {
                let song = Song()
                song.title = "song \(n)"
                try db.add(song)
                songs.append(song)
            }
            for n in 0..<12 {
                let playlist = Playlist()
                playlist.name = "list \(n)"
                // 400 songs: several chunks; song 0 appears n % 4 times, spread out.
                for position in 0..<400 {
                    playlist.songs.append(songs[(position % 97 == 0 && position / 97 < n % 4) ? 0 : 1 + (position * 7 + n) % 39])
                }
                try db.add(playlist)
                playlists.append(playlist)
            }
        }
        let expected = playlists.map { $0.songs.array().map(\.title).filter { $0 != "song 0" } }
        #expect(songs[0].playlists.count == playlists.filter { $0.songs.contains { $0.title == "song 0" } }.count)
        try db.write { try db.delete(songs[0]) }
        #expect(playlists.map { $0.songs.array().map(\.title) } == expected)
        #expect(songs[1].playlists.count == playlists.filter { $0.songs.contains { $0.title == "song 1" } }.count)
        expectValid(db)
    }

    @Test(
        "deleting a song that short and long playlists hold takes it out of each in one pass: a list of only it empties, the rest keep their order"
    )
    func deletingAnObjectShortAndLongListsHold() throws {
        let db = try makeDatabase()
        var songs: [Song] = []
        var playlists: [Playlist] = []
        try db.write {
            for n in 0..<20 {
                let song = Song()
                song.title = "song \(n)"
                try db.add(song)
                songs.append(song)
            }
            // Lengths: one chunk for most, several for every fifth; song 0 held 0-3 times, one list holds only it.
            for n in 0..<300 {
                let playlist = Playlist()
                playlist.name = "list \(n)"
                let length = n % 5 == 4 ? 400 : 1 + n % 9
                for position in 0..<length {
                    let holdsZero = n == 7 || (position % 3 == 0 && position / 3 < n % 4)
                    playlist.songs.append(songs[holdsZero ? 0 : 1 + (position + n) % 19])
                }
                try db.add(playlist)
                playlists.append(playlist)
            }
        }
        let expected = playlists.map { $0.songs.array().map(\.title).filter { $0 != "song 0" } }
        #expect(expected[7].isEmpty)
        try db.write { try db.delete(songs[0]) }
        #expect(playlists.map { $0.songs.array().map(\.title) } == expected)
        #expect(songs[1].playlists.count == playlists.filter { $0.songs.contains { $0.title == "song 1" } }.count)
        expectValid(db)
    }

    @Test(
        "removing a record from a chunk keeps the other elements in order after what the buffer held; none found appends nothing, all found leaves no elements"
    )
    func removingFromAChunk() throws {
        let tags = ["a", "needle", "", "bb", "needle", "ccc", "needle", "a link's nine", "a record longer than thirty-two bytes"]
        var elements = ListElements()
        for tag in tags { Array(tag.utf8).withUnsafeBytes { elements.append($0) } }
        let bytes = try #require(elements.chunks().first?.bytes)
        try bytes.withUnsafeBytes { bytes in
            let chunk = try #require(ListChunk(bytes))
            for (needle, removed) in [("needle", 3), ("", 1), ("a link's nine", 1), ("a record longer than thirty-two bytes", 1)]
            {
                var out: [UInt8] = [7, 7]
                #expect(Array(needle.utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == removed)
                #expect(out.prefix(2) == [7, 7])
                try out.dropFirst(2).withUnsafeBytes { edited in
                    let kept = try #require(ListChunk(edited))
                    #expect(
                        (0..<kept.count).map { String(decoding: kept.record(at: $0), as: UTF8.self) }
                            == tags.filter { $0 != needle })
                }
            }
            var out: [UInt8] = [7]
            #expect(Array("absent".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == 0)
            // A record that only starts like an element is not it, nor one an element only starts like.
            #expect(Array("need".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == 0)
            #expect(Array("needles".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == 0)
            #expect(
                Array("a record longer than thirty-two byteS".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) }
                    == 0)
            #expect(Array("a link's ninE".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == 0)
            #expect(out == [7])
        }
        var same = ListElements()
        for _ in 0..<3 { Array("x".utf8).withUnsafeBytes { same.append($0) } }
        try same.chunks()[0].bytes.withUnsafeBytes { bytes in
            let chunk = try #require(ListChunk(bytes))
            var out: [UInt8] = []
            #expect(Array("x".utf8).withUnsafeBytes { chunk.removing($0, appendingTo: &out) } == 3)
            #expect(out == [0, 0, 0, 0])
        }
    }

    @Test(
        "deleting a song that short playlists hold (one chunk each), some more than once or only it, takes out every occurrence")
    func deletingAnObjectShortListsHold() throws {
        let db = try makeDatabase()
        var songs: [Song] = []
        var playlists: [Playlist] = []
        try db.write {
            for n in 0..<10 {
                let song = Song()
                song.title = "song \(n)"
                try db.add(song)
                songs.append(song)
            }
            for n in 0..<60 {
                let playlist = Playlist()
                playlist.name = "list \(n)"
                // 0 to 29 songs; song 0 at the positions where (position + n) % 5 == 0 for every third list,
                // and lists 7, 17, ... of song 0 alone.
                for position in 0..<(n % 30) {
                    let holds = n % 10 == 7 || (n % 3 == 0 && (position + n) % 5 == 0)
                    playlist.songs.append(songs[holds ? 0 : 1 + (position * 3 + n) % 9])
                }
                try db.add(playlist)
                playlists.append(playlist)
            }
        }
        let expected = playlists.map { $0.songs.array().map(\.title).filter { $0 != "song 0" } }
        #expect(expected.contains { $0.isEmpty })
        #expect(playlists.contains { $0.songs.count > 10 && $0.songs.contains { $0.title == "song 0" } })
        try db.write { try db.delete(songs[0]) }
        #expect(playlists.map { $0.songs.array().map(\.title) } == expected)
        #expect(playlists.map(\.songs.count) == expected.map(\.count))
        for song in songs.dropFirst() {
            #expect(song.playlists.count == playlists.filter { $0.songs.contains { $0.title == song.title } }.count)
        }
        // The emptied lists take songs again.
        try db.write { for playlist in playlists where playlist.songs.isEmpty { playlist.songs.append(songs[1]) } }
        #expect(playlists.allSatisfy { !$0.songs.isEmpty })
        expectValid(db)
    }

    /// Rewrites a file's lists as a Trove before chunks stored them: one
    /// element per entry under `owner ‖ position`, no `packedLists` entry, format 9.
    private static func unpackLists(at url: URL) throws {
        let environment = try Environment.open(path: url.path)
        let transaction = try WriteTransaction(environment: environment)
        for name in try environment.tableNames() where name.hasPrefix("list:") {
            let list = try #require(try transaction.existingTable(name))
            var entries: [(key: [UInt8], value: [UInt8])] = []
            try transaction.withCursor(on: list) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    let owner = current.key.loadUnaligned(as: UInt64.self)
                    let start = Int(UInt32(bigEndian: current.key.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
                    let chunk = try #require(ListChunk(current.value))
                    for index in 0..<chunk.count {
                        let key =
                            withUnsafeBytes(of: owner) { Array($0) }
                            + withUnsafeBytes(of: UInt32(start + index).bigEndian) { Array($0) }
                        entries.append((key, Array(chunk.record(at: index))))
                    }
                    entry = try cursor.next()
                }
            }
            try transaction.clear(list)
            for entry in entries {
                try entry.key.withUnsafeBytes { k in
                    try entry.value.withUnsafeBytes { _ = try transaction.put(list, key: k, value: $0) }
                }
            }
        }
        let meta = try #require(try transaction.existingTable(Catalog.metaTable))
        _ = try Array(Catalog.packedListsKey.utf8).withUnsafeBytes { try transaction.delete(meta, key: $0) }
        try Catalog.put(Database.columnPatchesFormatVersion.littleEndian, key: "format", in: meta, transaction)
        try transaction.commit()
    }

    @Test("a file from before list chunks reads as it is read-only, and opened to write has its lists converted, nothing lost")
    func anOlderFilesListsAreConverted() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("older.trove")
        let configuration = Configuration(fileURL: url, objectTypes: [Playlist.self, Song.self])
        typealias Contents = [String: [[String]]]
        func contents(_ db: Database) -> Contents {
            Dictionary(
                uniqueKeysWithValues: db.objects(Playlist.self).map {
                    (
                        $0.name,
                        [$0.tags.array(), $0.ratings.array().map { $0.map(String.init) ?? "nil" }, $0.songs.array().map(\.title)]
                    )
                })
        }
        let before: Contents
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for n in 0..<3 {
                    let playlist = Playlist()
                    playlist.name = "list \(n)"
                    playlist.tags.append(contentsOf: (0..<(n == 2 ? 1_500 : n * 3)).map(Self.tag))
                    playlist.ratings.append(objectsIn: [n, nil, n * 2])
                    for m in 0..<n * 5 {
                        let song = Song()
                        song.title = "song \(n).\(m)"
                        playlist.songs.append(song)
                    }
                    try db.add(playlist)
                }
            }
            before = contents(db)
        }
        try Self.unpackLists(at: url)
        var readOnly = configuration
        readOnly.readOnly = true
        do {
            let db = try Database(configuration: readOnly)
            #expect(db.fileFormatVersion == Database.columnPatchesFormatVersion)
            #expect(contents(db) == before)
            #expect(try db.objects(Playlist.self).filter("ANY songs.title == 'song 1.4'").count == 1)
            expectValid(db)
        }
        let db = try Database(configuration: configuration)
        #expect(db.fileFormatVersion == Database.packedListsFormatVersion)
        #expect(contents(db) == before)
        let long = try #require(db.object(ofType: Playlist.self, forPrimaryKey: "list 2"))
        try db.write { long.tags.insert("first", at: 0) }
        #expect(long.tags.first == "first" && long.tags.count == 1_501 && long.tags[1_500] == Self.tag(1_499))
        #expect(try db.objects(Song.self).filter("ANY playlists.name == 'list 1'").count == 5)
        expectValid(db)
    }

    @Test("a damaged chunk is reported by verify, which names the list and the object, and goes on")
    func aDamagedChunkIsReported() throws {
        let url = makeTemporaryDirectory().appendingPathComponent("damaged.trove")
        let configuration = Configuration(fileURL: url, objectTypes: [Playlist.self, Song.self])
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for n in 0..<2 {
                    let playlist = Playlist()
                    playlist.name = "list \(n)"
                    playlist.tags.append(contentsOf: ["a", "b", "c"])
                    try db.add(playlist)
                }
            }
        }
        do {
            let environment = try Environment.open(path: url.path)
            let transaction = try WriteTransaction(environment: environment)
            let list = try #require(try transaction.existingTable("list:Playlist.tags"))
            var first: (key: [UInt8], value: [UInt8])?
            try transaction.withCursor(on: list) { cursor in
                if let entry = try cursor.first() { first = (Array(entry.key), Array(entry.value)) }
            }
            var damaged = try #require(first)
            damaged.value[0] = 200  // claims 200 elements
            try damaged.key.withUnsafeBytes { k in
                try damaged.value.withUnsafeBytes { _ = try transaction.put(list, key: k, value: $0) }
            }
            try transaction.commit()
        }
        let db = try Database(configuration: configuration)
        let report = try db.verify()
        #expect(!report.isValid)
        #expect(report.problems.map(\.kind) == [.damagedList])
        #expect(report.problems.first?.detail.contains("says it holds 200 elements") == true, "\(report)")
        // The other list reads.
        #expect(db.object(ofType: Playlist.self, forPrimaryKey: "list 1")?.tags.array() == ["a", "b", "c"])
    }
}
