import Foundation
import Testing

@testable import Trove

@Suite("Records")
struct RecordTests {
    /// Writes `object`, reads it back from a fresh handle after a reopen, and returns the copy.
    private func roundTrip(_ object: AllTypes) throws -> AllTypes {
        let db = try makeDatabase()
        try db.write { try db.add(object) }
        let url = db.configuration.fileURL
        let again = try Database(fileURL: url)
        return try #require(again.object(ofType: AllTypes.self, forPrimaryKey: object.id))
    }

    @Test("every type round-trips at its extremes")
    func extremes() throws {
        let object = AllTypes()
        object.id = 1
        object.bool = true
        object.int = .min
        object.int8 = .min
        object.int16 = .max
        object.int32 = .min
        object.int64 = .max
        object.float = .greatestFiniteMagnitude
        object.double = -.infinity
        object.string = "héllo, 世界 🙂 \u{0} end"
        object.data = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        object.date = .distantPast
        object.uuid = UUID()
        object.decimal = Decimal(string: "-12345678901234567890.123456789")!
        object.mood = .sad
        object.priority = .high
        object.optBool = false
        object.optInt = .max
        object.optInt8 = .max
        object.optInt16 = .min
        object.optInt32 = .max
        object.optInt64 = .min
        object.optFloat = -.leastNonzeroMagnitude
        object.optDouble = .nan
        object.optString = ""
        object.optData = Data()
        object.optDate = .distantFuture
        object.optUUID = UUID()
        object.optDecimal = Decimal(string: "0.000000001")!
        object.optMood = .calm
        let expectedData = object.data
        let (uuid, optUUID) = (object.uuid, object.optUUID)

        let copy = try roundTrip(object)
        #expect(copy.bool == true)
        #expect(copy.int == .min)
        #expect(copy.int8 == .min)
        #expect(copy.int16 == .max)
        #expect(copy.int32 == .min)
        #expect(copy.int64 == .max)
        #expect(copy.float == .greatestFiniteMagnitude)
        #expect(copy.double == -.infinity)
        #expect(copy.string == "héllo, 世界 🙂 \u{0} end")
        #expect(copy.data == expectedData)
        #expect(copy.date == .distantPast)
        #expect(copy.uuid == uuid)
        #expect(copy.decimal == Decimal(string: "-12345678901234567890.123456789")!)
        #expect(copy.mood == .sad)
        #expect(copy.priority == .high)
        #expect(copy.optBool == false)
        #expect(copy.optInt == .max)
        #expect(copy.optInt8 == .max)
        #expect(copy.optInt16 == .min)
        #expect(copy.optInt32 == .max)
        #expect(copy.optInt64 == .min)
        #expect(copy.optFloat == -.leastNonzeroMagnitude)
        #expect(copy.optDouble?.isNaN == true)
        #expect(copy.optString == "")
        #expect(copy.optData == Data())
        #expect(copy.optDate == .distantFuture)
        #expect(copy.optUUID == optUUID)
        #expect(copy.optDecimal == Decimal(string: "0.000000001")!)
        #expect(copy.optMood == .calm)
    }

    @Test("optionals store nil, and non-optionals keep their zero values")
    func nils() throws {
        let object = AllTypes()
        object.id = 2
        let copy = try roundTrip(object)
        #expect(copy.optBool == nil)
        #expect(copy.optInt == nil)
        #expect(copy.optInt8 == nil)
        #expect(copy.optFloat == nil)
        #expect(copy.optDouble == nil)
        #expect(copy.optString == nil)
        #expect(copy.optData == nil)
        #expect(copy.optDate == nil)
        #expect(copy.optUUID == nil)
        #expect(copy.optDecimal == nil)
        #expect(copy.optMood == nil)
        #expect(copy.int == 0)
        #expect(copy.string == "")
        #expect(copy.data.isEmpty)
    }

    @Test("a record written with fewer columns reads the missing ones as their defaults")
    func olderRecordsReadDefaults() throws {
        let old = ObjectSchema(name: "T", properties: [PropertySchema(name: "a", type: .int)])
        let new = ObjectSchema(
            name: "T",
            properties: old.properties + [
                PropertySchema(name: "b", type: .string, defaultValue: .string("fresh")),
                PropertySchema(name: "c", type: .double, isOptional: true),
            ])
        var writer = RecordWriter()
        try writer.encode([.int(42)], layout: RecordLayout(old))
        let newLayout = RecordLayout(new)
        withExtendedLifetime(newLayout) {
            writer.bytes.withUnsafeBytes { bytes in
                let reader = RecordReader(bytes, layout: newLayout)
                #expect(reader.value(at: 0) == .int(42))
                #expect(reader.value(at: 1) == .string("fresh"))
                #expect(reader.value(at: 2) == .null)
            }
        }
    }

