/// What ``Database/verify()`` found: every violation of the file's
/// invariants, not just whether there was one.
public struct VerificationReport: Sendable, CustomStringConvertible {
    /// One broken invariant, with the type and the object or entry involved.
    public struct Problem: Sendable, CustomStringConvertible {
        /// Which invariant a problem breaks.
        public enum Kind: String, Sendable {
            /// A table the schema needs is missing.
            case missingTable
            /// A record that cannot be read under its schema.
            case damagedRecord
            /// An object keyed by its integer primary key holds another value.
            case primaryKeyMismatch
            /// An object missing from an index (or the primary-key index).
            case missingIndexEntry
            /// An index entry with no object behind it, or for another value.
            case danglingIndexEntry
            /// A link or list element pointing at an object that does not exist.
            case danglingLink
            /// The inverse-link table disagrees with the links stored.
            case inverseLinkMismatch
            /// A list element whose owner does not exist, or a gap in a list's positions.
            case damagedList
            /// A B-tree page of the file that is damaged (bad header, an entry
            /// outside the page, a link to a page that cannot be one); the
            /// problem's `typeName` is the table the page belongs to.
            case damagedPage
        }

        /// Which invariant is broken.
        public var kind: Kind
        /// The stored type involved; for ``Kind/damagedPage``, the table the page
        /// belongs to.
        public var typeName: String
        /// A sentence saying what is wrong and where.
        public var detail: String

        /// The problem on one line: type, kind and detail.
        public var description: String { "\(typeName): \(kind.rawValue): \(detail)" }
    }

    /// Every problem found; empty when the file is sound.
    public var problems: [Problem] = []
    /// How many pages of the file, objects and index entries were checked.
    public var pagesChecked = 0
    /// How many objects were checked.
    public var objectsChecked = 0
    /// How many index entries were checked.
    public var indexEntriesChecked = 0

    /// True when nothing is wrong.
    public var isValid: Bool { problems.isEmpty }

    /// A line saying what was checked and how many problems were found, then
    /// one line per problem.
    public var description: String {
        var lines = [
            "checked \(pagesChecked) pages, \(objectsChecked) objects and \(indexEntriesChecked) index entries: "
                + (isValid ? "no problems" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")")
        ]
        lines += problems.map { "- \($0)" }
        return lines.joined(separator: "\n")
    }
}
