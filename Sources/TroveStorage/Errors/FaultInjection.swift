#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes the Nth LMDB call of one thread fail with a chosen code, so tests
/// can check that every failure surfaces as a typed error, rolls back, and
/// leaves the handle usable (SQLite's I/O-error tests, Realm's SimulatedFailure).
///
/// Only the thread that armed it is affected, so tests can run in parallel.
package enum FaultInjection {
    private struct Plan {
        var failAt: Int
        var code: Int32
        var calls = 0
        var fired = false
    }

    private static let plans = Locked<[UInt: Plan]>([:])

    private static var currentThread: UInt {
        withUnsafeBytes(of: pthread_self()) { $0.load(as: UInt.self) }
    }

    /// From now on, on this thread, the `failAt`-th LMDB call (1-based) returns `code`.
    package static func arm(failAt: Int, code: Int32) {
        let me = currentThread
        plans.withLock { $0[me] = Plan(failAt: failAt, code: code) }
    }

    /// Stops injecting on this thread; returns how many calls were counted and whether the fault fired.
    @discardableResult
    package static func disarm() -> (calls: Int, fired: Bool) {
        let me = currentThread
        return plans.withLock { plans in
            let plan = plans.removeValue(forKey: me)
            return (plan?.calls ?? 0, plan?.fired ?? false)
        }
    }

    /// The code to return instead of making the call, if this call is the one to fail.
    /// Release builds compile injection out: it costs nothing there.
    @inline(__always)
    static func injectedCode() -> Int32? {
        #if !DEBUG
            return nil
        #else
            return debugInjectedCode()
        #endif
    }

    private static func debugInjectedCode() -> Int32? {
        let me = currentThread
        return plans.withLock { plans -> Int32? in
            guard var plan = plans[me] else { return nil }
            plan.calls += 1
            defer { plans[me] = plan }
            if plan.calls == plan.failAt {
                plan.fired = true
                return plan.code
            }
            return nil
        }
    }
}

extension LMDBCall {
    /// Runs one fallible LMDB call, unless fault injection fails it instead.
    /// `onInjected` undoes what LMDB would have undone on a real failure
    /// (a failed commit frees its transaction).
    @inline(__always)
    static func run(_ body: () -> Int32, onInjected: () -> Void = {}) -> Int32 {
        if let code = FaultInjection.injectedCode() {
            onInjected()
            return code
        }
        return body()
    }
}
