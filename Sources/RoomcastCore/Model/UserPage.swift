/// One page of users and where the next one starts.
public struct UserPage: Hashable, Sendable {
    /// The accounts of this page (profiles with emails), in index order (account creation, then id).
    public var accounts: [Account]
    /// Where the next page starts; `nil` on the last page.
    public var nextCursor: UserCursor?

    /// The public profiles of this page.
    public var users: [User] { accounts.map(\.user) }

    /// Creates a page.
    public init(accounts: [Account], nextCursor: UserCursor?) {
        self.accounts = accounts
        self.nextCursor = nextCursor
    }
}
