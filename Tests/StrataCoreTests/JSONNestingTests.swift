import Foundation
import StrataCore
import StrataTesting
import Testing

@Suite struct JSONNestingTests {
    /// The word-at-a-time count agrees with a byte-by-byte one for every byte value, at every
    /// length and offset (the tail shorter than a word included).
    @Test func bracketsAreCountedExactlyWhateverTheBytesAroundThem() {
        var generator = SeededGenerator(seed: 7)
        let everyByte = Data((0...255).map { UInt8($0) })
        let random = Data((0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let brackets = Data(
            (0..<300).map { _ in [0x5B, 0x7B, 0x5D, 0x7D, 0x3B, 0xDB, 0xFB][Int.random(in: 0..<7, using: &generator)] })
        // Long runs of brackets fill every lane to its limit (255 per lane) before the count is taken.
        let longRun =
            Data(repeating: UInt8(ascii: "["), count: 10_000) + Data(repeating: UInt8(ascii: "{"), count: 5_000)
        for document in [everyByte, random, brackets, longRun, Data(), Data("[".utf8)] {
            for start in 0..<min(9, document.count + 1) {
                for length in [0, 1, 7, 8, 9, 15, 16, 17, document.count - start] where start + length <= document.count
                {
                    let slice = document.subdata(in: start..<(start + length))
                    let expected = slice.filter { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }.count
                    #expect(slice.withUnsafeBytes { JSONNesting.openingBrackets(in: $0) } == expected)
                }
            }
        }
    }

    @Test func depthIsMeasuredOutsideStringsOnly() {
        let deep = Data((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8)
        #expect(JSONNesting.exceeds(39, in: deep))
        #expect(!JSONNesting.exceeds(40, in: deep))
        let quoted = Data(("[\"" + String(repeating: "[{", count: 100) + "\\\"\"]").utf8)
        #expect(!JSONNesting.exceeds(2, in: quoted))
    }
}
