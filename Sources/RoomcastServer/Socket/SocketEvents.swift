import Foundation
import NIOCore
import RoomcastCore
import SocketIOServer

/// The client events this node handles (docs/clients/events.md lists them).
enum SocketEvents {
    struct RoomRequest: Decodable, Sendable, RoomScopedRequest { var roomId: RoomID }
    struct RoomResult: Encodable, Sendable { var roomId: RoomID }
    /// `{roomId, since?}`: `since` is the last offset the client saw; anything but a string
    /// counts as no offset (a fresh snapshot), never as an error.
    struct JoinRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var since: String?

        enum CodingKeys: String, CodingKey { case roomId, since }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            roomId = try container.decode(RoomID.self, forKey: .roomId)
            since = try? container.decodeIfPresent(String.self, forKey: .since)
        }
    }
    /// `{roomId, recovered}`: `recovered` tells whether missed events were replayed (else an `elements:batch` came).
    struct JoinResult: Encodable, Sendable {
        var roomId: RoomID
        var recovered: Bool
    }
    /// `{roomId, text, requestId?}`: a retry with the same `requestId` returns the first message.
    struct MessageRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var text: String
        var requestId: RequestID?
    }
    /// `{token}`: a new token for the socket's own user, before the one it has expires.
    struct RefreshRequest: Decodable, Sendable { var token: String }

    /// The router with every event registered.
    ///
    /// A handler decodes (its payload type), makes its change through ``SocketState/changes``
    /// (``RoomChanges``: the change and all its side effects) and answers; it reaches nothing else.
    static func router() -> SocketEventRouter {
        var router = SocketEventRouter()
        router.on("room:join", JoinRequest.self) { state, request in
            JoinResult(roomId: request.roomId, recovered: try await state.join(request.roomId, since: request.since))
        }
        router.on("room:leave", RoomRequest.self) { state, request in
            await state.leave(request.roomId)
            return RoomResult(roomId: request.roomId)
        }
        // `{message}`, spliced around the message's bytes as they were encoded for its event.
        router.on("message:send", MessageRequest.self, json: { state, request in
            let sent = try await state.changes.sendMessageJSON(
                request.text, from: state.connectedUser, to: request.roomId, requestId: request.requestId
            )
            var result = ByteBuffer(string: #"{"message":"#)
            result.reserveCapacity(minimumWritableBytes: sent.message.readableBytes + 1)
            result.writeImmutableBuffer(sent.message)
            result.writeStaticString("}")
            return result
        })
        // The new token's expiry replaces the old one, whether later or sooner: the socket keeps
        // its rooms. Only the same user: a socket's identity never changes.
        router.on("auth:refresh", RefreshRequest.self) { state, request in
            let verified = try state.tokens.verifyToken(request.token)
            guard verified.user == state.connectedUser.id else {
                throw RoomcastError(.forbidden, "the token is another user's: a socket keeps the user it connected as")
            }
            let expiry = verified.expirySeconds
            state.socket.setDeadline(Date(timeIntervalSince1970: Double(expiry)))
            return SocketReply.Expiry(expiresAt: Timestamp(milliseconds: expiry * 1000))
        }
        registerElementEvents(on: &router)
        registerPreviewEvents(on: &router)
        return router
    }
}
