/// A predicate run over a cluster's columns instead of its records: each
/// comparison is one loop over the slots of the one column it reads,
/// leaving a match flag per object; `AND`, `OR` and `NOT` combine the flags.
/// No record is built and no other column is read, which is what makes an
/// unindexed filter, count or sum over the cluster layout fast.
///
/// Only what the loops can answer exactly is taken (integer, `Double` and
/// `Bool` properties against constants, `BETWEEN` on integers, and the
/// three connectives); any other predicate is run on records as before.
/// nil values follow the record path: a comparison with nil is false,
/// except `!=`, which holds.
indirect enum ClusterFilter {
    case constant(Bool)
    /// An integer property within `low...high` (or, `negated`, outside it); nil gives `nullMatches`.
    case integer(column: Int, low: Int64, high: Int64, negated: Bool, nullMatches: Bool)
    case double(column: Int, op: ComparisonOperator, value: Double)
    case bool(column: Int, value: Bool, equal: Bool)
    case and([ClusterFilter])
    case or([ClusterFilter])
    case not(ClusterFilter)

    /// The filter a predicate amounts to, or nil when some part of it has no column loop.
    init?(_ predicate: BoundPredicate, _ layout: RecordLayout) {
        switch predicate {
        case .constant(let value):
            self = .constant(value)
        case .and(let parts):
            var filters: [ClusterFilter] = []
            if let bounds = IntegerBounds(parts, layout) {
                // `score >= 10 AND score < 20`: one interval, one loop.
                for index in bounds.columns.indices {
                    filters.append(
                        .integer(
                            column: bounds.columns[index], low: bounds.lows[index], high: bounds.highs[index], negated: false,
                            nullMatches: false))
                }
                self = filters.count == 1 ? filters[0] : .and(filters)
                return
            }
            for part in parts {
                guard let filter = ClusterFilter(part, layout) else { return nil }
                filters.append(filter)
            }
            self = .and(filters)
        case .or(let parts):
            var filters: [ClusterFilter] = []
            for part in parts {
                guard let filter = ClusterFilter(part, layout) else { return nil }
                filters.append(filter)
            }
            self = .or(filters)
        case .not(let inner):
            guard let filter = ClusterFilter(inner, layout) else { return nil }
            self = .not(filter)
        case .compare(let column, let op, .int(let constant), let options) where options.isEmpty:
            guard layout.types[column].isInteger else { return nil }
            if op == .notEqual {
                self = .integer(column: column, low: constant, high: constant, negated: true, nullMatches: true)
                return
            }
            guard let (low, high) = IntegerBounds.interval(op, constant) else { return nil }
            self = .integer(column: column, low: low, high: high, negated: false, nullMatches: false)
        case .compareList(let column, .between, let values, let options) where options.isEmpty && values.count == 2:
            guard layout.types[column].isInteger, case .int(let low) = values[0], case .int(let high) = values[1] else {
                return nil
            }
            self = .integer(column: column, low: low, high: high, negated: false, nullMatches: false)
        case .compare(let column, let op, .double(let constant), let options) where options.isEmpty:
            guard layout.types[column] == .double,
                [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op)
            else { return nil }
            self = .double(column: column, op: op, value: constant)
        case .compare(let column, let op, .bool(let constant), let options) where options.isEmpty:
            guard layout.types[column] == .bool, op == .equal || op == .notEqual else { return nil }
            self = .bool(column: column, value: constant, equal: op == .equal)
        default:
            return nil
        }
    }

    /// Sets `matches[slot]` for every slot of the cluster: false for a deleted object's.
    func evaluate(_ view: ClusterView, _ layout: RecordLayout, into matches: UnsafeMutableBufferPointer<Bool>) throws {
        try evaluateEverySlot(view, layout, into: matches)
        view.clearDeleted(in: matches)
    }

    /// Sets `matches[slot]` for every slot of the cluster, deleted or not.
    private func evaluateEverySlot(
        _ view: ClusterView, _ layout: RecordLayout, into matches: UnsafeMutableBufferPointer<Bool>
    ) throws {
        let count = view.count
        switch self {
        case .constant(let value):
            matches.initialize(repeating: value)
        case .integer(let column, let low, let high, let negated, let nullMatches):
            guard let stored = try view.column(column) else {
                // The cluster predates the property: every object holds its default.
                let fallback = layout.fallbacks[column]
                let match: Bool
                if case .int(let value) = fallback {
                    match = (value >= low && value <= high) != negated
                } else {
                    match = nullMatches
                }
                return matches.initialize(repeating: match)
            }
            let base = stored.bytes.baseAddress.unsafelyUnwrapped + stored.slotOffset(0)
            switch layout.types[column] {
            case .int8: Self.range(Int8.self, base, count, low, high, negated, matches)
            case .int16: Self.range(Int16.self, base, count, low, high, negated, matches)
            case .int32: Self.range(Int32.self, base, count, low, high, negated, matches)
            default: Self.range(Int64.self, base, count, low, high, negated, matches)
            }
            if stored.hasNulls { for slot in 0..<count where stored.isNull(slot) { matches[slot] = nullMatches } }
        case .double(let column, let op, let value):
            guard let stored = try view.column(column) else {
                let match: Bool
                if case .double(let fallback) = layout.fallbacks[column] {
                    match = Self.compare(fallback, op, value)
                } else {
                    match = op == .notEqual
                }
                return matches.initialize(repeating: match)
            }
            let base = stored.bytes.baseAddress.unsafelyUnwrapped + stored.slotOffset(0)
            func loop(_ test: (Double) -> Bool) {
                for slot in 0..<count {
                    matches[slot] = test(
                        Double(bitPattern: UInt64(littleEndian: (base + 8 * slot).loadUnaligned(as: UInt64.self))))
                }
            }
            switch op {
            case .equal: loop { $0 == value }
            case .notEqual: loop { $0 != value }
            case .less: loop { $0 < value }
            case .lessOrEqual: loop { $0 <= value }
            case .greater: loop { $0 > value }
            default: loop { $0 >= value }
            }
            if stored.hasNulls { for slot in 0..<count where stored.isNull(slot) { matches[slot] = op == .notEqual } }
        case .bool(let column, let value, let equal):
            guard let stored = try view.column(column) else {
                let match: Bool
                if case .bool(let fallback) = layout.fallbacks[column] {
                    match = (fallback == value) == equal
                } else {
                    match = !equal
                }
                return matches.initialize(repeating: match)
            }
            let base = stored.bytes.baseAddress.unsafelyUnwrapped + stored.slotOffset(0)
            for slot in 0..<count { matches[slot] = ((base + slot).load(as: UInt8.self) != 0) == value ? equal : !equal }
            if stored.hasNulls { for slot in 0..<count where stored.isNull(slot) { matches[slot] = !equal } }
        case .and(let parts), .or(let parts):
            let isAnd = if case .and = self { true } else { false }
            guard let first = parts.first else { return matches.initialize(repeating: isAnd) }
            try first.evaluateEverySlot(view, layout, into: matches)
            guard parts.count > 1 else { return }
            try withUnsafeTemporaryAllocation(of: Bool.self, capacity: count) { other in
                for part in parts.dropFirst() {
                    try part.evaluateEverySlot(view, layout, into: UnsafeMutableBufferPointer(rebasing: other[0..<count]))
                    if isAnd {
                        for slot in 0..<count { matches[slot] = matches[slot] && other[slot] }
                    } else {
                        for slot in 0..<count { matches[slot] = matches[slot] || other[slot] }
                    }
                }
            }
        case .not(let inner):
            try inner.evaluateEverySlot(view, layout, into: matches)
            for slot in 0..<count { matches[slot] = !matches[slot] }
        }
    }

    @inline(__always)
    private static func range<T: FixedWidthInteger & SignedInteger>(
        _: T.Type, _ base: UnsafeRawPointer, _ count: Int, _ low: Int64, _ high: Int64, _ negated: Bool,
        _ matches: UnsafeMutableBufferPointer<Bool>
    ) {
        let stride = MemoryLayout<T>.size
        guard low <= high else { return matches.initialize(repeating: negated) }
        // low <= value <= high as one unsigned comparison, without branches.
        let width = UInt64(bitPattern: high &- low)
        var slot = 0
        if T.self == Int64.self {
            // Eight at a time (little-endian values, as stored on every platform Trove runs on).
            let lows = SIMD8<Int64>(repeating: low)
            let widths = SIMD8<UInt64>(repeating: width)
            let flip = SIMD8<UInt8>(repeating: negated ? 1 : 0)
            let target = UnsafeMutableRawPointer(matches.baseAddress.unsafelyUnwrapped)
            while slot + 8 <= count {
                let values = (base + 8 * slot).loadUnaligned(as: SIMD8<Int64>.self)
                let inside = SIMD8<UInt64>(truncatingIfNeeded: values &- lows) .<= widths
                let flags = SIMD8<UInt8>(truncatingIfNeeded: SIMD8<Int64>(repeating: 0).replacing(with: 1, where: inside)) ^ flip
                (target + slot).storeBytes(of: flags, as: SIMD8<UInt8>.self)
                slot += 8
            }
        }
        while slot < count {
            let value = Int64(T(littleEndian: (base + stride * slot).loadUnaligned(as: T.self)))
            matches[slot] = (UInt64(bitPattern: value &- low) <= width) != negated
            slot += 1
        }
    }

    private static func compare(_ actual: Double, _ op: ComparisonOperator, _ value: Double) -> Bool {
        switch op {
        case .equal: return actual == value
        case .notEqual: return actual != value
        case .less: return actual < value
        case .lessOrEqual: return actual <= value
        case .greater: return actual > value
        default: return actual >= value
        }
    }
}
