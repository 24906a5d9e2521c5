import Foundation
import TroveStorage

/// Turns stored values into index keys that sort like the values.
enum IndexKey {
    /// The key for `value`; `exact` is false when a long string or data value
    /// was cut to fit, so a match on it must be checked against the record.
    ///
    /// With `cut` false, no value is cut (the key may exceed LMDB's limit:
    /// it is for a token, ``stored(_:type:in:tokens:)``).
    static func make(_ value: StoredValue, type: PropertyType, cut: Bool = true) -> (bytes: [UInt8], exact: Bool) {
        if type == .mixed { return mixed(value, cut: cut) }
        var key: [UInt8] = []
        key.reserveCapacity(16)
        var exact = true
        switch value {
        case .null: OrderedKey.appendNull(to: &key)
        case .bool(let v): OrderedKey.append(v, to: &key)
        case .int(let v):
            if type == .double || type == .date { OrderedKey.append(Double(v), to: &key) } else { OrderedKey.append(v, to: &key) }
        case .float(let v): OrderedKey.append(Double(v), to: &key)
        case .double(let v):
            if type.isInteger, let exactInt = Int64(exactly: v) {
                OrderedKey.append(exactInt, to: &key)
            } else {
                OrderedKey.append(v, to: &key)
            }
        case .date(let v): OrderedKey.append(v.timeIntervalSinceReferenceDate, to: &key)
        case .string(let v): exact = OrderedKey.append(bytes: v.utf8, to: &key, cut: cut)
        case .data(let v): exact = OrderedKey.append(bytes: v, to: &key, cut: cut)
        case .uuid(let v): withUnsafeBytes(of: v.uuid) { exact = OrderedKey.append(bytes: $0, to: &key, cut: cut) }
        case .decimal(let v): OrderedKey.append(NSDecimalNumber(decimal: v).doubleValue, to: &key)
        case .objectId(let v): exact = OrderedKey.append(bytes: v.bytes, to: &key, cut: cut)
        case .decimal128(let v): OrderedKey.append(v.doubleValue, to: &key)
        case .object(let typeName, let objectKey):
            exact = OrderedKey.append(bytes: Array(typeName.utf8) + [0], to: &key, cut: cut)
            OrderedKey.appendBigEndian(objectKey, to: &key)
        case .list, .dictionary: exact = OrderedKey.append(bytes: MixedEncoding.encode(value), to: &key, cut: cut)
        }
        return (key, exact)
    }

    /// A mixed value's key: a byte for its kind (numbers of every type share
    /// one, compared as Doubles), then the kind's own key. Numbers are never
    /// exact, so an index match on one is checked against the record.
    private static func mixed(_ value: StoredValue, cut: Bool) -> (bytes: [UInt8], exact: Bool) {
        let kind: UInt8
        var exact = true
        var inner: StoredValue = value
        var innerType: PropertyType
        switch value {
        case .null: return ([OrderedKey.nullTag], true)
        case .bool: (kind, innerType) = (2, .bool)
        case .int, .float, .double, .decimal, .decimal128:
            (kind, innerType, exact) = (3, .double, false)
            inner = .double(value.numeric ?? 0)
        case .string: (kind, innerType) = (4, .string)
        case .data: (kind, innerType) = (5, .data)
        case .date: (kind, innerType) = (6, .date)
        case .objectId: (kind, innerType) = (7, .objectId)
        case .uuid: (kind, innerType) = (8, .uuid)
        case .object: (kind, innerType) = (9, .link)
        case .list: (kind, innerType) = (10, .data)
        case .dictionary: (kind, innerType) = (11, .data)
        }
        if kind >= 10 { inner = .data(Data(MixedEncoding.encode(value))) }
        let (bytes, innerExact) = make(inner, type: innerType, cut: cut)
        return ([kind] + bytes, exact && innerExact)
    }

    /// The key `value` is stored under in `index` (a primary key, index or
    /// set table): its ``make(_:type:cut:)`` key, or in a file with key
    /// tokens, the token of its whole key — no value is cut, so only a
    /// mixed number's key is inexact.
    static func stored(_ value: StoredValue, type: PropertyType, in index: String, tokens: KeyTokens?) -> (
        bytes: [UInt8], exact: Bool
    ) {
        guard let tokens else { return make(value, type: type) }
        let (whole, exact) = make(value, type: type, cut: false)
        return (tokens.token(whole, in: index), exact)
    }
}
