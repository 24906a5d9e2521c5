import CLMDB

/// A named LMDB table (a "named database" in LMDB's words).
///
/// A plain table maps each key to one value; a `multiValue` table
/// (`MDB_DUPSORT`) maps a key to a sorted set of values, which is how
/// secondary indexes store several object keys under one indexed value.
package struct Table: Sendable, Hashable {
    package let name: String
    package let isMultiValue: Bool
    let dbi: MDB_dbi
    /// Values are encrypted at rest (``Cipher``); keys never are.
    package let isSealed: Bool
    /// The table's slot in the environment: a small number, unique among the
    /// environment's open tables, cheaper to look up by than the name.
    package var slot: UInt32 { UInt32(dbi) }

    init(name: String, isMultiValue: Bool, dbi: MDB_dbi, isSealed: Bool = false) {
        self.name = name
        self.isMultiValue = isMultiValue
        self.dbi = dbi
        self.isSealed = isSealed
    }

    /// A handle that refers to no table, for checking queries against a
    /// schema without a file (the query fuzzer); never use it for I/O.
    package static func unopened(_ name: String) -> Table {
        Table(name: name, isMultiValue: false, dbi: 0)
    }

}

/// One key/value pair seen through a cursor or a lookup. The buffers point
/// into the memory map and are valid only inside the closure that received them.
package struct Entry {
    package let key: UnsafeRawBufferPointer
    package let value: UnsafeRawBufferPointer

    package init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        self.key = key
        self.value = value
    }
}

extension MDB_val {
    @inline(__always)
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }

    @inline(__always)
    var buffer: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: mv_data, count: mv_size)
    }
}
