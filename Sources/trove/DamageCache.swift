import Trove

/// The damaged objects of each type of a file, as of the commit its handle
/// shows: found once per type and commit (finding them reads every object
/// of the type), for the tools that leave them out of what they read.
final class DamageCache {
    private let db: Database
    private var found: [String: DamagedObjects] = [:]
    private var commit = -1

    init(_ db: Database) { self.db = db }

    func callAsFunction(_ type: String) throws -> DamagedObjects {
        if commit != db.visibleCommit {
            found.removeAll()
            commit = db.visibleCommit
        }
        if let known = found[type] { return known }
        let damaged = try db.damagedObjects(ofType: type)
        found[type] = damaged
        return damaged
    }
}
