import Foundation
import TroveRealm
import XCTest

/// A Realm opened by plain code on the main thread (as XCTest runs a test
/// method, and as UIKit code opens one) behaves as Realm's main-thread
/// Realm: another thread's commit reaches it, and its observers, while the
/// main run loop turns.
final class MainThreadRealmTests: XCTestCase {
    func testBackgroundCommitReachesMainThreadObservers() throws {
        try XCTSkipUnless(Thread.isMainThread, "XCTest runs this method on the main thread")
        let configuration = Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("main.realm"))
        let realm = try Realm(configuration: configuration)
        let dogs = realm.objects(Dog.self)
        let changed = expectation(description: "an update from the other thread")
        var inserted: [Int] = []
        let token = dogs.observe { change in
            if case .update(_, _, let insertions, _) = change {
                inserted = insertions
                changed.fulfill()
            }
        }
        let url = configuration.fileURL
        DispatchQueue.global().async {
            let background = try! Realm(configuration: Realm.Configuration(fileURL: url))
            try! background.write { background.add(Dog(value: ["Rex", 3])) }
        }
        wait(for: [changed], timeout: 10)
        XCTAssertEqual(inserted, [0])
        XCTAssertEqual(dogs.count, 1)
        token.invalidate()
    }

    func testRealmObserverIsNotCalledWithoutACommit() throws {
        try XCTSkipUnless(Thread.isMainThread, "XCTest runs this method on the main thread")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: realmDirectory().appendingPathComponent("quiet.realm")))
        let called = expectation(description: "no notification without a commit")
        called.isInverted = true
        let token = realm.observe { _, _ in called.fulfill() }
        wait(for: [called], timeout: 0.5)
        token.invalidate()
    }
}
