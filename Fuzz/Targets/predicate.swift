// libFuzzer target: any bytes as a query string must parse, bind and run,
// or throw TroveError.invalidQuery; nothing may crash.
import Foundation
import TroveStorage

@testable import Trove

private let schema = ObjectSchema(
    name: "T",
    properties: [
        PropertySchema(name: "id", type: .int, isPrimaryKey: true, isIndexed: true),
        PropertySchema(name: "name", type: .string, isIndexed: true),
        PropertySchema(name: "score", type: .double, isOptional: true),
        PropertySchema(name: "flag", type: .bool),
        PropertySchema(name: "when", type: .date, isOptional: true),
        PropertySchema(name: "blob", type: .data),
    ])
private let layout = RecordLayout(schema)
/// Compiled predicates read collections and links through a snapshot; the
/// fuzz schema has none, so an empty file's snapshot is enough.
private let transaction: ReadTransaction = {
    var options = Environment.Options()
    options.deleteOnClose = true
    let path = NSTemporaryDirectory() + "/fuzz-predicate-\(getpid()).mdb"
    return try! ReadTransaction(environment: Environment.open(path: path, options: options))
}()
private let record: [UInt8] = {
    var writer = RecordWriter()
    try! writer.encode(
        [.int(7), .string("héllo"), .double(2.5), .bool(true), .null, .data(Data([1, 2, 3]))], layout: layout)
    return writer.bytes
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let template = try PredicateParser.parseTemplate(text)
        let arguments: [Any?] = Array(["name", 3, 2.5, nil, "x", [1, 2]].prefix(template.argumentCount))
        guard arguments.count == template.argumentCount else { return 0 }
        let expression = try template.substituting(arguments)
        let table = TableInfo(
            schema: schema, objects: Table.unopened("obj:T"), primaryKeyIndex: nil, indexes: [:], listsArePacked: true)
        let tables = BoundPredicate.TableResolver(table: { name in
            throw TroveError(.invalidProperty, "the fuzz schema has no linked type \(name)")
        })
        let bound = try BoundPredicate.bind(expression, to: table, tables: tables)
        record.withUnsafeBytes { bytes in
            let reader = RecordReader(bytes, layout: layout)
            _ = bound.evaluate(reader)
            _ = bound.compile(layout, transaction)(reader)
        }
    } catch let error as TroveError {
        precondition(error.kind == .invalidQuery || error.kind == .invalidProperty, "unexpected error kind \(error.kind)")
    } catch {
        preconditionFailure("a query threw \(error), not a TroveError")
    }
    return 0
}
