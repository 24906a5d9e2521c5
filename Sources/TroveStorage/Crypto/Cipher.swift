#if canImport(CCrypto)
    import CCrypto
    import Glibc
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
    #if canImport(CCrypto)
        private let contexts = (sealers: Contexts(encrypting: true), openers: Contexts(encrypting: false))
    #endif

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

        /// Random bytes drawn from OpenSSL's generator 4 KiB at a time: a
        /// nonce per value would otherwise cost a generator call per write.
        /// A forked child refills: it must not hand out its parent's bytes again.
        private static let randomPool = Locked((bytes: [UInt8](repeating: 0, count: 4096), used: 4096, process: getpid()))

        private static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
            try randomPool.withLock { pool in
                if pool.used + buffer.count > pool.bytes.count || pool.process != getpid() {
                    pool.process = getpid()
                    let filled = pool.bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
                    guard filled == 1 else {
                        throw TroveError(.storage, "the system random generator failed; nothing was written")
                    }
                    pool.used = 0
                }
                pool.bytes.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[pool.used..<(pool.used + buffer.count)]))
                }
                // Each byte is handed out once.
                pool.used += buffer.count
            }
        }

        /// Contexts with the key schedule already set up, reused across
        /// values (setting up a key costs more than sealing a small record).
        private final class Contexts: @unchecked Sendable {
            let encrypting: Bool
            private let idle = Locked<[OpaquePointer]>([])

            init(encrypting: Bool) { self.encrypting = encrypting }

            deinit {
                idle.withLock { contexts in
                    for context in contexts { EVP_CIPHER_CTX_free(context) }
                }
            }

            func with<R>(key: [UInt8], _ body: (OpaquePointer) -> R) -> R? {
                var context = idle.withLock { $0.popLast() }
                if context == nil {
                    guard let fresh = EVP_CIPHER_CTX_new() else { return nil }
                    let ready = key.withUnsafeBufferPointer { key in
                        encrypting
                            ? EVP_EncryptInit_ex(fresh, EVP_aes_256_gcm(), nil, key.baseAddress, nil) == 1
                            : EVP_DecryptInit_ex(fresh, EVP_aes_256_gcm(), nil, key.baseAddress, nil) == 1
                    }
                    guard ready else {
                        EVP_CIPHER_CTX_free(fresh)
                        return nil
                    }
                    context = fresh
                }
                let result = body(context!)
                idle.withLock { $0.append(context!) }
                return result
            }
        }

        private var sealers: Contexts { contexts.sealers }
        private var openers: Contexts { contexts.openers }

        private func encrypt(
            _ plaintext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
        ) throws {
            let ok = sealers.with(key: key) { ctx -> Bool in
                var length: Int32 = 0
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { final in
                    // A nil cipher and key keep the context's key schedule; only the nonce changes.
                    EVP_EncryptInit_ex(ctx, nil, nil, nil, bytes(nonce)) == 1
                        && (context.isEmpty || EVP_EncryptUpdate(ctx, nil, &length, bytes(context), Int32(context.count)) == 1)
                        && (plaintext.isEmpty
                            || EVP_EncryptUpdate(ctx, mutableBytes(output), &length, bytes(plaintext), Int32(plaintext.count))
                                == 1)
                        && EVP_EncryptFinal_ex(ctx, final.baseAddress, &length) == 1
                        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, Int32(Cipher.tagSize), tag.baseAddress) == 1
                }
            }
            guard ok == true else { throw TroveError(.storage, "AES-256-GCM failed to seal a value; nothing was written") }
        }

        private func decrypt(
            _ ciphertext: UnsafeRawBufferPointer, context: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            tag: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) -> Bool {
            openers.with(key: key) { ctx -> Bool in
                var length: Int32 = 0
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { scratch in
                    // The expected tag goes in a copy: OpenSSL takes it through a mutable pointer.
                    let expected = scratch.baseAddress! + 32
                    UnsafeMutableRawBufferPointer(start: expected, count: Cipher.tagSize).copyMemory(from: tag)
                    return EVP_DecryptInit_ex(ctx, nil, nil, nil, bytes(nonce)) == 1
                        && (context.isEmpty || EVP_DecryptUpdate(ctx, nil, &length, bytes(context), Int32(context.count)) == 1)
                        && (ciphertext.isEmpty
                            || EVP_DecryptUpdate(
                                ctx, mutableBytes(output), &length, bytes(ciphertext), Int32(ciphertext.count)) == 1)
                        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, Int32(Cipher.tagSize), expected) == 1
                        && EVP_DecryptFinal_ex(ctx, scratch.baseAddress, &length) == 1
                }
            } ?? false
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
