import Foundation
import Testing

@testable import Trove

final class PathShelf: Object {
    @Persisted var label = ""
    @Persisted var books = List<PathBook>()
    @Persisted var featured = MutableSet<PathBook>()
    @Persisted var byCode = Map<String, PathBook?>()
    @Persisted var tags = List<String>()
}

final class PathBook: Object {
    @Persisted var title = ""
    @Persisted(originProperty: "books") var shelves: LinkingObjects<PathShelf>
}

/// The property paths key paths name (what sorting, observing and Realm's
/// `_name(for:)` read), through links and collections.
@Suite struct KeyPathTests {
    @Test("a key path through a list, a set, a map or inverse links names the path to the element's property")
    func pathsThroughCollections() {
        #expect(PathShelf.propertyPath(of: \PathShelf.books) == "books")
        #expect(PathShelf.propertyPath(of: \PathShelf.books[0].title) == "books.title")
        #expect(PathShelf.propertyPath(of: \PathShelf.featured[0].title) == "featured.title")
        #expect(PathShelf.propertyPath(of: \PathShelf.byCode[""]??.title) == "byCode.title")
        #expect(PathShelf.propertyPath(of: \PathShelf.tags) == "tags")
        #expect(PathBook.propertyPath(of: \PathBook.shelves[0].label) == "shelves.label")
        #expect(PathBook.propertyPath(of: \PathBook.shelves[0].books[0].title) == "shelves.books.title")
    }

    @Test("objects made after a probe read their own collections: the probe's elements stay with the probe")
    func probesDoNotLeak() throws {
        _ = PathShelf.propertyPath(of: \PathShelf.byCode[""]??.title)
        let shelf = PathShelf()
        #expect(shelf.books.isEmpty && shelf.byCode[""] == nil && shelf.featured.isEmpty)
        let db = try makeDatabase()
        try db.write { try db.add(shelf) }
        #expect(db.objects(PathBook.self).isEmpty)
    }
}
