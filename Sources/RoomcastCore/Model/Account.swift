/// A user as they see themselves: the public profile and the email. Sent only to its owner
/// (register, login, `GET`/`PUT /api/users/me`) and in `GET /api/users/without-rooms`.
public struct Account: Hashable, Sendable, Encodable {
    /// The public profile.
    public var user: User
    /// The email, when set (unique over all accounts, case-insensitively).
    public var email: String?

    /// Creates an account value.
    public init(user: User, email: String?) {
        self.user = user
        self.email = email
    }

    private enum CodingKeys: String, CodingKey {
        case email
    }

    /// The user's fields, then `email` (`null` when unset), in one object.
    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(email, forKey: .email)
    }
}
