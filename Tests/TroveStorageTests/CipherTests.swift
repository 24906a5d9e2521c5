import Foundation
import Testing

@testable import TroveStorage

#if canImport(Glibc)
    import Glibc
#endif

private let userKey = pattern(64, seed: 9)

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

private func seal(_ cipher: Cipher, _ plain: [UInt8], table: String, key: [UInt8]) throws -> [UInt8] {
    try plain.withUnsafeBytes { p in try key.withUnsafeBytes { try cipher.seal(p, table: table, key: $0) } }
}

private func open(_ cipher: Cipher, _ sealed: [UInt8], table: String, key: [UInt8]) -> [UInt8]? {
    var plain = [UInt8](repeating: 0, count: max(sealed.count - Cipher.overhead, 0))
    let opened = sealed.withUnsafeBytes { s in
        key.withUnsafeBytes { k in plain.withUnsafeMutableBytes { cipher.open(s, table: table, key: k, into: $0) } }
    }
    return opened ? plain : nil
}

@Suite("AES-GCM values: per-file keys, bound to table and key")
struct CipherTests {
    @Test("HKDF-SHA256 gives RFC 5869's test vectors")
    func hkdfVectors() {
        // RFC 5869, A.1 and A.3.
        let okm = Cipher.hkdfSHA256(
            key: [UInt8](repeating: 0x0b, count: 22), salt: hex("000102030405060708090a0b0c"),
            info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        #expect(
            okm
                == hex(
                    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
        let noSalt = Cipher.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], length: 42)
        #expect(
            noSalt
                == hex(
                    "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
    }

    @Test("HMAC-SHA256 from prepared key states gives RFC 4231's test vectors and the one-shot HMAC's answers")
    func preparedHMAC() {
        // RFC 4231 test case 2: key "Jefe".
        let jefe = Array("Jefe".utf8).withUnsafeBytes { PreparedHMAC(key: $0) }
        let message = Array("what do ya want for nothing?".utf8)
        #expect(
            message.withUnsafeBytes { jefe.authenticationCode($0) }.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 31, 32, 55, 56, 63, 64, 65, 200] {
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let data = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let prepared = key.withUnsafeBytes { PreparedHMAC(key: $0) }
            #expect(data.withUnsafeBytes { prepared.authenticationCode($0) } == Cipher.hmacSHA256(key: key, data: data))
        }
    }

    @Test("a value opens only under the table and key it was sealed for, and only in its own file")
    func binding() throws {
        let salt = try Cipher.newSalt()
        let cipher = try Cipher(key: userKey, salt: salt)
        let plain = Array("Alice's diary".utf8)
        let sealed = try seal(cipher, plain, table: "obj:Alice", key: [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(open(cipher, sealed, table: "obj:Alice", key: [0, 0, 0, 0, 0, 0, 0, 1]) == plain)
        #expect(open(cipher, sealed, table: "obj:Bob", key: [0, 0, 0, 0, 0, 0, 0, 1]) == nil)
        #expect(open(cipher, sealed, table: "obj:Alice", key: [0, 0, 0, 0, 0, 0, 0, 2]) == nil)
        // The table name and the key are delimited: moving a byte between them is a change.
        #expect(open(cipher, sealed, table: "obj:Alic", key: [0x65, 0, 0, 0, 0, 0, 0, 0, 1]) == nil)
        let otherFile = try Cipher(key: userKey, salt: try Cipher.newSalt())
        #expect(open(otherFile, sealed, table: "obj:Alice", key: [0, 0, 0, 0, 0, 0, 0, 1]) == nil)
        #expect(try Cipher.newSalt() != salt)
    }

    @Test("a file encrypted before salts keeps its old binding: the key alone, AES key from SHA-256")
    func legacyBinding() throws {
        let legacy = try Cipher(key: userKey, salt: nil)
        #expect(!legacy.bindsTables)
        let sealed = try seal(legacy, [1, 2, 3], table: "obj:A", key: [7])
        #expect(open(legacy, sealed, table: "obj:B", key: [7]) == [1, 2, 3])
        #expect(open(legacy, sealed, table: "obj:A", key: [8]) == nil)
    }

    /// /proc/sys/kernel/ns_last_pid steers the next process id (root in its pid namespace).
    /// Only in a run of its own (`make test` runs it so, `TROVE_TEST_PID_STEERING=1`): rewinding
    /// the counter gives other tests' dead children's ids to new processes, and a test that tells
    /// a live process by its id (a reader of the file, a copy in progress) then fails.
    static let canSteerProcessIDs =
        access("/proc/sys/kernel/ns_last_pid", W_OK) == 0
        && ProcessInfo.processInfo.environment["TROVE_TEST_PID_STEERING"] == "1"

    @Test(
        "a forked process never hands out its parent's nonces, even when it gets a recycled process id",
        .enabled(
            if: canSteerProcessIDs,
            "needs a writable /proc/sys/kernel/ns_last_pid to recycle a process id, and a run of its own (TROVE_TEST_PID_STEERING=1)"
        ))
    func noncesAcrossForksWithRecycledProcessIDs() async {
        await #expect(processExitsWith: .success) {
            // Nonces are the first 12 bytes of each sealed value. C1 seals twice; its
            // child C2 (holding C1's pool, untouched) waits for C1 to exit and forks C3
            // with C1's process id. A pool that tells forks by process id hands C3
            // the bytes C1 used for its second nonce.
            let cipher = try! Cipher(key: userKey, salt: pattern(32, seed: 1))
            func nonce() -> [UInt8] { Array(try! seal(cipher, [1], table: "t", key: [1]).prefix(12)) }
            _ = nonce()
            // (Another process may take the id first on a busy machine: the whole fork is tried again.)
            for _ in 0..<5 {
                var pipeEnds: [Int32] = [0, 0]
                guard pipe(&pipeEnds) == 0 else { exit(10) }
                let c1 = fork()
                if c1 == 0 {
                    close(pipeEnds[0])
                    _ = nonce()
                    let c1ID = getpid()
                    let c2 = fork()
                    if c2 == 0 {
                        while getppid() == c1ID { usleep(1_000) }  // C1 has exited
                        usleep(20_000)
                        for _ in 0..<50 {
                            let steering = Glibc.open("/proc/sys/kernel/ns_last_pid", O_WRONLY)
                            let text = Array("\(c1ID - 1)".utf8)
                            _ = write(steering, text, text.count)
                            close(steering)
                            let c3 = fork()
                            if c3 == 0 {
                                if getpid() == c1ID {
                                    let bytes = nonce()
                                    _ = write(pipeEnds[1], bytes, bytes.count)
                                }
                                _exit(0)
                            }
                            var status: Int32 = 0
                            waitpid(c3, &status, 0)
                            if c3 == c1ID { _exit(0) }
                        }
                        _exit(11)  // could not get the id back
                    }
                    let bytes = nonce()
                    _ = write(pipeEnds[1], bytes, bytes.count)
                    _exit(0)
                }
                close(pipeEnds[1])
                var status: Int32 = 0
                waitpid(c1, &status, 0)
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 64)
                while true {
                    let count = read(pipeEnds[0], &buffer, buffer.count)
                    if count <= 0 { break }
                    received += buffer[0..<count]
                }
                close(pipeEnds[0])
                if received.count == 24 { exit(received[0..<12] == received[12..<24] ? 1 : 0) }
            }
            exit(12)  // C3 never ran under C1's id
        }
    }
}
