import Foundation

/// How a sync goes: what it sent and received so far.
///
/// ```swift
/// try await sync.sync { progress in
///     if progress.phase == .pushing { print("\(progress.sent) of \(progress.toSend) sent") }
/// }
/// ```
public struct SyncProgress: Sendable, Equatable {
    /// The parts of a sync, in order.
    public enum Phase: Sendable, Equatable {
        /// Sending this device's changes.
        case pushing
        /// Fetching what others changed, page by page.
        case pulling
        /// Applying what was fetched, in one write.
        case applying
    }

    /// What the sync is doing now.
    public var phase: Phase
    /// Changes the server has taken (applied or refused) so far.
    public var sent = 0
    /// Changes there were to send when the sync began.
    public var toSend = 0
    /// Rows fetched so far (the server does not say how many there are in all).
    public var received = 0

    /// A progress report (`SyncProgress(phase: .pulling, received: 5_000)`).
    public init(phase: Phase, sent: Int = 0, toSend: Int = 0, received: Int = 0) {
        self.phase = phase
        self.sent = sent
        self.toSend = toSend
        self.received = received
    }
}
