import Foundation
import Testing

@testable import Trove

final class Account: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
}

/// Readers on other threads never see half a transaction: transfers between
/// accounts keep the total constant in every snapshot.
@Suite("Concurrency stress")
struct StressTests {
    static let accounts = 20
    static let total = 20 * 1_000

    /// A bank file with every account holding an equal share of the total.
    static func openBank(_ url: URL) throws {
        let db = try Database(fileURL: url)
        try db.write {
            for id in 0..<accounts {
                let account = Account()
                account.id = id
                account.balance = total / accounts
                try db.add(account)
            }
        }
    }

    @Test("transfers on one thread, snapshots on three: every snapshot adds up")
    func transfersKeepTheTotal() async throws {
        let url = makeTemporaryDirectory().appendingPathComponent("bank.trove")
        try StressTests.openBank(url)
        let transfers = 400
        let readsPerReader = 300
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                let db = try Database(fileURL: url)
                var random = SystemRandomNumberGenerator()
                for _ in 0..<transfers {
                    let from = Int.random(in: 0..<StressTests.accounts, using: &random)
                    let to = (from + Int.random(in: 1..<StressTests.accounts, using: &random)) % StressTests.accounts
                    let amount = Int.random(in: 1...50, using: &random)
                    try db.write {
                        let source = db.object(ofType: Account.self, forPrimaryKey: from)!
                        let target = db.object(ofType: Account.self, forPrimaryKey: to)!
                        source.balance -= amount
                        target.balance += amount
                    }
                }
                return transfers
            }
            for _ in 0..<3 {
                group.addTask {
                    let db = try Database(fileURL: url)
                    var checked = 0
                    for _ in 0..<readsPerReader {
                        db.refresh()
                        let sum = db.objects(Account.self).sum(of: \.balance)
                        let count = db.objects(Account.self).count
                        #expect(sum == StressTests.total, "a snapshot saw half a transfer: total \(sum)")
                        #expect(count == StressTests.accounts)
                        checked += 1
                    }
                    return checked
                }
            }
            var operations = 0
            for try await done in group { operations += done }
            #expect(operations == transfers + 3 * readsPerReader)
        }
        let db = try Database(fileURL: url)
        #expect(db.objects(Account.self).sum(of: \.balance) == StressTests.total)
        expectValid(db)
    }

    @Test("a reader in another process sees whole transfers while this one writes")
    func anotherProcessReads() async throws {
        let url = makeTemporaryDirectory().appendingPathComponent("bank2.trove")
        try StressTests.openBank(url)
        setenv("TROVE_BANK_FILE", url.path, 1)
        let writer = Task.detached {
            let db = try Database(fileURL: url)
            var random = SystemRandomNumberGenerator()
            for _ in 0..<300 {
                let from = Int.random(in: 0..<StressTests.accounts, using: &random)
                let to = (from + 1) % StressTests.accounts
                try db.write {
                    db.object(ofType: Account.self, forPrimaryKey: from)!.balance -= 7
                    db.object(ofType: Account.self, forPrimaryKey: to)!.balance += 7
                }
            }
        }
        // The child exits with 0 only if every one of its snapshots added up.
        await #expect(processExitsWith: .success) {
            let path = String(cString: getenv("TROVE_BANK_FILE"))
            let db = try! Database(fileURL: URL(fileURLWithPath: path))
            for _ in 0..<400 {
                db.refresh()
                if db.objects(Account.self).sum(of: \.balance) != StressTests.total { exit(3) }
            }
            exit(0)
        }
        try await writer.value
        let db = try Database(fileURL: url)
        #expect(db.objects(Account.self).sum(of: \.balance) == StressTests.total)
    }

    @Test("three reader processes and a writer process beside a writer here: every snapshot adds up, no transfer is lost")
    func severalProcesses() async throws {
        let url = makeTemporaryDirectory().appendingPathComponent("bank3.trove")
        try StressTests.openBank(url)
        setenv("TROVE_BANK3_FILE", url.path, 1)
        let local = Task.detached {
            let db = try Database(fileURL: url)
            for index in 0..<200 {
                try db.write {
                    db.object(ofType: Account.self, forPrimaryKey: index % StressTests.accounts)!.balance -= 3
                    db.object(ofType: Account.self, forPrimaryKey: (index + 5) % StressTests.accounts)!.balance += 3
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    // A reader: exits with 0 only if each of its snapshots adds up.
                    await #expect(processExitsWith: .success) {
                        let db = try! Database(fileURL: URL(fileURLWithPath: String(cString: getenv("TROVE_BANK3_FILE"))))
                        for _ in 0..<300 {
                            db.refresh()
                            if db.objects(Account.self).sum(of: \.balance) != StressTests.total { exit(3) }
                        }
                        exit(0)
                    }
                }
            }
            group.addTask {
                // A writer in another process, contending for LMDB's writer lock with the one here.
                await #expect(processExitsWith: .success) {
                    let db = try! Database(fileURL: URL(fileURLWithPath: String(cString: getenv("TROVE_BANK3_FILE"))))
                    for index in 0..<200 {
                        try! db.write {
                            db.object(ofType: Account.self, forPrimaryKey: (index * 7) % StressTests.accounts)!.balance += 11
                            db.object(ofType: Account.self, forPrimaryKey: (index * 7 + 1) % StressTests.accounts)!.balance -= 11
                        }
                    }
                    exit(0)
                }
            }
        }
        try await local.value
        let db = try Database(fileURL: url)
        // Every transfer of both writers landed: each balance is what all of them add up to.
        var expected = Array(repeating: StressTests.total / StressTests.accounts, count: StressTests.accounts)
        for index in 0..<200 {
            expected[index % StressTests.accounts] -= 3
            expected[(index + 5) % StressTests.accounts] += 3
            expected[(index * 7) % StressTests.accounts] += 11
            expected[(index * 7 + 1) % StressTests.accounts] -= 11
        }
        #expect(db.objects(Account.self).sorted(by: \.id).map(\.balance) == expected)
        expectValid(db)
    }
}
