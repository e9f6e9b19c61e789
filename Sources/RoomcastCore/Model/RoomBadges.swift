/// What is new in a room for one user since they last had it open.
public struct RoomBadges: Hashable, Sendable, Codable {
    /// Chat messages sent since.
    public var messages: Int
    /// Elements created since.
    public var elements: Int

    /// Creates badge counts.
    public init(messages: Int = 0, elements: Int = 0) {
        self.messages = messages
        self.elements = elements
    }

    /// Whether either count is above zero.
    public var hasUnread: Bool { messages > 0 || elements > 0 }
}
