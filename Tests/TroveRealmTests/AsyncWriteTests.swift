import Foundation
import Testing
import TroveRealm

/// An actor with its own Realm, writing asynchronously.
actor DogKeeper {
    private var opened: Realm?
    private let url: URL
    init(url: URL) { self.url = url }

    /// Opened inside the actor, so the Realm belongs to it (as `Realm(actor:)` does).
    private var realm: Realm {
        if let opened { return opened }
        let realm = try! Realm(configuration: Realm.Configuration(fileURL: url))
        opened = realm
        return realm
    }

    /// Starts a write, checks it has not run yet, then waits for its completion.
    func addLater(_ name: String) async -> (ranBeforeReturning: Bool, pendingRightAfter: Bool, error: String?) {
        let before = realm.objects(Dog.self).count
        let result: (Bool, String?) = await withCheckedContinuation { continuation in
            realm.writeAsync(
                { self.realm.add(Dog(value: ["name": name])) },
                onComplete: { error in continuation.resume(returning: (true, error.map { "\($0)" })) })
            let ranAlready = self.realm.objects(Dog.self).count != before
            let pending = self.realm.isPerformingAsynchronousWriteOperations
            self.checks.append((ranAlready, pending))
        }
        let check = checks.removeLast()
        return (check.0, check.1, result.1)
    }

    private var checks: [(Bool, Bool)] = []

    func count() -> Int { realm.objects(Dog.self).count }
}

/// An actor that opens its Realm the way Realm 10 apps do.
actor ActorImporter {
    func importDogs(_ names: [String], url: URL) async throws -> Int {
        let realm = try await Realm(configuration: Realm.Configuration(fileURL: url), actor: self)
        try realm.write { for name in names { realm.add(Dog(value: ["name": name])) } }
        return realm.objects(Dog.self).count
    }
}

/// Scenarios of queued asynchronous writes on the keeper's Realm.
extension DogKeeper {
    func names() -> [String] { realm.objects(Dog.self).map(\.name).sorted() }

    /// Waits until the queued writes and their completions have run.
    func settle() async {
        for _ in 0..<100 where realm.isPerformingAsynchronousWriteOperations { await Task.yield() }
        for _ in 0..<10 { await Task.yield() }
    }

    /// beginAsyncWrite whose block commits with commitAsyncWrite, calling back later.
    func beginThenCommit() async -> (completed: Bool, error: String?) {
        await withCheckedContinuation { continuation in
            realm.beginAsyncWrite {
                self.realm.add(Dog(value: ["name": "Rex"]))
                self.realm.commitAsyncWrite { error in continuation.resume(returning: (true, error.map { "\($0)" })) }
            }
        }
    }

    /// A block that neither commits nor cancels has its changes discarded.
    func beginWithoutCommit() async {
        realm.beginAsyncWrite { self.realm.add(Dog(value: ["name": "Lost"])) }
        await settle()
    }

    /// A cancelled write never runs, nor does its completion.
    func cancelBeforeRunning() async -> Bool {
        var completed = false
        let id = realm.writeAsync({ self.realm.add(Dog(value: ["name": "Never"])) }, onComplete: { _ in completed = true })
        try! realm.cancelAsyncWrite(id)
        await settle()
        return completed
    }

    /// A synchronous write runs the asynchronous writes queued before it, first.
    func syncAfterQueued() -> [String] {
        realm.writeAsync { self.realm.add(Dog(value: ["name": "A"])) }
        realm.writeAsync { self.realm.add(Dog(value: ["name": "B"])) }
        try! realm.write {
            // By now the queued writes have committed, in order.
            self.realm.add(Dog(value: ["name": "C\(self.realm.objects(Dog.self).count)"]))
        }
        return names()
    }

