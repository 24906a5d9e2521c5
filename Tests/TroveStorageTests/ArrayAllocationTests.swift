import Testing

@testable import TroveStorage

@Suite("Array allocation")
struct ArrayAllocationTests {
    @Test("filledWith gives count copies of the value, for empty, small and large arrays")
    func filled() {
        #expect([UInt8](filledWith: 7, count: 0).isEmpty)
        #expect([UInt8](filledWith: 7, count: 5) == [7, 7, 7, 7, 7])
        let large = [UInt64](filledWith: 3, count: 10_000)
        #expect(large.count == 10_000 && large.allSatisfy { $0 == 3 })
        #expect([Bool](filledWith: true, count: 3) == [true, true, true])
    }

    @Test(
        "allocatingCapacity keeps what the initializer wrote, with room for the rest, below and above the size it fills first",
        arguments: [10, 100, 1_000, 100_000])
    func allocated(capacity: Int) {
        let written = capacity / 2 + 1
        var array = [UInt16](allocatingCapacity: capacity, filler: 0) { buffer, initialized in
            #expect(buffer.count == capacity)
            for index in 0..<written { buffer[index] = UInt16(truncatingIfNeeded: index &* 3) }
            initialized = written
        }
        #expect(array.count == written)
        #expect(array.capacity >= capacity)
        #expect(array.enumerated().allSatisfy { $0.element == UInt16(truncatingIfNeeded: $0.offset &* 3) })
        array.append(9)
        #expect(array.count == written + 1 && array.last == 9)
    }

    @Test("a capacity of 0 makes an empty array without calling the initializer")
    func emptyCapacity() {
        var called = false
        let array = [UInt8](allocatingCapacity: 0, filler: 0) { _, _ in called = true }
        #expect(array.isEmpty)
        #expect(!called)
    }
}
