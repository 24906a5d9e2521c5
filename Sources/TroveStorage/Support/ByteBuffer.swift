#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A growable byte buffer that appends with `memcpy` (the replay log of a
/// write transaction sees every byte written, so appending must be cheap).
struct ByteBuffer: ~Copyable {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0

    init() {}

    deinit { free(base) }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        (base! + count).storeBytes(of: value.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more <= capacity { return }
        var target = Swift.max(capacity * 2, 4096)
        while target < count + more { target *= 2 }
        guard let grown = realloc(base, target) else {
            fatalError("Trove: out of memory growing a write's replay log to \(target) bytes")
        }
        base = grown
        capacity = target
    }

    /// One replay-log entry: a 17-byte header, the key, the value.
    mutating func appendEntry(
        op: UInt8, dbi: UInt32, flags: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?
    ) {
        let valueCount = value?.count ?? 0
        reserve(17 + key.count + valueCount)
        let start = base! + count
        start.storeBytes(of: op, as: UInt8.self)
        (start + 1).storeBytes(of: dbi.littleEndian, toByteOffset: 0, as: UInt32.self)
        (start + 5).storeBytes(of: flags.littleEndian, toByteOffset: 0, as: UInt32.self)
        (start + 9).storeBytes(of: UInt32(key.count).littleEndian, toByteOffset: 0, as: UInt32.self)
        (start + 13).storeBytes(of: UInt32(valueCount).littleEndian, toByteOffset: 0, as: UInt32.self)
        if let source = key.baseAddress, key.count > 0 { (start + 17).copyMemory(from: source, byteCount: key.count) }
        if let value, let source = value.baseAddress, valueCount > 0 {
            (start + 17 + key.count).copyMemory(from: source, byteCount: valueCount)
        }
        count += 17 + key.count + valueCount
    }

    /// Forgets the bytes; with `keepingCapacity`, keeps the memory for the next ones.
    mutating func removeAll(keepingCapacity: Bool = false) {
        count = 0
        guard !keepingCapacity else { return }
        free(base)
        base = nil
        capacity = 0
    }

    /// The bytes written so far, valid until the next change.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}
