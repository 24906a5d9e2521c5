import Foundation

/// A string comparison against a constant — `CONTAINS`, `BEGINSWITH`,
/// `ENDSWITH`, `LIKE`, and `==` / `!=` under `[c]` or `[d]` — run on the
/// UTF-8 bytes of a stored string, without making a `String`.
///
/// Most stored text is *plain*: ASCII but CR, and precomposed Hangul
/// syllables. Each plain character is one Unicode scalar and one grapheme,
/// already in NFC, that no canonical equivalent spells differently; case
/// folding lowers its ASCII letters and changes nothing else, and diacritic
/// folding changes nothing. So on plain text the String semantics of
/// ``ValueComparison`` (folding, canonical equivalence, Characters) are
/// comparisons of bytes: lowered ASCII under `[c]`, the bytes themselves
/// otherwise. The constant is folded once (by Foundation, as a row would be)
/// and composed to NFC; when that is plain, plain rows are compared as bytes,
/// and any other row takes the String path with the folded constant. When
/// the folded constant is not plain, every row takes the String path.
final class StringMatcher {
    private let op: ComparisonOperator
    private let options: StringOptions
    private let folded: ValueComparison.FoldedPattern
    /// The folded constant as plain UTF-8; nil when it is not plain.
    private let needle: [UInt8]?
    /// LIKE: the folded constant, a token per Character.
    private let tokens: [LikeToken]
    private let lowersCase: Bool
    /// Room for a row with its ASCII letters lowered, kept across rows.
    private var lowered: UnsafeMutableRawBufferPointer

    private enum LikeToken: Equatable {
        case anyRun
        case anyOne
        /// One plain character: its bytes, first in the low byte.
        case character(UInt32, length: Int)
    }

    /// Nil for an operator this does not run (the others of ``ComparisonOperator``).
    init?(_ op: ComparisonOperator, _ pattern: String, _ options: StringOptions) {
        guard [.contains, .beginsWith, .endsWith, .like].contains(op) || ([.equal, .notEqual].contains(op) && !options.isEmpty)
        else { return nil }
        self.op = op
        self.options = options
        folded = ValueComparison.FoldedPattern(pattern, op, options)
        lowersCase = options.contains(.caseInsensitive)
        lowered = .allocate(byteCount: 256, alignment: 8)
        if op == .like {
            // As ValueComparison's LIKE: a token per Character, each folded alone.
            let characters = options.isEmpty ? pattern.map(String.init) : folded.characters
            var tokens: [LikeToken] = []
            for character in characters {
                if character == "*" {
                    tokens.append(.anyRun)
                } else if character == "?" {
                    tokens.append(.anyOne)
                } else {
                    let bytes = Array(character.precomposedStringWithCanonicalMapping.utf8)
                    guard StringMatcher.isPlain(bytes), bytes.count == 1 || bytes.count == 3 else {
                        tokens = []
                        break
                    }
                    let packed = bytes.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
                    tokens.append(.character(packed, length: bytes.count))
                }
            }
            // A LIKE pattern is matched on bytes only when every Character is plain (or a wildcard).
            self.tokens = tokens
            needle = tokens.count == characters.count ? [] : nil
        } else {
            tokens = []
            let bytes = Array(folded.text.precomposedStringWithCanonicalMapping.utf8)
            // Foundation's comparisons pass over NUL: a needle holding one takes the String path.
            needle = StringMatcher.isPlain(bytes) && !bytes.contains(0) ? bytes : nil
        }
    }

    deinit { lowered.deallocate() }

    /// The comparison on one stored string's UTF-8 bytes.
    func matches(_ text: UnsafeRawBufferPointer) -> Bool {
        // A row holding NUL takes the String path too (Foundation passes over NUL; bytes would not).
        if let needle, text.baseAddress.map({ memchr($0, 0, text.count) == nil }) ?? true {
            if !lowersCase {
                if StringMatcher.isPlain(text) { return plainMatch(text, needle) }
            } else {
                if text.count > lowered.count {
                    let size = Swift.max(text.count, 2 * lowered.count)
                    lowered.deallocate()
                    lowered = .allocate(byteCount: size, alignment: 8)
                }
                if StringMatcher.lowerIfPlain(text, into: lowered.baseAddress!) {
                    return plainMatch(UnsafeRawBufferPointer(start: lowered.baseAddress, count: text.count), needle)
                }
            }
        }
        return ValueComparison.test(String(decoding: text, as: UTF8.self), op, folded, options)
    }

    /// The comparison on plain, folded text.
    private func plainMatch(_ text: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        switch op {
        case .contains:
            if needle.isEmpty { return true }
            if text.count < needle.count { return false }
            return needle.withUnsafeBytes { StringMatcher.contains(text, $0) }
        case .beginsWith:
            return text.count >= needle.count && StringMatcher.equal(text.baseAddress, needle, at: 0)
        case .endsWith:
            return text.count >= needle.count && StringMatcher.equal(text.baseAddress, needle, at: text.count - needle.count)
        case .equal:
            return text.count == needle.count && StringMatcher.equal(text.baseAddress, needle, at: 0)
        case .notEqual:
            return !(text.count == needle.count && StringMatcher.equal(text.baseAddress, needle, at: 0))
        case .like:
            return like(text)
        default:
            return false
        }
    }

