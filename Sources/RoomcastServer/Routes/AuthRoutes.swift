import Hummingbird
import RoomcastCore

/// `POST /api/auth/register`, `POST /api/auth/login`, `GET /api/users/me`, `PUT /api/users/me`.
struct AuthRoutes {
    let users: UserStore
    let tokens: TokenService
    let passwords: PasswordHasher
    /// Logins and registrations per address and logins per account, over every node.
    let limits: RequestLimits

    struct RegisterRequest: Decodable {
        var username: String
        var password: String
        var displayName: String?
        /// `firstName`, `lastName`, `email`, `avatarUrl`, all optional.
        var profile: ProfileChanges

        private enum CodingKeys: String, CodingKey {
            case username, password, displayName
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            username = try container.decode(String.self, forKey: .username)
            password = try container.decode(String.self, forKey: .password)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
            profile = try ProfileChanges(from: decoder)
        }
    }

    struct LoginRequest: Decodable {
        var username: String
        var password: String
    }

    struct Session: Encodable, Sendable {
        var token: String
        /// The caller's own account: the public profile and the email.
        var user: Account
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.post("/api/auth/register") { request, context in
            try await limits.checkRegistration(request, context: context)
            let body = try await request.decode(as: RegisterRequest.self, context: context)
            try Credentials.validate(username: body.username)
            try Credentials.validate(password: body.password)
            if let name = body.displayName, name.utf8.count > 64 {
                throw RoomcastError(.invalidPayload, "displayName must be at most 64 bytes of UTF-8")
            }
            try body.profile.validate()
            let hash = try await passwords.hash(body.password)
            let account = try await users.createAccount(username: body.username, passwordHash: hash, displayName: body.displayName, profile: body.profile)
            return APIResponse(status: .created, Session(token: try await tokens.issue(for: account.user.id), user: account))
        }
        router.post("/api/auth/login") { request, context in
            try await limits.checkLogin(request, context: context)
            let body = try await request.decode(as: LoginRequest.self, context: context)
            try await limits.checkLogin(account: body.username)
            let account = try await users.credentials(username: body.username)
            // The hash check runs even for an unknown name, so timing does not reveal which names exist.
            guard try await passwords.verify(body.password, against: account?.passwordHash), let user = account?.account else {
                throw RoomcastError(.unauthorized, "wrong username or password")
            }
            return APIResponse(Session(token: try await tokens.issue(for: user.user.id), user: user))
        }
        router.get("/api/users/me") { _, context in
            guard let account = try await users.account(try context.requireUser()) else {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
            return APIResponse(account)
        }
        // Fields left out stay as they are; `null` or "" clears one.
        router.put("/api/users/me") { request, context in
            let id = try context.requireUser()
            let changes = try await request.decode(as: ProfileChanges.self, context: context)
            do throws(RoomcastError) {
                return APIResponse(try await users.update(id, with: changes))
            } catch where error.code == .notFound {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
        }
    }
}
