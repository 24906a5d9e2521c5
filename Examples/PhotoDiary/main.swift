// The photo diary from the third seed document, on Trove: save a photo with a
// UUID key and JPEG-like bytes, fetch all newest first, fetch by date, update,
// delete, find the data again after reopening the file, and search the memos
// (Korean words with their particles and endings, best match first).
//
//     swift run PhotoDiary [path/to/photos.trove]

import Foundation
import Trove

final class PhotoData: Object {
    @Persisted(primaryKey: true) var id = UUID().uuidString
    @Persisted(indexed: true) var date = ""
    @Persisted var dateAdded = Date()
    @Persisted var image: Data?
    @Persisted(indexed: .fullText) var memo = ""
    @Persisted var mood: Mood = .happy
    var thumbnailCache: Data?  // not @Persisted: never stored
}

enum Mood: String, PersistableEnum {
    case happy, calm, sad
}

/// The seed's RealmManager, without the boilerplate: every method is one call.
final class PhotoStore {
    let db: Database

    init(fileURL: URL) throws {
        db = try Database(configuration: Configuration(fileURL: fileURL, objectTypes: [PhotoData.self]))
    }

    @discardableResult
    func save(date: String, memo: String, image: Data, mood: Mood = .happy) throws -> PhotoData {
        let photo = PhotoData()
        photo.date = date
        photo.memo = memo
        photo.image = image
        photo.mood = mood
        try db.write { try db.add(photo) }
        return photo
    }

    func photo(withID id: String) -> PhotoData? {
        db.object(ofType: PhotoData.self, forPrimaryKey: id)
    }

    func fetchAll() -> Results<PhotoData> {
        db.objects(PhotoData.self).sorted(by: \.dateAdded, ascending: false)
    }

    func fetch(byDate date: String) throws -> PhotoData? {
        try db.objects(PhotoData.self).filter("date == %@", date).first
    }

    func update(_ photo: PhotoData, memo: String, image: Data) throws {
        try db.write {
            photo.memo = memo
            photo.image = image
        }
    }

    func delete(_ photo: PhotoData) throws {
        try db.write { try db.delete(photo) }
    }

    /// The memos that hold every word of `query`, best match first: `산책`
    /// finds `산책을` and `산책하고`; `-비` leaves out rainy days.
    func search(_ query: String) throws -> Results<PhotoData> {
        try db.objects(PhotoData.self).search(query, in: \.memo)
    }
}

/// The seed's `PhotoViewModel` behind a collection view: an array kept in
/// step with the database by applying the change sets of a live, sorted
/// `Results` — the deletions, insertions and reloads a
/// `UICollectionView.performBatchUpdates` block would apply.
final class PhotoViewModel {
    private(set) var ids: [String] = []
    private(set) var batches = 0
    private var token: NotificationToken?

    init(photos: Results<PhotoData>) {
        token = photos.observe { [unowned self] change in
            switch change {
            case .initial(let photos):
                ids = photos.map(\.id)
            case .update(let photos, let deletions, let insertions, let modifications):
                for index in deletions.sorted(by: >) { ids.remove(at: index) }
                for index in insertions.sorted() { ids.insert(photos[index].id, at: index) }
                for index in modifications { ids[index] = photos[index].id }  // a cell reload
                batches += 1
            case .error(let error):
                print("PhotoViewModel: \(error)")
            }
        }
    }

    func numberOfItems() -> Int { ids.count }
}

/// Bytes that look like a JPEG: the SOI marker, a JFIF header, noise, EOI.
func fakeJPEG(seed: UInt8, size: Int = 2048) -> Data {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00]
    var state = UInt32(seed) &* 2_654_435_761 | 1
    while bytes.count < size - 2 {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        bytes.append(UInt8(truncatingIfNeeded: state))
    }
    bytes += [0xFF, 0xD9]
    return Data(bytes)
}

