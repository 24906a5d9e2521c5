/// Byte encodings that sort like the values they encode.
///
/// LMDB compares keys with `memcmp` (shorter first on a tie), so an index
/// whose keys are built here returns values in their natural order on a
/// range scan. Each encoding starts with a tag byte so that `nil` sorts
/// before every value and values of one index never collide with `nil`.
package enum OrderedKey {
    package static let nullTag: UInt8 = 0x00
    package static let valueTag: UInt8 = 0x01

    /// The longest key LMDB accepts in its default build; index keys longer
    /// than this are cut at ``maximumLength`` and marked as truncated.
    package static let maximumLength = 500

    package static func appendNull(to key: inout [UInt8]) {
        key.append(nullTag)
    }

    /// Signed integers: flip the sign bit, then big-endian.
    package static func append(_ value: Int64, to key: inout [UInt8]) {
        key.append(valueTag)
        appendBigEndian(UInt64(bitPattern: value) ^ (1 << 63), to: &key)
    }

    /// Doubles: positive values get the sign bit set, negative values are
    /// inverted, so the byte order is the numeric order (-inf ... -0 = +0 ... +inf, NaN last).
    package static func append(_ value: Double, to key: inout [UInt8]) {
        key.append(valueTag)
        appendBigEndian(orderedBits(value), to: &key)
    }

    /// `value` as an unsigned word in its numeric order (as ``append(_:to:)-(Double,_)`` stores it).
    @inlinable
    package static func orderedBits(_ value: Double) -> UInt64 {
        let bits = (value == 0 ? 0.0 : (value.isNaN ? Double.nan : value)).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    package static func append(_ value: Bool, to key: inout [UInt8]) {
        key.append(valueTag)
        key.append(value ? 1 : 0)
    }

    /// Bytes as they are (UTF-8 for strings: byte order is code point order).
    /// Returns false when the bytes were cut to fit ``maximumLength``.
    @discardableResult
    package static func append(bytes: some Collection<UInt8>, to key: inout [UInt8], cut: Bool = true) -> Bool {
        key.append(valueTag)
        let room = cut ? maximumLength - key.count : .max
        if bytes.count <= room {
            key.append(contentsOf: bytes)
            return true
        }
        key.append(contentsOf: bytes.prefix(room))
        return false
    }

    package static func appendBigEndian(_ value: UInt64, to key: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
    }

    /// Reads back an ``append(_:to:)-(Int64,_)`` encoding.
    package static func int64(from key: UnsafeRawBufferPointer) -> Int64? {
        guard key.count == 9, key[0] == valueTag else { return nil }
        let raw = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        return Int64(bitPattern: raw ^ (1 << 63))
    }

    /// Reads back an ``append(_:to:)-(Double,_)`` encoding.
    package static func double(from key: UnsafeRawBufferPointer) -> Double? {
        guard key.count == 9, key[0] == valueTag else { return nil }
        let raw = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        return Double(bitPattern: raw & (1 << 63) != 0 ? raw & ~(1 << 63) : ~raw)
    }

    /// Decodes a big-endian 64-bit object key.
    @inline(__always)
    package static func objectKey(from bytes: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }
}
