import Foundation
import Testing

@testable import TroveStorage

/// Property-based checks: for random values, sorting by the encoded bytes
/// (as LMDB does) gives the same order as sorting the values.
@Suite("Ordered key encoding")
struct OrderedKeyTests {
    var generator = SystemRandomNumberGenerator()

    private func encodedOrderMatches<T>(_ values: [T], by less: (T, T) -> Bool, encode: (T) -> [UInt8]) -> Bool {
        let byValue = values.sorted(by: less).map(encode)
        let byBytes = values.map(encode).sorted { $0.lexicographicallyPrecedes($1) }
        return byValue == byBytes
    }

    @Test("Int64 keys sort numerically, extremes included")
    func integers() {
        var values: [Int64] = [.min, .max, 0, -1, 1, Int64(Int32.min), Int64(Int32.max)]
        for _ in 0..<2_000 { values.append(Int64.random(in: .min ... .max)) }
        for _ in 0..<500 { values.append(Int64.random(in: -300...300)) }
        #expect(
            encodedOrderMatches(values, by: <) { value in
                var key: [UInt8] = []
                OrderedKey.append(value, to: &key)
                return key
            })
        for value in values {
            var key: [UInt8] = []
            OrderedKey.append(value, to: &key)
            #expect(key.withUnsafeBytes { OrderedKey.int64(from: $0) } == value)
        }
    }

    @Test("Double keys sort numerically: negatives, zeros, infinities, subnormals")
    func doubles() {
        var values: [Double] = [
            -.infinity, .infinity, -0.0, 0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -1e-300,
        ]
        for _ in 0..<2_000 {
            values.append(Double(bitPattern: UInt64.random(in: 0 ... .max)))
        }
        values = values.filter { !$0.isNaN }
        for _ in 0..<500 { values.append(Double.random(in: -1000...1000)) }
        #expect(
            encodedOrderMatches(values, by: <) { value in
                var key: [UInt8] = []
                OrderedKey.append(value, to: &key)
                return key
            })
        for value in values {
            var key: [UInt8] = []
            OrderedKey.append(value, to: &key)
            let back = key.withUnsafeBytes { OrderedKey.double(from: $0) }
            #expect(back == value || (value == 0 && back == 0))
        }
    }

    @Test("String keys sort by Unicode code points, like Swift's < on their scalars")
    func strings() {
        let alphabet = Array("aAbZz09 _-éÉß日本語🙂\u{0}\u{7F}")
        var values: [String] = ["", "a", "aa", "ab", "b"]
        for _ in 0..<2_000 {
            values.append(String((0..<Int.random(in: 0...8)).map { _ in alphabet.randomElement()! }))
        }
        let scalarOrder: (String, String) -> Bool = {
            $0.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.unicodeScalars.map(\.value))
        }
        #expect(
            encodedOrderMatches(values, by: scalarOrder) { value in
                var key: [UInt8] = []
                OrderedKey.append(bytes: value.utf8, to: &key)
                return key
            })
    }

    @Test("nil sorts before every value; Bool false before true")
    func nullAndBool() {
        var null: [UInt8] = []
        OrderedKey.appendNull(to: &null)
        var smallest: [UInt8] = []
        OrderedKey.append(Int64.min, to: &smallest)
        var empty: [UInt8] = []
        OrderedKey.append(bytes: [UInt8](), to: &empty)
        #expect(null.lexicographicallyPrecedes(smallest))
        #expect(null.lexicographicallyPrecedes(empty))
        var no: [UInt8] = []
        var yes: [UInt8] = []
        OrderedKey.append(false, to: &no)
        OrderedKey.append(true, to: &yes)
        #expect(no.lexicographicallyPrecedes(yes))
    }

    @Test("bytes longer than the key limit are cut and reported as inexact")
    func truncation() {
        var key: [UInt8] = []
        let exact = OrderedKey.append(bytes: [UInt8](repeating: 65, count: 2_000), to: &key)
        #expect(!exact)
        #expect(key.count == OrderedKey.maximumLength)
    }
}
