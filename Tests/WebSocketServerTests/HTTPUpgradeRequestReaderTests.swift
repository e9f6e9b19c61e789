import NIOCore
import NIOHTTP1
import Testing

@testable import WebSocketServer

@Suite("HTTPUpgradeRequestReader: the opening handshake's head, or hands off")
struct HTTPUpgradeRequestReaderTests {
    static let handshake =
        "GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: node:8080\r\nUpgrade: websocket\r\n"
        + "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nUser-Agent:  SocketIO-Client-Swift \t\r\n\r\n"

    /// Scans `text` as it would arrive in pieces of `pieceSize` bytes; the scans' results in order.
    /// `maxHeadBytes` nil: the reader's default.
    static func scans(_ text: String, pieceSize: Int, maxHeadBytes: Int? = nil) -> [HTTPUpgradeRequestReader.Scan] {
        var reader = maxHeadBytes.map { HTTPUpgradeRequestReader(maxHeadBytes: $0) } ?? HTTPUpgradeRequestReader()
        let bytes = Array(text.utf8)
        var buffer = ByteBuffer()
        var results: [HTTPUpgradeRequestReader.Scan] = []
        for start in stride(from: 0, to: bytes.count, by: pieceSize) {
            buffer.writeBytes(bytes[start..<min(start + pieceSize, bytes.count)])
            let scan = reader.scan(buffer)
            results.append(scan)
            if scan != .needMore { break }
        }
        return results
    }

    @Test("a handshake is found whole however it arrives, ending at its blank line; frames after it are not part of it", arguments: [1, 2, 7, 64, 4096])
    func wholeHead(pieceSize: Int) {
        let frame = "\u{81}\u{85}abcdefghi"
        let results = Self.scans(Self.handshake + frame, pieceSize: pieceSize)
        #expect(results.last == .head(end: Self.handshake.utf8.count))
        #expect(results.dropLast().allSatisfy { $0 == .needMore })
    }

    @Test("the head parses to what NIO's parser makes of it: target, names as sent, values without surrounding white space")
    func parsed() throws {
        let head = try #require(HTTPUpgradeRequestReader.parse(ByteBuffer(string: Self.handshake).readableBytesView))
        #expect(head.method == .GET)
        #expect(head.version == .http1_1)
        #expect(head.uri == "/socket.io/?EIO=4&transport=websocket")
        #expect(head.headers.map(\.name) == ["Host", "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions", "User-Agent"])
        #expect(head.headers["user-agent"] == ["SocketIO-Client-Swift"])
        #expect(head.headers["sec-websocket-key"] == ["dGhlIHNhbXBsZSBub25jZQ=="])
        #expect(head.isUpgradeToWebSocket)
    }

    @Test("what is not a GET is handed off at its first bytes", arguments: ["POST /api/rooms HTTP/1.1\r\n", "PUT ", "get / HTTP/1.1\r\n", "GET http://a/ HTTP/1.1\r\n", "GET  / HTTP/1.1\r\n", "\r\nGET / HTTP/1.1\r\n"])
    func otherRequests(start: String) {
        #expect(Self.scans(start, pieceSize: 1).last == .notForUs)
    }

    @Test("a bare LF, a lone CR, a control or non-ASCII byte hands the head off", arguments: [
        "GET / HTTP/1.1\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "GET / HTTP/1.1\r\nHost: \u{01}\r\n\r\n",
        "GET /é HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nX: \u{7F}\r\n\r\n",
    ])
    func oddBytes(text: String) {
        #expect(Self.scans(text, pieceSize: 1).last == .notForUs)
    }

    @Test("a head longer than the reader takes is handed off, found whole or not")
    func longHead() {
        let long = "GET / HTTP/1.1\r\nCookie: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        #expect(Self.scans(long, pieceSize: 16, maxHeadBytes: 128).last == .notForUs)
        #expect(Self.scans(long, pieceSize: long.utf8.count, maxHeadBytes: 128).last == .notForUs)
        #expect(Self.scans(long, pieceSize: long.utf8.count, maxHeadBytes: long.utf8.count) == [.head(end: long.utf8.count)])
    }

    @Test("by default a head of up to 16 KiB is read here, a longer one handed off")
    func defaultLimit() {
        let start = "GET / HTTP/1.1\r\nCookie: "
        let fitting = start + String(repeating: "a", count: 16 * 1024 - start.utf8.count - 4) + "\r\n\r\n"
        #expect(Self.scans(fitting, pieceSize: fitting.utf8.count) == [.head(end: 16 * 1024)])
        let over = start + String(repeating: "a", count: 16 * 1024 - start.utf8.count - 3) + "\r\n\r\n"
        #expect(Self.scans(over, pieceSize: over.utf8.count) == [.notForUs])
    }

    @Test("found whole but left to NIO's parser: another version, a body, a folded or nameless field, a space in the target", arguments: [
        "GET / HTTP/1.0\r\nHost: a\r\n\r\n", "GET / HTTP/2.0\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "GET / HTTP/1.1\r\n: a\r\n\r\n",
        "GET / HTTP/1.1\r\nX a: b\r\n\r\n", "GET / HTTP/1.1\r\nNo colon\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
    ])
    func refusedHeads(text: String) {
        #expect(Self.scans(text, pieceSize: text.utf8.count) == [.head(end: text.utf8.count)])
        #expect(HTTPUpgradeRequestReader.parse(ByteBuffer(string: text).readableBytesView) == nil)
    }

    @Test("an Upgrade field is found in any case, and only as a field's name")
    func upgradeField() {
        func has(_ text: String) -> Bool { HTTPUpgradeRequestReader.hasUpgradeField(ByteBuffer(string: text).readableBytesView) }
        #expect(has(Self.handshake))
        #expect(has("GET / HTTP/1.1\r\nuPgRaDe: websocket\r\n\r\n"))
        #expect(!has("GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\n\r\n"))
        #expect(!has("GET / HTTP/1.1\r\nX-Upgrade: websocket\r\nVia: upgrade:1\r\n\r\n"))
        #expect(!has("GET /upgrade: HTTP/1.1\r\n\r\n"))
    }

    @Test("Content-Length: 0 is no body")
    func emptyBody() throws {
        let head = try #require(HTTPUpgradeRequestReader.parse(ByteBuffer(string: "GET /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n").readableBytesView))
        #expect(head.uri == "/x")
        #expect(!head.isUpgradeToWebSocket)
    }
}
