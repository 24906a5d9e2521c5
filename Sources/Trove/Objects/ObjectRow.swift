/// A stored object's row, apart from any instance of it: what a value read
/// from an object (a legacy field's collection or `RealmProperty`) keeps to
/// reach the row again once that instance is gone.
package struct ObjectRow {
    let database: Database
    let table: TableInfo
    let key: UInt64
    let type: Object.Type

    /// The row of `object`; nil while it is unmanaged.
    package init?(_ object: Object) {
        guard let database = object._database, let table = object._table else { return nil }
        self.database = database
        self.table = table
        key = object._objectKey
        type = Swift.type(of: object)
    }

    /// A new instance of the row, read by the same handle.
    package func object() -> Object {
        let binding = database.bindingOrTrap(for: type, storedAs: table.name)
        let row = binding.info.type.init()
        row.bind(to: database, objectKey: key, binding: binding)
        return row
    }
}
