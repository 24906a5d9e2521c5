#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every change of a write transaction, in order, so that the transaction
/// can be replayed into a larger map (see ``WriteTransaction``).
///
/// The log holds keys and values: as much as the transaction writes. Up to
/// a limit (`Environment.Options.replayMemoryLimit`, 32 MiB) it stays in memory; beyond, it moves to an
/// unlinked temporary file beside the database (it is read back only when the
/// map fills), so a transaction of ten million objects does not hold
/// gigabytes of heap. When no file can be made there, it stays in memory.
struct ReplayLog: ~Copyable {
    private var memory = ByteBuffer()
    /// The spill file (unlinked), or -1.
    private var file: Int32 = -1
    private var spilled = 0
    private var spillFailed = false
    /// Where the spill file goes: the database's directory.
    private let directory: String
    /// Bytes kept in memory before the log moves to its file.
    private let memoryLimit: Int
    /// Whether the entries are kept: not in a map that never grows (a full
    /// map there fails the write), where the log only counts their bytes.
    let keepsEntries: Bool
    /// The bytes of the entries counted but not kept.
    private var counted = 0

    init(directory: String, memoryLimit: Int, keepsEntries: Bool = true) {
        self.directory = directory
        self.memoryLimit = memoryLimit
        self.keepsEntries = keepsEntries
    }

    deinit {
        if file >= 0 { close(file) }
    }

    /// The bytes logged so far, spilled or not.
    var count: Int { counted + spilled + memory.count }

    /// The bytes that moved to the file.
    var spilledBytes: Int { spilled }

    /// Appends one entry: a 17-byte header (op, table, flags, key and value
    /// lengths), the key, the value.
    @inline(__always)
    mutating func append(
        op: UInt8, dbi: UInt32, flags: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?
    ) {
        guard keepsEntries else {
            counted += 17 + key.count + (value?.count ?? 0)
            return
        }
        memory.appendEntry(op: op, dbi: dbi, flags: flags, key: key, value: value)
        if memory.count >= memoryLimit, !spillFailed { spill() }
    }

    private mutating func spill() {
        if file < 0 {
            var template = Array((directory + "/.trove-replay-XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else {
                spillFailed = true
                return
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            file = descriptor
        }
        let bytes = memory.bytes
        var written = 0
        while written < bytes.count {
            let result = pwrite(file, bytes.baseAddress! + written, bytes.count - written, off_t(spilled + written))
            if result <= 0 {
                if result < 0, errno == EINTR { continue }
                // A full disk: keep the rest in memory from now on (what reached the file stays valid).
                spillFailed = true
                return
            }
            written += result
        }
        spilled += bytes.count
        memory.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with each entry in order: op, table, flags, key, value
    /// (the buffers are valid during the call only).
    func forEach(
        _ body: (UInt8, UInt32, UInt32, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if spilled > 0 {
            // Read back in chunks; an entry cut at a chunk's end moves to the front of the next.
            var chunk = [UInt8](repeating: 0, count: 8 << 20)
            var filled = 0
            var offset = 0
            while offset < spilled || filled > 0 {
                let wanted = min(chunk.count - filled, spilled - offset)
                if wanted > 0 {
                    let read = chunk.withUnsafeMutableBytes { pread(file, $0.baseAddress! + filled, wanted, off_t(offset)) }
                    guard read > 0 else {
                        throw TroveError(.ioError, "cannot read back a write's replay log (errno \(errno))")
                    }
                    filled += read
                    offset += read
                }
                let used = try chunk.withUnsafeBytes { try Self.parse(UnsafeRawBufferPointer(rebasing: $0[0..<filled]), body) }
                if used == 0 {
                    guard filled < chunk.count else {
                        // One entry larger than the chunk: read it whole.
                        let length = Self.entryLength(chunk.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<17]) })
                        chunk += [UInt8](repeating: 0, count: length - chunk.count)
                        continue
                    }
                    if offset == spilled { throw TroveError(.ioError, "a write's replay log ends in the middle of an entry") }
                }
                chunk.replaceSubrange(0..<used, with: [])
                chunk += [UInt8](repeating: 0, count: used)
                filled -= used
            }
        }
        let rest = try Self.parse(memory.bytes, body)
        precondition(rest == memory.count, "Trove: a write's replay log ends in the middle of an entry")
    }

    /// Calls `body` for each whole entry at the start of `bytes`; returns the bytes used.
    private static func parse(
        _ bytes: UnsafeRawBufferPointer,
        _ body: (UInt8, UInt32, UInt32, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        var offset = 0
        while offset + 17 <= bytes.count {
            let length = entryLength(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 17)]))
            guard offset + length <= bytes.count else { break }
            let keyCount = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 9, as: UInt32.self)))
            let keyStart = offset + 17
            try body(
                bytes[offset], UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self)),
                UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 5, as: UInt32.self)),
                UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(keyStart + keyCount)]),
                UnsafeRawBufferPointer(rebasing: bytes[(keyStart + keyCount)..<(offset + length)]))
            offset += length
        }
        return offset
    }

    /// The length of the entry whose 17-byte header this is.
    private static func entryLength(_ header: UnsafeRawBufferPointer) -> Int {
        17 + Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 9, as: UInt32.self)))
            + Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 13, as: UInt32.self)))
    }

    /// Forgets every entry.
    mutating func removeAll() {
        memory.removeAll(keepingCapacity: false)
        if file >= 0 { close(file) }
        file = -1
        spilled = 0
        counted = 0
        spillFailed = false
    }
}
