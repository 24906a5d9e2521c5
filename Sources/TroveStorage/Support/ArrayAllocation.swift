extension Array {
    /// `count` copies of `value`, allocated by code specialized for
    /// `Element`.
    ///
    /// `Array(repeating:count:)` and `Array(unsafeUninitializedCapacity:initializingWith:)`
    /// allocate through a standard-library entry that is not specialized,
    /// which looks up the storage class's generic metadata on every call
    /// (~300 instructions); a commit that encodes a dozen parts paid that a
    /// dozen times. Reserving and appending are specialized where used.
    @inlinable
    package init(filledWith value: Element, count: Int) {
        self.init()
        guard count > 0 else { return }
        reserveCapacity(count)
        append(contentsOf: RepeatedFill(value: value, count: count))
    }

    /// `Array(unsafeUninitializedCapacity:initializingWith:)`, allocated as
    /// ``init(filledWith:count:)`` does where that is cheaper: the storage
    /// is filled with `filler` first, `body` writes its elements over it,
    /// and the array keeps the first `initialized` (`body` is not called
    /// for a capacity of 0). (Filling costs more
    /// than the metadata lookup it saves past a few KiB: larger arrays are
    /// allocated as the standard library does.)
    @inlinable
    package init(
        allocatingCapacity capacity: Int, filler: Element,
        initializingWith body: (inout UnsafeMutableBufferPointer<Element>, inout Int) -> Void
    ) {
        guard capacity > 0 else {
            self.init()
            return
        }
        guard capacity &* MemoryLayout<Element>.stride <= 4096 else {
            self.init(unsafeUninitializedCapacity: capacity, initializingWith: body)
            return
        }
        self.init(filledWith: filler, count: capacity)
        var initialized = 0
        withUnsafeMutableBufferPointer { body(&$0, &initialized) }
        precondition(initialized <= capacity, "Trove: an array initializer counted more elements than its capacity")
        if initialized < capacity { removeLast(capacity - initialized) }
    }

    /// Appends `count` copies of `value` (as ``init(filledWith:count:)`` allocates).
    @inlinable
    package mutating func append(filledWith value: Element, count: Int) {
        guard count > 0 else { return }
        append(contentsOf: RepeatedFill(value: value, count: count))
    }
}

/// `count` copies of a value that initializes an array's storage in one
/// call (the standard library's `Repeated` stores one element at a time).
@usableFromInline
struct RepeatedFill<Element>: RandomAccessCollection {
    @usableFromInline let value: Element
    @usableFromInline let count: Int

    @inlinable
    init(value: Element, count: Int) {
        self.value = value
        self.count = count
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }
    @inlinable subscript(position: Int) -> Element { value }

    @inlinable
    func _copyContents(initializing target: UnsafeMutableBufferPointer<Element>) -> (IndexingIterator<Self>, Int) {
        let written = Swift.min(count, target.count)
        if written > 0 { target.baseAddress.unsafelyUnwrapped.initialize(repeating: value, count: written) }
        return (IndexingIterator(_elements: self, _position: written), written)
    }
}
