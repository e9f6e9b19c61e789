import HTTPTypes
@testable import RoomcastServer
import Testing

@Suite("BearerToken: Authorization header parsing")
struct BearerTokenTests {
    @Test("a Bearer credential yields its token", arguments: [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("BeArEr abc", "abc"),
        ("  Bearer    abc  ", "abc"),
        ("Bearer\tabc", "abc"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.sig-_~+/", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.sig-_~+/"),
        ("Bearer abc==", "abc=="),
    ])
    func valid(header: String, token: String) {
        #expect(BearerToken(authorization: header)?.value == token)
    }

    @Test("anything else is no bearer token", arguments: [
        "", " ", "Bearer", "Bearer ", "Bearerabc", "Basic dXNlcjpwYXNz", "Token abc", "abc",
        "Bearer a b", "Bearer abc, Bearer def", "Bearer =abc", "Bearer a=b", "Bearer ab\u{e9}", "Bearer a\"b",
    ])
    func invalid(header: String) {
        #expect(BearerToken(authorization: header) == nil)
    }

    @Test("read from request headers; a missing or repeated header gives none")
    func headers() {
        #expect(BearerToken(headers: [.authorization: "Bearer abc"])?.value == "abc")
        #expect(BearerToken(headers: [:]) == nil)
        var twice = HTTPFields()
        twice.append(HTTPField(name: .authorization, value: "Bearer abc"))
        twice.append(HTTPField(name: .authorization, value: "Bearer def"))
        #expect(BearerToken(headers: twice) == nil)
    }
}
