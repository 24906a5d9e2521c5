import TroveStorage

/// What a ``Results`` selects, apart from the handle it reads through and
/// the way it makes elements: the predicate, the sort and, for
/// ``Results/explain()``, the steps before a `DISTINCT` or `LIMIT`.
///
/// `Sendable` and tied to no handle, so the same query runs again on another
/// handle of the file: a frozen one, or one in another isolation domain that
/// resolves a ``ThreadSafeReference``.
struct ResultsQuery: Sendable {
    var predicate: BoundPredicate?
    var sort: [SortKey]
    /// For ``explain(_:in:)``: the steps that produced the keys a `DISTINCT`
    /// or `LIMIT` left (then in ``predicate`` as ``BoundPredicate/objectKeys(_:)``),
    /// described on the handle that explains.
    var earlierSteps: @Sendable (Database) -> [String] = { _ in [] }

    /// How Trove answers the query over `table` through `database`, one step
    /// an element: the index it uses (and how many candidates it found) or
    /// the scan, then the sort and any `DISTINCT` or `LIMIT`. Runs the index
    /// lookup, not the rest.
    func explain(_ table: TableInfo, in database: Database) -> [String] {
        var steps = earlierSteps(database)
        let transaction = database.readTransaction()
        do {
            if !steps.isEmpty, case .objectKeys = predicate {
                // What the earlier steps kept, as they kept it.
            } else if !steps.isEmpty, case .and(let parts) = predicate, case .objectKeys = parts.first {
                let columns = BoundPredicate.and(Array(parts.dropFirst())).columns.sorted()
                steps.append("filter, reading \(columns.map { table.schema.properties[$0].name }.joined(separator: ", "))")
            } else if table.isRetired {
                steps.append("\(table.name): the type's data was deleted; nothing to read")
            } else if let predicate, let plan = try QueryPlanner.indexPlan(predicate, table: table, transaction, ordered: false) {
                let count = plan.keys.count
                steps.append(
                    "\(table.name): \(plan.access.describe(table)): \(count) candidate\(count == 1 ? "" : "s")"
                        + (plan.isExact ? ", no record read" : ", each checked against the rest of the predicate"))
            } else if case .constant(false) = predicate {
                steps.append("\(table.name): nothing (the predicate is always false)")
            } else {
                let total = table.store.isVisible(in: transaction) ? try table.store.count(in: transaction) : 0
                let columns = (predicate?.columns ?? []).sorted().map { table.schema.properties[$0].name }
                steps.append(
                    "\(table.name): scan of \(total) object\(total == 1 ? "" : "s")"
                        + (columns.isEmpty ? "" : ", reading \(columns.joined(separator: ", "))"))
            }
        } catch {
            steps.append("\(table.name): cannot read the plan: \(error)")
        }
        if !sort.isEmpty {
            let keys = sort.map { "\($0.name(in: table)) \($0.ascending ? "ASC" : "DESC")" }
            if predicate == nil, sort.count == 1, !table.isRetired, QueryPlanner.canSortFromIndex(table: table, by: sort[0]) {
                steps[steps.count - 1] = "\(table.name): index on \(sort[0].name(in: table)) read in order, no record read"
                steps.append("sort by \(keys[0]): from the index, no sort step")
            } else {
                steps.append("sort by \(keys.joined(separator: ", "))")
            }
        }
        return steps
    }
}
