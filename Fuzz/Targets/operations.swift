// libFuzzer target: bytes become a sequence of operations on a database
// (add, update, delete, commit, cancel, refresh, reopen); afterwards the
// file must verify and hold exactly what the committed operations left.
import Foundation

@testable import Trove

final class FuzzItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var tag = ""
    @Persisted var size: Int?
}

private let directory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOperations(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let url = directory.appendingPathComponent("ops.trove")
    try? FileManager.default.removeItem(at: url)
    try? FileManager.default.removeItem(atPath: url.path + "-lock")
    var db: Database? = try! Database(fileURL: url)
    var committed: [Int: String] = [:]
    var pending: [Int: String] = [:]
    for byte in UnsafeBufferPointer(start: data, count: size) {
        let id = Int(byte & 0x0F)
        let tag = "t\(byte >> 6)"
        switch byte >> 4 & 0x7 {
        case 0:
            if db!.isInWriteTransaction { break }
            try! db!.beginWrite()
            pending = committed
        case 1, 2:
            guard db!.isInWriteTransaction else { break }
            let item = FuzzItem()
            item.id = id
            item.tag = tag
            try! db!.add(item, update: .modified)
            pending[id] = tag
        case 3:
            guard db!.isInWriteTransaction, let item = db!.object(ofType: FuzzItem.self, forPrimaryKey: id) else { break }
            item.tag = tag + "x"
            item.size = Int(byte)
            pending[id] = tag + "x"
        case 4:
            guard db!.isInWriteTransaction, let item = db!.object(ofType: FuzzItem.self, forPrimaryKey: id) else { break }
            try! db!.delete(item)
            pending[id] = nil
        case 5:
            guard db!.isInWriteTransaction else { break }
            try! db!.commitWrite()
            committed = pending
        case 6:
            db!.cancelWrite()
        default:
            if db!.isInWriteTransaction { db!.cancelWrite() }
            db = nil
            db = try! Database(fileURL: url)
        }
    }
    if db!.isInWriteTransaction { db!.cancelWrite() }
    db!.refresh()
    let report = try! db!.verify()
    precondition(report.isValid, "\(report)")
    let stored = Dictionary(uniqueKeysWithValues: db!.objects(FuzzItem.self).map { ($0.id, $0.tag) })
    precondition(stored == committed, "stored \(stored), committed \(committed)")
    return 0
}
