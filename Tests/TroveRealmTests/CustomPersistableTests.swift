import Foundation
import Testing
import TroveRealm

/// A temperature kept as a Double.
struct Celsius: CustomPersistable {
    typealias PersistedType = Double
    var degrees: Double
    init(_ degrees: Double) { self.degrees = degrees }
    init(persistedValue: Double) { degrees = persistedValue }
    var persistableValue: Double { degrees }
}

/// A tag kept as a String, refusing the empty one.
struct Label: FailableCustomPersistable, Hashable {
    typealias PersistedType = String
    let persistableValue: String
    init?(persistedValue: String) {
        guard !persistedValue.isEmpty else { return nil }
        self.persistableValue = persistedValue
    }
}

final class Probe: EmbeddedObject {
    @Persisted var serial = ""
}

/// A probe's serial number, kept as an embedded object.
struct ProbeID: CustomPersistable {
    typealias PersistedType = Probe
    var serial: String
    init(serial: String) { self.serial = serial }
    init(persistedValue: Probe) { serial = persistedValue.serial }
    var persistableValue: Probe { Probe(value: ["serial": serial]) }
}

final class Reading: Object {
    @Persisted var probe: ProbeID
    @Persisted(primaryKey: true) var id = 0
    @Persisted var temperature: Celsius
    @Persisted var peak: Celsius?
    @Persisted var history: List<Celsius>
    @Persisted var tags: MutableSet<Label>
    @Persisted var byHour: Map<String, Celsius>
    @Persisted var probes: List<ProbeID>
    @Persisted var probesByRoom: Map<String, ProbeID?>
}

@Suite("CustomPersistable and FailableCustomPersistable")
struct CustomPersistableTests {
    @Test("a custom type is stored as its persisted type: properties, optionals, lists, sets and maps, and queried by it")
    func storedAsPersistedType() throws {
        let realm = try makeRealm(objectTypes: [Reading.self])
        #expect(realm.schema["Reading"]?["temperature"]?.type == .double)
        let reading = Reading()
        #expect(reading.temperature == Celsius(0))
        reading.temperature = Celsius(21.5)
        reading.history.append(objectsIn: [Celsius(20), Celsius(22)])
        reading.tags.insert(Label(persistedValue: "kitchen")!)
        reading.byHour["09"] = Celsius(19)
        try realm.write { realm.add(reading) }
        let stored = try #require(realm.objects(Reading.self).first)
        #expect(stored.temperature == Celsius(21.5))
        #expect(stored.peak == nil)
        #expect(Array(stored.history) == [Celsius(20), Celsius(22)])
        #expect(stored.tags.map(\.persistableValue) == ["kitchen"])
        #expect(stored.byHour["09"] == Celsius(19))
        try realm.write { stored.peak = Celsius(30) }
        #expect(realm.objects(Reading.self).filter("peak > 25 AND temperature < %@", 22.0).count == 1)
        #expect(realm.objects(Reading.self).filter("ANY history == 22").count == 1)
        #expect(stored["temperature"] as? Celsius == Celsius(21.5))
        // A persisted type that is an embedded object: a link that reads as a new one while nil.
        #expect(realm.schema["Reading"]?["probe"]?.type == .link)
        #expect(stored.probe.serial == "")
        try realm.write { stored.probe = ProbeID(serial: "p-7") }
        #expect(realm.objects(Reading.self).first?.probe.serial == "p-7")
        let added = Reading()
        added.id = 2
        added.probe = ProbeID(serial: "p-9")
        try realm.write { realm.add(added) }
        #expect(realm.object(ofType: Reading.self, forPrimaryKey: 2)?.probe.serial == "p-9")
        #expect(realm.objects(Reading.self).filter("probe.serial == 'p-9'").count == 1)
    }

    @Test("values of the persisted types make the custom types: Object(value:) and create from raw values")
    func madeFromPersistedValues() throws {
        let raw: [String: Any] = [
            "id": 7, "probe": Probe(value: ["serial": "p-1"]), "temperature": 21.5, "history": [20.0, 22.5],
            "probes": [Probe(value: ["serial": "a"]), ["serial": "b"]],
            "probesByRoom": ["hall": NSNull(), "attic": Probe(value: ["serial": "t"])], "peak": 30.0,
        ]
        let made = Reading(value: raw)
        #expect(made.probe.serial == "p-1" && made.temperature == Celsius(21.5))
        #expect(Array(made.history) == [Celsius(20), Celsius(22.5)] && made.probes.map(\.serial) == ["a", "b"])
        #expect(made.probesByRoom["hall"] == .some(nil) && made.probesByRoom["attic"]??.serial == "t")
        #expect(made.peak == Celsius(30))  // an optional custom type
        let realm = try makeRealm(objectTypes: [Reading.self])
        try realm.write { realm.create(Reading.self, value: raw) }
        let stored = try #require(realm.objects(Reading.self).first)
        #expect(stored.probe.serial == "p-1" && stored.probes.map(\.serial) == ["a", "b"])
        #expect(stored.probesByRoom.keys == ["attic", "hall"] && stored.probesByRoom["hall"] == .some(nil))
    }

