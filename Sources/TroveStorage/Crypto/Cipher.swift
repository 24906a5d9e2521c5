#if canImport(CCrypto)
    import CCrypto
#elseif canImport(CryptoKit)
    import CryptoKit
    import Foundation
#endif

/// AES-256-GCM for values at rest: each sealed value is a fresh 12-byte
/// nonce, the ciphertext and a 16-byte tag. The value's key in its table is
/// authenticated with it, so a sealed value moved under another key, or
/// changed at all, fails to open instead of reading as something else.
///
/// OpenSSL's libcrypto on Linux, CryptoKit on Apple platforms.
package final class Cipher: Sendable {
    /// Bytes a sealed value adds: the nonce and the tag.
    package static let overhead = nonceSize + tagSize
    static let nonceSize = 12
    static let tagSize = 16

    private let key: [UInt8]

    /// `key` is the 64-byte key Realm users know; the AES-256 key is its
    /// SHA-256, so every one of its bytes counts.
    package init(key: [UInt8]) throws {
        guard key.count == 64 else {
            throw TroveError(.invalidValue, "an encryption key must be 64 bytes, not \(key.count)")
        }
        self.key = Cipher.sha256(key)
    }

    /// `plaintext` sealed, authenticating `context` (the value's key) with it.
    package func seal(_ plaintext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + Cipher.overhead)
        try sealed.withUnsafeMutableBytes { out in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[0..<Cipher.nonceSize])
            try Cipher.randomBytes(nonce)
            try encrypt(
                plaintext, context: context, nonce: UnsafeRawBufferPointer(nonce),
                into: UnsafeMutableRawBufferPointer(rebasing: out[Cipher.nonceSize..<(Cipher.nonceSize + plaintext.count)]),
                tag: UnsafeMutableRawBufferPointer(rebasing: out[(Cipher.nonceSize + plaintext.count)...]))
        }
        return sealed
    }

    /// The plaintext of a sealed value, written to `output` (at least
    /// `sealed.count - overhead` bytes); false when the key or the context
    /// does not match or the bytes were changed.
    package func open(
        _ sealed: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard sealed.count >= Cipher.overhead else { return false }
        let length = sealed.count - Cipher.overhead
        return decrypt(
            UnsafeRawBufferPointer(rebasing: sealed[Cipher.nonceSize..<(Cipher.nonceSize + length)]), context: context,
            nonce: UnsafeRawBufferPointer(rebasing: sealed[0..<Cipher.nonceSize]),
            tag: UnsafeRawBufferPointer(rebasing: sealed[(Cipher.nonceSize + length)...]),
            into: UnsafeMutableRawBufferPointer(rebasing: output[0..<length]))
    }

    #if canImport(CCrypto)
        private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            _ = SHA256(bytes, bytes.count, &digest)
            return digest
        }

        private static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
            guard RAND_bytes(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
                throw TroveError(.storage, "the system random generator failed; nothing was written")
            }
        }

        private func encrypt(
            _ plaintext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
        ) throws {
            guard let ctx = EVP_CIPHER_CTX_new() else { throw TroveError(.storage, "cannot set up AES-256-GCM") }
            defer { EVP_CIPHER_CTX_free(ctx) }
            var length: Int32 = 0
            var final = [UInt8](repeating: 0, count: 32)  // GCM's final step writes nothing, but wants room
            let ok = key.withUnsafeBufferPointer { key in
                EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key.baseAddress, bytes(nonce)) == 1
                    && (context.isEmpty || EVP_EncryptUpdate(ctx, nil, &length, bytes(context), Int32(context.count)) == 1)
                    && (plaintext.isEmpty
                        || EVP_EncryptUpdate(ctx, mutableBytes(output), &length, bytes(plaintext), Int32(plaintext.count)) == 1)
                    && EVP_EncryptFinal_ex(ctx, &final, &length) == 1
                    && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(Cipher.tagSize), tag.baseAddress) == 1
            }
            guard ok else { throw TroveError(.storage, "AES-256-GCM failed to seal a value; nothing was written") }
        }

        private func decrypt(
            _ ciphertext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            tag: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) -> Bool {
            guard let ctx = EVP_CIPHER_CTX_new() else { return false }
            defer { EVP_CIPHER_CTX_free(ctx) }
            var length: Int32 = 0
            var expected = Array(tag)
            var final = [UInt8](repeating: 0, count: 32)
            return key.withUnsafeBufferPointer { key in
                EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, key.baseAddress, bytes(nonce)) == 1
                    && (context.isEmpty || EVP_DecryptUpdate(ctx, nil, &length, bytes(context), Int32(context.count)) == 1)
                    && (ciphertext.isEmpty
                        || EVP_DecryptUpdate(ctx, mutableBytes(output), &length, bytes(ciphertext), Int32(ciphertext.count))
                            == 1)
                    && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(Cipher.tagSize), &expected) == 1
                    && EVP_DecryptFinal_ex(ctx, &final, &length) == 1
            }
        }

        private func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
            buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        }

        private func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
            buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        }
    #elseif canImport(CryptoKit)
        private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
            Array(SHA256.hash(data: bytes))
        }

        private static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
            var generator = SystemRandomNumberGenerator()
            for index in buffer.indices { buffer[index] = generator.next() }
        }

        private func encrypt(
            _ plaintext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
        ) throws {
            let box = try AES.GCM.seal(
                Data(plaintext), using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: Data(nonce)),
                authenticating: Data(context))
            box.ciphertext.copyBytes(to: output)
            box.tag.copyBytes(to: tag)
        }

        private func decrypt(
            _ ciphertext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            tag: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) -> Bool {
            guard
                let box = try? AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: Data(nonce)), ciphertext: Data(ciphertext), tag: Data(tag)),
                let plaintext = try? AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: Data(context))
            else { return false }
            plaintext.copyBytes(to: output)
            return true
        }
    #endif
}
