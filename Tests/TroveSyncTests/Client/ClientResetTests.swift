import Foundation
import Testing
import Trove

@testable import TroveSync

/// A device that fell behind the server's retention window, and devices of
/// a server restored from a dump, read the space again ("client reset")
/// and keep what they changed and had not sent.
@Suite("Client reset")
struct ClientResetTests {
    typealias Device = SyncClientTests.Device

    /// The notes of `device` and the live rows of the server, which must agree.
    static func check(_ devices: [Device], _ server: TestSyncServer, equal expected: [String]) throws {
        for device in devices {
            #expect(SyncClientTests.notes(device.db) == expected, "\(device.db.path)")
            #expect(device.client.pendingChanges == 0)
        }
        let rows = try server.owner.query(
            "SELECT id, title, score FROM trove_data.\"SyncNote\" WHERE trove_space = 'diary' AND trove_cl % 2 = 1 ORDER BY id")
        #expect(rows.map { "\($0[0]!)|\($0[1] ?? "")|\($0[2] ?? "0")|-" } == expected)
    }

    static func edit(_ id: String, _ device: Device, _ change: (SyncNote) -> Void) throws {
        try device.db.write { change(device.db.object(ofType: SyncNote.self, forPrimaryKey: id)!) }
    }

    @Test("behind the retention window: a delete whose tombstone was purged is not undone, and offline edits survive")
    func pastRetention() throws {
        try SyncClientTests.withTwoDevices { server, a, b in
            for id in ["n1", "n2", "n3"] { try SyncClientTests.addNote(id, title: id, a) }
            try a.client.sync()
            try b.client.sync()
            try a.db.write { try a.db.delete(a.db.object(ofType: SyncNote.self, forPrimaryKey: "n1")!) }
            try a.client.sync()
            // b is offline for longer than the server keeps tombstones, and edits.
            try Self.edit("n2", b) { $0.title = "edited offline" }
            try SyncClientTests.addNote("n4", title: "made offline", b)
            try server.owner.query("BEGIN")
            try server.owner.query("SELECT set_config('trove_sync.applying', 'on', true)")
            try server.owner.query(
                "UPDATE trove_data.\"SyncNote\" SET trove_changed = now() - interval '40 days' WHERE trove_cl % 2 = 0")
            try server.owner.query("COMMIT")
            #expect(try server.owner.query("SELECT trove_sync.purge_tombstones()") == [["1"]])

            let report = try b.client.sync()
            #expect(report.bootstrapped, "\(report)")
            #expect(report.rejected.isEmpty)
            try a.client.sync()
            try Self.check([a, b], server, equal: ["n2|edited offline|0|-", "n3|n3|0|-", "n4|made offline|0|-"])
        }
    }

    @Test("after a restore from a dump: every device reads the space again, and the server gets back what it lost")
    func restoredFromDump() throws {
        try SyncClientTests.withTwoDevices { server, a, b in
            for id in ["n1", "n2"] { try SyncClientTests.addNote(id, title: id, a) }
            try a.client.sync()
            try b.client.sync()
            let dump = try server.postgres.dumpSync()
            // After the backup: a deletes n1, edits n2, makes n3; b receives all of it.
            try a.db.write { try a.db.delete(a.db.object(ofType: SyncNote.self, forPrimaryKey: "n1")!) }
            try Self.edit("n2", a) { $0.title = "after the backup" }
            try SyncClientTests.addNote("n3", title: "after the backup", a)
            try a.client.sync()
            try b.client.sync()
            #expect(SyncClientTests.notes(b.db) == ["n2|after the backup|0|-", "n3|after the backup|0|-"])

            // The server is restored from the backup, which knows none of it; b edits offline meanwhile.
            try server.postgres.restoreSync(from: dump)
            #expect(try server.owner.query("SELECT trove_sync.new_epochs()") == [["1"]])
            try Self.edit("n3", b) { $0.score = 7 }

            let first = try b.client.sync()
            #expect(first.bootstrapped && first.rejected.isEmpty, "\(first)")
            let second = try a.client.sync()
            #expect(second.bootstrapped && second.rejected.isEmpty, "\(second)")
            try b.client.sync()
            try Self.check([a, b], server, equal: ["n2|after the backup|0|-", "n3|after the backup|7|-"])
        }
    }
}
