import Foundation
import Trove

/// Bytes on their way to a file descriptor, written 64 KB at a time (or,
/// without a descriptor, kept in memory: a scratch buffer).
///
/// Appending never throws: the first failed write is kept, later output is
/// dropped, and ``finish()`` (or ``failure``, checked as the caller goes)
/// reports it.
final class OutputBuffer {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    private let descriptor: Int32?
    /// The file written, for messages.
    private let name: String
    /// The first write that failed.
    private(set) var failure: TroveError?

    static let flushSize = 64 * 1024

    /// A buffer that writes to `descriptor` (named `name` in messages), or a
    /// scratch buffer in memory when `descriptor` is nil.
    init(descriptor: Int32?, name: String = "standard output") {
        self.descriptor = descriptor
        self.name = name
        capacity = descriptor == nil ? 256 : Self.flushSize
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// The bytes held (of a scratch buffer: everything appended since ``reset()``).
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    func reset() { count = 0 }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { makeRoom(1) }
        storage[count] = byte
        count += 1
    }

    func append(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        if count + source.count > capacity {
            makeRoom(source.count)
            if source.count > capacity {
                send(base, count: source.count)  // larger than the buffer: straight through
                return
            }
        }
        (storage + count).update(from: base, count: source.count)
        count += source.count
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    func append(_ other: OutputBuffer) { append(other.bytes) }

    /// An integer in decimal.
    func append(_ value: Int64) {
        if count + 20 > capacity { makeRoom(20) }
        var magnitude = value.magnitude
        if value < 0 {
            storage[count] = UInt8(ascii: "-")
            count += 1
        }
        var digits = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var index = count + digits - 1
        repeat {
            storage[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            index -= 1
        } while magnitude > 0
        count += digits
    }

    /// `text` as a JSON string: quoted, with quotes, backslashes and control
    /// characters escaped; everything else (all of Unicode) as its UTF-8.
    func appendJSONString(_ text: String) {
        var text = text
        append(UInt8(ascii: "\""))
        text.withUTF8 { utf8 in
            var run = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                append(UnsafeBufferPointer(rebasing: utf8[run..<index]))
                run = index + 1
                append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
                case 0x0A: append(UInt8(ascii: "n"))
                case 0x0D: append(UInt8(ascii: "r"))
                case 0x09: append(UInt8(ascii: "t"))
                case 0x08: append(UInt8(ascii: "b"))
                case 0x0C: append(UInt8(ascii: "f"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    for digit in [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]] { append(digit) }
                }
            }
            append(UnsafeBufferPointer(rebasing: utf8[run...]))
        }
        append(UInt8(ascii: "\""))
    }

    /// `field` as one CSV field (RFC 4180): quoted, with its quotes doubled,
    /// when it holds a comma, a quote or a line break, or is empty and
    /// `quotingEmpty` (an empty field that is not null).
    func appendCSVField(_ field: UnsafeBufferPointer<UInt8>, quotingEmpty: Bool = false) {
        let needsQuotes =
            field.isEmpty
            ? quotingEmpty
            : field.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes else { return append(field) }
        append(UInt8(ascii: "\""))
        var run = 0
        for (index, byte) in field.enumerated() where byte == UInt8(ascii: "\"") {
            append(UnsafeBufferPointer(rebasing: field[run...index]))
            run = index  // the quote again: doubled
        }
        append(UnsafeBufferPointer(rebasing: field[run...]))
        append(UInt8(ascii: "\""))
    }

    func appendCSVField(_ text: String, quotingEmpty: Bool = false) {
        var text = text
        text.withUTF8 { appendCSVField($0, quotingEmpty: quotingEmpty) }
    }

    /// Writes what is held; a scratch buffer keeps it.
    func flush() {
        guard descriptor != nil, count > 0 else { return }
        send(storage, count: count)
        count = 0
    }

    /// Flushes, and throws the first failure of any write.
    func finish() throws {
        flush()
        if let failure { throw failure }
    }

    private func makeRoom(_ needed: Int) {
        if descriptor != nil {
            flush()
            return
        }
        while capacity < count + needed { capacity *= 2 }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        larger.update(from: storage, count: count)
        storage.deallocate()
        storage = larger
    }

    private func send(_ start: UnsafePointer<UInt8>, count total: Int) {
        guard let descriptor, failure == nil else { return }
        var written = 0
        while written < total {
            let result = write(descriptor, start + written, total - written)
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                failure = TroveError(
                    code == ENOSPC ? .diskFull : .ioError, "cannot write \(name): \(String(cString: strerror(code)))",
                    path: name)
                return
            }
            written += result
        }
    }
}
