import Hummingbird
import RoomcastCore

/// `POST /api/auth/register`, `POST /api/auth/login`, `GET /api/users/me`.
struct AuthRoutes {
    let users: UserStore
    let tokens: TokenService
    let passwords: PasswordHasher

    struct RegisterRequest: Decodable {
        var username: String
        var password: String
        var displayName: String?
    }

    struct LoginRequest: Decodable {
        var username: String
        var password: String
    }

    struct Session: Encodable, Sendable {
        var token: String
        var user: User
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.post("/api/auth/register") { request, context in
            let body = try await request.decode(as: RegisterRequest.self, context: context)
            try Credentials.validate(username: body.username)
            try Credentials.validate(password: body.password)
            if let name = body.displayName, name.utf8.count > 64 {
                throw RoomcastError(.invalidPayload, "displayName must be at most 64 bytes of UTF-8")
            }
            let hash = try await passwords.hash(body.password)
            let user = try await users.create(username: body.username, passwordHash: hash, displayName: body.displayName)
            return APIResponse(status: .created, Session(token: try await tokens.issue(for: user.id), user: user))
        }
        router.post("/api/auth/login") { request, context in
            let body = try await request.decode(as: LoginRequest.self, context: context)
            let account = try await users.credentials(username: body.username)
            // The hash check runs even for an unknown name, so timing does not reveal which names exist.
            guard try await passwords.verify(body.password, against: account?.passwordHash), let user = account?.user else {
                throw RoomcastError(.unauthorized, "wrong username or password")
            }
            return APIResponse(Session(token: try await tokens.issue(for: user.id), user: user))
        }
        router.get("/api/users/me") { _, context in
            guard let user = try await users.user(try context.requireUser()) else {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
            return APIResponse(user)
        }
    }
}
