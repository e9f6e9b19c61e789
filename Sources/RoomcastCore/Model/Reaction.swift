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
    /// What the heart was given to, for notifying its creator; not sent to clients.
    public var subject: ReactionSubject? = nil

    enum CodingKeys: String, CodingKey {
        case action, reaction, elementStats
    }
}

/// The element a heart was toggled on, as a notification needs it.
public struct ReactionSubject: Hashable, Sendable {
    /// The room the element is in.
    public var roomId: RoomID
    /// The room's name, when it has one.
    public var roomName: String?
    /// The element.
    public var elementId: ElementID
    /// The element's type (`note`, `photo` ...).
    public var elementType: String
    /// Who created the element: the one to notify.
    public var elementCreator: UserID
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
