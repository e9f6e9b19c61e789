/// One page of a room's chat history, newest first, and where the next (older) page starts.
public struct MessagePage: Hashable, Sendable {
    /// The messages of this page, newest first.
    public var messages: [Message]
    /// The stream offset of the page's oldest message: the next page holds the messages before
    /// it. `nil` on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(messages: [Message], nextCursor: String?) {
        self.messages = messages
        self.nextCursor = nextCursor
    }
}
