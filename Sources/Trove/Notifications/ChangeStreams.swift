/// Change notifications as `AsyncSequence`s: iterate them in the isolation
/// the handle lives in; each ends when the iterating task is cancelled (the
/// observer is then removed at the handle's next delivery).
///
/// The elements are `Sendable` descriptions of what changed; read the
/// objects through the `Results` or object you hold, in its isolation.
///
/// ```swift
/// @MainActor func watch(_ photos: Results<PhotoData>) async {
///     for await change in photos.changes {
///         apply(change.deletions, change.insertions, change.modifications)   // then read `photos`
///     }
/// }
/// ```
extension Results {
    /// ``observe(keyPaths:_:)`` as an async sequence: the initial state first, then each update.
    public var changes: AsyncStream<CollectionChangeSet> { changes(keyPaths: nil) }

    /// The changes, counting only modifications of the given properties.
    public func changes(keyPaths: [PartialKeyPath<Element>]?) -> AsyncStream<CollectionChangeSet> {
        ChangeStream.make { continuation in
            observe(keyPaths: keyPaths) { change in
                switch change {
                case .initial: continuation.yield(CollectionChangeSet(isInitial: true))
                case .update(_, let deletions, let insertions, let modifications):
                    continuation.yield(
                        CollectionChangeSet(deletions: deletions, insertions: insertions, modifications: modifications))
                case .error(let error):
                    continuation.yield(CollectionChangeSet(error: TroveError.wrapping(error)))
                    continuation.finish()
                }
            }
        }
    }
}

/// What changed in a collection, as an async sequence delivers it.
public struct CollectionChangeSet: Sendable {
    /// True for the first element: the state when observation started.
    public var isInitial = false
    /// Indices in the previous state.
    public var deletions: [Int] = []
    /// Indices in the new state.
    public var insertions: [Int] = []
    /// Indices in the new state of objects whose properties changed.
    public var modifications: [Int] = []
    /// Set when the collection could no longer be read; the sequence ends after it.
    public var error: TroveError?
}

/// What changed in an object, as an async sequence delivers it.
public enum ObjectChangeEvent: Sendable {
    case change([PropertyChange])
    case deleted
    case error(TroveError)
}

extension TroveError {
    static func wrapping(_ error: any Error) -> TroveError {
        error as? TroveError ?? TroveError(.storage, "\(error)")
    }
}

extension Database {
    /// One element after every commit this handle sees.
    public var changes: AsyncStream<Void> {
        ChangeStream.make { continuation in
            observe { _ in continuation.yield(()) }
        }
    }
}

/// Connects an observer to an `AsyncStream`. The stream's termination can
/// happen on any thread, so it only raises a flag; the observer drops itself
/// on the handle's isolation when it next runs (or when the stream is dropped).
enum ChangeStream {
    static func make<Element: Sendable>(_ register: (Yielder<Element>) -> NotificationToken) -> AsyncStream<Element> {
        var captured: AsyncStream<Element>.Continuation!
        let stream = AsyncStream<Element>(bufferingPolicy: .unbounded) { captured = $0 }
        let yielder = Yielder(captured)
        let token = register(yielder)
        yielder.token = token
        captured.onTermination = { [yielder] _ in yielder.cancelled.withLock { $0 = true } }
        return stream
    }
}

/// What an observer yields into; keeps the observer's token alive as long as the stream.
final class Yielder<Element: Sendable>: @unchecked Sendable {
    private let continuation: AsyncStream<Element>.Continuation
    let cancelled = Locked(false)
    /// Touched only on the handle's isolation.
    var token: NotificationToken?

    init(_ continuation: AsyncStream<Element>.Continuation) {
        self.continuation = continuation
    }

    func yield(_ element: Element) {
        if cancelled.withLock({ $0 }) {
            token?.invalidate()
            token = nil
            return
        }
        _ = continuation.yield(element)
    }

    func finish() {
        continuation.finish()
        token?.invalidate()
        token = nil
    }
}
