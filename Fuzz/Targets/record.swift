// libFuzzer target: arbitrary bytes as a stored record must be reported as
// damaged by RecordReader.problem, or decode without crashing.
import Foundation

@testable import Trove

private let layout = RecordLayout(
    ObjectSchema(
        name: "R",
        properties: PropertyType.allCases.map { PropertySchema(name: $0.rawValue, type: $0, isOptional: true) }
            + [PropertySchema(name: "required", type: .string)]))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if RecordReader.problem(in: bytes, layout: layout) == nil {
        let reader = RecordReader(bytes, layout: layout)
        for column in 0..<layout.columnCount {
            _ = reader.value(at: column)
            _ = reader.int(at: column)
        }
    }
    return 0
}
