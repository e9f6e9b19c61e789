import HTTPTypes
import Hummingbird
import RoomcastCore

/// `GET/POST /api/rooms/:roomId/elements`, `PATCH/DELETE /api/rooms/:roomId/elements/:elementId`:
/// the same changes as the socket events (``RoomChanges``), so they have the same effects.
struct ElementRoutes {
    let changes: RoomChanges
    let users: UserStore

    /// `{elementId}`: a deletion's answer.
    struct DeletedElement: Encodable, Sendable {
        var elementId: ElementID
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.get("/api/rooms/:roomId/elements") { _, context in
            let user = try context.requireUser()
            return JSONAPIResponse(try await changes.elements.snapshot(of: try Self.room(context), for: user).json)
        }
        router.post("/api/rooms/:roomId/elements") { request, context in
            let userID = try context.requireUser()
            let draft = try await request.decodeJSON(as: ElementDraft.self, context: context)
            guard let user = try await users.user(userID) else { throw RoomcastError(.unauthorized, "the token's user does not exist") }
            return JSONAPIResponse(
                status: .created, try await changes.createElementJSON(draft, by: user, in: try Self.room(context), requestId: try Self.requestID(request))
            )
        }
        router.patch("/api/rooms/:roomId/elements/:elementId") { request, context in
            let user = try context.requireUser()
            let updates = try await request.decodeJSON(as: ElementChanges.self, context: context)
            return JSONAPIResponse(try await changes.updateElementJSON(try Self.element(context), with: updates, by: user, in: try Self.room(context)))
        }
        router.post("/api/rooms/:roomId/elements/:elementId/reactions/toggle") { request, context in
            let userID = try context.requireUser()
            guard let user = try await users.user(userID) else { throw RoomcastError(.unauthorized, "the token's user does not exist") }
            return APIResponse(try await changes.toggleReaction(
                on: try Self.element(context), by: user, in: try Self.room(context), requestId: try Self.requestID(request)
            ))
        }
        router.get("/api/rooms/:roomId/elements/:elementId/reactions") { _, context in
            let user = try context.requireUser()
            return APIResponse(try await changes.reactions.reactions(on: try Self.element(context), in: try Self.room(context), for: user))
        }
        router.delete("/api/rooms/:roomId/elements/:elementId") { _, context in
            let user = try context.requireUser()
            let id = try Self.element(context)
            try await changes.deleteElement(id, by: user, in: try Self.room(context))
            return APIResponse(DeletedElement(elementId: id))
        }
    }

    static func room(_ context: RoomcastRequestContext) throws(RoomcastError) -> RoomID {
        guard let id = context.parameters.get("roomId").flatMap(RoomID.init) else { throw RoomcastError(.notFound, "room not found") }
        return id
    }

    static func element(_ context: RoomcastRequestContext) throws(RoomcastError) -> ElementID {
        guard let id = context.parameters.get("elementId").flatMap(ElementID.init) else {
            throw RoomcastError(.notFound, "element not found")
        }
        return id
    }

    /// `Idempotency-Key`: the REST spelling of a socket event's `requestId`.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    /// The request's `Idempotency-Key`, if it has one.
    /// - Throws: `invalid_payload` for a key that is not 1-64 of `[A-Za-z0-9_-]`.
    static func requestID(_ request: Request) throws(RoomcastError) -> RoomcastCore.RequestID? {
        guard let text = request.headers[idempotencyKey] else { return nil }
        guard let id = RoomcastCore.RequestID(text) else {
            throw RoomcastError(.invalidPayload, "Idempotency-Key must be 1-64 letters, digits, '_' or '-'")
        }
        return id
    }
}
