import Foundation

// Codable for model classes, as Realm has it: declare `Codable` on an
// `Object` (or `EmbeddedObject`) subclass and Swift synthesizes its
// `init(from:)` and `encode(to:)` from the `@Persisted` properties, whose
// wrapper, lists, sets and maps code their values. A decoded object is
// unmanaged, ready to `add`; only an unmanaged object encodes this way.

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (its declared options, such as being the
    /// primary key, come from the model, not from here). A missing key is an
    /// error unless the property is optional, as in Realm.
    ///
    /// ```swift
    /// final class Dog: Object, Codable {
    ///     @Persisted(primaryKey: true) var name = ""
    ///     @Persisted var age: Int?
    /// }
    /// let dogs = try JSONDecoder().decode([Dog].self, from: Data(#"[{"name": "Rex"}]"#.utf8))
    /// try db.write { try db.add(dogs) }
    /// ```
    public init(from decoder: any Decoder) throws {
        // Through a container, so the decoder's strategies for dates and data apply.
        let container = try decoder.singleValueContainer()
        if Value._troveIsOptional, container.decodeNil() {
            self.init(wrappedValue: Value._troveDefault)
        } else {
            self.init(wrappedValue: try container.decode(Value.self))
        }
    }
}

extension Persisted: Encodable where Value: Encodable {
    /// Encodes the property's value. A managed object's properties are read
    /// from its database, which the wrapper cannot reach: encoding one
    /// throws `EncodingError.invalidValue`, as in Realm; encode an unmanaged
    /// copy (`Dog(value: dog)`) or write the class's own `encode(to:)`.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(Dog(value: storedDog))
    /// ```
    public func encode(to encoder: any Encoder) throws {
        guard _column < 0 else {
            throw EncodingError.invalidValue(
                _value,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription:
                        "Only unmanaged objects can be encoded through the synthesized encode(to:); encode an unmanaged copy (Type(value: object)) or write encode(to:) for the class"
                ))
        }
        var container = encoder.singleValueContainer()
        try container.encode(_value)
    }
}

/// A property wrapper whose value may be missing from what is decoded (an
/// optional `@Persisted` property): decoded as nil instead of failing.
/// Swift's synthesized `init(from:)` reaches it through
/// `KeyedDecodingContainer.decode(_:forKey:)`.
///
/// ```swift
/// final class Dog: Object, Codable { @Persisted var age: Int? }
/// let dog = try JSONDecoder().decode(Dog.self, from: Data("{}".utf8))   // age == nil
/// ```
public protocol _TroveOptionalCodingWrapper {
    /// The wrapper holding nil.
    static var _troveMissing: Self { get }
}

extension Persisted: _TroveOptionalCodingWrapper where Value: ExpressibleByNilLiteral {
    /// An optional property decoded from a container without its key: nil.
    ///
    /// ```swift
    /// let age = Persisted<Int?>._troveMissing   // holds nil
    /// ```
    public static var _troveMissing: Persisted { Persisted(wrappedValue: nil) }
}

extension KeyedDecodingContainer {
    /// An optional `@Persisted` property's wrapper, nil when `key` is missing
    /// (a non-optional property's missing key stays an error).
    ///
    /// ```swift
    /// let age = try container.decode(Persisted<Int?>.self, forKey: .age)
    /// ```
    public func decode<T: Decodable & _TroveOptionalCodingWrapper>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? T._troveMissing
    }
}

extension List: Decodable where Element: Decodable {
    /// An unmanaged list of the decoded elements (a JSON array).
    ///
    /// ```swift
    /// let tags = try JSONDecoder().decode(List<String>.self, from: Data(#"["a", "b"]"#.utf8))
    /// ```
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        try decodeElements(Element.self, from: decoder) { append($0) }
    }
}

extension List: Encodable where Element: Encodable {
    /// The elements, in order, as an array (managed or not).
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(dog.tags)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension MutableSet: Decodable where Element: Decodable {
    /// An unmanaged set of the decoded elements (a JSON array; repeats are one member).
    ///
    /// ```swift
    /// let numbers = try JSONDecoder().decode(MutableSet<Int>.self, from: Data("[3, 1, 3]".utf8))   // 2 members
    /// ```
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        try decodeElements(Element.self, from: decoder) { insert($0) }
    }
}

extension MutableSet: Encodable where Element: Encodable {
    /// The members as an array (managed or not).
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(dog.nicknames)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension Map: Decodable where Key: Decodable, Value: Decodable {
    /// An unmanaged map of the decoded entries (a JSON object).
    ///
    /// ```swift
    /// let scores = try JSONDecoder().decode(Map<String, Int>.self, from: Data(#"{"a": 1}"#.utf8))
    /// ```
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.singleValueContainer()
        for (key, value) in try container.decode([Key: Value].self) { self[key] = .some(value) }
    }
}

extension Map: Encodable where Key: Encodable, Value: Encodable {
    /// The entries as an object (managed or not).
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(dog.scores)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        var entries: [Key: Value] = [:]
        for entry in self { entries[entry.key] = entry.value }
        try container.encode(entries)
    }
}

extension Results: Encodable where Element: Encodable {
    /// The elements, in the results' order, as an array.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(db.values(PersonValue.self))
    /// ```
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

/// Each element of a JSON array (or any unkeyed container), in order.
private func decodeElements<Element: Decodable>(
    _: Element.Type, from decoder: any Decoder, _ take: (Element) -> Void
) throws {
    var container = try decoder.unkeyedContainer()
    while !container.isAtEnd { take(try container.decode(Element.self)) }
}

/// The elements as an array (an unkeyed container), in order.
private func encodeElements<S: Sequence>(_ elements: S, to encoder: any Encoder) throws where S.Element: Encodable {
    var container = encoder.unkeyedContainer()
    for element in elements { try container.encode(element) }
}