func run() async throws {
    let path = CommandLine.arguments.dropFirst().first ?? ".trove-demo/photos.trove"
    let url = URL(fileURLWithPath: path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    print("Photo diary on \(url.path)")

    var store: PhotoStore? = try PhotoStore(fileURL: url)
    let before = store!.fetchAll().count
    print("- found \(before) photo(s) from earlier runs")
    let viewModel = PhotoViewModel(photos: store!.fetchAll())
    var inSync = true
    func checkViewModel() {
        if viewModel.ids != store!.fetchAll().map(\.id) { inSync = false }
    }

    let days = ["2024-05-01", "2024-05-02", "2024-05-03"]
    let memos = ["비 오는 날 산책하고 사진을 찍었다", "친구와 카페에서 커피", "한강 공원에서 산책을 했다. Walk by the river"]
    var saved: [PhotoData] = []
    for (offset, day) in days.enumerated() {
        let photo = try store!.save(
            date: day, memo: memos[offset], image: fakeJPEG(seed: UInt8(offset)), mood: offset == 2 ? .calm : .happy)
        saved.append(photo)
        checkViewModel()
        print("- saved \(photo.id.prefix(8))… for \(day) (\(photo.image?.count ?? 0) bytes of JPEG)")
    }

    print("- all photos, newest first:")
    for photo in store!.fetchAll().prefix(5) {
        print("    \(photo.date)  \(photo.mood.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0))  \(photo.memo)")
    }

    if let found = try store!.fetch(byDate: "2024-05-02") {
        print("- fetch(byDate: 2024-05-02) -> \(found.memo)")
        try store!.update(found, memo: "edited: rain in the afternoon", image: fakeJPEG(seed: 9, size: 1024))
        print("- updated it: memo = \(found.memo), image = \(found.image?.count ?? 0) bytes")
        checkViewModel()
    }

    let doomed = saved[0]
    let doomedID = doomed.id
    try store!.delete(doomed)
    print("- deleted \(doomedID.prefix(8))…; isInvalidated = \(doomed.isInvalidated)")
    checkViewModel()
    print(
        "- view model: \(viewModel.numberOfItems()) item(s) after \(viewModel.batches) change sets, "
            + (inSync ? "always equal to a fresh query" : "OUT OF SYNC"))
    guard inSync else { throw TroveError(.invalidValue, "the view model's array drifted from the database") }

    let countBeforeReopen = store!.fetchAll().count
    store = nil
    let reopened = try PhotoStore(fileURL: url)
    let after = reopened.fetchAll()
    print("- reopened the file: \(after.count) photo(s) (expected \(countBeforeReopen))")
    guard after.count == countBeforeReopen, after.count == before + 2 else {
        throw TroveError(.corruptFile, "the reopened file does not hold what was committed")
    }
    let edited = try reopened.fetch(byDate: "2024-05-02")
    print("- the edit survived: \(edited?.memo ?? "missing")")
    print(
        "- photos by mood: "
            + Mood.allCases.map { mood in
                "\(mood.rawValue) \((try? reopened.db.objects(PhotoData.self).filter("mood == %@", mood).count) ?? 0)"
            }.joined(separator: ", "))
    // The same kind of question as a Foundation #Predicate, answered from the date index.
    let since = "2024-05-02"
    let recent = try reopened.db.objects(PhotoData.self).filter(#Predicate { $0.date >= since && $0.memo.contains("rain") })
    print("- #Predicate date >= \(since) && memo contains \"rain\": \(recent.count) photo(s); plan: \(recent.explain())")
    // Full-text search: every word must occur; Korean words are found with their particles.
    for query in ["산책", "공원 river", "rain*", "-산책"] {
        let hits = try reopened.search(query)
        let shown = hits.prefix(3).map { hits.snippet(for: $0, length: 12)?.marked() ?? $0.memo }
        print("- search \"\(query)\": \(hits.count) photo(s)\(shown.isEmpty ? "" : ": " + shown.joined(separator: " | "))")
    }
    // A frozen snapshot can go to another task; later edits do not change it.
    let frozen = reopened.db.objects(PhotoData.self).sorted(by: \.date).freeze()
    let dates = await Task.detached { frozen.map(\.date) }.value
    print("- frozen snapshot read from a detached task: \(dates.count) photo(s), first \(dates.first ?? "-")")
}

do {
    try await run()
} catch {
    print("PhotoDiary failed: \(error)")
    exit(1)
}
