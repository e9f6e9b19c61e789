import Foundation
import NIOCore
import RoomcastCore
import Testing

@Suite("RoomEventFrame")
struct RoomEventFrameTests {
    struct Payload: Encodable {
        var roomId: String
        var count: Int
        var note: String
        var nested: [String: Int]
    }

    struct Empty: Encodable {}

    @Test("prefix + offset + suffix is a Socket.IO event frame with the payload's fields and the offset")
    func payloadStruct() throws {
        let frame = try RoomEventFrame(
            event: "element:created",
            payload: Payload(roomId: "r1", count: 3, note: "a \"quoted\" } ] note", nested: ["z": 1])
        )
        var joined = frame.prefix
        joined.writeString("1-0")
        joined.writeImmutableBuffer(frame.suffix)
        #expect(joined == frame.frame(offset: "1-0"))

        let text = String(buffer: joined)
        #expect(text.hasPrefix(#"42["element:created",{"#))
        #expect(text.hasSuffix(#","offset":"1-0"}]"#))
        let parsed = try ParsedEventFrame(text)
        #expect(parsed.name == "element:created")
        #expect(parsed.payload["roomId"] as? String == "r1")
        #expect(parsed.payload["count"] as? Int == 3)
        #expect(parsed.payload["note"] as? String == "a \"quoted\" } ] note")
        #expect(parsed.payload["nested"] as? [String: Int] == ["z": 1])
        #expect(parsed.payload["offset"] as? String == "1-0")
        #expect(parsed.payload.count == 5)
    }

    @Test("the suffix only closes the offset, the object and the array")
    func suffix() throws {
        let frame = try RoomEventFrame(event: "x", payload: Empty())
        #expect(String(buffer: frame.suffix) == #""}]"#)
    }

    @Test("an empty-object payload becomes {\"offset\":...}")
    func emptyObject() throws {
        let frame = try RoomEventFrame(event: "room:cleared", payload: Empty())
        #expect(String(buffer: frame.frame(offset: "1-0")) == #"42["room:cleared",{"offset":"1-0"}]"#)
        let dictionary = try RoomEventFrame(event: "e", payload: [String: String]())
        #expect(String(buffer: dictionary.frame(offset: "17-3")) == #"42["e",{"offset":"17-3"}]"#)
    }

    @Test("real stream offsets fill the gap")
    func realOffsets() throws {
        let frame = try RoomEventFrame(event: "message:new", payload: ["text": "hi"])
        for offset in ["0-1", "1795334400123-0", "1795334400123-18446744073709551615"] {
            let parsed = try ParsedEventFrame(frame.frame(offset: offset))
            #expect(parsed.payload["offset"] as? String == offset)
            #expect(parsed.payload["text"] as? String == "hi")
        }
    }

    @Test("an event name is JSON-escaped")
    func escapedName() throws {
        let frame = try RoomEventFrame(event: "we\"ird\\name", payload: Empty())
        #expect(try ParsedEventFrame(frame.frame(offset: "1-0")).name == "we\"ird\\name")
    }

    @Test("a payload that does not encode as an object throws")
    func nonObjectThrows() {
        #expect(throws: (any Error).self) { try RoomEventFrame(event: "e", payload: [1, 2, 3]) }
        #expect(throws: (any Error).self) { try RoomEventFrame(event: "e", payload: [["a": 1]]) }
        #expect(throws: (any Error).self) { try RoomEventFrame(event: "e", payload: "a string }") }
        #expect(throws: (any Error).self) { try RoomEventFrame(event: "e", payload: 42) }
        #expect(throws: (any Error).self) { try RoomEventFrame(event: "e", payload: true) }
    }
}
