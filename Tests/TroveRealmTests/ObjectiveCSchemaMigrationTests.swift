import Foundation
import Testing
import TroveRealm

/// An old version of a model, written through Realm's Objective-C schema classes.
private func writeOldPostcards(to url: URL) throws {
    let greeting = RLMProperty(
        name: "text", type: .string, objectClassName: nil, linkOriginPropertyName: nil, indexed: false, optional: false)
    let configuration = RLMRealmConfiguration()
    configuration.fileURL = url
    configuration.customSchema = RLMSchema()
    configuration.customSchema?.objectSchema = [
        RLMObjectSchema(className: "Postcard", objectClass: Object.self, properties: [greeting])
    ]
    let old = try RLMRealm(configuration: configuration)
    try old.transaction {
        old.createObject("Postcard", withValue: ["hello"])
        old.createObject("Postcard", withValue: ["bye"])
    }
    #expect(old.schema.schema(forClassName: "Postcard")?.properties.map(\.name) == ["text"])
}

@Suite("Migrations as Realm runs them")
struct MigrationAsRealmRunsItTests {
    @Test("a file with a schema of its own migrates to the program's classes: rename, deleteData, every class carried")
    func customSchemaToModel() throws {
        let url = realmDirectory().appendingPathComponent("old.realm")
        try writeOldPostcards(to: url)
        let config = Realm.Configuration(fileURL: url, schemaVersion: 1) { migration, oldVersion in
            #expect(oldVersion == 0)
            #expect(migration.oldSchema["Postcard"]?["text"]?.type == .string)
            #expect(migration.newSchema.objectSchema.count > 1)  // every model class of the program
            migration.renameProperty(onType: "Postcard", from: "text", to: "greeting")
            #expect(!migration.deleteData(forType: "NoSuchType"))
        }
        try Realm.performMigration(for: config)
        let realm = try Realm(configuration: config)
        #expect(realm.objects(Postcard.self).map(\.greeting).sorted() == ["bye", "hello"])
        #expect(realm.schema["Dog"] != nil)  // created by the migration, empty
    }

    @Test("asyncOpen migrates and calls back on its queue; a cancelled one does not call back")
    func asyncOpen() throws {
        let url = realmDirectory().appendingPathComponent("async.realm")
        try writeOldPostcards(to: url)
        let config = Realm.Configuration(fileURL: url, schemaVersion: 1) { migration, _ in
            migration.enumerateObjects(ofType: "Postcard") { old, new in new?["greeting"] = old?["text"] }
        }
        let queue = DispatchQueue(label: "open")
        let opened = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var count = -1
        Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
            count = (try? result.get())?.objects(Postcard.self).count ?? -2
            opened.signal()
        }
        opened.wait()
        #expect(count == 2)
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // the queue is busy until the task is cancelled
        let cancelled = Realm.asyncOpen(configuration: config, callbackQueue: queue) { _ in count = 99 }
        cancelled.cancel()
        gate.signal()
        queue.sync {}
        #expect(count == 2)
    }
}
