import Foundation
import TroveStorage

/// Turns stored values into index keys that sort like the values.
enum IndexKey {
    /// The key for `value`; `exact` is false when a long string or data value
    /// was cut to fit, so a match on it must be checked against the record.
    static func make(_ value: StoredValue, type: PropertyType) -> (bytes: [UInt8], exact: Bool) {
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
        case .string(let v): exact = OrderedKey.append(bytes: v.utf8, to: &key)
        case .data(let v): exact = OrderedKey.append(bytes: v, to: &key)
        case .uuid(let v): withUnsafeBytes(of: v.uuid) { exact = OrderedKey.append(bytes: $0, to: &key) }
        case .decimal(let v): OrderedKey.append(NSDecimalNumber(decimal: v).doubleValue, to: &key)
        case .objectId(let v): exact = OrderedKey.append(bytes: v.bytes, to: &key)
        case .decimal128(let v): OrderedKey.append(v.doubleValue, to: &key)
        }
        return (key, exact)
    }
}
