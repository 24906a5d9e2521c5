import Foundation
import TroveRealm

/// A fresh directory for one test's files.
func realmDirectory(_ name: String = #function) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-realm-tests")
        .appendingPathComponent("\(name.filter(\.isLetter))-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A Realm on a new file in a fresh directory.
func makeRealm(_ name: String = #function, objectTypes: [Object.Type]? = nil) throws -> Realm {
    try Realm(
        configuration: Realm.Configuration(
            fileURL: realmDirectory(name).appendingPathComponent("test.realm"), objectTypes: objectTypes))
}
