import Hummingbird
import RoomcastCore

/// `PUT /api/users/me/push-token {token, platform}` registers a device for pushes;
/// `DELETE /api/users/me/push-token/:token` removes it (on sign-out).
struct PushTokenRoutes {
    let tokens: PushTokenStore

    struct RegisterRequest: Decodable {
        var token: String
        var platform: String
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.put("/api/users/me/push-token") { request, context in
            let user = try context.requireUser()
            let body = try await request.decodeJSON(as: RegisterRequest.self, context: context)
            let device = try PushToken(token: body.token, platform: body.platform)
            try await tokens.register(device, for: user)
            return APIResponse(device)
        }
        router.get("/api/users/me/push-tokens") { _, context in
            APIResponse(try await tokens.tokens(for: try context.requireUser()))
        }
        router.delete("/api/users/me/push-token/:token") { _, context in
            let user = try context.requireUser()
            let token = context.parameters.get("token") ?? ""
            guard try await tokens.remove(token, for: user) else {
                throw RoomcastError(.notFound, "this device token is not registered for you")
            }
            return APIResponse(RemovedToken(token: PushToken.normalized(token), removed: true))
        }
    }

    struct RemovedToken: Encodable, Sendable {
        var token: String
        var removed: Bool
    }
}
