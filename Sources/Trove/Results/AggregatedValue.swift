/// One match's value of the property an aggregate (`sum`, `average`, `min`,
/// `max`) reads: in the match's record, or in place in its cluster's column
/// when the matches are listed keys read outside a write (a list's objects:
/// no record is built for them).
enum AggregatedValue {
    case record(RecordReader)
    /// The cluster's column (nil when the cluster predates the property) and the match's slot.
    case slot(ClusterColumn?, Int, fallback: StoredValue)
    /// A value read already (a subclass object's, from its own table).
    case value(StoredValue)

    /// ``RecordReader/int(at:)``: an integer value without a ``StoredValue``.
    @inline(__always)
    func int(at column: Int) -> Int64? {
        switch self {
        case .record(let reader): return reader.int(at: column)
        case .slot(let stored, let slot, let fallback):
            if let stored { return stored.int(slot) }
            if case .int(let value) = fallback { return value }
            return nil
        case .value(let value):
            if case .int(let number) = value { return number }
            return nil
        }
    }

    /// ``RecordReader/value(at:)``.
    func value(at column: Int) -> StoredValue {
        switch self {
        case .record(let reader): return reader.value(at: column)
        case .slot(let stored, let slot, let fallback):
            guard let stored else { return fallback }
            guard let value = stored.value(slot) else { ClusterColumn.damaged(stored.type, slot) }
            return value
        case .value(let value): return value
        }
    }
}
