import Foundation
import TroveStorage

/// The seeded generator every workload draws from (one sequence on every machine).
typealias SeededGenerator = TroveStorage.SeededGenerator

/// Shape A: an id and ten 64-bit integers (GRDB's performance suite).
struct RowA {
    var id: Int
    var values: [Int64]

    static func make(_ count: Int, seed: UInt64 = 1) -> [RowA] {
        var random = SeededGenerator(seed: seed)
        return (1...count).map { id in
            RowA(id: id, values: (0..<10).map { _ in Int64.random(in: -1_000_000...1_000_000, using: &random) })
        }
    }

    var checksum: Int64 { values.reduce(Int64(id), &+) }
}

/// Shape B: ObjectBox's SimpleEntity.
struct RowB {
    var id: Int
    var flag: Bool
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var float: Float
    var double: Double
    var string: String
    var data: [UInt8]

    static func make(_ count: Int, seed: UInt64 = 2) -> [RowB] {
        var random = SeededGenerator(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
        return (1...count).map { id in
            let stringLength = Int.random(in: 0..<100, using: &random)
            let dataLength = Int.random(in: 0..<100, using: &random)
            return RowB(
                id: id, flag: Bool.random(using: &random), int8: Int8.random(in: .min ... .max, using: &random),
                int16: Int16.random(in: .min ... .max, using: &random), int32: Int32.random(in: .min ... .max, using: &random),
                int64: Int64.random(in: -1_000_000_000...1_000_000_000, using: &random),
                float: Float(Int.random(in: -1000...1000, using: &random)) / 4,
                double: Double(Int.random(in: -100_000...100_000, using: &random)) / 8,
                string: String((0..<stringLength).map { _ in letters[Int.random(in: 0..<letters.count, using: &random)] }),
                data: (0..<dataLength).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    /// What a reader that touched every property adds up; every engine must agree.
    static func checksum(
        id: Int, flag: Bool, int8: Int8, int16: Int16, int32: Int32, int64: Int64, float: Float, double: Double, stringBytes: Int,
        dataBytes: Int
    ) -> Int64 {
        Int64(id) &+ (flag ? 1 : 0) &+ Int64(int8) &+ Int64(int16) &+ Int64(int32) &+ int64 &+ Int64(float * 4)
            &+ Int64(double * 8)
            &+ Int64(stringBytes) &+ Int64(dataBytes)
    }

    var checksum: Int64 {
        RowB.checksum(
            id: id, flag: flag, int8: int8, int16: int16, int32: int32, int64: int64, float: float, double: double,
            stringBytes: string.utf8.count, dataBytes: data.count)
    }
}

/// Shape C: a person with indexed name, age and city, and an unindexed score.
struct RowC {
    static let cities = ["Seoul", "Busan", "Oslo", "Lima", "Perth", "Quito", "Hanoi", "Cairo", "Tunis", "Baku"]
    var id: Int
    var name: String
    var age: Int
    var city: String
    var score: Int

    static func make(_ count: Int, seed: UInt64 = 3) -> [RowC] {
        var random = SeededGenerator(seed: seed)
        return (1...count).map { id in
            RowC(
                id: id, name: "person\(Int.random(in: 0..<count, using: &random))", age: Int.random(in: 0..<100, using: &random),
                city: cities[Int.random(in: 0..<cities.count, using: &random)],
                score: Int.random(in: 0..<1_000_000, using: &random))
        }
    }
}

/// A memo of 50–300 characters of mixed Korean and English words, as a
/// notes app stores them (W10's substring scans).
struct RowMemo {
    static let words = [
        "coffee", "Coffee", "COFFEE", "tea", "lunch", "meeting", "with", "the", "receipt", "taxi", "airport", "dinner",
        "Seoul", "market", "bread", "milk", "and", "for", "at", "notes", "서울", "부산", "커피", "점심", "회의", "영수증", "택시",
        "공항", "저녁", "시장", "빵", "우유", "그리고", "에서", "친구", "가족", "오늘", "내일",
    ]
    var id: Int
    var memo: String

    static func make(_ count: Int, seed: UInt64 = 10) -> [RowMemo] {
        var random = SeededGenerator(seed: seed)
        return (1...count).map { id in
            let length = Int.random(in: 50...300, using: &random)
            var memo = ""
            var characters = 0
            while characters < length {
                let word = words[Int.random(in: 0..<words.count, using: &random)]
                if !memo.isEmpty {
                    memo += Int.random(in: 0..<10, using: &random) == 0 ? ", " : " "
                    characters += 1
                }
                memo += word
                characters += word.count
            }
            return RowMemo(id: id, memo: memo)
        }
    }
}

/// One object of the scale run's shape (``ScaleItem``), for SQLite.
struct ScaleRow {
    var id: Int
    var name: String
    var age: Int
    var score: Double
    var memo: String
    var date: Double
    var tags: [String]
}
