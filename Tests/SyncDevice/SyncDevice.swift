// One device of the sync convergence test (TroveSyncTests' ConvergenceTests):
// a process that owns one Trove file and a SyncClient and obeys one command
// per line on standard input, answering one line on standard output.
//
//   write SEED N   N random creates, edits, deletes and re-creates in one write
//   sync           one SyncClient.sync(); "ok PUSHED PULLED" or "error …"
//   arm POINT      die with SIGKILL the next time sync() reaches POINT
//   dump           every object, as one line of JSON
//   quit
//
// After every write, and once at start (for a write that committed just
// before a SIGKILL), it appends what the file records of each object it
// touched to its journal: causal length, and per property the value and the
// clock it is ordered by. The test folds every device's journal under the
// rules and compares the fold with every file and the server's table.

import Foundation
import Trove
import TroveStorage
import TroveSync

#if canImport(Glibc)
    import Glibc
#endif

final class Item: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var score = 0
    @Persisted var tag: String?
    @Persisted var tags = List<String>()
    @Persisted var labels = MutableSet<String>()
}

/// One line on standard output, written at once (the test waits for it).
func answer(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

@main
struct SyncDevice {
    static let ids = (0..<10).map { "o\($0)" }

    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 7 else {
            FileHandle.standardError.write(Data("usage: TroveSyncDevice FILE URL TOKEN SPACE JOURNAL NAME\n".utf8))
            exit(2)
        }
        let (file, url, token, space, journalPath, name) = (
            arguments[1], arguments[2], arguments[3], arguments[4], arguments[5], arguments[6]
        )
        let db = try Database(configuration: Configuration(fileURL: URL(fileURLWithPath: file), objectTypes: [Item.self]))
        let client = try SyncClient(
            database: db, configuration: .init(serverURL: url, token: token, space: space, types: ["Item"]))
        if !FileManager.default.fileExists(atPath: journalPath) {
            _ = FileManager.default.createFile(atPath: journalPath, contents: nil)
        }
        let journal = try FileHandle(forWritingTo: URL(fileURLWithPath: journalPath))
        try journal.seekToEnd()

        func record(_ ids: [String]) throws {
            var lines = ""
            for id in ids {
                guard let state = try client.recordedState(ofType: "Item", primaryKey: id) else { continue }
                var properties: [String: Any] = [:]
                if state.cl % 2 == 1, let item = db.object(ofType: Item.self, forPrimaryKey: id) {
                    let values: [(String, Any)] = [
                        ("title", item.title), ("score", String(item.score)), ("tag", item.tag as Any? ?? NSNull()),
                        ("tags", item.tags.joined(separator: ",")),
                    ]
                    for (property, value) in values {
                        if let clock = state.clocks[property] { properties[property] = [value, clock] }
                    }
                    // A set's members: in or out, each under its own clock.
                    for (name, clock) in state.clocks where name.hasPrefix("labels\u{1}") {
                        properties[name] = [state.removed.contains(name) ? "out" : "in", clock]
                    }
                }
                let entry: [String: Any] = ["d": name, "id": id, "cl": state.cl, "p": properties]
                lines += String(
                    decoding: try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys]), as: UTF8.self)
                lines += "\n"
            }
            journal.write(Data(lines.utf8))
        }

        try record(ids)
        answer("ready")
        var armed: String?
        SyncClient.faultPoint = { point in
            if point == armed { kill(getpid(), SIGKILL) }
        }
        while let line = readLine() {
            journal.write(Data("# \(line)\n".utf8))
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "write":
                var random = SeededGenerator(seed: UInt64(words[1]) ?? 0)
                let count = Int(words[2]) ?? 1
                var touched: Set<String> = []
                try db.write {
                    for step in 0..<count {
                        let id = ids[Int(random.next() % UInt64(ids.count))]
                        touched.insert(id)
                        let title = "\(name)-\(words[1])-\(step)"
                        if let item = db.object(ofType: Item.self, forPrimaryKey: id) {
                            let choice = random.next() % 10
                            if choice < 2 {
                                try db.delete(item)
                                continue
                            }
                            if choice < 6 { item.title = title }
                            if choice >= 4 && choice < 8 { item.score = Int(random.next() % 1000) }
                            if choice >= 7 { item.tag = random.next() % 3 == 0 ? nil : "tag-\(title)" }
                            if choice == 3 || choice == 9 { item.tags.append("\(name)\(step)") }
                            if choice == 5 { item.tags.removeAll() }
                            let label = "l\(random.next() % 5)"
                            if random.next() % 2 == 0 { item.labels.insert(label) } else { item.labels.remove(label) }
                        } else {
                            let item = Item()
                            item.id = id
                            item.title = title
                            item.score = Int(random.next() % 1000)
                            item.tag = random.next() % 2 == 0 ? nil : "tag-\(title)"
                            item.labels.insert("l\(random.next() % 5)")
                            try db.add(item)
                        }
                    }
                }
                try record(touched.sorted())
                answer("ok")
            case "sync":
                do {
                    let report = try client.sync()
                    let reasons = report.rejected.map { "\($0.typeName) \($0.primaryKey): \($0.reason)" }
                    answer("ok \(report.pushed) \(report.pulled) \(report.rejected.count) \(reasons.joined(separator: "; "))")
                } catch {
                    answer("error \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
                }
            case "arm":
                armed = words.count > 1 ? words[1] : nil
                answer("ok")
            case "dump":
                var objects: [String: Any] = [:]
                for item in db.objects(Item.self) {
                    objects[item.id] = [
                        "title": item.title, "score": String(item.score), "tag": item.tag as Any? ?? NSNull(),
                        "tags": item.tags.joined(separator: ","), "labels": item.labels.sorted().joined(separator: ","),
                    ]
                }
                answer(
                    String(decoding: try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys]), as: UTF8.self))
            case "quit":
                return
            default:
                answer("error unknown command \(line)")
            }
        }
    }
}
