import Foundation
import RoomcastCore
import Testing

@Suite("Identifier")
struct IdentifierTests {
    static let valid = ["a", "Z", "0", "_", "-", "abc-DEF_123", String(repeating: "x", count: 64)]
    static let invalid = [
        "", String(repeating: "x", count: 65), "a{b", "a}b", "{a}", "a:b", "a b", " a", "a\n",
        "é", "caf\u{E9}", "日本", "a🎉", "a.b", "a/b", "a\"b", "a\u{0}b",
    ]

    @Test("letters, digits, '_' and '-' of 1 to 64 characters are valid", arguments: valid)
    func acceptsValid(_ text: String) throws {
        let id = try #require(UserID(text))
        #expect(id.rawValue == text)
        #expect(id.description == text)
    }

    @Test("empty, too long, braces, colons, spaces and non-ASCII are rejected", arguments: invalid)
    func rejectsInvalid(_ text: String) {
        #expect(UserID(text) == nil)
        #expect(RoomID(text) == nil)
    }

    @Test("JSON decoding rejects invalid ids with a DecodingError", arguments: invalid)
    func decodingRejectsInvalid(_ text: String) throws {
        let json = try JSONEncoder().encode([text])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([RoomID].self, from: json) }
    }

    @Test("JSON decoding rejects non-string values")
    func decodingRejectsNonStrings() {
        for json in ["[1]", "[null]", "[{}]", "[[\"a\"]]"] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode([UserID].self, from: Data(json.utf8)) }
        }
    }

    @Test("an id encodes as a plain JSON string and decodes back")
    func jsonRoundTrip() throws {
        let ids = try Self.valid.map { try #require(UserID($0)) }
        let json = try JSONEncoder().encode(ids)
        #expect(try JSONSerialization.jsonObject(with: json) as? [String] == Self.valid)
        #expect(try JSONDecoder().decode([UserID].self, from: json) == ids)
    }

    @Test("random() gives valid, 32-character, unique ids")
    func randomIsValidAndUnique() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = MessageID.random()
            #expect(MessageID(id.rawValue) == id)
            #expect(id.rawValue.count == 32)
            #expect(id.rawValue.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            // A version 4 UUID's digits: its version, and its variant (10xx).
            let digits = Array(id.rawValue)
            #expect(digits[12] == "4")
            #expect("89ab".contains(digits[16]))
            seen.insert(id.rawValue)
        }
        #expect(seen.count == 1000)
    }

    @Test("ids order by their text")
    func ordering() throws {
        let ids = try ["b", "a", "c"].map { try #require(RoomID($0)) }
        #expect(ids.sorted().map(\.rawValue) == ["a", "b", "c"])
    }
}
