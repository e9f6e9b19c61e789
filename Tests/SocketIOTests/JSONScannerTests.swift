import Foundation
import Testing

@testable import SocketIO

@Suite("JSON scanner")
struct JSONScannerTests {
    private func scan(_ json: String, maxDepth: Int = 64, elements: Bool = true) throws(JSONScanError) -> JSONScanResult
    {
        let bytes = Array(json.utf8)
        return try bytes.withUnsafeBytes { raw in
            Result { () throws(JSONScanError) in
                try JSONScanner.scan(raw, maxDepth: maxDepth, collectElements: elements)
            }
        }.get()
    }

    private func elementTexts(_ json: String) throws -> [String] {
        let result = try self.scan(json)
        let bytes = Array(json.utf8)
        return result.elements.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    @Test(
        arguments: [
            "0", "-0", "1", "-1", "10", "1.5", "-0.0", "1e10", "1E+2", "1e-2", "-0.0e-0",
            "123456789012345678901234567890",
            "true", "false", "null", "\"\"", "\"a\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\uFFFF\\ud83d\\ude00\"",
            "{}", "[]", "[[]]", "{\"a\":{}}", " \t\r\n[ 1 , 2 ] \n", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", "\"é😀\"",
        ]
    )
    func acceptsValidJSON(json: String) throws {
        let result = try self.scan(json)
        let trimmed = json.trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes = Array(json.utf8)
        #expect(String(decoding: bytes[result.range], as: UTF8.self) == trimmed)
    }

    @Test(
        arguments: [
            "", " ", "[", "]", "{", "}", "[1,]", "[,1]", "{,}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "01", "-",
            "1.",
            ".1", "1e", "1e+", "+1", "0x1", "tru", "nulll", "\"abc", "\"\\a\"", "\"\\u00\"", "[1 2]", "[1]]", "{}}",
            "\"\u{1}\"",
            "NaN", "[\"a\"]x",
        ]
    )
    func rejectsInvalidJSON(json: String) {
        #expect(throws: JSONScanError.self) { try self.scan(json) }
    }

    @Test func reportsTopLevelElementRanges() throws {
        #expect(try self.elementTexts("[]").isEmpty)
        #expect(try self.elementTexts("[ ]").isEmpty)
        #expect(try self.elementTexts("[1]") == ["1"])
        #expect(
            try self.elementTexts("[ \"a\" , [1,[2]] ,{\"k\":[]},[],{} , true ]") == [
                "\"a\"", "[1,[2]]", "{\"k\":[]}", "[]", "{}", "true",
            ]
        )
        #expect(try self.scan("{\"a\":[1,2]}").elements.isEmpty)
        #expect(try self.scan("[1,2]", elements: false).elements.isEmpty)
    }

    @Test func reportsTheValueKind() throws {
        #expect(try self.scan("{}").kind == .object)
        #expect(try self.scan(" []").kind == .array)
        #expect(try self.scan("\"s\"").kind == .string)
        #expect(try self.scan("-1").kind == .number)
        #expect(try self.scan("null").kind == .literal)
    }

    @Test func limitsDepth() throws {
        let nested = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try self.scan(nested).kind == .array)
        let tooDeep = "[" + nested + "]"
        let error = try #require(throws: JSONScanError.self) { try self.scan(tooDeep) }
        #expect(error.reason == .tooDeep)
        #expect(error.offset == 64)
        #expect(try self.scan("1", maxDepth: 0).kind == .number)
    }

    @Test(
        arguments: [
            ("\"\"", ""),
            ("\"plain\"", "plain"),
            ("\"a\\\"b\"", "a\"b"),
            ("\"\\\\\\/\\b\\f\\n\\r\\t\"", "\\/\u{08}\u{0C}\n\r\t"),
            ("\"\\u0041\\u00e9\\u4F60\"", "Aé你"),
            ("\"\\uD83D\\uDE00!\"", "😀!"),
            ("\"é😀\"", "é😀"),
        ]
    )
    func decodesStrings(token: String, expected: String) {
        let decoded = Array(token.utf8).withUnsafeBytes { JSONStringDecoder.decode($0) }
        #expect(decoded == expected)
    }

    @Test(arguments: ["", "\"", "a\"", "\"a", "\"\\\"", "\"\\q\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\""])
    func stringDecoderRejectsBadTokensWithoutTrapping(token: String) {
        let decoded = Array(token.utf8).withUnsafeBytes { JSONStringDecoder.decode($0) }
        #expect(decoded == nil)
    }

    /// Random token soups compared against Foundation's parser, which must agree on validity.
    @Test func agreesWithFoundationOnRandomInputs() throws {
        let pieces = [
            "[", "]", "{", "}", ",", ":", " ", "\"k\"", "\"\\n\"", "\"\\u00e9\"", "\"é\"", "0", "-1", "2.5", "1e3",
            "01", "-",
            "true", "null", "fals", "\"", "\\", "1.", "\t",
        ]
        var generator = SeededGenerator(seed: 0x5EED)
        var disagreements: [String] = []
        var accepted = 0
        for _ in 0..<4000 {
            let count = Int.random(in: 1...10, using: &generator)
            let json = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let ours = (try? self.scan(json)) != nil
            let foundation =
                (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) != nil
            if ours { accepted += 1 }
            if ours != foundation { disagreements.append(json) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        #expect(accepted > 100)
    }
}
