import NIOCore
import RoomcastCore
@testable import RoomcastServer
import Testing

/// Preview payloads are read member by member, without `JSONDecoder`: the same refusals.
@Suite("FlatPayload: canvas preview payloads read without JSONDecoder")
struct FlatPayloadTests {
    private func refusal(_ event: String, _ json: String) -> RoomcastError? {
        do throws(RoomcastError) {
            try SocketEventRouter.decodeRequest(of: event, from: ByteBuffer(string: json))
            return nil
        } catch {
            return error
        }
    }

    @Test("well-formed payloads are accepted; unknown members are ignored, as Decodable payloads ignore them")
    func accepted() {
        #expect(refusal("element:drag", #"{"roomId":"r1","elementId":"e-1","positionX":1.5,"positionY":-2e3,"extra":{"a":[1]}}"#) == nil)
        #expect(refusal("cursor:move", #"{ "y" : 0 , "x" : 10000000 , "roomId" : "r_1" }"#) == nil)
    }

    @Test("a missing, mistyped or invalid member is invalid_payload naming it", arguments: [
        ("element:drag", #"{"elementId":"e","positionX":1,"positionY":2}"#, "roomId"),
        ("element:drag", #"{"roomId":"r","positionX":1,"positionY":2}"#, "elementId"),
        ("element:drag", #"{"roomId":"r","elementId":"bad id","positionX":1,"positionY":2}"#, "elementId"),
        ("element:drag", #"{"roomId":"r","elementId":"e","positionX":"1","positionY":2}"#, "positionX"),
        ("element:drag", #"{"roomId":"r","elementId":"e","positionX":1,"positionY":null}"#, "positionY"),
        ("cursor:move", #"{"roomId":7,"x":1,"y":2}"#, "roomId"),
        ("cursor:move", #"{"roomId":"r","x":[1],"y":2}"#, "x"),
        ("cursor:move", #"{"roomId":"r","x":1}"#, "y"),
    ])
    func refused(event: String, json: String, field: String) {
        let error = refusal(event, json)
        #expect(error?.code == .invalidPayload, "\(json)")
        #expect(error?.message.contains(field) == true, "\(String(describing: error?.message))")
    }

    @Test("a member named twice, or something other than an object, is refused")
    func malformed() {
        #expect(refusal("cursor:move", #"{"roomId":"r","x":1,"x":2,"y":3}"#)?.code == .invalidPayload)
        #expect(refusal("cursor:move", #"[1,2]"#)?.code == .invalidPayload)
    }
}
