/// Where each property of a type sits in a record.
///
/// A record is `[u16 column count][null bitmap][fixed slots][variable heap]`.
/// Fixed-size values live in their slot; strings, data and decimals keep a
/// `u32 offset, u32 length` pair there pointing into the heap. Reading one
/// property is a few arithmetic steps and one load, straight from the map.
/// Columns are only ever appended, so a record written with fewer columns
/// reads the missing ones as their defaults.
final class RecordLayout: @unchecked Sendable {  // immutable after init, `columnSlots` included
    /// The type whose records these are (for messages).
    let typeName: String
    let properties: [PropertySchema]
    let types: [PropertyType]
    /// Offset of each slot from the end of the bitmap.
    let slotOffsets: [Int]
    let fixedSize: Int
    let fallbacks: [StoredValue]
    /// False for collections, whose values live in tables of their own.
    let inRecord: [Bool]
    /// Each column's slot offset and type again, in memory a property read
    /// indexes without retaining an array or checking bounds.
    let columnSlots: UnsafeMutablePointer<(offset: Int, type: PropertyType)>
    /// Each column stored in the record: where its slot sits from the
    /// record's start and how wide it is (0 = offset and length into the
    /// heap): what building a record from cluster columns copies.
    let recordSlots: [(column: Int, offset: Int, width: Int)]

    init(_ schema: ObjectSchema) {
        typeName = schema.name
        properties = schema.properties
        types = schema.properties.map(\.type)
        var offsets: [Int] = []
        var cursor = 0
        inRecord = schema.properties.map(\.isInRecord)
        for (index, type) in types.enumerated() {
            offsets.append(cursor)
            if inRecord[index] { cursor += type.slotWidth }
        }
        slotOffsets = offsets
        fixedSize = cursor
        fallbacks = schema.properties.map(\.fallback)
        let header = 2 + Self.bitmapSize(types.count)
        let (types, inRecord) = (types, inRecord)
        recordSlots = types.indices.filter { inRecord[$0] }.map {
            ($0, header + offsets[$0], types[$0].isVariableSize ? 0 : types[$0].slotWidth)
        }
        columnSlots = .allocate(capacity: max(offsets.count, 1))
        for (column, offset) in offsets.enumerated() {
            (columnSlots + column).initialize(to: (offset, types[column]))
        }
    }

    deinit {
        columnSlots.deinitialize(count: types.count)
        columnSlots.deallocate()
    }

    var columnCount: Int { types.count }

    func slotWidth(_ column: Int) -> Int { inRecord[column] ? types[column].slotWidth : 0 }

    @inline(__always)
    static func bitmapSize(_ columns: Int) -> Int { (columns + 7) / 8 }
}
