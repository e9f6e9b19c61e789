import Foundation
import SocketIOServer

// The CONNECT's auth, `{name}`.
struct Hello: Decodable { var name: String? }
struct Room: Decodable, Sendable { var room: String }
struct Joined: Encodable, Sendable { var room: String, name: String }
struct Say: Decodable, Sendable { var room: String, text: Text }
struct Said: Encodable, Sendable { var room: String, name: String, text: Text }
struct OK: Encodable, Sendable { var ok = true }
struct Empty: Codable, Sendable {}

/// A message's text, or bytes (sent as a binary attachment, both ways).
enum Text: Codable, Sendable {
    case string(String)
    case bytes(Data)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) { self = .string(string) } else { self = .bytes(try container.decode(Data.self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .bytes(let data): try container.encode(data)
        }
    }
}

var port = 3000
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard flag == "--port", let value = arguments.popFirst(), let number = Int(value) else {
        FileHandle.standardError.write(Data("usage: chat [--port P]\n".utf8))
        exit(64)
    }
    port = number
}

let server = SocketServer()
// Each socket is accepted with its user's name.
let chat = server.namespace("/", context: String.self)
chat.onConnect { _, request in
    guard let name = request.auth(as: Hello.self)?.name, !name.isEmpty else { return .refuse("a name is required: connect with auth {name}") }
    return .accept(name)
}
chat.on("join", Room.self) { socket, name, request in
    try await socket.join(request.room)
    try socket.to(request.room).emit("joined", Joined(room: request.room, name: name))
    return OK()
}
chat.on("say", Say.self) { socket, name, say in
    try socket.to(say.room).emit("said", Said(room: say.room, name: name, text: say.text))
    return OK()
}
// Asks the client back, and answers with what the client's ack carried.
chat.on("ping-me", Empty.self) { socket, _, _ in
    try await socket.call("ping", Empty(), timeout: .seconds(30))
}
try await server.serve(port: port) { port in FileHandle.standardOutput.write(Data("chat ready on http://127.0.0.1:\(port)\n".utf8)) }
