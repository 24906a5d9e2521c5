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

    /// A token that observes nothing (for an observation that was never
    /// registered: its task was cancelled before it began).
    package init() {
        id = -1
        database = nil
    }

    /// Stops the notifications. Safe to call more than once; returns whether
    /// this call stopped them (false when they were stopped already, or never
    /// began), as Realm's does.
    ///
    /// ```swift
    /// if token.invalidate() { print("stopped") }
    /// ```
    @discardableResult
    public func invalidate() -> Bool {
        guard let database else { return false }
        database.removeObserver(id)
        self.database = nil
        return true
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
