/// Keeps a change observer registered; ``invalidate()`` (or releasing the
/// token) stops it.
///
/// ```swift
/// let token = results.observe { change in ... }
/// // later
/// token.invalidate()
/// ```
public final class NotificationToken {
    let id: Int
    weak var database: Database?

    init(id: Int, database: Database) {
        self.id = id
        self.database = database
    }

    /// Stops the notifications. Safe to call more than once.
    public func invalidate() {
        database?.removeObserver(id)
        database = nil
    }

    deinit {
        database?.removeObserver(id)
    }
}

/// One registered observer: brings its view of the database up to date and,
/// unless told not to, reports what changed.
protocol ChangeObserver: AnyObject {
    func update(in database: Database, notify: Bool)
}
