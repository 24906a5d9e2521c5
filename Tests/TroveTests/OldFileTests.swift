import Foundation
import Testing

@testable import Trove

/// The photo diary's model before the seed added `dateAdded`.
enum PhotoV0 {
    final class PhotoData: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted(indexed: true) var date = ""
        @Persisted var image: Data?
        @Persisted var memo = ""
    }
}

/// And after: the seed's "newly added property", with a default.
enum PhotoV1 {
    final class PhotoData: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted(indexed: true) var date = ""
        @Persisted var dateAdded = Date(timeIntervalSince1970: 0)
        @Persisted var image: Data?
        @Persisted var memo = ""
    }
}

/// Files written by earlier model versions, checked in under `Fixtures/`
/// (like Realm's `test_upgrade_database_*`), opened with today's code. Each
/// test works on a copy; the checked-in files never change.
@Suite struct OldFileTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    private func copy(_ name: String, _ test: String = #function) throws -> URL {
        let source = OldFileTests.fixtures.appendingPathComponent(name)
        let target = makeTemporaryDirectory(test).appendingPathComponent(name)
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    /// Regenerates the fixtures: `TROVE_WRITE_FIXTURES=1 swift test --filter writeFixtures`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TROVE_WRITE_FIXTURES"] != nil))
    func writeFixtures() throws {
        try FileManager.default.createDirectory(at: OldFileTests.fixtures, withIntermediateDirectories: true)
        for name in ["photos-v0.trove", "memos-v1.trove"] {
            for file in [name, name + "-lock"] {
                try? FileManager.default.removeItem(at: OldFileTests.fixtures.appendingPathComponent(file))
            }
        }
        do {
            let db = try Database(
                configuration: Configuration(
                    fileURL: OldFileTests.fixtures.appendingPathComponent("photos-v0.trove"),
                    objectTypes: [PhotoV0.PhotoData.self]))
            try db.write {
                for day in ["2024-05-01", "2024-05-02"] {
                    let photo = PhotoV0.PhotoData()
                    photo.id = "photo-\(day)"
                    photo.date = day
                    photo.memo = "walk on \(day)"
                    photo.image = Data([0xFF, 0xD8, 0xFF, 0xD9])
                    try db.add(photo)
                }
            }
        }
        do {
            let db = try Database(
                configuration: Configuration(
                    fileURL: OldFileTests.fixtures.appendingPathComponent("memos-v1.trove"), schemaVersion: 1,
                    objectTypes: [MemoV1.Memo.self]))
            try db.write {
                for id in 1...3 {
                    let memo = MemoV1.Memo()
                    memo.id = id
                    memo.text = "memo \(id)"
                    memo.stars = id
                    memo.code = "c\(id)"
                    try db.add(memo)
                }
            }
        }
        for name in ["photos-v0.trove", "memos-v1.trove"] {
            try? FileManager.default.removeItem(at: OldFileTests.fixtures.appendingPathComponent(name + "-lock"))
        }
    }

    @Test func thePhotoDiaryFromBeforeDateAddedOpensWithTodaysModel() throws {
        let url = try copy("photos-v0.trove")
        let db = try Database(configuration: Configuration(fileURL: url, objectTypes: [PhotoV1.PhotoData.self]))
        let photos = db.objects(PhotoV1.PhotoData.self).sorted(by: \.date).array()
        #expect(photos.map(\.memo) == ["walk on 2024-05-01", "walk on 2024-05-02"])
        #expect(photos.allSatisfy { $0.dateAdded == Date(timeIntervalSince1970: 0) })  // the new property's default
        #expect(
            try db.objects(PhotoV1.PhotoData.self).filter("date == '2024-05-02'").first?.image == Data([0xFF, 0xD8, 0xFF, 0xD9]))
        expectValid(db)
    }

    @Test func aVersionOneFileMigratesToVersionTwo() throws {
        let url = try copy("memos-v1.trove")
        let configuration = Configuration(fileURL: url, schemaVersion: 2, objectTypes: [MemoV2.Memo.self]) { migration, _ in
            migration.renameProperty(onType: "Memo", from: "text", to: "body")
        }
        let db = try Database(configuration: configuration)
        #expect(db.objects(MemoV2.Memo.self).sorted(by: \.id).map(\.body) == ["memo 1", "memo 2", "memo 3"])
        #expect(db.objects(MemoV2.Memo.self).sorted(by: \.id).map(\.stars) == ["1", "2", "3"])
        expectValid(db)
    }

    @Test func aVersionOneFileStillOpensWithItsOwnModel() throws {
        let url = try copy("memos-v1.trove")
        let db = try Database(configuration: Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MemoV1.Memo.self]))
        // (Opened to store types in clusters, it is converted, and says so.)
        #expect(db.fileFormatVersion == (db.configuration.storesNewTypesInClusters ? db.clustersFormat : 1))
        #expect(db.objects(MemoV1.Memo.self).count == 3)
    }
}
