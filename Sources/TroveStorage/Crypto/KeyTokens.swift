/// Keyed stand-ins for the user data in an encrypted file's keys.
///
/// LMDB keeps keys in the clear, and a key must stay one: a lookup finds it
/// by comparing bytes. So in an encrypted file every key part that holds
/// user data — an indexed value, a primary key, a set member, a map key, a
/// full-text term, a type or property name in a table's name — is stored as
/// its token instead: the first ``size`` bytes of HMAC-SHA-256 of the part
/// under a key derived from the file's key and salt, with the kind of table
/// it is used in mixed in (an index, a set, a map, a full-text index: the
/// table's name up to its colon, so a renamed type or property keeps its
/// tokens). Equal values give equal tokens in one kind of table, so lookups,
/// unique checks and joins keep working; without the key a token tells
/// nothing of its value, and the same value in two kinds of table, or in
/// two files, gives unrelated tokens. Order is not kept: ranges and
/// prefixes over tokens cannot walk the index.
package final class KeyTokens: Sendable {
    /// Bytes of a token: 128 bits, so two values of one place share a token
    /// with a chance of about n² / 2¹²⁹ (none in practice).
    package static let size = 16
    /// HKDF's context string for the token key.
    static let derivationInfo = Array("trove hmac-sha256 key token v1".utf8)

    private let mac: PreparedHMAC

    /// The tokens of a file whose 64-byte key is `key` and salt `salt`.
    package init(key: [UInt8], salt: [UInt8]) {
        var derived = Cipher.hkdfSHA256(key: key, salt: salt, info: KeyTokens.derivationInfo, length: 32)
        mac = derived.withUnsafeBytes { PreparedHMAC(key: $0) }
        SecretBytes.wipe(&derived)
    }

    /// The token of `bytes` used in table `place` (or a place without a
    /// colon: `meta`, or "" for names), appended to `output`.
    package func append(_ bytes: UnsafeRawBufferPointer, in place: String, to output: inout [UInt8]) {
        var place = place.firstIndex(of: ":").map { String(place[...$0]) } ?? place
        place.withUTF8 { name in
            let size = 4 + name.count + bytes.count
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
                buffer.storeBytes(of: UInt32(name.count).littleEndian, as: UInt32.self)
                UnsafeMutableRawBufferPointer(rebasing: buffer[4..<(4 + name.count)]).copyMemory(
                    from: UnsafeRawBufferPointer(name))
                if !bytes.isEmpty { UnsafeMutableRawBufferPointer(rebasing: buffer[(4 + name.count)...]).copyMemory(from: bytes) }
                let digest = mac.authenticationCode(UnsafeRawBufferPointer(buffer))
                output.append(contentsOf: digest[0..<KeyTokens.size])
                SecretBytes.wipe(buffer)
            }
        }
    }

    /// The token of `bytes` used in `place`.
    package func token(_ bytes: [UInt8], in place: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(KeyTokens.size)
        bytes.withUnsafeBytes { append($0, in: place, to: &output) }
        return output
    }

    /// The token of a name (a type's, or a table's) in `place`, as 32 hex digits.
    package func hexToken(_ name: String, in place: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in token(Array(name.utf8), in: place) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
