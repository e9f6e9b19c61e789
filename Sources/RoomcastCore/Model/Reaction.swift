/// A user's heart on an element.
public struct Reaction: Hashable, Sendable, Codable {
    public var id: String
    public var elementId: ElementID
    public var userId: UserID
    /// Always `heart` for now.
    public var type: String
    public var createdAt: Timestamp
    public var user: User
}

/// What toggling a reaction did, as seed 001's `POST .../reactions/toggle` answers it.
public struct ReactionToggle: Hashable, Sendable, Codable {
    /// `added` or `removed`.
    public var action: String
    /// The reaction added, or the one removed.
    public var reaction: Reaction
    /// The element's stats for the user who toggled.
    public var elementStats: ReactionStats
}

/// An element's hearts for one viewer.
public struct ReactionStats: Hashable, Sendable, Codable {
    public var totalReactions: Int
    public var hasReacted: Bool
    /// The three most recent reactors.
    public var topReactors: [User]
}

/// All reactions of an element, for `GET .../reactions`.
public struct ReactionList: Hashable, Sendable, Codable {
    /// Newest first.
    public var reactions: [Reaction]
    public var total: Int
    public var hasReacted: Bool
}
