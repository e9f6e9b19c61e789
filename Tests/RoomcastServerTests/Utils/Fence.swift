import Foundation
import RoomcastTestSupport
import Testing

/// A fence for "nothing was sent" checks, so that they do not depend on how fast the machine is.
///
/// A short quiet window alone passes on a slow machine even when the event would have come, just
/// later. Every event of a room (elements, messages, reactions, presence) goes through the room's
/// stream and channel and reaches a socket in stream order; so once a chat message sent *after* the
/// action has reached a socket, every room event the action could have caused is in that socket's
/// inbox already, and a quiet window after the fence only has to look at what is queued.
enum Fence {
    /// `sender` sends a uniquely worded chat message into `room` (9 characters, for tests with a
    /// short messages.max_length); returns once each of `sockets` has received it. The fence's
    /// `message:new` stays queued on those sockets.
    static func message(
        in room: String, from sender: SocketIOTestClient, reaching sockets: [SocketIOTestClient],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let text = "f\(UUID().uuidString.prefix(8))"
        let sent = try await sender.emitWithAck("message:send", ["roomId": .string(room), "text": .string(text)])
        #expect(sent["data"]["message"]["text"].stringValue == text, "the fence message was refused: \(sent)", sourceLocation: sourceLocation)
        for socket in sockets {
            let arrived = try await eventually(within: .seconds(30)) {
                await socket.events(named: "message:new").contains { (try? JSONValue($0))?["message"]["text"].stringValue == text }
            }
            #expect(arrived, "the fence message did not arrive", sourceLocation: sourceLocation)
        }
    }
}
