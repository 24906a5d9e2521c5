import Foundation
import Trove

/// A file, or standard input, read a chunk at a time: what `trove import`
/// reads from, in memory bounded by the longest record, not the input.
final class InputReader {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity = 1 << 20
    private var start = 0
    private var end = 0
    private let descriptor: Int32
    /// The input, for messages.
    let name: String
    /// The input's size in bytes, when known (a regular file).
    let size: Int?
    /// Whether the input has ended: ``available`` is all that is left.
    private(set) var isAtEnd = false
    /// Bytes taken so far.
    private(set) var consumed = 0
    /// The line of the next byte, from 1.
    private(set) var line = 1

    /// Reads the file at `path`, or standard input for `-`.
    init(path: String) throws {
        name = path == "-" ? "standard input" : path
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw TroveError(.fileAccess, "cannot read \(path): \(String(cString: strerror(errno)))", path: path)
            }
        }
        var info = stat()
        size = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
        if descriptor != STDIN_FILENO { close(descriptor) }
    }

    /// The bytes read and not yet taken.
    var available: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage + start, count: end - start) }

    /// Takes `count` bytes, holding `lineBreaks` line breaks (counted here when nil).
    func consume(_ count: Int, lineBreaks: Int? = nil) {
        line += lineBreaks ?? available.prefix(count).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        start += count
        consumed += count
    }

    /// Reads more input after what is available (making room, or growing the
    /// buffer when one record fills it); false when the input has ended.
    func fill() throws -> Bool {
        guard !isAtEnd else { return false }
        if start > 0 {
            memmove(storage, storage + start, end - start)
            end -= start
            start = 0
        }
        if end == capacity {
            capacity *= 2
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            larger.update(from: storage, count: end)
            storage.deallocate()
            storage = larger
        }
        while true {
            let result = read(descriptor, storage + end, capacity - end)
            if result < 0 {
                if errno == EINTR { continue }
                throw TroveError(.ioError, "cannot read \(name): \(String(cString: strerror(errno)))", path: name)
            }
            if result == 0 {
                isAtEnd = true
                return false
            }
            end += result
            return true
        }
    }

    /// Skips white space (reading more as needed); the next byte, or nil at the end.
    func nextByte() throws -> UInt8? {
        while true {
            let bytes = available
            var index = 0
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
            {
                index += 1
            }
            if index > 0 { consume(index) }
            if index < bytes.count { return bytes[index] }
            guard try fill() else { return nil }
        }
    }

    /// Skips a UTF-8 byte order mark at the start (spreadsheets write one).
    func skipByteOrderMark() throws {
        while available.count < 3, try fill() {}
        if available.starts(with: [0xEF, 0xBB, 0xBF]) { consume(3, lineBreaks: 0) }
    }
}