    /// beginWrite, then commitAsyncWrite outside any queued block.
    func commitAsyncAfterBeginWrite() async -> Bool {
        await withCheckedContinuation { continuation in
            realm.beginWrite()
            realm.add(Dog(value: ["name": "Manual"]))
            realm.commitAsyncWrite { error in continuation.resume(returning: error == nil) }
        }
    }
}

@Suite("writeAsync")
struct AsyncWriteTests {
    private func url(_ name: String = #function) -> URL { realmDirectory(name).appendingPathComponent("a.realm") }

    @Test("in an actor, writeAsync returns at once and commits later, then calls onComplete on the actor")
    func inAnActor() async throws {
        let keeper = DogKeeper(url: url())
        let first = await keeper.addLater("Rex")
        #expect(!first.ranBeforeReturning)
        #expect(first.pendingRightAfter)
        #expect(first.error == nil)
        _ = await keeper.addLater("Bo")
        #expect(await keeper.count() == 2)
    }

    @Test("beginAsyncWrite runs its block later; commitAsyncWrite commits and calls back")
    func beginAndCommit() async {
        let scenario = DogKeeper(url: url())
        let result = await scenario.beginThenCommit()
        #expect(result.completed)
        #expect(result.error == nil)
        #expect(await scenario.names() == ["Rex"])
    }

    @Test("a beginAsyncWrite block that does not commit has its changes discarded")
    func beginWithoutCommit() async {
        let scenario = DogKeeper(url: url())
        await scenario.beginWithoutCommit()
        #expect(await scenario.names() == [])
    }

    @Test("cancelAsyncWrite drops a queued write and its completion")
    func cancelQueued() async {
        let scenario = DogKeeper(url: url())
        #expect(await scenario.cancelBeforeRunning() == false)
        #expect(await scenario.names() == [])
    }

    @Test("a synchronous write first runs the asynchronous writes queued before it")
    func syncWaitsForQueued() async {
        let scenario = DogKeeper(url: url())
        #expect(await scenario.syncAfterQueued() == ["A", "B", "C2"])
    }

    @Test("commitAsyncWrite commits a write begun with beginWrite")
    func commitAsyncOfBeginWrite() async {
        let scenario = DogKeeper(url: url())
        #expect(await scenario.commitAsyncAfterBeginWrite())
        #expect(await scenario.names() == ["Manual"])
    }

    @Test("Realm(actor:) opens a Realm that belongs to the actor")
    func realmOfAnActor() async throws {
        #expect(try await ActorImporter().importDogs(["Rex", "Bo"], url: url()) == 2)
    }

    @Test("outside actors and the main queue, writeAsync writes before it returns and reports success")
    func plainThread() throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url()))
        guard !Thread.isMainThread else { return }  // (the test runner's main thread has a main queue)
        var calls: [String] = []
        realm.writeAsync({ realm.add(Dog(value: ["name": "Bo"])) }, onComplete: { error in calls.append("\(error == nil)") })
        #expect(calls == ["true"])
        #expect(realm.objects(Dog.self).count == 1)
        #expect(!realm.isPerformingAsynchronousWriteOperations)
    }

    @Test("asyncWrite shows an asynchronous write while it runs; a cancelled task throws CancellationError and writes nothing")
    func asyncWriteAndCancellation() async throws {
        let fileURL = url()
        let wrote = try await Task { @MainActor in
            let realm = try await Realm(configuration: Realm.Configuration(fileURL: fileURL), actor: MainActor.shared)
            var duringWrite = false
            try await realm.asyncWrite {
                duringWrite = realm.isPerformingAsynchronousWriteOperations
                realm.add(Dog(value: ["name": "Rex"]))
            }
            return duringWrite && !realm.isPerformingAsynchronousWriteOperations
        }.value
        #expect(wrote)
        let cancelled = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            let realm = try await Realm(configuration: Realm.Configuration(fileURL: fileURL), actor: MainActor.shared)
            try await realm.asyncWrite { realm.add(Dog(value: ["name": "Bo"])) }
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: fileURL))
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
    }
}
