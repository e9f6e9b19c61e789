import SocketIOServer
import Testing

@Suite("EngineIORequest: an Engine.IO request's path and query")
struct EngineIORequestTests {
    @Test("values are form-decoded; plain ones are kept as they are; malformed escapes stay")
    func decoding() {
        let request = EngineIORequest(target: "/socket.io/?EIO=4&transport=websocket&token=eyJ.a-b_c.d&name=a+b%20c%2Bd&bad=%zz%4&tail=%&k%65y=v&empty")
        #expect(request.path == "/socket.io/" && request.isPath("/socket.io"))
        #expect(request.query["EIO"] == "4" && request.websocketRefusal == nil)
        #expect(request.query["token"] == "eyJ.a-b_c.d")
        #expect(request.query["name"] == "a b c+d")
        #expect(request.query["bad"] == "%zz%4")
        #expect(request.query["tail"] == "%")
        #expect(request.query["key"] == "v")
        #expect(request.query["empty"] == "")
    }

    @Test("a query-less or foreign path", arguments: ["/socket.io", "/api/rooms?x=1", "/"])
    func paths(target: String) {
        let request = EngineIORequest(target: target)
        #expect(request.isPath("/socket.io") == (target == "/socket.io"))
        #expect(!request.isPath("/engine.io"))
        #expect(request.sid == nil && request.websocketRefusal == .unsupportedProtocolVersion)
    }
}
