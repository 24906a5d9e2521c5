import TroveStorage

/// What observers compare while a handle tells them of newer commits: the
/// snapshot they last saw, still open, and what the commits since changed.
///
/// A handle with observers keeps its snapshot open across a write or a
/// refresh until they are told (as Realm keeps the old version pinned until
/// its notifiers ran), so an observer reads an object as it was and as it is.
struct Delivery {
    /// The snapshot the observers last saw; nil when the handle could not keep it.
    let previous: Transaction?
    /// What changed between `previous` and now; nil when the change log
    /// does not cover it (observers then compare in full).
    let changes: ChangeRecord?
}
