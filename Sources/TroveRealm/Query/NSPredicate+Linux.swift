import Foundation
import Trove

#if !canImport(Darwin)
    /// A query string with its arguments, as Realm code builds one with
    /// `NSPredicate(format:)` — which swift-corelibs-foundation cannot make on
    /// Linux. With `import TroveRealm` this type stands in for Foundation's
    /// there: Realm code that filters with predicates builds and runs, the
    /// format and its arguments going to the query unchanged (Trove's query
    /// syntax is NSPredicate's). On Apple platforms Foundation's is used.
    ///
    /// ```swift
    /// let adults = realm.objects(Person.self).filter(NSPredicate(format: "age >= %@", 18))
    /// ```
    open class NSPredicate: NSObject, @unchecked Sendable {
        /// The query string, with `%@` (and `%K`, `%d`...) placeholders.
        public let predicateFormat: String
        /// The values of the placeholders, in order.
        public let arguments: [Any]

        /// A predicate from a format string and its arguments.
        ///
        /// ```swift
        /// let named = NSPredicate(format: "name == %@ AND age > %@", argumentArray: ["Rex", 2])
        /// ```
        public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
            self.predicateFormat = predicateFormat
            self.arguments = arguments ?? []
        }

        /// A predicate from a format string and its arguments.
        ///
        /// ```swift
        /// let named = NSPredicate(format: "name == %@", "Rex")
        /// ```
        public convenience init(format predicateFormat: String, _ arguments: Any...) {
            self.init(format: predicateFormat, argumentArray: arguments)
        }

        /// A predicate that matches everything (`true`) or nothing.
        ///
        /// ```swift
        /// let all = realm.objects(Dog.self).filter(NSPredicate(value: true))
        /// ```
        public convenience init(value: Bool) {
            self.init(format: value ? "TRUEPREDICATE" : "FALSEPREDICATE", argumentArray: [])
        }

        /// Equal when the format and the arguments are (arguments compared as stored values).
        open override func isEqual(_ object: Any?) -> Bool {
            guard let other = object as? NSPredicate, other.predicateFormat == predicateFormat,
                other.arguments.count == arguments.count
            else { return false }
            return zip(arguments, other.arguments).allSatisfy { Self.sameArgument($0, $1) }
        }

        /// Hashes the format.
        open override var hash: Int { predicateFormat.hashValue }

        /// The format, as Foundation describes a predicate.
        open override var description: String { predicateFormat }

        private static func sameArgument(_ a: Any, _ b: Any) -> Bool {
            // A nil optional is the null argument `NSNull` is.
            let (a, b) = (flattenOptional(a) ?? NSNull(), flattenOptional(b) ?? NSNull())
            if let x = elements(a), let y = elements(b) {
                return x.count == y.count && zip(x, y).allSatisfy { sameArgument($0, $1) }
            }
            if a is NSNull || b is NSNull { return a is NSNull && b is NSNull }
            if let x = StoredValue(any: a), let y = StoredValue(any: b) {
                // An NSNumber reads as a Double: numbers are the same when their values are.
                if let p = x.numeric, let q = y.numeric, a is NSNumber || b is NSNumber { return p == q }
                return x == y
            }
            if let x = a as? Object, let y = b as? Object { return x == y }
            return String(describing: a) == String(describing: b)
        }

        /// The elements of an array argument: a Swift array or an `NSArray`.
        private static func elements(_ value: Any) -> [Any]? {
            if let array = value as? NSArray { return array.map { $0 } }
            return value as? [Any]
        }
    }
#endif