    /// Whether `needle` (not empty) occurs in `text`: 16 positions at a time
    /// are tested for the needle's first and last bytes, and only those with
    /// both are compared whole.
    static func contains(_ text: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        let (count, length) = (text.count, needle.count)
        guard length > 0, count >= length, let base = text.baseAddress, let pattern = needle.baseAddress else {
            return length == 0
        }
        let (first, last) = (needle[0], needle[length - 1])
        func matches(at offset: Int) -> Bool {
            length <= 2 || memcmp(base + offset + 1, pattern + 1, length - 2) == 0
        }
        let firsts = Bytes(repeating: first)
        let lasts = Bytes(repeating: last)
        var offset = 0
        // The last block reads up to byte offset + length - 1 + 15.
        while offset + length + 15 <= count {
            let starts = base.loadUnaligned(fromByteOffset: offset, as: Bytes.self)
            let ends = base.loadUnaligned(fromByteOffset: offset + length - 1, as: Bytes.self)
            let both = (starts .== firsts) .& (ends .== lasts)
            if anyLane(both) {
                for lane in 0..<16 where both[lane] && matches(at: offset + lane) { return true }
            }
            offset += 16
        }
        while offset + length <= count {
            if base.load(fromByteOffset: offset, as: UInt8.self) == first,
                base.load(fromByteOffset: offset + length - 1, as: UInt8.self) == last, matches(at: offset)
            {
                return true
            }
            offset += 1
        }
        return false
    }

    private static func equal(_ text: UnsafeRawPointer?, _ needle: [UInt8], at offset: Int) -> Bool {
        guard let text, !needle.isEmpty else { return true }
        return needle.withUnsafeBytes { memcmp(text + offset, $0.baseAddress!, $0.count) == 0 }
    }

