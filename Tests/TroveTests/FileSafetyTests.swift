import Foundation
import Testing
import TroveTestSupport

@testable import Trove

#if canImport(Glibc)
    import Glibc
#endif

private func mode(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_mode & 0o777) : -1
}

private func memo(_ id: Int, _ text: String = "") -> MemoV1.Memo {
    let memo = MemoV1.Memo()
    memo.id = id
    memo.text = text
    return memo
}

/// Permissions of the files Trove makes and replaces, and copies that never
/// follow a link at their destination.
@Suite struct FileSafetyTests {
    @Test("filePermissions 0o600 makes the file and its lock file private, and narrows an existing file")
    func privateFiles() throws {
        let directory = makeTemporaryDirectory()
        var configuration = Configuration(fileURL: directory.appendingPathComponent("private.trove"))
        configuration.filePermissions = 0o600
        do { _ = try Database(configuration: configuration) }
        #expect(mode(configuration.fileURL.path) == 0o600)
        #expect(mode(configuration.fileURL.path + "-lock") == 0o600)

        let shared = directory.appendingPathComponent("was-shared.trove")
        do { _ = try Database(fileURL: shared) }
        chmod(shared.path, 0o644)
        chmod(shared.path + "-lock", 0o644)
        configuration.fileURL = shared
        do { _ = try Database(configuration: configuration) }
        #expect(mode(shared.path) == 0o600)
        #expect(mode(shared.path + "-lock") == 0o600)
        configuration.readOnly = true  // never changes the file, its mode included
        chmod(shared.path, 0o640)
        do { _ = try Database(configuration: configuration) }
        #expect(mode(shared.path) == 0o640)
    }

    @Test("an in-memory database's file and lock file are readable by this user only")
    func inMemoryFilesArePrivate() throws {
        var configuration = Configuration()
        configuration.inMemoryIdentifier = "private-\(UUID().uuidString)"
        let db = try Database(configuration: configuration)
        try db.write { try db.add(memo(1)) }
        #expect(mode(configuration.fileURL.path) == 0o600)
        #expect(mode(configuration.fileURL.path + "-lock") == 0o600)
    }

    @Test("compaction on launch and both writeCopy forms keep a 0o600 file's mode")
    func copiesKeepTheMode() throws {
        let directory = makeTemporaryDirectory()
        let url = directory.appendingPathComponent("diary.trove")
        do {
            let db = try Database(fileURL: url)
            try db.write { for id in 1...3_000 { try db.add(memo(id, String(repeating: "x", count: 100))) } }
            try db.write { try db.delete(db.objects(MemoV1.Memo.self).filter("id > 10")) }
        }
        chmod(url.path, 0o600)
        let before = mode(url.path)
        var configuration = Configuration(fileURL: url)
        configuration.shouldCompactOnLaunch = { _, _ in true }
        let size = { (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0 }
        let sizeBefore = size()
        let db = try Database(configuration: configuration)
        #expect(size() < sizeBefore)
        #expect(mode(url.path) == before)
        let copy = directory.appendingPathComponent("copy.trove")
        try db.writeCopy(to: copy)
        #expect(mode(copy.path) == 0o600)
        let sealed = directory.appendingPathComponent("sealed.trove")
        try db.writeCopy(to: sealed, encryptionKey: Data(repeating: 7, count: 64))
        #expect(mode(sealed.path) == 0o600)
    }

    @Test("writeCopy refuses a destination that is a link, even a dangling one, and creates nothing through it")
    func copiesDoNotFollowLinks() throws {
        let directory = makeTemporaryDirectory()
        let db = try Database(fileURL: directory.appendingPathComponent("source.trove"))
        try db.write { try db.add(memo(1, "secret")) }
        let target = directory.appendingPathComponent("elsewhere.trove")
        let link = directory.appendingPathComponent("link.trove")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        let plain = expectTroveError(.fileAccess) { try db.writeCopy(to: link) }
        #expect(plain?.message.contains("the destination exists") == true)
        let sealed = expectTroveError(.fileAccess) { try db.writeCopy(to: link, encryptionKey: Data(repeating: 1, count: 64)) }
        #expect(sealed?.message.contains("the destination exists") == true)
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(!FileManager.default.fileExists(atPath: link.path + ".partial"))
    }
}

/// A file system of `megabytes` in a fresh directory (tmpfs; mounting needs root).
private final class SmallFileSystem {
    let directory: URL

    init?(megabytes: Int) {
        guard geteuid() == 0 else { return nil }
        directory = makeTemporaryDirectory("smallfs")
        let mount = try? ChildProcess.run(
            "/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", directory.path])
        guard mount?.ending == .exited(0) else { return nil }
    }

    deinit {
        _ = try? ChildProcess.run("/bin/umount", ["-l", directory.path])
    }
}

@Suite struct FullDiskTests {
    @Test(
        "a commit that fills the disk throws diskFull, not an I/O error, and the last commit stays whole",
        .enabled(if: geteuid() == 0, "mounting a small file system needs root (CI runs as root)"))
    func aFullDiskIsReportedAsDiskFull() throws {
        let disk = try #require(SmallFileSystem(megabytes: 4))
        let url = disk.directory.appendingPathComponent("full.trove")
        var committed = 0
        var failure: TroveError?
        do {
            let db = try Database(fileURL: url)
            for round in 1...200 {
                do {
                    try db.write {
                        let row = AllTypes()
                        row.id = round
                        row.data = Data(repeating: UInt8(round % 251), count: 150_000)
                        row.string = "round \(round)"
                        try db.add(row)
                    }
                    committed = round
                } catch let error as TroveError {
                    failure = error
                    break
                }
            }
            let error = try #require(failure, "4 MB filled without an error")
            #expect(error.kind == .diskFull, "\(error)")
            #expect(error.message.contains("the disk is full"), "\(error.message)")
            #expect(db.objects(AllTypes.self).count == committed)
        }
        #expect(committed > 3)
        let reopened = try Database(fileURL: url)
        #expect(reopened.objects(AllTypes.self).count == committed)
        #expect(try reopened.objects(AllTypes.self).filter("string == %@", "round \(committed)").first?.data.count == 150_000)
        expectValid(reopened)
    }
}
