/// A person, as other people see them.
public struct User: Hashable, Sendable, Codable {
    /// The user's id (the JWT `sub`).
    public var id: UserID
    /// Unique login name.
    public var username: String
    /// Name shown in the app, when set.
    public var displayName: String?
    /// When the account was created.
    public var createdAt: Timestamp

    /// Creates a user.
    public init(id: UserID, username: String, displayName: String? = nil, createdAt: Timestamp) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.createdAt = createdAt
    }
}
