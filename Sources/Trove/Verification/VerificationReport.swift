/// What ``Database/verify()`` found: every violation of the file's
/// invariants, not just whether there was one.
public struct VerificationReport: Sendable, CustomStringConvertible {
    /// One broken invariant, with the type and the object or entry involved.
    public struct Problem: Sendable, CustomStringConvertible {
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

        public var kind: Kind
        public var typeName: String
        public var detail: String

        public var description: String { "\(typeName): \(kind.rawValue): \(detail)" }
    }

    public var problems: [Problem] = []
    /// How many pages of the file, objects and index entries were checked.
    public var pagesChecked = 0
    public var objectsChecked = 0
    public var indexEntriesChecked = 0

    /// True when nothing is wrong.
    public var isValid: Bool { problems.isEmpty }

    public var description: String {
        var lines = [
            "checked \(pagesChecked) pages, \(objectsChecked) objects and \(indexEntriesChecked) index entries: "
                + (isValid ? "no problems" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")")
        ]
        lines += problems.map { "- \($0)" }
        return lines.joined(separator: "\n")
    }
}
