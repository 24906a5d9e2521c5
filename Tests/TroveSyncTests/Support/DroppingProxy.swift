import Foundation
import TroveStorage

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on loopback in front of the sync server that cuts some of
/// the connections it carries after a random number of bytes (both ways
/// counted), as a flaky network does: mid-login, mid-call or mid-answer.
final class DroppingProxy: @unchecked Sendable {
    /// Where devices connect instead of the server.
    let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var dropChance = 0.0
    private var random: SeededGenerator
    private var stopped = false
    private var links: [Link] = []
    /// Connections cut so far.
    private(set) var dropped = 0

    /// Starts forwarding connections on a free port to `target` on loopback.
    init(target: Int, seed: UInt64) throws {
        self.target = target
        random = SeededGenerator(seed: seed)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = DroppingProxy.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw HarnessError("the proxy cannot listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// The chance that a new connection is cut after a random 50–20,000 bytes (0: none is).
    func setDropChance(_ chance: Double) {
        lock.withLock { dropChance = chance }
    }

    /// Stops accepting and closes every connection.
    func stop() {
        let open = lock.withLock {
            stopped = true
            return links
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        open.forEach { $0.cut() }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if lock.withLock({ stopped }) { return }
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = DroppingProxy.loopback(port: UInt16(target))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(server)
                close(client)
                continue
            }
            let link = lock.withLock {
                let budget = Double(random.next() % 1000) / 1000 < dropChance ? Int(random.next() % 19_950) + 50 : nil
                let link = Link(client, server, budget: budget) { [self] in lock.withLock { dropped += 1 } }
                links.removeAll { $0.isClosed }
                links.append(link)
                return link
            }
            Thread.detachNewThread { link.pump(from: client, to: server) }
            Thread.detachNewThread { link.pump(from: server, to: client) }
        }
    }

    /// One proxied connection: two sockets, and the bytes it may still carry.
    final class Link: @unchecked Sendable {
        private let sockets: (Int32, Int32)
        private let lock = NSLock()
        private var remaining: Int?
        private var pumps = 2
        private var cutOff = false
        private let onDrop: @Sendable () -> Void

        init(_ a: Int32, _ b: Int32, budget: Int?, onDrop: @escaping @Sendable () -> Void) {
            sockets = (a, b)
            remaining = budget
            self.onDrop = onDrop
        }

        var isClosed: Bool { lock.withLock { cutOff } }

        /// Forwards until either side closes or the budget runs out; the
        /// second pump to end closes both sockets.
        func pump(from source: Int32, to destination: Int32) {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                let allowed = lock.withLock {
                    guard let left = remaining else { return count }
                    remaining = left - min(left, count)
                    return min(left, count)
                }
                var sent = 0
                while sent < allowed {
                    let written = buffer.withUnsafeBytes {
                        send(destination, $0.baseAddress! + sent, allowed - sent, Int32(MSG_NOSIGNAL))
                    }
                    if written <= 0 { break }
                    sent += written
                }
                if allowed < count {
                    onDrop()
                    break
                }
                if sent < allowed { break }
            }
            cut()
            let last = lock.withLock {
                pumps -= 1
                return pumps == 0
            }
            if last {
                close(sockets.0)
                close(sockets.1)
            }
        }

        /// Shuts both sockets down (each pump then ends).
        func cut() {
            lock.withLock { cutOff = true }
            shutdown(sockets.0, Int32(SHUT_RDWR))
            shutdown(sockets.1, Int32(SHUT_RDWR))
        }
    }
}
