import Testing

@testable import SocketIO

@Suite("UTF-8 validation")
struct UTF8ValidationTests {
    private func ours(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validation.isValid($0) }
    }

    private func standardLibrary(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    @Test func agreesWithTheStandardLibraryOnAllOneAndTwoByteInputs() {
        for first in 0...255 {
            #expect(self.ours([UInt8(first)]) == self.standardLibrary([UInt8(first)]))
            for second in 0...255 {
                let bytes = [UInt8(first), UInt8(second)]
                if self.ours(bytes) != self.standardLibrary(bytes) {
                    Issue.record("disagree on \(bytes)")
                }
            }
        }
    }

    @Test func agreesWithTheStandardLibraryOnRandomLongerInputs() {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        let leads: [UInt8] = [0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xC0, 0x41]
        let tails: [UInt8] = [0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0x41]
        for _ in 0..<20_000 {
            let bytes =
                [leads.randomElement(using: &generator)!]
                + (0..<Int.random(in: 0...4, using: &generator)).map { _ in tails.randomElement(using: &generator)! }
            if self.ours(bytes) != self.standardLibrary(bytes) {
                Issue.record("disagree on \(bytes)")
            }
        }
    }
}
