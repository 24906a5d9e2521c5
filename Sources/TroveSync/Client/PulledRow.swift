import Foundation

/// One row a pull (or `current_rows`) gave, kept compactly until the write
/// that applies it: a page's JSON objects are converted as it arrives, so a
/// large bootstrap holds Swift strings, not the parsed JSON of every page.
struct PulledRow {
    /// The synced type.
    let type: String
    /// The primary key, as text.
    let id: String
    /// The sequence of its last change (the pull's cursor).
    let seq: UInt64
    /// Causal length: odd alive, even deleted; 0 for an object the server never had.
    let cl: UInt64
    /// Per property: its value as text (a property whose value is NULL is absent).
    let values: [String: String]
    /// Per property: its clock, or a set's or map's state (absent: never written in this life).
    let clocks: [String: String]
    /// The `trove_extra` entries that are `[text, clock]` pairs: a date's exact bits, and
    /// properties the server has no column for.
    let extra: [String: (text: String, clock: String)]

    /// Reads a row in pull's shape; nil when it has no type, key or causal length.
    init?(_ row: [String: Any]) {
        guard let type = row["t"] as? String, let id = row["id"] as? String, let cl = row["cl"] as? Int, cl >= 0 else {
            return nil
        }
        self.type = type
        self.id = id
        seq = UInt64(max(0, row["seq"] as? Int ?? 0))
        self.cl = UInt64(cl)
        values = (row["v"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        clocks = (row["c"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        var extra: [String: (text: String, clock: String)] = [:]
        for (name, entry) in row["x"] as? [String: Any] ?? [:] {
            guard let pair = entry as? [Any], pair.count == 2, let text = pair[0] as? String, let clock = pair[1] as? String
            else { continue }
            extra[name] = (text, clock)
        }
        self.extra = extra
    }

    /// A row for an object the server has no row for (`cl` 0): it goes here.
    init(gone type: String, id: String) {
        self.type = type
        self.id = id
        seq = 0
        cl = 0
        values = [:]
        clocks = [:]
        extra = [:]
    }

    /// The rows of an answer's `rows` array.
    static func rows(of answer: [String: Any]) -> [PulledRow] {
        (answer["rows"] as? [[String: Any]] ?? []).compactMap(PulledRow.init)
    }
}
