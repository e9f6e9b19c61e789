/// A person, as other people see them: the public profile.
///
/// Every user object sent carries `id`, `username`, `firstName`, `lastName`, `avatarUrl` (those
/// three `null` when unset) and `createdAt`, plus `displayName` when set. The email is not part
/// of it: see ``Account``.
public struct User: Hashable, Sendable, Codable {
    /// The user's id (the JWT `sub`).
    public var id: UserID
    /// Unique login name.
    public var username: String
    /// Name shown in the app, when set.
    public var displayName: String?
    /// First name, when set.
    public var firstName: String?
    /// Last name, when set.
    public var lastName: String?
    /// An `https` URL of the user's picture, when set.
    public var avatarUrl: String?
    /// When the account was created.
    public var createdAt: Timestamp

    /// Creates a user.
    public init(
        id: UserID, username: String, displayName: String? = nil, firstName: String? = nil, lastName: String? = nil,
        avatarUrl: String? = nil, createdAt: Timestamp
    ) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.firstName = firstName
        self.lastName = lastName
        self.avatarUrl = avatarUrl
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, username, displayName, firstName, lastName, avatarUrl, createdAt
    }

    /// Writes the profile fields even when unset (`null`), so clients always find them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(username, forKey: .username)
        try container.encodeIfPresent(displayName, forKey: .displayName)
        try container.encode(firstName, forKey: .firstName)
        try container.encode(lastName, forKey: .lastName)
        try container.encode(avatarUrl, forKey: .avatarUrl)
        try container.encode(createdAt, forKey: .createdAt)
    }
}
