@testable import WebSocketServer
import Testing

@Suite("UTF8Validator: UTF-8 checked fragment by fragment")
struct UTF8ValidatorTests {
    private func validate(_ parts: [[UInt8]]) -> Bool {
        var validator = UTF8Validator()
        for part in parts {
            guard part.withUnsafeBytes({ validator.feed($0) }) else { return false }
        }
        return validator.isAtCharacterBoundary
    }

    @Test("valid text is accepted however it is split")
    func validAtEverySplit() {
        let text = Array("plain ASCII run long enough for words, héllo wörld € 𝄞 and more ASCII".utf8)
        for split in 0...text.count {
            #expect(validate([Array(text[..<split]), Array(text[split...])]), "split at \(split)")
        }
    }

    @Test("ill-formed sequences are refused", arguments: [
        [0x80],  // a lone continuation byte
        [0xC0, 0x80],  // overlong NUL
        [0xE0, 0x80, 0x80],  // overlong 3-byte form
        [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xFF],
        [0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0xFE],  // after an ASCII run
    ] as [[UInt8]])
    func invalid(bytes: [UInt8]) {
        #expect(!validate([bytes]))
    }

    @Test("a character cut off at the end is not complete, and is once its last byte comes")
    func truncated() {
        var validator = UTF8Validator()
        #expect([UInt8(0xE2), 0x82].withUnsafeBytes { validator.feed($0) })
        #expect(!validator.isAtCharacterBoundary)
        #expect([UInt8(0xAC)].withUnsafeBytes { validator.feed($0) })
        #expect(validator.isAtCharacterBoundary)
    }
}
