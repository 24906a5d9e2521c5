import Trove

/// One stored object as the command line shows it: the object, and its
/// values in its type's property order (rewritten for reading in a table).
struct Row {
    let object: DynamicObject
    var values: [StoredValue]

    /// The object with its values as stored.
    init(_ object: DynamicObject, values: [StoredValue]) {
        self.object = object
        self.values = values
    }
}
