import NIOCore
import RoomcastCore
import Testing

@Suite("JSONCoding")
struct JSONCodingTests {
    private struct Sample: Encodable {
        var roomId = "r1"
        var message = "m"
        var code = "unavailable"
        var url = "https://example.com/a"
        var zIndex = 3
    }

    /// Every node must send one event as the same bytes: this Foundation's encoder writes keys in
    /// a dictionary's order, which changes from process to process (two nodes answered one error
    /// with `{"code","message"}` and `{"message","code"}`).
    @Test("keys come sorted and slashes unescaped, whatever the process")
    func deterministicBytes() throws {
        let text = String(buffer: try JSONCoding.encode(Sample()))
        #expect(text == #"{"code":"unavailable","message":"m","roomId":"r1","url":"https://example.com/a","zIndex":3}"#)
    }
}