    @Test("a map of optional custom values stored as embedded objects reads each value back, nil too")
    func mapOfOptionalEmbeddedCustomValues() throws {
        let realm = try makeRealm(objectTypes: [Reading.self])
        let reading = Reading()
        reading.probesByRoom["kitchen"] = ProbeID(serial: "k-1")
        reading.probesByRoom["hall"] = .some(nil)
        try realm.write { realm.add(reading) }
        let stored = try #require(realm.objects(Reading.self).first)
        #expect(stored.probesByRoom["kitchen"]??.serial == "k-1")
        #expect(stored.probesByRoom.keys == ["hall", "kitchen"] && stored.probesByRoom["hall"] == .some(nil))
        #expect(stored.probesByRoom.values.map { $0?.serial } == [nil, "k-1"])
    }

    @Test("a list of a custom type stored as an embedded object holds one embedded object per element")
    func listOfEmbeddedCustomType() throws {
        let realm = try makeRealm(objectTypes: [Reading.self])
        #expect(realm.schema["Reading"]?["probes"]?.isOptional == false)
        let reading = Reading()
        reading.probes.append(ProbeID(serial: "a"))
        try realm.write { realm.add(reading) }
        let stored = try #require(realm.objects(Reading.self).first)
        try realm.write { stored.probes.append(ProbeID(serial: "b")) }
        #expect(stored.probes.map(\.serial) == ["a", "b"])
        #expect(realm.objects(Probe.self).count == 3)  // and the one of the `probe` property
        // Made from values holding the custom type itself.
        let made = Reading(value: ["id": 5, "probe": ProbeID(serial: "m"), "probes": [ProbeID(serial: "n")]])
        #expect(made.probe.serial == "m" && made.probes.map(\.serial) == ["n"])
        try realm.write { realm.create(Reading.self, value: ["id": 6, "probes": [ProbeID(serial: "o")]]) }
        #expect(realm.object(ofType: Reading.self, forPrimaryKey: 6)?.probes.first?.serial == "o")
    }

    @Test("a model whose failable type cannot make its default registers, as in Realm; its siblings store and read")
    func failableDefaultRefusedOnlyWhenMade() throws {
        let realm = try makeRealm(objectTypes: [UnsetLevel.self, SetLevel.self])
        #expect(realm.schema["UnsetLevel"]?["level"]?.type == .int)
        try realm.write { realm.add(SetLevel()) }
        #expect(realm.objects(SetLevel.self).first?.level == Level(persistedValue: 3))
        #expect(realm.objects(SetLevel.self).filter("level == 3").count == 1)
    }
}

/// A level from 1 up, refusing the stored 0 a property without a default would start at.
struct Level: FailableCustomPersistable, Hashable {
    typealias PersistedType = Int
    let persistableValue: Int
    init?(persistedValue: Int) {
        guard persistedValue > 0 else { return nil }
        self.persistableValue = persistedValue
    }
}

/// Declares a level without a default: registering it is fine, making one is a programmer error (as in Realm).
final class UnsetLevel: Object {
    @Persisted var level: Level
}

final class SetLevel: Object {
    @Persisted var level = Level(persistedValue: 3)!
}

final class KeyedByObjectId: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var name = ""
}

@Suite("Defaults of values declared without one")
struct DeclaredDefaultsTests {
    @Test("an ObjectId declared without a value is a new one for each object, as in Realm, so they can be keys")
    func objectIdDefaultsAreGenerated() throws {
        let realm = try makeRealm(objectTypes: [KeyedByObjectId.self])
        let a = KeyedByObjectId()
        let b = KeyedByObjectId()
        #expect(a.id != b.id && a.id != ObjectId())
        try realm.write {
            realm.add(a)
            realm.add(b)
        }
        #expect(realm.objects(KeyedByObjectId.self).count == 2)
    }
}