    @Test("a mixed value's size is known before it is encoded")
    func mixedEncodedSize() {
        let values: [StoredValue] = [
            .null, .bool(true), .int(-3), .float(1.5), .double(2.5), .string("mixé"), .data(Data([1, 2, 3])),
            .date(Date(timeIntervalSinceReferenceDate: 7)), .uuid(UUID()), .decimal(Decimal(string: "1.25")!),
            .objectId(ObjectId.generate()), .decimal128(Decimal128(7)), .object(typeName: "Photo", key: 42),
        ]
        for value in values {
            #expect(MixedEncoding.encodedSize(of: value) == MixedEncoding.encode(value).count, "\(value)")
        }
    }

    @Test(
        "random values of every type survive encode and decode, with and without a decimal column",
        arguments: [true, false])
    func randomRoundTrips(withDecimal: Bool) throws {
        let types = PropertyType.allCases.filter { withDecimal || $0 != .decimal }
        let schema = ObjectSchema(
            name: "R", properties: types.map { PropertySchema(name: $0.rawValue, type: $0, isOptional: true) })
        let layout = RecordLayout(schema)
        var writer = RecordWriter()
        for _ in 0..<500 {
            let values: [StoredValue] = types.map { type in
                if Bool.random() && Bool.random() { return .null }
                switch type {
                case .bool: return .bool(.random())
                case .int, .link: return .int(.random(in: .min ... .max))
                case .int8: return .int(Int64(Int8.random(in: .min ... .max)))
                case .int16: return .int(Int64(Int16.random(in: .min ... .max)))
                case .int32: return .int(Int64(Int32.random(in: .min ... .max)))
                case .float: return .float(Float.random(in: -1e30...1e30))
                case .double: return .double(Double.random(in: -1e300...1e300))
                case .string: return .string(String((0..<Int.random(in: 0...40)).map { _ in "aé日🙂 ".randomElement()! }))
                case .data: return .data(Data((0..<Int.random(in: 0...300)).map { _ in UInt8.random(in: 0...255) }))
                case .date: return .date(Date(timeIntervalSinceReferenceDate: .random(in: -1e10...1e10)))
                case .uuid: return .uuid(UUID())
                case .decimal: return .decimal(Decimal(Int.random(in: -1_000_000...1_000_000)) / 100)
                case .objectId: return .objectId(ObjectId(bytes: (0..<12).map { _ in UInt8.random(in: 0...255) }))
                case .decimal128:
                    return .decimal128(
                        Decimal128(bid: (low: .random(in: 0 ... .max), high: .random(in: 0...0x3000_0000_0000_0000))))
                case .mixed:
                    return [
                        StoredValue.int(.random(in: .min ... .max)), .string("mixé \(Int.random(in: 0...99))"), .bool(.random()),
                        .double(.random(in: -1e9...1e9)), .data(Data([1, 2, 3])), .uuid(UUID()),
                        .objectId(ObjectId.generate()), .object(typeName: "Photo", key: .random(in: 0 ... .max)),
                    ].randomElement()!
                }
            }
            try writer.encode(values, layout: layout)
            writer.bytes.withUnsafeBytes { bytes in
                #expect(RecordReader(bytes, layout: layout).allValues() == values)
            }
        }
    }

    @Test("values of another type are stored converted, byte for byte as if given in the column's type")
    func convertedValues() throws {
        let schema = ObjectSchema(
            name: "C",
            properties: [
                PropertySchema(name: "ratio", type: .double), PropertySchema(name: "count", type: .int),
                PropertySchema(name: "tag", type: .uuid), PropertySchema(name: "name", type: .string),
            ])
        let layout = RecordLayout(schema)
        let uuid = UUID()
        var writer = RecordWriter()
        try writer.encode([.double(2), .int(7), .uuid(uuid), .string("x")], layout: layout)
        let exact = writer.bytes
        try writer.encode([.int(2), .double(7), .string(uuid.uuidString), .string("x")], layout: layout)
        #expect(writer.bytes == exact)
        let error = expectTroveError(.invalidValue) {
            try writer.encode([.string("two"), .int(7), .uuid(uuid), .string("x")], layout: layout)
        }
        #expect(error?.message.contains("ratio") == true)
    }

    @Test("nil for a non-optional property is rejected with the property's name")
    func nilForNonOptional() throws {
        let schema = ObjectSchema(name: "T", properties: [PropertySchema(name: "title", type: .string)])
        var writer = RecordWriter()
        let error = expectTroveError(.invalidValue) { try writer.encode([.null], layout: RecordLayout(schema)) }
        #expect(error?.message.contains("title") == true)
    }
}
