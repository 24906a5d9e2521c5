import Foundation
import Testing
import TroveRealm

/// What a logger received.
private final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(LogLevel, String)] = []
    func add(_ level: LogLevel, _ line: String) { lock.withLock { lines.append((level, line)) } }
    func take() -> [(LogLevel, String)] {
        lock.withLock {
            defer { lines = [] }
            return lines
        }
    }
}

@Suite("Logger")
struct LoggerTests {
    @Test("Logger.shared hears Realm opens at detail and trace and commits at debug, filtered by its level")
    func levels() throws {
        let previous = Logger.shared
        defer { Logger.shared = previous }
        let lines = Lines()
        let logger = Logger(level: .off) { level, message in lines.add(level, message) }
        Logger.shared = logger
        let url = realmDirectory().appendingPathComponent("logged-\(UUID().uuidString).realm")
        let path = url.standardizedFileURL.path
        func mine() -> [(LogLevel, String)] { lines.take().filter { $0.1.contains(path) } }

        _ = try Realm(configuration: Realm.Configuration(fileURL: url))
        #expect(mine().isEmpty)

        logger.level = .detail
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url))
        let detail = mine()
        #expect(!detail.isEmpty && detail.allSatisfy { $0.0 == .detail && $0.1.hasPrefix("DB: ") })

        logger.level = .trace
        _ = try Realm(configuration: Realm.Configuration(fileURL: url))
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let levels = Set(mine().map(\.0))
        #expect(levels == [.detail, .trace, .debug])
        #expect(Logger.shared.level == .trace)
    }
}
