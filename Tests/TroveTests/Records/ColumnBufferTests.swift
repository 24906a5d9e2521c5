import Foundation
import Testing

@testable import Trove

@Suite("Column buffers")
struct ColumnBufferTests {
    static func randomValue(_ type: PropertyType, _ random: inout SystemRandomNumberGenerator) -> StoredValue {
        if Int.random(in: 0..<5, using: &random) == 0 { return .null }
        switch type {
        case .int: return .int(Int64.random(in: -1_000...1_000, using: &random))
        case .int16: return .int(Int64.random(in: -300...300, using: &random))
        case .double: return .double(Double(Int.random(in: -50...50, using: &random)) / 4)
        case .string: return .string(String(repeating: "가a", count: Int.random(in: 0...4, using: &random)))
        case .data: return .data(Data((0..<Int.random(in: 0...6, using: &random)).map { UInt8($0) }))
        default: return .int(7)
        }
    }

    @Test("a stored column copied into a buffer, with values put in from another column's bytes, encodes as the values set alike")
    func storedBytesPutIntoABuffer() throws {
        var random = SystemRandomNumberGenerator()
        for type in [PropertyType.int, .int16, .double, .string, .data] {
            for _ in 0..<30 {
                let base = (0..<Int.random(in: 0...200, using: &random)).map { _ in Self.randomValue(type, &random) }
                let source = (0..<20).map { _ in Self.randomValue(type, &random) }
                let baseBytes = ClusterColumn.encode(base, type: type)
                let sourceBytes = ClusterColumn.encode(source, type: type)
                try baseBytes.withUnsafeBytes { baseRaw in
                    try sourceBytes.withUnsafeBytes { sourceRaw in
                        let buffer = ColumnBuffer(try #require(ClusterColumn(baseRaw, type: type)))
                        let from = try #require(ClusterColumn(sourceRaw, type: type))
                        var expected = base
                        for index in 0..<source.count {
                            // Into an existing slot, or past the end.
                            let slot =
                                expected.isEmpty || Bool.random(using: &random)
                                ? expected.count : Int.random(in: 0..<expected.count)
                            buffer.put(from: from, at: index, into: slot)
                            if slot == expected.count { expected.append(source[index]) } else { expected[slot] = source[index] }
                        }
                        #expect(buffer.encoded() == ClusterColumn.encode(expected, type: type), "\(type)")
                    }
                }
            }
        }
    }

    @Test("long values removed and changed in place or moved: the heap stays bounded, the encoding holds only live values")
    func heapOfLongValues() {
        var random = SystemRandomNumberGenerator()
        let buffer = ColumnBuffer(type: .string)
        var model: [StoredValue] = []
        func text() -> StoredValue {
            Int.random(in: 0..<8, using: &random) == 0
                ? .null : .string(String(repeating: "한b", count: Int.random(in: 0...120, using: &random)))
        }
        for _ in 0..<400 {
            buffer.append(text())
            model.append(buffer.value(model.count))
        }
        for step in 0..<3_000 {
            let slot = Int.random(in: 0..<model.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                buffer.remove(at: slot)
                model.remove(at: slot)
            case 1:
                let value = text()
                buffer.set(value, at: slot)
                model[slot] = value
            default:
                let value = text()
                buffer.insert(value, at: slot)
                model.insert(value, at: slot)
            }
            let live = model.reduce(0) { total, value in
                if case .string(let text) = value { return total + text.utf8.count }
                return total
            }
            #expect(buffer.heapSize <= 2 * live + 4_096 + 400, "step \(step): dead bytes are reclaimed")
        }
        #expect((0..<model.count).map { buffer.value($0) } == model)
        let encoded = buffer.encoded()
        let live = model.reduce(0) { total, value in
            if case .string(let text) = value { return total + text.utf8.count }
            return total
        }
        let hasNulls = model.contains(.null)
        #expect(encoded.count == 2 + (hasNulls ? (model.count + 7) / 8 : 0) + 4 * (model.count + 1) + live)
        encoded.withUnsafeBytes { raw in
            let column = ClusterColumn(raw, type: .string)!
            #expect((0..<model.count).map { column.value($0) } == model)
        }
    }

    @Test(
        "inserts, removes, changes and splits agree with an array, and the encoding reads back",
        arguments: [
            PropertyType.int, .int16, .double, .string, .data, .mixed,
        ])
    func agreesWithAnArray(_ type: PropertyType) {
        var random = SystemRandomNumberGenerator()
        let buffer = ColumnBuffer(type: type)
        var model: [StoredValue] = []
        for step in 0..<600 {
            let value = Self.randomValue(type, &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 7 where !model.isEmpty:
                // A write's deletes, removed together.
                let marks = model.map { _ in Int.random(in: 0..<4, using: &random) == 0 }
                buffer.removeAll(marked: marks)
                model = zip(model, marks).filter { !$0.1 }.map(\.0)
            case 0, 1, 2:
                let slot = Int.random(in: 0...model.count, using: &random)
                buffer.insert(value, at: slot)
                model.insert(value, at: slot)
            case 3 where !model.isEmpty:
                let slot = Int.random(in: 0..<model.count, using: &random)
                buffer.remove(at: slot)
                model.remove(at: slot)
            case 4 where !model.isEmpty:
                let slot = Int.random(in: 0..<model.count, using: &random)
                #expect(buffer.set(value, at: slot) == (model[slot] != value), "step \(step)")
                model[slot] = value
            case 5 where model.count > 2:
                // A split keeps the front here and the back in the new buffer; join them again.
                let kept = Int.random(in: 1..<model.count, using: &random)
                let upper = buffer.split(keeping: kept)
                #expect(buffer.count == kept && upper.count == model.count - kept)
                for slot in 0..<upper.count { buffer.append(upper.value(slot)) }
            default:
                buffer.append(value)
                model.append(value)
            }
            #expect(buffer.count == model.count, "step \(step)")
        }
        #expect((0..<model.count).map { buffer.value($0) } == model)
        let encoded = buffer.encoded()
        encoded.withUnsafeBytes { raw in
            #expect(ClusterColumn.problem(in: raw, type: type, count: model.count) == nil)
            let column = ClusterColumn(raw, type: type)!
            #expect((0..<model.count).map { column.value($0) } == model)
            // And a buffer made from the encoding reads the same.
            let copy = ColumnBuffer(column)
            #expect((0..<model.count).map { copy.value($0) } == model)
        }
    }
}
