import Foundation

/// A stop flag and the results of threads, shared under a lock.
final class ThreadResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var reads = 0
    private var latencies: [Double] = []
    private var failure: (any Error)?

    var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    func add(reads count: Int) {
        lock.lock()
        reads += count
        lock.unlock()
    }

    func add(latencies values: [Double]) {
        lock.lock()
        latencies += values
        lock.unlock()
    }

    func fail(_ error: any Error) {
        lock.lock()
        if failure == nil { failure = error }
        lock.unlock()
    }

    func result() throws -> (reads: Int, latencies: [Double]) {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        return (reads, latencies)
    }
}

/// Runs `readers` reader threads and one writer thread for `seconds`, each
/// with its own handle on the file, and collects reads and commit latencies.
/// A reader returns how many reads it made; the writer its commit durations.
func runReadersAndWriter(
    readers: Int, seconds: Double,
    reader: @escaping @Sendable (_ index: Int, _ results: ThreadResults) throws -> Int,
    writer: @escaping @Sendable (_ results: ThreadResults) throws -> [Double]
) throws -> (reads: Int, latencies: [Double]) {
    let results = ThreadResults()
    let group = DispatchGroup()
    for index in 0..<readers {
        group.enter()
        Thread.detachNewThread {
            do { results.add(reads: try reader(index, results)) } catch { results.fail(error) }
            group.leave()
        }
    }
    group.enter()
    Thread.detachNewThread {
        do { results.add(latencies: try writer(results)) } catch { results.fail(error) }
        group.leave()
    }
    Thread.sleep(forTimeInterval: seconds)
    results.stop()
    group.wait()
    return try results.result()
}
