#if canImport(CCrypto)
    import CCrypto
    import Glibc
#elseif canImport(CryptoKit)
    import CryptoKit
    import Foundation
#endif

/// AES-256-GCM for values at rest: each sealed value is a fresh 12-byte
/// nonce, the ciphertext and a 16-byte tag.
///
/// The AES key is derived per file: HKDF-SHA256 of the 64-byte user key with
/// a random 32-byte salt stored (unsealed) in the file, so the same user key
/// gives every file its own AES key and a value copied from one file into
/// another does not open. The associated data authenticated with each value
/// is its table's name and its key in that table, so a value moved under
/// another key or into another table, or changed at all, fails to open
/// instead of reading as something else.
///
/// Files encrypted before salts (format 1) have no salt: their AES key is the
/// SHA-256 of the user key and only the entry's key is authenticated. They
/// keep that binding until rewritten (`writeCopy(to:encryptionKey:)`).
///
/// OpenSSL's libcrypto on Linux, CryptoKit on Apple platforms.
package final class Cipher: Sendable {
    /// Bytes a sealed value adds: the nonce and the tag.
    package static let overhead = nonceSize + tagSize
    static let nonceSize = 12
    static let tagSize = 16
    /// Bytes of a file's key-derivation salt.
    package static let saltSize = 32
    /// HKDF's context string: a new scheme gets a new one.
    static let derivationInfo = Array("trove aes-256-gcm value key v2".utf8)

    private let key: SecretBytes
    /// Whether the table name is authenticated with each value (files with a salt).
    package let bindsTables: Bool
    #if canImport(CCrypto)
        private let contexts = (sealers: Contexts(encrypting: true), openers: Contexts(encrypting: false))
    #endif

    /// `key` is the 64-byte key Realm users know; `salt` is the file's
    /// (nil for a file encrypted before salts).
    package init(key: [UInt8], salt: [UInt8]?) throws {
        guard key.count == 64 else {
            throw TroveError(.invalidValue, "an encryption key must be 64 bytes, not \(key.count)")
        }
        var derived =
            salt.map { Cipher.hkdfSHA256(key: key, salt: $0, info: Cipher.derivationInfo, length: 32) } ?? Cipher.sha256(key)
        self.key = SecretBytes(taking: &derived)
        bindsTables = salt != nil
    }

    /// A fresh random salt for a new file.
    package static func newSalt() throws -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: saltSize)
        try salt.withUnsafeMutableBytes { try randomBytes($0) }
        return salt
    }

    /// `plaintext` sealed, authenticating the table name and the value's key with it.
    package func seal(_ plaintext: UnsafeRawBufferPointer, table: String, key: UnsafeRawBufferPointer) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + Cipher.overhead)
        try sealed.withUnsafeMutableBytes { out in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[0..<Cipher.nonceSize])
            try Cipher.randomBytes(nonce)
            try withAssociatedData(table: table, key: key) { context in
                try encrypt(
                    plaintext, context: context, nonce: UnsafeRawBufferPointer(nonce),
                    into: UnsafeMutableRawBufferPointer(rebasing: out[Cipher.nonceSize..<(Cipher.nonceSize + plaintext.count)]),
                    tag: UnsafeMutableRawBufferPointer(rebasing: out[(Cipher.nonceSize + plaintext.count)...]))
            }
        }
        return sealed
    }

    /// The plaintext of a sealed value, written to `output` (at least
    /// `sealed.count - overhead` bytes); false when the key, the table or
    /// the value's key does not match or the bytes were changed.
    package func open(
        _ sealed: UnsafeRawBufferPointer, table: String, key: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard sealed.count >= Cipher.overhead, output.count >= sealed.count - Cipher.overhead else { return false }
        let length = sealed.count - Cipher.overhead
        return withAssociatedData(table: table, key: key) { context in
            decrypt(
                UnsafeRawBufferPointer(rebasing: sealed[Cipher.nonceSize..<(Cipher.nonceSize + length)]), context: context,
                nonce: UnsafeRawBufferPointer(rebasing: sealed[0..<Cipher.nonceSize]),
                tag: UnsafeRawBufferPointer(rebasing: sealed[(Cipher.nonceSize + length)...]),
                into: UnsafeMutableRawBufferPointer(rebasing: output[0..<length]))
        }
    }

    /// The associated data: the table name's length (4 bytes, little-endian),
    /// the name and the entry's key — or only the key in a file without a salt.
    private func withAssociatedData<R>(
        table: String, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        guard bindsTables else { return try body(key) }
        var name = table  // withUTF8 gives the bytes in place (table names are native strings)
        return try name.withUTF8 { name in
            let size = 4 + name.count + key.count
            return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
                buffer.storeBytes(of: UInt32(name.count).littleEndian, as: UInt32.self)
                UnsafeMutableRawBufferPointer(rebasing: buffer[4..<(4 + name.count)]).copyMemory(
                    from: UnsafeRawBufferPointer(name))
                if !key.isEmpty {
                    UnsafeMutableRawBufferPointer(rebasing: buffer[(4 + name.count)...]).copyMemory(from: key)
                }
                return try body(UnsafeRawBufferPointer(buffer))
            }
        }
    }

    /// HKDF (RFC 5869) with SHA-256: extract with `salt`, expand with `info`.
    package static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        var pseudorandomKey = hmacSHA256(key: salt, data: key)
        defer { SecretBytes.wipe(&pseudorandomKey) }
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            var input = block + info + [counter]
            SecretBytes.wipe(&block)
            block = hmacSHA256(key: pseudorandomKey, data: input)
            SecretBytes.wipe(&input)
            output += block
            counter += 1
        }
        SecretBytes.wipe(&block)
        if output.count > length { output.removeLast(output.count - length) }
        return output
    }

    #if canImport(CCrypto)
        private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            _ = SHA256(bytes, bytes.count, &digest)
            return digest
        }

        static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            _ = HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &digest, &length)
            return digest
        }

        static func hmacSHA256(key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            _ = HMAC(
                EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                data.count, &digest, &length)
            return digest
        }

        /// Random bytes drawn from OpenSSL's generator 4 KiB at a time: a
        /// nonce per value would otherwise cost a generator call per write
        /// (about 0.5 µs). Each byte is handed out once; a forked child must
        /// not hand out its parent's bytes again, so a fork (seen by a
        /// `pthread_atfork` handler, not by comparing process ids, which are
        /// reused) empties the pool.
        private static let randomPool: Locked<(bytes: [UInt8], used: Int, forks: UInt64)> = {
            pthread_atfork(nil, nil, { forkCount &+= 1 })
            return Locked((bytes: [UInt8](repeating: 0, count: 4096), used: 4096, forks: forkCount))
        }()

        private static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
            try randomPool.withLock { pool in
                if pool.used + buffer.count > pool.bytes.count || pool.forks != forkCount {
                    pool.forks = forkCount
                    let filled = pool.bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
                    guard filled == 1 else {
                        throw TroveError(.storage, "the system random generator failed; nothing was written")
                    }
                    pool.used = 0
                }
                pool.bytes.withUnsafeBytes {
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[pool.used..<(pool.used + buffer.count)]))
                }
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

            func with<R>(key: UnsafeRawBufferPointer, _ body: (OpaquePointer) -> R) -> R? {
                var context = idle.withLock { $0.popLast() }
                if context == nil {
                    guard let fresh = EVP_CIPHER_CTX_new() else { return nil }
                    let keyBytes = key.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    let ready =
                        encrypting
                        ? EVP_EncryptInit_ex(fresh, EVP_aes_256_gcm(), nil, keyBytes, nil) == 1
                        : EVP_DecryptInit_ex(fresh, EVP_aes_256_gcm(), nil, keyBytes, nil) == 1
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
            let ok = sealers.with(key: key.bytes) { ctx -> Bool in
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
            openers.with(key: key.bytes) { ctx -> Bool in
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

        static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
        }

        static func hmacSHA256(key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: Data(data), using: SymmetricKey(data: Data(key))))
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
                Data(plaintext), using: SymmetricKey(data: key.bytes), nonce: AES.GCM.Nonce(data: Data(nonce)),
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
                let plaintext = try? AES.GCM.open(box, using: SymmetricKey(data: key.bytes), authenticating: Data(context))
            else { return false }
            plaintext.copyBytes(to: output)
            return true
        }
    #endif
}

/// Bumped in a forked child (by the `pthread_atfork` handler above), before
/// any other thread exists there.
#if canImport(CCrypto)
    nonisolated(unsafe) private var forkCount: UInt64 = 0
#endif

/// Key bytes in memory of their own, wiped when no longer used.
final class SecretBytes: Sendable {
    nonisolated(unsafe) private let storage: UnsafeMutableRawBufferPointer

    /// Takes the bytes over: `bytes` is wiped.
    init(taking bytes: inout [UInt8]) {
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        SecretBytes.wipe(&bytes)
    }

    deinit {
        SecretBytes.wipe(storage)
        storage.deallocate()
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }

    /// Zeroes `buffer` in a way the optimizer keeps.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(CCrypto)
            OPENSSL_cleanse(base, buffer.count)
        #else
            _ = memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }

    static func wipe(_ array: inout [UInt8]) {
        array.withUnsafeMutableBytes { wipe($0) }
    }
}
