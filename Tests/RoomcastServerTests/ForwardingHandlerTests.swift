import NIOCore
import NIOHTTP1
import RoomcastCore
@testable import RoomcastServer
import Testing

@Suite("Forwarding: requests of other nodes' sessions")
struct ForwardingHandlerTests {
    static func written(_ head: HTTPRequestHead, isUpgrade: Bool) -> String {
        var buffer = ByteBuffer()
        ForwardingHandler.writeHead(head, isUpgrade: isUpgrade, forwardedBy: NodeID("node0001")!, into: &buffer)
        return String(buffer: buffer)
    }

    @Test("a forwarded poll keeps its target and headers, closes after the answer and names the forwarding node")
    func poll() {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/socket.io/?EIO=4&transport=polling&sid=abc")
        head.headers.add(name: "Host", value: "lb.example")
        head.headers.add(name: "Content-Length", value: "2")
        head.headers.add(name: "Connection", value: "keep-alive")
        head.headers.add(name: "Keep-Alive", value: "timeout=5")
        #expect(
            Self.written(head, isUpgrade: false)
                == "POST /socket.io/?EIO=4&transport=polling&sid=abc HTTP/1.1\r\nHost: lb.example\r\nContent-Length: 2\r\n"
                + "Connection: close\r\nX-Roomcast-Forwarded-By: node0001\r\n\r\n"
        )
    }

    @Test("the owner's answer is amended after its status line, which may come in pieces")
    func statusLine() {
        #expect(ForwardingHandler.endOfFirstLine(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")) == 17)
        #expect(ForwardingHandler.endOfFirstLine(ByteBuffer(string: "HTTP/1.1 200 O")) == nil)
        var consumed = ByteBuffer(string: "xxHTTP/1.1 400 Bad Request\r\n")
        consumed.moveReaderIndex(forwardBy: 2)
        #expect(ForwardingHandler.endOfFirstLine(consumed) == 26)
    }

    @Test("a forwarded upgrade keeps its Connection and Upgrade headers")
    func upgrade() {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/socket.io/?EIO=4&transport=websocket&sid=abc")
        head.headers.add(name: "Connection", value: "Upgrade")
        head.headers.add(name: "Upgrade", value: "websocket")
        #expect(
            Self.written(head, isUpgrade: true)
                == "GET /socket.io/?EIO=4&transport=websocket&sid=abc HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                + "X-Roomcast-Forwarded-By: node0001\r\n\r\n"
        )
    }

    @Test("session ids carry their node's id, and only well-formed ones name a node")
    func sessionIDs() {
        let node = NodeID("abcd1234")!
        let sid = EngineIOSessionID.make(on: node)
        #expect(sid.count == 28)
        #expect(EngineIOSessionID.node(of: sid) == node)
        #expect(EngineIOSessionID.node(of: "abcd1234") == nil)
        #expect(EngineIOSessionID.node(of: "ABCD1234" + String(repeating: "x", count: 20)) == nil)
    }

    @Test("a node's advertised URL becomes the address forwarded requests go to")
    func addresses() throws {
        #expect(NodeAddressBook.socketAddress("http://127.0.0.1:8081")?.port == 8081)
        #expect(NodeAddressBook.socketAddress("http://[::1]:8082")?.port == 8082)
        #expect(NodeAddressBook.socketAddress("https://127.0.0.1:8081") == nil)
        #expect(NodeAddressBook.socketAddress("not a url") == nil)
    }
}
