import Hummingbird
import RoomcastCore

/// `GET /api/rooms/:roomId/messages`: a room's chat history, newest first, for participants.
struct MessageRoutes {
    let messages: MessageStore

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.get("/api/rooms/:roomId/messages") { request, context in
            let user = try context.requireUser()
            guard let room = context.parameters.get("roomId").flatMap(RoomID.init) else {
                throw RoomcastError(.notFound, "room not found")
            }
            let page = try PageRequest(request)
            let history = try await messages.history(of: room, for: user, before: page.cursor, limit: page.limit)
            return PagedAPIResponse(history.messages, nextCursor: history.nextCursor)
        }
    }
}
