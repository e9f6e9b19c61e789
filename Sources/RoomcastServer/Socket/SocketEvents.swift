import RoomcastCore

/// The client events of DESIGN.md §1 that this node handles.
enum SocketEvents {
    struct RoomRequest: Decodable, Sendable { var roomId: RoomID }
    struct RoomResult: Encodable, Sendable { var roomId: RoomID }
    struct MessageRequest: Decodable, Sendable {
        var roomId: RoomID
        var text: String
    }
    struct MessageResult: Encodable, Sendable { var message: Message }

    /// The router with every event registered.
    static func router() -> SocketEventRouter {
        var router = SocketEventRouter()
        router.on("room:join", RoomRequest.self) { state, request in
            try await state.join(request.roomId)
            return RoomResult(roomId: request.roomId)
        }
        router.on("room:leave", RoomRequest.self) { state, request in
            await state.leave(request.roomId)
            return RoomResult(roomId: request.roomId)
        }
        router.on("message:send", MessageRequest.self) { state, request in
            let sent = try await state.services.messages.send(request.text, from: state.connectedUser, to: request.roomId)
            return MessageResult(message: sent.message)
        }
        registerElementEvents(on: &router)
        return router
    }
}
