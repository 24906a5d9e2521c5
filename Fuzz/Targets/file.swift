// libFuzzer target: bytes as a whole database file. Opening must throw a
// TroveError or succeed, never crash, with or without the full page check;
// a file that opens with the check and that verify() passes must read
// completely (every object, value and collection, a query and a sort)
// without a trap.
import Foundation

@testable import Trove

private let directory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trove-fuzz-file-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let url = directory.appendingPathComponent("input.trove")
    try? FileManager.default.removeItem(atPath: url.path + "-lock")
    guard FileManager.default.createFile(atPath: url.path, contents: Data(bytes: data, count: size)) else { return 0 }
    var configuration = Configuration(fileURL: url)
    configuration.readOnly = true
    // The library's own open: the catalog pages are checked, nothing else is read.
    do { _ = try Database(configuration: configuration).storedSchemaVersion } catch is TroveError {} catch {
        fatalError("not a TroveError: \(error)")
    }
    configuration.checksEveryPageOnOpen = true
    do {
        let db = try Database(configuration: configuration)
        guard try db.verify().isValid else { return 0 }
        for schema in try db.storedSchemas() {
            let objects = try db.dynamicObjects(schema.name)
            for object in objects {
                _ = object.description
                for property in schema.properties where !property.isInRecord && property.collection != .linkingObjects {
                    _ = try db.elements(of: object, property: property.name)
                }
            }
            if let first = schema.properties.first(where: \.isPlainValue) {
                _ = objects.sorted(byKeyPath: first.name).first
                _ = try objects.filter("\(first.name) != nil").count
            }
        }
    } catch is TroveError {
    } catch {
        fatalError("not a TroveError: \(error)")
    }
    return 0
}
