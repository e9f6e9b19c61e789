/// One page of users and where the next one starts.
public struct UserPage: Hashable, Sendable {
    /// The users of this page, in index order (account creation, then id).
    public var users: [User]
    /// Where the next page starts; `nil` on the last page.
    public var nextCursor: UserCursor?

    /// Creates a page.
    public init(users: [User], nextCursor: UserCursor?) {
        self.users = users
        self.nextCursor = nextCursor
    }
}
