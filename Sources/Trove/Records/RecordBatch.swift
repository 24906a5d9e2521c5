/// One allocation holding the record copies of a batch of objects read
/// together (``Database/loadRecords(into:table:)``): each object's `_record`
/// is its own slice, and the object keeps the batch alive.
///
/// A full scan then pays one allocation per batch instead of one per object
/// (a `malloc` and a `free` were ~270 instructions of ~3,500 per object of
/// W3's shape A). An object that needs a different record later (a write, a
/// newer snapshot) copies it into storage of its own and lets the batch go,
/// so a kept object holds at most its batch's records.
final class RecordBatch {
    let bytes: UnsafeMutableRawBufferPointer

    private init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
    }

    deinit {
        bytes.deallocate()
    }

    /// Gathers records one after another, growing as needed; ``finish()``
    /// hands the bytes to a batch (nothing points into them before that).
    struct Builder: ~Copyable {
        private var storage: UnsafeMutableRawBufferPointer
        private(set) var count = 0

        init() {
            storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }

        /// Copies `record` in; returns where it starts. `expected` is how
        /// many records of about this size are still to come (sizes the
        /// first allocation).
        mutating func append(_ record: UnsafeRawBufferPointer, expected: Int) -> Int {
            let start = count
            if count + record.count > storage.count {
                let wanted = count + record.count * Swift.max(expected, 1) * 5 / 4
                let grown = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: Swift.max(wanted, storage.count * 2, 256), alignment: 8)
                if count > 0 { grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[0..<count])) }
                storage.deallocate()
                storage = grown
            }
            if record.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: storage[start..<start + record.count]).copyMemory(from: record)
            }
            count += record.count
            return start
        }

        /// The batch holding what was appended; nil when nothing was.
        consuming func finish() -> RecordBatch? {
            let storage = self.storage
            discard self
            return storage.baseAddress == nil ? nil : RecordBatch(storage)
        }

        deinit {
            storage.deallocate()
        }
    }
}