    /// ValueComparison's LIKE over plain text: `*` any run, `?` one character
    /// (one byte of ASCII or three of a syllable).
    private func like(_ text: UnsafeRawBufferPointer) -> Bool {
        let count = text.count
        func length(at offset: Int) -> Int { text[offset] < 0x80 ? 1 : 3 }
        func matches(_ token: LikeToken, at offset: Int) -> Bool {
            switch token {
            case .anyOne: return true
            case .anyRun: return false
            case .character(let packed, let length):
                guard offset + length <= count else { return false }
                for index in 0..<length where text[offset + index] != UInt8(truncatingIfNeeded: packed >> (8 * index)) {
                    return false
                }
                return true
            }
        }
        var (t, p, star, mark) = (0, 0, -1, 0)
        while t < count {
            if p < tokens.count, tokens[p] == .anyRun {
                star = p
                mark = t
                p += 1
            } else if p < tokens.count, matches(tokens[p], at: t) {
                t += length(at: t)
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += length(at: mark)
                t = mark
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .anyRun { p += 1 }
        return p == tokens.count
    }

    // MARK: Plain text

    private typealias Bytes = SIMD16<UInt8>
    private typealias Mask = SIMDMask<SIMD16<Int8>>

    /// Whether every character of the UTF-8 bytes is plain.
    static func isPlain(_ text: UnsafeRawBufferPointer) -> Bool { scan(text, lowering: nil) }

    static func isPlain(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { isPlain($0) } }

    /// Copies plain text into `target` with ASCII letters lowered (its case
    /// fold); false, with `target` undefined, when the text is not plain.
    static func lowerIfPlain(_ text: UnsafeRawBufferPointer, into target: UnsafeMutableRawPointer) -> Bool {
        scan(text, lowering: target)
    }

    /// Checks 16 bytes at a time, without a branch per character: mixed
    /// Korean and English switches between one- and three-byte characters
    /// too often for a loop over characters to predict.
    @inline(__always)
    private static func scan(_ text: UnsafeRawBufferPointer, lowering target: UnsafeMutableRawPointer?) -> Bool {
        let count = text.count
        guard count > 0, let base = text.baseAddress else { return true }
        // The end must not cut a syllable (the chunks below check up to their last byte).
        if base.load(fromByteOffset: count - 1, as: UInt8.self) >= 0xC0 { return false }
        if count >= 2, base.load(fromByteOffset: count - 2, as: UInt8.self) >= 0xE0 { return false }
        let check = ChunkCheck()
        var bad = Mask(repeating: false)
        if count <= 32 {
            // From a copy with two zero bytes before the text (and zeros after
            // it), so every chunk can see the two bytes before each of its own.
            var head = (Bytes(), Bytes(), Bytes())
            withUnsafeMutableBytes(of: &head) { copy in
                (copy.baseAddress! + 2).copyMemory(from: base, byteCount: count)
                let padded = UnsafeRawPointer(copy.baseAddress!)
                let chunks = stride(from: 2, through: count > 16 ? 18 : 2, by: 16)
                for at in chunks {
                    bad
                        .|= check.problems(
                            padded.loadUnaligned(fromByteOffset: at, as: Bytes.self),
                            padded.loadUnaligned(fromByteOffset: at - 1, as: Bytes.self),
                            padded.loadUnaligned(fromByteOffset: at - 2, as: Bytes.self))
                }
                guard let target else { return }
                for at in chunks {
                    copy.storeBytes(
                        of: check.lowercased(padded.loadUnaligned(fromByteOffset: at, as: Bytes.self)), toByteOffset: at,
                        as: Bytes.self)
                }
                target.copyMemory(from: padded + 2, byteCount: count)
            }
            return !anyLane(bad)
        }
        // The first two bytes alone (nothing before them to load), then
        // chunks from the third, the last one ending at the last byte.
        let (first, second) = (base.load(as: UInt8.self), base.load(fromByteOffset: 1, as: UInt8.self))
        if !startsPlain(first, second) { return false }
        target?.storeBytes(of: first &- 0x41 < 26 ? first | 0x20 : first, as: UInt8.self)
        target?.storeBytes(of: second &- 0x41 < 26 ? second | 0x20 : second, toByteOffset: 1, as: UInt8.self)
        var offset = 2
        while offset < count {
            let at = Swift.min(offset, count - 16)
            let bytes = base.loadUnaligned(fromByteOffset: at, as: Bytes.self)
            bad
                .|= check.problems(
                    bytes, base.loadUnaligned(fromByteOffset: at - 1, as: Bytes.self),
                    base.loadUnaligned(fromByteOffset: at - 2, as: Bytes.self))
            target?.storeBytes(of: check.lowercased(bytes), toByteOffset: at, as: Bytes.self)
            offset += 16
        }
        return !anyLane(bad)
    }

    /// ``ChunkCheck/problems(_:_:_:)`` for the first two bytes of a text.
    private static func startsPlain(_ first: UInt8, _ second: UInt8) -> Bool {
        func isLead(_ byte: UInt8) -> Bool { byte >= 0xC0 }
        func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }
        func isOther(_ byte: UInt8) -> Bool { byte == 0x0D || (isLead(byte) && byte &- 0xEA > 3) }
        if isOther(first) || isOther(second) { return false }
        if isContinuation(first) || isContinuation(second) != isLead(first) { return false }
        if first == 0xEA && second < 0xB0 { return false }
        return !(first == 0xED && second >= 0x9F)
    }

    @inline(__always)
    private static func anyLane(_ mask: Mask) -> Bool {
        let halves = unsafeBitCast(mask, to: (UInt64, UInt64).self)
        return halves.0 | halves.1 != 0
    }

    /// The byte constants of the plain-text test, as vectors: comparisons
    /// of two vectors compile to vector instructions (a vector against a
    /// scalar does not, lane by lane).
    private struct ChunkCheck {
        let carriageReturn = Bytes(repeating: 0x0D)
        let x80 = Bytes(repeating: 0x80)
        let xC0 = Bytes(repeating: 0xC0)
        let xEA = Bytes(repeating: 0xEA)
        let xED = Bytes(repeating: 0xED)
        let x9E = Bytes(repeating: 0x9E)
        let x9F = Bytes(repeating: 0x9F)
        let xA4 = Bytes(repeating: 0xA4)
        let xB0 = Bytes(repeating: 0xB0)
        let upperA = Bytes(repeating: 0x41)
        let upperZ = Bytes(repeating: 0x5A)
        let caseBit = Bytes(repeating: 0x20)

        /// The bytes of a chunk that are not plain text, given the bytes one
        /// and two places before each: a CR, a lead byte other than a
        /// syllable's, a continuation byte not one or two after a lead (or a
        /// missing one), or a three-byte character outside U+AC00–U+D7A3.
        @inline(__always)
        func problems(_ bytes: Bytes, _ previous: Bytes, _ beforeThat: Bytes) -> Mask {
            let lead = bytes .>= xC0
            let otherLead = lead .& ((bytes .< xEA) .| (bytes .> xED))
            let continuation = (bytes .>= x80) .& .!lead
            let expected = (previous .>= xC0) .| (beforeThat .>= xC0)
            // U+A000–U+ABFF (EA 80–AF ..), U+D7A4–U+D7FF (ED 9E A4.., ED 9F ..), surrogates (ED A0..).
            let belowSyllables = (previous .== xEA) .& (bytes .< xB0)
            let aboveSyllables =
                ((previous .== xED) .& (bytes .>= x9F)) .| ((beforeThat .== xED) .& (previous .== x9E) .& (bytes .>= xA4))
            return (bytes .== carriageReturn) .| otherLead .| (continuation .^ expected) .| belowSyllables .| aboveSyllables
        }

        /// ASCII letters lowered; every other byte as it is.
        @inline(__always)
        func lowercased(_ bytes: Bytes) -> Bytes {
            bytes.replacing(with: bytes | caseBit, where: (bytes .>= upperA) .& (bytes .<= upperZ))
        }
    }
}
