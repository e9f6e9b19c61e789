import Foundation
import RoomcastCore
import Testing

/// The element field rules of docs/clients/events.md, through `JSONDecoder` as clients
/// reach them (a socket payload or a REST body).
@Suite("ElementFields validation")
struct ElementFieldsTests {
    /// `element:transform`'s fields: the transform subset, nothing else.
    struct TransformBody: Decodable {
        var fields: ElementFields
        init(from decoder: any Decoder) throws {
            fields = try ElementFields(from: decoder, allowed: ElementFields.transformFields)
        }
    }

    static let minimal = #""type":"note","positionX":10,"positionY":-20.5,"width":100,"height":50"#
    static let minimalMembers: [(String, String)] = [
        ("type", #""note""#), ("positionX", "10"), ("positionY", "-20.5"), ("width", "100"), ("height", "50"),
    ]

    /// The minimal draft with `member` (`"name":value`) added, or replacing the member of that name:
    /// no duplicate keys, whose meaning JSON leaves open.
    static func draftJSON(with member: String) -> String {
        let name = String(member.dropFirst().prefix { $0 != "\"" })
        let kept = minimalMembers.filter { $0.0 != name }.map { "\"\($0.0)\":\($0.1)" }
        return "{" + (kept + [member]).joined(separator: ",") + "}"
    }

    static func draft(_ json: String) throws -> ElementDraft {
        try JSONDecoder().decode(ElementDraft.self, from: Data(json.utf8))
    }

    static func changes(_ json: String) throws -> ElementChanges {
        try JSONDecoder().decode(ElementChanges.self, from: Data(json.utf8))
    }

    static func transform(_ json: String) throws -> ElementFields {
        try JSONDecoder().decode(TransformBody.self, from: Data(json.utf8)).fields
    }

    /// The field names a decoding error points at (its coding path plus a missing key).
    static func path(of error: any Error) -> [String] {
        guard let error = error as? DecodingError else { return [] }
        switch error {
        case .keyNotFound(let key, let context): return context.codingPath.map(\.stringValue) + [key.stringValue]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath.map(\.stringValue)
        @unknown default: return []
        }
    }

    static func values(_ fields: ElementFields) -> [String: String] {
        Dictionary(uniqueKeysWithValues: fields.values.map { ($0.name, $0.value) })
    }

    // MARK: Create

    @Test("a minimal draft gets rotation 0 and scale 1 by default")
    func minimalDraft() throws {
        let fields = try Self.draft("{\(Self.minimal)}").fields
        let values = Self.values(fields)
        #expect(Set(values.keys) == ["type", "positionX", "positionY", "width", "height", "rotation", "scaleX", "scaleY"])
        #expect(values["type"] == "note")
        #expect(values["positionY"].flatMap(Double.init) == -20.5)
        #expect(values["rotation"].flatMap(Double.init) == 0)
        #expect(values["scaleX"].flatMap(Double.init) == 1)
        #expect(values["scaleY"].flatMap(Double.init) == 1)
        #expect(fields.changesPosition)
    }

    @Test("given optional fields are kept and defaults do not override them")
    func fullDraft() throws {
        let json = """
            {\(Self.minimal),"rotation":45,"scaleX":2,"scaleY":0.5,"content":"hello","imageUrl":"https://x/y.png",
            "audioUrl":"https://x/a.m4a","videoUrl":"https://x/v.mp4","thumbnailUrl":"https://x/t.jpg","duration":12.5,"stickerText":"hi"}
            """
        let values = Self.values(try Self.draft(json).fields)
        #expect(values["rotation"].flatMap(Double.init) == 45)
        #expect(values["scaleX"].flatMap(Double.init) == 2)
        #expect(values["scaleY"].flatMap(Double.init) == 0.5)
        #expect(values["content"] == "hello")
        #expect(values["imageUrl"] == "https://x/y.png")
        #expect(values["duration"].flatMap(Double.init) == 12.5)
        #expect(values["stickerText"] == "hi")
        #expect(values.count == 15)
    }

    @Test("every element type is accepted", arguments: ["note", "photo", "audio", "video", "sticker"])
    func types(type: String) throws {
        let values = Self.values(try Self.draft(#"{"type":"\#(type)","positionX":0,"positionY":0,"width":1,"height":1}"#).fields)
        #expect(values["type"] == type)
    }

    /// A JSON member `"name":value`, shortened in test names.
    struct Member: CustomTestStringConvertible, Sendable {
        var text: String
        init(_ text: String) { self.text = text }
        var testDescription: String { text.count > 60 ? String(text.prefix(60)) + "…" : text }
    }

    @Test(
        "boundary values are accepted",
        arguments: [
            #""positionX":10000000"#, #""positionX":-10000000"#, #""positionY":1e7"#, #""positionY":-1e7"#,
            #""width":1000000"#, #""height":1e6"#, #""width":0.0001"#, #""rotation":-1000000"#, #""rotation":1e6"#,
            #""scaleX":1000"#, #""scaleY":0.001"#, #""duration":0"#, #""duration":1000000"#,
            #""content":"\#(String(repeating: "x", count: 20_000))""#,
            #""content":"\#(String(repeating: "🎉", count: 20_000))""#,
            #""imageUrl":"https://x/\#(String(repeating: "u", count: 2038))""#,
            #""thumbnailUrl":"https://x/\#(String(repeating: "u", count: 2038))""#,
            #""stickerText":"\#(String(repeating: "é", count: 400))""#,
            #""content":"""#,
        ].map(Member.init)
    )
    func boundaries(member: Member) throws {
        _ = try Self.draft(Self.draftJSON(with: member.text))
    }

    /// One refused draft member and the field the error must name.
    struct Refusal: CustomTestStringConvertible, Sendable {
        var member: String
        var field: String
        var testDescription: String { member.count > 60 ? String(member.prefix(60)) + "…" : member }
    }

    @Test(
        "invalid drafts are refused naming the field",
        arguments: [
            // unknown and read-only fields
            Refusal(member: #""colour":"red""#, field: "colour"),
            Refusal(member: #""zIndex":3"#, field: "zIndex"),
            Refusal(member: #""id":"abc""#, field: "id"),
            Refusal(member: #""roomId":"abc""#, field: "roomId"),
            Refusal(member: #""createdBy":"abc""#, field: "createdBy"),
            Refusal(member: #""createdAt":"2026-01-01T00:00:00.000Z""#, field: "createdAt"),
            Refusal(member: #""reactions":null"#, field: "reactions"),
            Refusal(member: #""PositionX":1"#, field: "PositionX"),
            // wrong types
            Refusal(member: #""positionX":"1""#, field: "positionX"),
            Refusal(member: #""width":true"#, field: "width"),
            Refusal(member: #""height":null"#, field: "height"),
            Refusal(member: #""rotation":[1]"#, field: "rotation"),
            Refusal(member: #""scaleX":{}"#, field: "scaleX"),
            Refusal(member: #""content":5"#, field: "content"),
            Refusal(member: #""imageUrl":false"#, field: "imageUrl"),
            Refusal(member: #""type":1"#, field: "type"),
            Refusal(member: #""duration":"long""#, field: "duration"),
            // out of range
            Refusal(member: #""positionX":10000000.5"#, field: "positionX"),
            Refusal(member: #""positionY":-10000001"#, field: "positionY"),
            Refusal(member: #""width":0"#, field: "width"),
            Refusal(member: #""width":-5"#, field: "width"),
            Refusal(member: #""width":1000001"#, field: "width"),
            Refusal(member: #""height":0"#, field: "height"),
            Refusal(member: #""height":2e6"#, field: "height"),
            Refusal(member: #""rotation":1000000.1"#, field: "rotation"),
            Refusal(member: #""rotation":-1e7"#, field: "rotation"),
            Refusal(member: #""scaleX":0"#, field: "scaleX"),
            Refusal(member: #""scaleY":-1"#, field: "scaleY"),
            Refusal(member: #""scaleX":1000.01"#, field: "scaleX"),
            Refusal(member: #""duration":-1"#, field: "duration"),
            Refusal(member: #""duration":1000001"#, field: "duration"),
            // bad type names
            Refusal(member: #""type":"text""#, field: "type"),
            Refusal(member: #""type":"Note""#, field: "type"),
            Refusal(member: #""type":"""#, field: "type"),
            // too long
            Refusal(member: #""imageUrl":"https://x/\#(String(repeating: "u", count: 2039))""#, field: "imageUrl"),
            Refusal(member: #""audioUrl":"https://x/\#(String(repeating: "u", count: 2039))""#, field: "audioUrl"),
            Refusal(member: #""videoUrl":"https://x/\#(String(repeating: "u", count: 2039))""#, field: "videoUrl"),
            Refusal(member: #""thumbnailUrl":"https://x/\#(String(repeating: "u", count: 2039))""#, field: "thumbnailUrl"),
            Refusal(member: #""imageUrl":"javascript:alert(1)""#, field: "imageUrl"),
            Refusal(member: #""imageUrl":"data:image/png;base64,AAAA""#, field: "imageUrl"),
            Refusal(member: #""audioUrl":"https://""#, field: "audioUrl"),
            Refusal(member: #""videoUrl":"https://x/a b""#, field: "videoUrl"),
            Refusal(member: #""thumbnailUrl":"/relative.jpg""#, field: "thumbnailUrl"),
            Refusal(member: #""stickerText":"\#(String(repeating: "s", count: 801))""#, field: "stickerText"),
            Refusal(member: #""stickerText":"a\#(String(repeating: "\u{0301}", count: 400))""#, field: "stickerText"),
        ]
    )
    func refusedDrafts(refusal: Refusal) throws {
        let error = #expect(throws: DecodingError.self) { try Self.draft(Self.draftJSON(with: refusal.member)) }
        #expect(Self.path(of: try #require(error)).last == refusal.field, "\(String(describing: error))")
    }

    @Test("each required field is required", arguments: ["type", "positionX", "positionY", "width", "height"])
    func missingRequired(field: String) throws {
        var members = ["type": #""note""#, "positionX": "1", "positionY": "2", "width": "3", "height": "4"]
        members[field] = nil
        let json = "{" + members.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        let error = #expect(throws: DecodingError.self) { try Self.draft(json) }
        #expect(Self.path(of: try #require(error)).last == field)
    }

    @Test("a draft that is not an object is refused", arguments: ["[]", "\"note\"", "5", "null"])
    func notAnObject(json: String) {
        #expect(throws: DecodingError.self) { try Self.draft(json) }
    }

    @Test("numbers that are not finite doubles (1e400, NaN, Infinity) are refused")
    func nonFiniteNumbers() {
        for literal in ["1e400", "-1e400", "1e309", "NaN", "Infinity", "-Infinity", "nan"] {
            #expect(throws: (any Error).self, "\(literal)") { try Self.draft(Self.draftJSON(with: "\"rotation\":\(literal)")) }
        }
    }

    // MARK: Update

    @Test("an update carries only the changed fields, no defaults")
    func updateFields() throws {
        let changes = try Self.changes(#"{"content":"new text","duration":3}"#)
        #expect(Self.values(changes.fields) == ["content": "new text", "duration": "3.0"])
        #expect(!changes.fields.changesPosition)
        #expect(try Self.changes(#"{"positionY":5}"#).fields.changesPosition)
        #expect(try Self.changes(#"{"positionX":5,"content":"x"}"#).fields.changesPosition)
    }

    @Test("an empty update is refused")
    func emptyUpdate() {
        #expect(throws: DecodingError.self) { try Self.changes("{}") }
    }

    @Test(
        "invalid updates are refused naming the field",
        arguments: [
            Refusal(member: #""type":"photo""#, field: "type"),
            Refusal(member: #""zIndex":10"#, field: "zIndex"),
            Refusal(member: #""id":"x""#, field: "id"),
            Refusal(member: #""createdBy":"x""#, field: "createdBy"),
            Refusal(member: #""colour":"red""#, field: "colour"),
            Refusal(member: #""positionX":"5""#, field: "positionX"),
            Refusal(member: #""width":0"#, field: "width"),
            Refusal(member: #""scaleY":-0.5"#, field: "scaleY"),
            Refusal(member: #""stickerText":"\#(String(repeating: "s", count: 801))""#, field: "stickerText"),
            Refusal(member: #""stickerText":"a\#(String(repeating: "\u{0301}", count: 400))""#, field: "stickerText"),
        ]
    )
    func refusedUpdates(refusal: Refusal) throws {
        let error = #expect(throws: DecodingError.self) { try Self.changes("{\"content\":\"ok\",\(refusal.member)}") }
        #expect(Self.path(of: try #require(error)).last == refusal.field)
    }

    // MARK: Transform

    @Test("a transform takes scale, rotation, size and position only; none at all is allowed")
    func transformFields() throws {
        let fields = try Self.transform(#"{"scaleX":2,"scaleY":3,"rotation":-90,"width":10,"height":20,"positionX":1,"positionY":2}"#)
        #expect(Set(fields.names) == ElementFields.transformFields)
        #expect(try Self.transform("{}").values.isEmpty)
        for member in [#""content":"x""#, #""duration":1"#, #""type":"note""#, #""imageUrl":"https://x/u""#, #""stickerText":"s""#] {
            let error = #expect(throws: DecodingError.self) { try Self.transform("{\"scaleX\":2,\(member)}") }
            #expect(Self.path(of: try #require(error)).last == member.split(separator: "\"")[0].description, "\(member)")
        }
        #expect(throws: DecodingError.self) { try Self.transform(#"{"scaleX":0}"#) }
        #expect(throws: DecodingError.self) { try Self.transform(#"{"rotation":"90"}"#) }
    }

    // MARK: Content limit

    @Test("content is checked against the node's limit in bytes of UTF-8, not characters")
    func contentLimit() throws {
        // One character of 2 bytes, and one grapheme of 20,001 bytes (a letter and combining marks).
        for text in [String(repeating: "x", count: 20_001), String(repeating: "é", count: 10_000) + "x", "a" + String(repeating: "\u{0301}", count: 10_000)] {
            #expect(text.utf8.count == 20_001)
            let fields = try Self.draft(Self.draftJSON(with: #""content":"\#(text)""#)).fields
            #expect(throws: Never.self) { try fields.checkContent(atMost: 20_001) }
            let error = #expect(throws: RoomcastError.self) { try fields.checkContent(atMost: 20_000) }
            #expect(error?.code == .invalidPayload)
            #expect(error?.message.contains("content") == true)
            #expect(error?.message.contains("20000") == true)
        }
        // Without content there is nothing to check.
        #expect(throws: Never.self) { try Self.draft(Self.draftJSON(with: #""imageUrl":"https://x/u""#)).fields.checkContent(atMost: 1) }
    }
}
