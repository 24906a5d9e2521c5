import Foundation
import Testing

@testable import Trove

/// A fresh directory for one test's files.
func makeTemporaryDirectory(_ name: String = #function) -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("trove-tests")
        .appendingPathComponent("\(safe)-\(UUID().uuidString.prefix(8))")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The key every test database is encrypted with when the suite runs with
/// `TROVE_TEST_ENCRYPTED=1` (`make test`'s third pass): the suite's
/// behaviour on files whose keys are tokens and whose values are sealed.
let suiteEncryptionKey: Data? =
    ProcessInfo.processInfo.environment["TROVE_TEST_ENCRYPTED"] == "1" ? Data((0..<64).map { UInt8($0 * 7 % 256) }) : nil

/// A database on a new file in a fresh directory (GRDB's `makeDatabaseQueue()`).
func makeDatabase(
    _ name: String = #function, configure: (inout Configuration) -> Void = { _ in }
) throws -> Database {
    var configuration = Configuration(fileURL: makeTemporaryDirectory(name).appendingPathComponent("test.trove"))
    configuration.encryptionKey = suiteEncryptionKey
    configure(&configuration)
    return try Database(configuration: configuration)
}

/// Checks that `body` throws a ``TroveError`` of `kind`; returns it for more checks.
@discardableResult
func expectTroveError<R>(_ kind: TroveError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R)
    -> TroveError?
{
    do {
        _ = try body()
    } catch let error as TroveError {
        if error.kind == kind { return error }
        Issue.record("expected TroveError.\(kind), got \(error)", sourceLocation: sourceLocation)
        return nil
    } catch {
        Issue.record("expected TroveError.\(kind), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected TroveError.\(kind), nothing was thrown", sourceLocation: sourceLocation)
    return nil
}

/// Runs the invariant checker over the whole file and records every problem.
func expectValid(_ db: Database, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let report = try db.verify()
        #expect(report.isValid, "\(report)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("verify() failed: \(error)", sourceLocation: sourceLocation)
    }
}
