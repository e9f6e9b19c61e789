import Hummingbird
import RoomcastCore

/// `PUT /api/users/me/push-token {token, platform, installationId?}` registers a device for
/// pushes (with `installationId`, the token moves to another account only through a registration
/// naming the same installation: 409 `conflict` otherwise);
/// `DELETE /api/users/me/push-token/:token` removes it (on sign-out).
struct PushTokenRoutes {
    let tokens: PushTokenStore

    struct RegisterRequest: Decodable {
        var token: String
        var platform: String
        /// The random id the app made for this installation, kept across launches.
        var installationId: String?
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.put("/api/users/me/push-token") { request, context in
            let user = try context.requireUser()
            let body = try await request.decodeJSON(as: RegisterRequest.self, context: context)
            let device = try PushToken(token: body.token, platform: body.platform)
            let installation = try body.installationId.map { id throws(RoomcastError) in try AppInstallation(id: id) }
            try await tokens.register(device, for: user, installation: installation)
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
