import Foundation

extension Database {
    /// Writes a compacted copy of the database to `url` (which must not exist):
    /// a consistent snapshot, without the free pages, ready to be opened or shipped.
    ///
    /// ```swift
    /// try db.writeCopy(to: backupURL)
    /// ```
    public func writeCopy(to url: URL) throws {
        try environment.copy(to: url.path, compact: true)
    }
}
