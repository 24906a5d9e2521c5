#if canImport(CCrypto)
    import CCrypto
#elseif canImport(CryptoKit)
    import CryptoKit
    import Foundation
#endif

/// HMAC-SHA-256 under one key, many times: the key's inner and outer
/// blocks are hashed once, and each message continues from copies of those
/// states. OpenSSL's one-shot `HMAC()` looks up its digest on every call,
/// which cost most of a key token (an encrypted file computes one per
/// lookup by primary key).
final class PreparedHMAC: @unchecked Sendable {
    #if canImport(CCrypto)
        /// SHA-256 after (key ⊕ ipad) and after (key ⊕ opad); only read (copied) after init.
        private let inner: OpaquePointer
        private let outer: OpaquePointer

        /// `key` of at most 64 bytes (SHA-256's block).
        init(key: UnsafeRawBufferPointer) {
            precondition(key.count <= 64, "PreparedHMAC takes keys of at most 64 bytes")
            var block = [UInt8](repeating: 0, count: 64)
            for index in 0..<key.count { block[index] = key[index] }
            func prepared(_ pad: UInt8) -> OpaquePointer {
                guard let context = EVP_MD_CTX_new() else { fatalError("Trove: OpenSSL could not allocate a digest context") }
                var padded = block.map { $0 ^ pad }
                guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, EVP_DigestUpdate(context, &padded, 64) == 1 else {
                    fatalError("Trove: OpenSSL's SHA-256 failed")
                }
                SecretBytes.wipe(&padded)
                return context
            }
            inner = prepared(0x36)
            outer = prepared(0x5c)
            SecretBytes.wipe(&block)
        }

        deinit {
            EVP_MD_CTX_free(inner)
            EVP_MD_CTX_free(outer)
        }

        /// HMAC-SHA-256 of `data`: 32 bytes.
        func authenticationCode(_ data: UnsafeRawBufferPointer) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { fatalError("Trove: OpenSSL could not allocate a digest context") }
            defer { EVP_MD_CTX_free(context) }
            var innerDigest = [UInt8](repeating: 0, count: 32)
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            guard EVP_MD_CTX_copy_ex(context, inner) == 1, EVP_DigestUpdate(context, data.baseAddress, data.count) == 1,
                EVP_DigestFinal_ex(context, &innerDigest, &length) == 1, EVP_MD_CTX_copy_ex(context, outer) == 1,
                EVP_DigestUpdate(context, &innerDigest, 32) == 1, EVP_DigestFinal_ex(context, &digest, &length) == 1
            else { fatalError("Trove: OpenSSL's SHA-256 failed") }
            SecretBytes.wipe(&innerDigest)
            return digest
        }
    #else
        private let key: SymmetricKey

        init(key: UnsafeRawBufferPointer) {
            self.key = SymmetricKey(data: Data(key))
        }

        func authenticationCode(_ data: UnsafeRawBufferPointer) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: Data(data), using: key))
        }
    #endif
}
