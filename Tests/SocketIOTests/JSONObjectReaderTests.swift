import Foundation
import SocketIO
import Testing

@Suite("JSONObjectReader: top-level members without Foundation")
struct JSONObjectReaderTests {
    private func read(_ json: String) -> JSONObjectReader? {
        JSONObjectReader(Array(json.utf8))
    }

    @Test("strings, numbers, null and nested values are told apart by type")
    func members() throws {
        let object = try #require(read(#" { "sub" : "al\u0069ce" , "exp":1.7e9, "n":null, "deep":{"sub":"x","a":[1,"}"]}, "t":true } "#))
        #expect(object.string("sub") == "alice")
        #expect(object.number("exp") == 1.7e9)
        #expect(object.string("exp") == nil && object.number("sub") == nil)
        #expect(object.isAbsentOrNull("n") && object.isAbsentOrNull("missing") && !object.isAbsentOrNull("sub"))
        #expect(object.contains("deep") && object.string("deep") == nil && object.number("t") == nil)
        #expect(!object.contains("a"), "a nested member is not a top-level one")
    }

    @Test("member names are compared decoded: an escaped name is the same name")
    func escapedNames() throws {
        #expect(read(#"{"\u0061lg":"HS256"}"#)?.string("alg") == "HS256")
        #expect(read(#"{"alg":"none","\u0061lg":"HS256"}"#) == nil)
    }

    @Test("anything but one well-formed object with distinct names is refused", arguments: [
        "", "[]", "\"a\"", "1", "null", "{", "{\"a\":1,}", "{\"a\":1}x", "{\"a\":1,\"a\":2}", "{'a':1}",
        "{\"a\":01}", "{\"a\":\"\u{1}\"}", "{\"a\":NaN}",
    ])
    func refused(json: String) {
        #expect(read(json) == nil)
    }

    @Test("invalid UTF-8 and nesting past the limit are refused")
    func hostile() {
        #expect(JSONObjectReader([UInt8(ascii: "{"), UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: "1"), UInt8(ascii: "}")]) == nil)
        let deep = "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect(read(deep) == nil)
        #expect(JSONObjectReader(Array(deep.utf8), maxDepth: 64) != nil)
    }

    @Test("numbers read as Foundation reads them")
    func numbers() throws {
        for text in ["0", "-0", "1700000000", "1700000000.25", "1e3", "-2.5E-3", "123456789012345678901234567890"] {
            let object = try #require(read(#"{"n":\#(text)}"#))
            let foundation = try #require(try JSONSerialization.jsonObject(with: Data(#"{"n":\#(text)}"#.utf8)) as? [String: Any])
            #expect(object.number("n") == (foundation["n"] as? NSNumber)?.doubleValue, "\(text)")
        }
    }
}
