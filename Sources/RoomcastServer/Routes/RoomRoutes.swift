import Hummingbird
import RoomcastCore

/// `POST /api/rooms`, `GET /api/rooms/:roomId`.
struct RoomRoutes {
    let rooms: RoomStore
    let maxParticipants: Int

    /// `{otherUserId, name?}` for a two-person room, or `{participantIds, name?}` for a group.
    struct CreateRequest: Decodable {
        var otherUserId: UserID?
        var participantIds: [UserID]?
        var name: String?
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.post("/api/rooms") { request, context in
            let creator = try context.requireUser()
            let body = try await request.decode(as: CreateRequest.self, context: context)
            let others = (body.participantIds ?? []) + (body.otherUserId.map { [$0] } ?? [])
            guard !others.isEmpty else {
                throw RoomcastError(.invalidPayload, "give otherUserId or a non-empty participantIds")
            }
            guard Set(others + [creator]).count <= maxParticipants else {
                throw RoomcastError(.invalidPayload, "a room has at most \(maxParticipants) participants")
            }
            if let name = body.name, name.count > 100 {
                throw RoomcastError(.invalidPayload, "name must be at most 100 characters")
            }
            let room = try await rooms.create(by: creator, with: others, name: body.name.flatMap { $0.isEmpty ? nil : $0 })
            return APIResponse(status: .created, room)
        }
        router.get("/api/rooms/:roomId") { _, context in
            let user = try context.requireUser()
            guard let id = context.parameters.get("roomId").flatMap(RoomID.init) else {
                throw RoomcastError(.notFound, "room not found")
            }
            return APIResponse(try await rooms.room(id, readBy: user))
        }
    }
}
