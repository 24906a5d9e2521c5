// libFuzzer target: arbitrary bytes as a stored cluster column (the first
// byte picks the property type) must be reported as damaged by
// ClusterColumn.problem, or read slot by slot, be copied into a ColumnBuffer
// for editing and encode again to the same values, edits included, without
// crashing. The same bytes as a patch of that column (ColumnPatch) must be
// refused, or merge into the values setting them gives, also read as holding
// the values of objects appended past the column.
import Foundation

@testable import Trove

private func same(_ a: StoredValue?, _ b: StoredValue?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return a.isStoredIdentically(as: b)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzColumn(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let types = PropertyType.allCases
    let type = types[Int(data[0]) % types.count]
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    guard ClusterColumn.problem(in: bytes, type: type, count: nil) == nil,
        let column = ClusterColumn(bytes, type: type)
    else { return 0 }
    var values: [StoredValue?] = []
    for slot in 0..<column.count {
        values.append(column.value(slot))
        _ = column.int(slot)
        _ = column.double(slot)
        if type.isVariableSize { _ = column.variableBytes(slot) }
    }
    // A damaged mixed value reads as nil: the column is then only read, never edited.
    guard !values.contains(where: { $0 == nil }) else { return 0 }
    let buffer = ColumnBuffer(column)
    var model = values.map { $0! }
    // Edits the input's own values can make: move the first value to the end, change the second to the last.
    if model.count >= 2 {
        let first = model.removeFirst()
        buffer.remove(at: 0)
        buffer.append(first)
        model.append(first)
        buffer.set(model[model.count - 1], at: 1)
        model[1] = model[model.count - 1]
    }
    let encoded = buffer.encoded()
    encoded.withUnsafeBytes { raw in
        if let problem = ClusterColumn.problem(in: raw, type: type, count: model.count) {
            fatalError("a column re-encoded from a sound one is damaged: \(problem)")
        }
        let again = ClusterColumn(raw, type: type)!
        for slot in 0..<model.count where !same(again.value(slot), model[slot]) {
            fatalError("slot \(slot) reads \(String(describing: again.value(slot))) after encoding, not \(model[slot])")
        }
        patch(again, with: bytes)
    }
    return 0
}

/// Reads `bytes` as a patch of `base`, and of `base` with one to three
/// objects appended past it (the patch then holds their values), and
/// checks each merged column against setting the patch's values.
private func patch(_ base: ClusterColumn, with bytes: UnsafeRawBufferPointer) {
    for appended in 0...3 { patch(base, appended: appended, with: bytes) }
}

private func patch(_ base: ClusterColumn, appended: Int, with bytes: UnsafeRawBufferPointer) {
    let count = base.count + appended
    guard let patch = ColumnPatch(bytes, type: base.type, count: count, stored: base.count) else { return }
    for index in patch.slots.indices {
        // (A reader reads a value's bytes without trapping; whether they decode is the value reader's.)
        if base.type.isVariableSize { _ = patch.values.variableBytes(index) }
    }
    guard ColumnPatch(bytes, type: base.type, count: count, stored: base.count, checkingValues: true) != nil else { return }
    guard let merged = base.patched(with: patch, count: count) else { fatalError("a sound column refused a sound patch") }
    defer { merged.deallocate() }
    let expected = ColumnBuffer(base)
    for (index, slot) in patch.slots.enumerated() {
        guard let value = patch.values.value(index) else { return }
        if slot < base.count { expected.set(value, at: slot) } else { expected.append(value) }
    }
    let raw = UnsafeRawBufferPointer(merged)
    if let problem = ClusterColumn.problem(in: raw, type: base.type, count: count) {
        fatalError("a patched column is damaged: \(problem)")
    }
    let column = ClusterColumn(raw, type: base.type)!
    for slot in 0..<count where !same(column.value(slot), expected.value(slot)) {
        fatalError("patched slot \(slot) reads \(String(describing: column.value(slot))), not \(expected.value(slot))")
    }
}
