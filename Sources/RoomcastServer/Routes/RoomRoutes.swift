import Hummingbird
import RoomcastCore

/// `POST /api/rooms`, `GET /api/rooms/my-rooms`, `GET /api/rooms/grouped-by-person`,
/// `GET /api/rooms/:roomId`, `PUT /api/rooms/:roomId/name`.
struct RoomRoutes {
    /// Creating and renaming rooms, with their effects; `changes.rooms` reads them.
    let changes: RoomChanges
    let maxParticipants: Int

    /// `{otherUserId, name?}` for a two-person room, or `{participantIds, name?}` for a group.
    struct CreateRequest: Decodable {
        var otherUserId: UserID?
        var participantIds: [UserID]?
        var name: String?
    }

    /// `{name}`: a string sets the name; `""`, white space only or `null` clears it.
    struct RenameRequest: Decodable {
        var name: String?

        enum CodingKeys: String, CodingKey {
            case name
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // A missing field is a mistake rather than a request to clear the name.
            guard container.contains(.name) else {
                throw DecodingError.keyNotFound(CodingKeys.name, .init(codingPath: [], debugDescription: "name is required"))
            }
            name = try container.decodeIfPresent(String.self, forKey: .name)
        }
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
            let room = try await changes.createRoom(by: creator, with: others, name: try RoomName.normalized(body.name))
            return APIResponse(status: .created, room)
        }
        // Constant paths win over `:roomId` in the router whatever the order.
        router.get("/api/rooms/my-rooms") { _, context in
            APIResponse(try await changes.rooms.listings(of: try context.requireUser()))
        }
        router.get("/api/rooms/grouped-by-person") { _, context in
            APIResponse(try await changes.rooms.roomsByPerson(of: try context.requireUser()))
        }
        router.get("/api/rooms/:roomId") { _, context in
            let user = try context.requireUser()
            guard let id = context.parameters.get("roomId").flatMap(RoomID.init) else {
                throw RoomcastError(.notFound, "room not found")
            }
            return APIResponse(try await changes.rooms.room(id, readBy: user))
        }
        router.put("/api/rooms/:roomId/name") { request, context in
            let user = try context.requireUser()
            guard let id = context.parameters.get("roomId").flatMap(RoomID.init) else {
                throw RoomcastError(.notFound, "room not found")
            }
            let body = try await request.decode(as: RenameRequest.self, context: context)
            return APIResponse(try await changes.renameRoom(id, to: body.name, by: user))
        }
    }
}
