import Foundation

/// A hybrid logical clock: milliseconds since 1970 in the high 48 bits and a
/// counter in the low 16, so that a device's clocks always rise, even when
/// its wall clock steps back, and stay close to real time. The server keeps
/// one per space and returns it in every answer; a device moves past it.
struct HybridClock {
    /// The last clock given out or seen.
    private(set) var last: UInt64

    init(last: UInt64 = 0) { self.last = last }

    /// The wall clock now, as a hybrid clock with counter 0.
    static func wall(_ date: Date = Date()) -> UInt64 {
        UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down))) << 16
    }

    /// A new clock, later than every clock before it.
    mutating func next(now: UInt64 = HybridClock.wall()) -> UInt64 {
        last = max(last &+ 1, now)
        return last
    }

    /// Moves past a clock seen from elsewhere (the server's).
    mutating func observe(_ clock: UInt64) { last = max(last, clock) }
}

/// The clock of one property's value: who wrote it when. Ordered as the
/// server orders them: the hybrid clock, then the device id as text.
struct PropertyClock: Comparable, Hashable {
    var hlc: UInt64
    var device: UUID

    /// As the server stores it: 16 hex digits, a colon, the device id in lowercase.
    var text: String {
        let hex = String(hlc, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ":" + device.uuidString.lowercased()
    }

    init(hlc: UInt64, device: UUID) {
        self.hlc = hlc
        self.device = device
    }

    /// Reads the server's form; nil when it is not one.
    init?(text: String) {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 16, let hlc = UInt64(parts[0], radix: 16),
            let device = UUID(uuidString: String(parts[1]))
        else { return nil }
        self.init(hlc: hlc, device: device)
    }

    static func < (a: PropertyClock, b: PropertyClock) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.device.uuidString.lowercased() < b.device.uuidString.lowercased()
    }
}
