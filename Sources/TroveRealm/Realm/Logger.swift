import Foundation
import Trove
import TroveStorage

/// How much a ``Logger`` reports, from nothing to everything (Realm's `LogLevel`).
public enum LogLevel: Int, Sendable, Comparable {
    case off, fatal, error, warn, info, detail, debug, trace, all

    /// Orders levels from the quietest (`off`) to the most talkative (`all`).
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where TroveRealm reports what it does (Realm's `Logger`): opening Realms
/// (`detail`), the handle each uses (`trace`) and commits (`debug`), as
/// lines starting with `DB:`. ``shared`` receives them; by default it writes
/// warnings and worse to standard error.
///
/// ```swift
/// Logger.shared = Logger(level: .detail) { level, message in print(level, message) }
/// ```
public final class Logger: @unchecked Sendable {
    private let lock = NSLock()
    private var currentLevel: LogLevel
    private let function: (LogLevel, String) -> Void

    /// A logger that passes every message at `level` or more important to `logFunction`.
    ///
    /// ```swift
    /// let logger = Logger(level: .info) { level, message in os_log("%@", message) }
    /// ```
    public init(level: LogLevel, logFunction: @escaping (LogLevel, String) -> Void) {
        currentLevel = level
        function = logFunction
    }

    /// The least important level reported; change it at any time.
    ///
    /// ```swift
    /// Logger.shared.level = .trace
    /// ```
    public var level: LogLevel {
        get { lock.withLock { currentLevel } }
        set { lock.withLock { currentLevel = newValue } }
    }

    /// Reports `message` if `level` is at least as important as ``level``.
    ///
    /// ```swift
    /// Logger.shared.log(level: .info, "imported 120 photos")
    /// ```
    public func log(level: LogLevel, _ message: @autoclosure () -> String) {
        guard level != .off, level != .all, level <= self.level else { return }
        function(level, message())
    }

    private static let current = Locked(
        Logger(level: .warn) { _, message in FileHandle.standardError.write(Data("\(message)\n".utf8)) })

    /// The logger TroveRealm reports to.
    ///
    /// ```swift
    /// Logger.shared = Logger(level: .detail) { level, message in print(message) }
    /// ```
    public static var shared: Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
